package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// initializeValues are initialize params and results of every shape the
// hand-written encoders take, and of some they leave to the engine.
func initializeValues() []any {
	impl := &Implementation{Name: "n", Version: "1"}
	full := &Implementation{Name: "n \"q\" é", Title: "T", Version: "1.0", Description: "d\n", WebsiteURL: "https://x.example/"}
	iconic := &Implementation{Name: "n", Version: "1", Icons: []Icon{{Src: "https://x.example/i.png"}}}
	return []any{
		&InitializeParams{ProtocolVersion: "2025-11-25", Capabilities: &ClientCapabilities{Roots: &RootsCapabilities{ListChanged: true}}, ClientInfo: impl},
		&InitializeParams{ProtocolVersion: "2025-06-18", Capabilities: &ClientCapabilities{}, ClientInfo: full},
		&InitializeParams{ProtocolVersion: "2025-03-26", Capabilities: &ClientCapabilities{
			Roots:       &RootsCapabilities{},
			Sampling:    &SamplingCapabilities{Context: &struct{}{}, Tools: &struct{}{}},
			Elicitation: &ElicitationCapabilities{Form: &FormElicitationCapabilities{}, URL: &URLElicitationCapabilities{}},
		}, ClientInfo: impl},
		&InitializeParams{ProtocolVersion: "x", Capabilities: &ClientCapabilities{Sampling: &SamplingCapabilities{}, Elicitation: &ElicitationCapabilities{}}, ClientInfo: impl},
		&InitializeParams{ProtocolVersion: "2025-11-25"},
		&InitializeParams{ProtocolVersion: "2025-11-25", Capabilities: &ClientCapabilities{Experimental: map[string]any{"a": true}}, ClientInfo: impl},
		&InitializeParams{ProtocolVersion: "2025-11-25", Capabilities: &ClientCapabilities{Extensions: map[string]json.RawMessage{"e": json.RawMessage(`{}`)}}, ClientInfo: iconic},
		&InitializeParams{Meta: Meta{ProgressToken: jsonrpc.StringID("p")}, ProtocolVersion: "2025-11-25", Capabilities: &ClientCapabilities{}, ClientInfo: impl},
		&InitializeParams{ProtocolVersion: "bad \xff", Capabilities: &ClientCapabilities{}, ClientInfo: impl},
		&InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{Logging: &LoggingCapabilities{}, Tools: &ToolCapabilities{ListChanged: true}}, ServerInfo: impl},
		&InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{
			Logging: &LoggingCapabilities{}, Completions: &CompletionCapabilities{},
			Prompts: &PromptCapabilities{ListChanged: true}, Resources: &ResourceCapabilities{Subscribe: true, ListChanged: true},
			Tools: &ToolCapabilities{},
		}, ServerInfo: full, Instructions: "Use the \"echo\" tool.\n"},
		&InitializeResult{ResultType: ResultTypeComplete, ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{Resources: &ResourceCapabilities{ListChanged: true}}, ServerInfo: impl},
		&InitializeResult{ProtocolVersion: "2025-11-25"},
		&InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{Tasks: &TasksCapabilities{List: &struct{}{}}}, ServerInfo: impl},
		&InitializeResult{ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{}, ServerInfo: iconic},
		&InitializeResult{Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}, ProtocolVersion: "2025-11-25", Capabilities: &ServerCapabilities{}, ServerInfo: impl},
	}
}

