package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// fill sets every field of v (a pointer) to a non-zero value, so that an
// encoding exercises every member: strings with characters encoding/json
// escapes for HTML, raw JSON with escapes the engine rewrites, maps with
// several keys.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[jsonrpc.ID]() {
			v.Set(reflect.ValueOf(jsonrpc.StringID("id-1")))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("a<b>&c \u00e9")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Slice:
		switch v.Type() {
		case reflect.TypeFor[json.RawMessage]():
			v.SetBytes([]byte(`{"k": "\u0041<", "n": [1, 2.50]}`))
			return
		case reflect.TypeFor[[]byte]():
			v.SetBytes([]byte("bytes"))
			return
		}
		if depth > 4 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"zeta", "alpha"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, depth+1)
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case reflect.Interface:
		switch v.Type() {
		case reflect.TypeFor[Content]():
			v.Set(reflect.ValueOf(&TextContent{Text: "t<>", Meta: Meta{Other: map[string]json.RawMessage{"b": json.RawMessage("1"), "a": json.RawMessage(`"x"`)}}}))
		default:
			v.Set(reflect.ValueOf(map[string]any{"y": []any{1.5, "s"}, "b": true}))
		}
	}
}

// encodings returns v encoded by the SDK's engine and by encoding/json
// (without its HTML escaping).
func encodings(t *testing.T, v any) (engine, std []byte) {
	t.Helper()
	engine, err := marshalStd(v)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return engine, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// checkBoundary checks that data, a valid encoding of a value of the type
// of newV(), decodes and encodes the same through both libraries.
func checkBoundary(t *testing.T, newV func() any, data []byte) {
	t.Helper()
	a, b := newV(), newV()
	if err := unmarshalStd(data, a); err != nil {
		t.Fatalf("engine decode: %v\n%s", err, data)
	}
	if err := json.Unmarshal(data, b); err != nil {
		t.Fatalf("encoding/json decode: %v\n%s", err, data)
	}
	ea, sa := encodings(t, a)
	eb, sb := encodings(t, b)
	for _, got := range [][]byte{sa, eb, sb} {
		if !bytes.Equal(got, ea) {
			t.Fatalf("encodings differ:\n%s\n%s", ea, got)
		}
	}
	// json.Marshal differs only by escaping <, > and &.
	m, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, ea)
	if !bytes.Equal(m, escaped.Bytes()) {
		t.Fatalf("json.Marshal:\n%s\nwant\n%s", m, escaped.Bytes())
	}
}

// TestJSONBoundary encodes every protocol type, with every field set, through
// the engine and through encoding/json, and decodes the result through both.
func TestJSONBoundary(t *testing.T) {
	types := append([]any{new(Meta), new(Contents)}, protocolTypes...)
	for _, p := range types {
		typ := reflect.TypeOf(p).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			v := reflect.New(typ)
			fill(v.Elem(), 0)
			engine, std := encodings(t, v.Interface())
			if !bytes.Equal(engine, std) {
				t.Fatalf("engine:\n%s\nencoding/json:\n%s", engine, std)
			}
			// A value (not a pointer) encodes the same.
			_, stdValue := encodings(t, v.Elem().Interface())
			if !bytes.Equal(engine, stdValue) {
				t.Fatalf("value:\n%s\nwant\n%s", stdValue, engine)
			}
			checkBoundary(t, func() any { return reflect.New(typ).Interface() }, engine)
		})
	}
}

