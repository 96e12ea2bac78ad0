package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/rpclink"
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
	info := serverMeta(Implementation{Name: "s\"é", Version: "1", Title: "S"})
	other := &Implementation{Name: "o", Version: "2"}
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
		{"server info", &CallToolResult{Meta: Meta{ServerInfo: info.server, pre: info}, ResultType: ResultTypeComplete, Content: Contents{text("x")}}, true},
		{"server info, no room", &CallToolResult{Meta: Meta{ServerInfo: info.server, pre: info}}, true},
		{"another server info", &CallToolResult{Meta: Meta{ServerInfo: other, pre: info}}, false},
		{"server info and more", &CallToolResult{Meta: Meta{ServerInfo: info.server, pre: info, ProgressToken: jsonrpc.Int64ID(1)}}, false},
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

// readWireCases are received params and results, with whether the
// hand-written decoders take them.
var readWireCases = []struct {
	name   string
	data   string
	result bool // a CallToolResult, else CallToolParams
	fast   bool
}{
	{"params", `{"name":"echo","arguments":{"message":"hi"}}`, false, true},
	{"params spaced", ` { "arguments" : { "a" : [1, 2] } , "name" : "x" } `, false, true},
	{"params envelope", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}},"name":"echo"}`, false, true},
	{"params other meta", `{"_meta":{"progressToken":1},"name":"echo"}`, false, false},
	{"params escaped name", `{"name":"e\u0063ho"}`, false, false},
	{"params null args", `{"name":"x","arguments":null}`, false, false},
	{"params task", `{"name":"x","task":{}}`, false, false},
	{"params twice", `{"name":"a","name":"b"}`, false, true},
	{"params empty", `{}`, false, false},
	{"params array", `[]`, false, false},
	{"result", `{"content":[{"type":"text","text":"hello"}]}`, true, true},
	{"result modern", `{"resultType":"complete","content":[{"text":"a\"b\n\u00e9","type":"text"},{"type":"text","text":""}],"structuredContent":{"sum":3},"isError":false}`, true, true},
	{"result error", `{"content":[],"isError":true}`, true, true},
	{"result image", `{"content":[{"type":"image","data":"eA==","mimeType":"image/png"}]}`, true, false},
	{"result annotated", `{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`, true, false},
	{"result untyped", `{"content":[{"text":"x"}]}`, true, false},
	{"result meta", `{"_meta":{"a":1},"content":[]}`, true, true},
	{"result server info", `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete","content":[{"type":"text","text":"x"}]}`, true, true},
	{"result bad meta", `{"_meta":{"io.modelcontextprotocol/serverInfo":1},"content":[]}`, true, false},
	{"result bad utf-8", "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", true, false},
	{"result no content", `{"structuredContent":{}}`, true, true},
}

// TestReadWire holds the hand-written decoders to the engine.
func TestReadWire(t *testing.T) {
	for _, c := range readWireCases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkReadWire(t, []byte(c.data), c.result); got != c.fast {
				t.Errorf("readWire took it: %v, want %v", got, c.fast)
			}
		})
	}
}

