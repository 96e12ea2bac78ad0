package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestAppendWire holds the hand-written encoders to the engine: the same
// bytes for every value they take, and a refusal for the shapes they
// leave to it.
func TestAppendWire(t *testing.T) {
	m := newModernClient("2026-07-28", &ClientCapabilities{Sampling: &SamplingCapabilities{}}, &Implementation{Name: "c", Version: "1"}, 1, 1, "")
	envelope := func(p *CallToolParams) *CallToolParams { m.fill(p); return p }
	cases := []struct {
		name string
		p    *CallToolParams
		fast bool
	}{
		{"bare", &CallToolParams{Name: "echo"}, true},
		{"args", &CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hé \"x\" <&>\n","n":[1,2.5e3,null,true]}`)}, true},
		{"escaped args", &CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"h\u00e9"}`)}, false},
		{"envelope", envelope(&CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"a":1}`)}), true},
		{"name escapes", &CallToolParams{Name: "a\"b\\c\n<é>\u2028"}, true},
		{"empty args", &CallToolParams{Name: "x", Arguments: json.RawMessage(`{}`)}, true},
		{"spaced args", &CallToolParams{Name: "x", Arguments: json.RawMessage(`{ "a" : 1 }`)}, false},
		{"spaces in strings", &CallToolParams{Name: "x", Arguments: json.RawMessage(`{"a":"b c"}`)}, true},
		{"progress token", &CallToolParams{Name: "x", Meta: Meta{ProgressToken: jsonrpc.Int64ID(7)}}, false},
		{"other meta", envelope(&CallToolParams{Name: "x", Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}}), false},
		{"state", &CallToolParams{Name: "x", RequestState: "s"}, false},
		{"responses", &CallToolParams{Name: "x", InputResponses: map[string]json.RawMessage{"a": json.RawMessage(`{}`)}}, false},
		{"task", &CallToolParams{Name: "x", Task: &TaskMetadata{}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := marshalWith(c.p, wire().marshal)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := c.p.appendWire(nil)
			if ok != c.fast {
				t.Fatalf("appendWire took it: %v, want %v", ok, c.fast)
			}
			if ok && !bytes.Equal(got, want) {
				t.Fatalf("appendWire: %s\nengine:     %s", got, want)
			}
			if std, err := marshalStd(c.p); err != nil || !bytes.Equal(std, want) {
				t.Fatalf("marshalStd: %s, %v; want %s", std, err, want)
			}
		})
	}
}

// TestAppendWireResult is TestAppendWire for CallToolResult.
func TestAppendWireResult(t *testing.T) {
	text := func(s string) *TextContent { return &TextContent{Text: s} }
	cases := []struct {
		name string
		r    *CallToolResult
		fast bool
	}{
		{"nil content", &CallToolResult{}, true},
		{"empty content", &CallToolResult{Content: Contents{}}, true},
		{"text", &CallToolResult{Content: Contents{text("hello")}}, true},
		{"texts", &CallToolResult{Content: Contents{text("a\"b\n<é>"), text("")}, IsError: true}, true},
		{"complete", &CallToolResult{ResultType: ResultTypeComplete, Content: Contents{text("x")}}, true},
		{"structured", &CallToolResult{Content: Contents{text(`{"sum":3}`)}, StructuredContent: json.RawMessage(`{"sum":3}`)}, true},
		{"spaced structured", &CallToolResult{StructuredContent: json.RawMessage(`{ "sum": 3 }`)}, false},
		{"meta", &CallToolResult{Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}}, false},
		{"text meta", &CallToolResult{Content: Contents{&TextContent{Text: "x", Meta: Meta{ProgressToken: jsonrpc.Int64ID(1)}}}}, false},
		{"annotations", &CallToolResult{Content: Contents{&TextContent{Text: "x", Annotations: &Annotations{Priority: 1}}}}, false},
		{"image", &CallToolResult{Content: Contents{&ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}, false},
		{"bad utf-8", &CallToolResult{Content: Contents{text("\xff")}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := marshalWith(c.r, wire().marshal)
			got, ok := c.r.appendWire(nil)
			if ok != c.fast {
				t.Fatalf("appendWire took it: %v, want %v", ok, c.fast)
			}
			if ok && (wantErr != nil || !bytes.Equal(got, want)) {
				t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, wantErr)
			}
			if std, err := marshalStd(c.r); (err != nil) != (wantErr != nil) || !bytes.Equal(std, want) {
				t.Fatalf("marshalStd: %s, %v; want %s, %v", std, err, want, wantErr)
			}
		})
	}
}

// FuzzAppendWire holds the hand-written encoders to the engine for any
// text, name and arguments.
func FuzzAppendWire(f *testing.F) {
	f.Add("hello", "echo", []byte(`{"message":"hi"}`))
	f.Add("a\u2028b<>&\x00\x1f\"\\", "n\xff", []byte(`[1,"\u00e9",{"a":null}]`))
	f.Fuzz(func(t *testing.T, text, name string, args []byte) {
		for _, v := range []interface {
			appendWire([]byte) ([]byte, bool)
		}{
			&CallToolResult{Content: Contents{&TextContent{Text: text}}, StructuredContent: args},
			&CallToolParams{Name: name, Arguments: args},
		} {
			got, ok := v.appendWire(nil)
			if !ok {
				continue
			}
			want, err := marshalWith(v, wire().marshal)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, err)
			}
		}
	})
}