// TestJSONBoundaryContentType checks what users hit first: content blocks
// keep their "type" through encoding/json, alone and inside results.
func TestJSONBoundaryContentType(t *testing.T) {
	res := CallToolResult{Content: Contents{&TextContent{Text: "hi"}, &ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AQ==","mimeType":"image/png"}]}`
	if string(data) != want {
		t.Fatalf("json.Marshal(CallToolResult) = %s, want %s", data, want)
	}
	var back CallToolResult
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	if tc, ok := back.Content[0].(*TextContent); !ok || tc.Text != "hi" {
		t.Fatalf("decoded %#v", back.Content)
	}
	data, err = json.Marshal(&TextContent{Text: "x"})
	if err != nil || string(data) != `{"type":"text","text":"x"}` {
		t.Fatalf("json.Marshal(TextContent) = %s, %v", data, err)
	}
	data, err = json.Marshal(ResourceContents{URI: "a://b", Text: "t"})
	if err != nil || string(data) != `{"uri":"a://b","text":"t"}` {
		t.Fatalf("json.Marshal(ResourceContents) = %s, %v", data, err)
	}
}

// exampleTypes maps the official example folders of 2026-07-28 onto the
// types that decode them. Members that only that revision defines (such as
// resultType) are not kept by the handshake-era types, so the examples are
// compared after one decode.
var exampleTypes = map[string]func() any{
	"AudioContent":                      func() any { return new(AudioContent) },
	"BlobResourceContents":              func() any { return new(ResourceContents) },
	"CallToolRequestParams":             func() any { return new(CallToolParams) },
	"CallToolResult":                    func() any { return new(CallToolResult) },
	"CancelledNotificationParams":       func() any { return new(CancelledParams) },
	"ClientCapabilities":                func() any { return new(ClientCapabilities) },
	"CompleteRequestParams":             func() any { return new(CompleteParams) },
	"CompleteResult":                    func() any { return new(CompleteResult) },
	"CreateMessageRequestParams":        func() any { return new(CreateMessageParams) },
	"CreateMessageResult":               func() any { return new(CreateMessageResult) },
	"ElicitRequestFormParams":           func() any { return new(ElicitParams) },
	"ElicitRequestURLParams":            func() any { return new(ElicitParams) },
	"ElicitResult":                      func() any { return new(ElicitResult) },
	"EmbeddedResource":                  func() any { return new(EmbeddedResource) },
	"GetPromptRequestParams":            func() any { return new(GetPromptParams) },
	"GetPromptResult":                   func() any { return new(GetPromptResult) },
	"ImageContent":                      func() any { return new(ImageContent) },
	"ListPromptsResult":                 func() any { return new(ListPromptsResult) },
	"ListResourceTemplatesResult":       func() any { return new(ListResourceTemplatesResult) },
	"ListResourcesResult":               func() any { return new(ListResourcesResult) },
	"ListRootsResult":                   func() any { return new(ListRootsResult) },
	"ListToolsResult":                   func() any { return new(ListToolsResult) },
	"LoggingMessageNotificationParams":  func() any { return new(LoggingMessageParams) },
	"ModelPreferences":                  func() any { return new(ModelPreferences) },
	"PaginatedRequestParams":            func() any { return new(ListToolsParams) },
	"ProgressNotificationParams":        func() any { return new(ProgressParams) },
	"ReadResourceResult":                func() any { return new(ReadResourceResult) },
	"Resource":                          func() any { return new(Resource) },
	"ResourceLink":                      func() any { return new(ResourceLink) },
	"ResourceUpdatedNotificationParams": func() any { return new(ResourceUpdatedParams) },
	"Root":                              func() any { return new(Root) },
	"SamplingMessage":                   func() any { return new(SamplingMessage) },
	"ServerCapabilities":                func() any { return new(ServerCapabilities) },
	"TextContent":                       func() any { return new(TextContent) },
	"TextResourceContents":              func() any { return new(ResourceContents) },
	"Tool":                              func() any { return new(Tool) },
	"ToolResultContent":                 func() any { return new(ToolResultContent) },
	"ToolUseContent":                    func() any { return new(ToolUseContent) },
}

// TestJSONBoundaryOfficialExamples decodes every official example message
// that maps onto a protocol type, with both libraries, and checks that
// both encode the result to the same bytes.
func TestJSONBoundaryOfficialExamples(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "spec", "2026-07-28", "examples")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("official examples not found: %v", err)
	}
	n := 0
	for dir, newV := range exampleTypes {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no examples (%v)", dir, err)
			continue
		}
		for _, f := range files {
			t.Run(dir+"/"+strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				v := newV()
				if err := unmarshalStd(data, v); err != nil {
					t.Fatalf("decode: %v", err)
				}
				once, err := marshalStd(v)
				if err != nil {
					t.Fatal(err)
				}
				checkBoundary(t, newV, once)
				n++
			})
		}
	}
	t.Logf("%d examples", n)
}