// checkReadWire decodes data with readWire and with the engine, fails t
// if readWire takes data and they differ, and reports whether it took it.
func checkReadWire(t *testing.T, data []byte, result bool) bool {
	var metas capsCache
	metas.init()
	var fast, slow interface {
		wireReader
		unwrap() any
	}
	if result {
		fast, slow = (*callToolResultOf)(new(CallToolResult)), (*callToolResultOf)(new(CallToolResult))
	} else {
		fast, slow = (*callToolParamsResult)(new(CallToolParams)), (*callToolParamsResult)(new(CallToolParams))
	}
	// The engine decodes first, so that the cache holds an envelope.
	err := unmarshalWith(data, slow.unwrap(), metas.options...)
	if !fast.readWire(data, &metas) {
		return false
	}
	if err != nil {
		t.Fatalf("readWire took %s, which the engine refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast.unwrap(), slow.unwrap()) {
		t.Fatalf("readWire: %#v\nengine:   %#v", fast.unwrap(), slow.unwrap())
	}
	if result {
		// Again: the result's _meta from the cache, when the first kept it.
		again := (*callToolResultOf)(new(CallToolResult))
		if !again.readWire(data, &metas) || !reflect.DeepEqual(again.unwrap(), slow.unwrap()) {
			t.Fatalf("readWire again: %#v\nengine:   %#v", again.unwrap(), slow.unwrap())
		}
	}
	return true
}

// callToolParamsResult lets checkReadWire hold params and results alike.
type callToolParamsResult CallToolParams

func (p *callToolParamsResult) readWire(data []byte, m *capsCache) bool {
	return (*CallToolParams)(p).readWire(data, m)
}
func (p *callToolParamsResult) unwrap() any { return (*CallToolParams)(p) }

// callToolResultOf is callToolParamsResult's twin for results.
type callToolResultOf CallToolResult

func (r *callToolResultOf) readWire(data []byte, m *capsCache) bool {
	return (*CallToolResult)(r).readWire(data, m)
}
func (r *callToolResultOf) unwrap() any { return (*CallToolResult)(r) }

func FuzzReadWire(f *testing.F) {
	for _, c := range readWireCases {
		f.Add([]byte(c.data), c.result)
	}
	f.Fuzz(func(t *testing.T, data []byte, result bool) {
		if !jsontext.Value(data).IsValid() {
			// Not what they are given; they must still not fail badly.
			new(CallToolParams).readWire(data, nil)
			new(CallToolResult).readWire(data, nil)
			return
		}
		checkReadWire(t, data, result)
	})
}

// TestReadWireRequired: params without their required name are left to
// the engine, which says which member is missing.
func TestReadWireRequired(t *testing.T) {
	for _, data := range []string{`{}`, `{"arguments":{}}`, `{"name":null}`} {
		if new(CallToolParams).readWire([]byte(data), nil) {
			t.Errorf("readWire took %s, which lacks name", data)
		}
	}
}

// TestAppendWireAllocs: the hand-written encoders size their buffer once.
func TestAppendWireAllocs(t *testing.T) {
	m := newModernClient("2026-07-28", &ClientCapabilities{Sampling: &SamplingCapabilities{}}, &Implementation{Name: "c", Version: "1"}, 1, 1, "")
	p := &CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hello"}`)}
	m.fill(p)
	r := &CallToolResult{ResultType: ResultTypeComplete, Content: Contents{&TextContent{Text: "hello"}}, StructuredContent: json.RawMessage(`{"a":1}`), IsError: true}
	for _, v := range []interface {
		appendWire([]byte) ([]byte, bool)
	}{p, r} {
		if n := testing.AllocsPerRun(100, func() { v.appendWire(nil) }); n != 1 {
			t.Errorf("%T.appendWire: %v allocations, want 1", v, n)
		}
	}
}

// FuzzAppendWireTask holds DetailedTask.appendWire to the engine.
func FuzzAppendWireTask(f *testing.F) {
	f.Add("t1", "working", "", int64(1700000000123456789), int64(5), int64(60000), true, []byte(`{"content":[]}`), 0)
	f.Add("t3", "working", "s", int64(1700000000123456789), int64(5), int64(60000), false, []byte(`{}`), 1)
	f.Add("t\"2", "completed", "done <é>", int64(-62135596800000000), int64(-1), int64(0), false, []byte(`{ }`), 3600+30)
	f.Fuzz(func(t *testing.T, id, status, msg string, nanos, ttl, poll int64, hasTTL bool, result []byte, offset int) {
		zone := time.FixedZone("z", offset%(30*3600))
		task := &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskStatus(status), StatusMessage: msg,
			CreatedAt: time.Unix(0, nanos).In(zone), LastUpdatedAt: time.Unix(0, nanos/2).UTC(), Result: result}
		if hasTTL {
			task.TTLMs, task.PollIntervalMs = &ttl, &poll
		}
		if offset%2 != 0 { // with the server's identity, as a 2026-07-28 server sends it
			info := serverMeta(Implementation{Name: msg, Version: id})
			task.Meta = Meta{ServerInfo: info.server, pre: info}
		}
		got, ok := task.appendWire(nil)
		if !ok {
			return
		}
		want, err := marshalWith(task, wire().marshal)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, err)
		}
	})
}

func TestReadWireGetTask(t *testing.T) {
	for _, c := range []struct {
		data string
		fast bool
	}{
		{`{"taskId":"abc"}`, true},
		{`{"taskId":"a\u0062c"}`, false},
		{`{"taskId":1}`, false},
		{`{}`, false},
		{`{"taskId":"x","other":1}`, false},
	} {
		var fast, slow GetTaskParams
		ok := fast.readWire([]byte(c.data), nil)
		if ok != c.fast {
			t.Errorf("%s: readWire took it: %v, want %v", c.data, ok, c.fast)
		}
		if ok && (unmarshalWith([]byte(c.data), &slow, wire().received...) != nil || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%s: readWire %+v, engine %+v", c.data, fast, slow)
		}
	}
}

// encodeResult gives marshalStd's bytes, after rpclink.ResultRoom bytes of
// room for the envelope when framed and a hand-written encoder takes the
// result.
func TestEncodeResultFramed(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		room bool
	}{
		{"tool result", newTextResult("hello"), true},
		{"tool list", &ListToolsResult{Tools: []*Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, true},
		{"tool result with _meta", &CallToolResult{Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}, Content: Contents{&TextContent{Text: "x"}}}, false},
		{"no hand-written encoder", &GetPromptResult{Description: "d", Messages: []*PromptMessage{{Role: "user", Content: &TextContent{Text: "hi"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := marshalStd(tt.res)
			if err != nil {
				t.Fatal(err)
			}
			for _, framed := range []bool{false, true} {
				var f rpclink.Framed
				if err := encodeResult(tt.res, &f, framed); err != nil {
					t.Fatal(err)
				}
				if got := f.Value(); !bytes.Equal(got, want) {
					t.Fatalf("framed %v: got %s, want %s", framed, got, want)
				}
				if room := f.Off == rpclink.ResultRoom; room != (tt.room && framed) {
					t.Fatalf("framed %v: room %v (Off %d), want %v", framed, room, f.Off, tt.room && framed)
				}
			}
		})
	}
}