// The hand-written encoders of initialize give the engine's bytes for what
// they take, and the decoders read those bytes back as the engine does.
func TestAppendWireInitialize(t *testing.T) {
	took := 0
	for _, v := range initializeValues() {
		want, werr := marshalWith(v, wire().marshal)
		got, ok := v.(wireAppender).appendWire(nil)
		if !ok {
			continue
		}
		took++
		if werr != nil {
			t.Fatalf("%#v: appendWire took what the engine refuses: %v", v, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendWire: %s\nengine:     %s", got, want)
		}
		checkReadWireInitialize(t, got, v)
	}
	if took < 8 {
		t.Fatalf("appendWire took %d of the values, want at least 8", took)
	}
}

// checkReadWireInitialize holds the decoders of initialize to the engine
// on data: whatever readWire takes, it decodes as the engine does. v's
// type says which to use; it reports whether readWire took data.
func checkReadWireInitialize(t *testing.T, data []byte, v any) bool {
	t.Helper()
	var metas capsCache
	metas.init()
	var fast, slow any
	var took bool
	switch v.(type) {
	case *InitializeParams:
		p := new(InitializeParams)
		fast, slow, took = p, new(InitializeParams), p.readWire(data, &metas)
		if took { // again, from the cache
			again := new(InitializeParams)
			if !again.readWire(data, &metas) || !reflect.DeepEqual(again, p) {
				t.Fatalf("readWire from the cache: %#v, first %#v", again, p)
			}
		}
	default:
		r := new(InitializeResult)
		fast, slow, took = r, new(InitializeResult), r.readWire(data, nil)
	}
	if !took {
		return false
	}
	if err := unmarshalWith(data, slow, wire().received...); err != nil {
		t.Fatalf("readWire took %s, which the engine refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("readWire: %#v\nengine:   %#v", fast, slow)
	}
	return true
}

// readWireInitializeCases are texts the decoders take or leave.
var readWireInitializeCases = []struct {
	data   string
	result bool
	took   bool
}{
	{`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, false, true},
	{` { "clientInfo" : {"version":"1","name":"c"} , "capabilities":{"roots":{"listChanged":false}},"protocolVersion":"v\u0031"} `, false, true},
	{`{"protocolVersion":"2025-11-25","capabilities":{"sampling":{ },"elicitation":{"url":{},"form":{}}},"clientInfo":{"name":"c","title":"t","version":"1","description":"d","websiteUrl":"u"}}`, false, true},
	{`{"protocolVersion":"2025-11-25","capabilities":null,"clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":1}},"clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"other":true}},"clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{"sampling":{"context":{"x":1}}},"clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1","icons":[]}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"x":1}`, false, false},
	{`{"protocolVersion":2025,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, false, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}`, true, true},
	{`{"resultType":"complete","protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true,"listChanged":false},"prompts":{},"completions":{}},"serverInfo":{"name":"s","version":"1"},"instructions":"i\n"}`, true, true},
	{`{"protocolVersion":"2025-11-25","capabilities":{"logging":{"x":1}},"serverInfo":{"name":"s","version":"1"}}`, true, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{"experimental":{}},"serverInfo":{"name":"s","version":"1"}}`, true, false},
	{`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":null}`, true, false},
	{`{"_meta":{},"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`, true, false},
}

// TestReadWireInitialize: the decoders take the common shapes, leave the
// others (null members, unknown ones, missing ones, wrong types) to the
// engine, and decode what they take as the engine does.
func TestReadWireInitialize(t *testing.T) {
	for _, c := range readWireInitializeCases {
		var v any = new(InitializeParams)
		if c.result {
			v = new(InitializeResult)
		}
		if took := checkReadWireInitialize(t, []byte(c.data), v); took != c.took {
			t.Errorf("%s: took %v, want %v", c.data, took, c.took)
		}
	}
}

// FuzzReadWireInitialize holds the decoders of initialize to the engine.
func FuzzReadWireInitialize(f *testing.F) {
	for _, c := range readWireInitializeCases {
		f.Add([]byte(c.data), c.result)
	}
	f.Fuzz(func(t *testing.T, data []byte, result bool) {
		if !jsontext.Value(data).IsValid() {
			// Not what they are given; they must still not fail badly.
			new(InitializeParams).readWire(data, nil)
			new(InitializeResult).readWire(data, nil)
			return
		}
		var v any = new(InitializeParams)
		if result {
			v = new(InitializeResult)
		}
		checkReadWireInitialize(t, data, v)
	})
}

// Nil values of the types with hand-written encoders are the engine's to
// write (null), never a crash.
func TestAppendWireInitializeNil(t *testing.T) {
	for _, v := range []any{(*Implementation)(nil), (*ClientCapabilities)(nil), (*ServerCapabilities)(nil), (*InitializeParams)(nil), (*InitializeResult)(nil)} {
		if _, ok := v.(wireAppender).appendWire(nil); ok {
			t.Errorf("%T(nil): appendWire took it", v)
		}
		if data, err := marshalStd(v); err != nil || string(data) != "null" {
			t.Errorf("%T(nil): %s, %v", v, data, err)
		}
	}
}