// TestWireCallsNoStdMethod checks the fast path: encoding and decoding
// every protocol type, with every field set, pointer and value alike,
// through the wire's marshalers reaches a registered function for every
// value of this module's types, T and *T, nested or not, and so never
// their MarshalJSON or UnmarshalJSON, which would encode or decode the
// value a second time. A function for any json.Marshaler placed after the
// wire's sees what they leave to the types' methods.
func TestWireCallsNoStdMethod(t *testing.T) {
	ours := func(v any) bool {
		typ := reflect.TypeOf(v)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		return strings.HasPrefix(typ.PkgPath(), "github.com/mcpkit/mcpkit/")
	}
	var left []string
	encode := []jsonv2.Options{jsonv2.Deterministic(true), jsonv2.WithMarshalers(jsonv2.JoinMarshalers(wire().marshalers,
		jsonv2.MarshalToFunc(func(_ *jsontext.Encoder, v json.Marshaler) error {
			if ours(v) {
				left = append(left, fmt.Sprintf("MarshalJSON of %T", v))
			}
			return jsonv2.SkipFunc
		})))}
	decode := []jsonv2.Options{jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(wire().unmarshalers,
		jsonv2.UnmarshalFromFunc(func(_ *jsontext.Decoder, v json.Unmarshaler) error {
			if ours(v) {
				left = append(left, fmt.Sprintf("UnmarshalJSON of %T", v))
			}
			return jsonv2.SkipFunc
		})))}
	types := append([]any{new(Contents), new(jsonrpc.ID)}, protocolTypes...)
	for _, p := range types {
		typ := reflect.TypeOf(p).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			left = nil
			v := reflect.New(typ)
			fill(v.Elem(), 0)
			// At the top, as the SDK encodes params and results.
			data, err := marshalWith(v.Interface(), jsonv2.JoinOptions(encode...))
			if err != nil {
				t.Fatal(err)
			}
			if want, err := marshalStd(v.Interface()); err != nil || !bytes.Equal(data, want) {
				t.Fatalf("encoded %s, marshalStd %s (%v)", data, want, err)
			}
			if err := unmarshalWith(data, reflect.New(typ).Interface(), decode...); err != nil {
				t.Fatal(err)
			}
			for _, l := range left {
				t.Error(l)
			}
		})
	}
}

// TestUnencodableResult checks the answer to a request whose handler's
// result cannot be encoded, now that the session encodes results itself:
// an internal error, and the session goes on serving, in both eras.
func TestUnencodableResult(t *testing.T) {
	for _, era := range []Era{EraHandshake, EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Logger: slog.New(slog.DiscardHandler)})
			must(t, s.AddTool(&Tool{Name: "bad"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
				return &CallToolResult{Content: Contents{&TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a":`)}, nil
			}))
			must(t, s.AddTool(&Tool{Name: "good"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
				return &CallToolResult{Content: Contents{&TextContent{Text: "ok"}}}, nil
			}))
			cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: era}))
			_, err := cs.CallTool(t.Context(), &CallToolParams{Name: "bad"})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError || we.Message != "internal error: cannot encode result" {
				t.Fatalf("bad result: %v, want an internal error", err)
			}
			res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "good"})
			if err != nil || len(res.Content) != 1 {
				t.Fatalf("after it: %v, %v", res, err)
			}
		})
	}
}
