package mcp

import (
	"reflect"
	"strings"
	"testing"
)

// TestReadWireKeepsReceiver holds every hand-written decoder to its
// contract: when it does not take a text, its receiver is as it was, even
// after it read some members (a server decodes params into a value that
// the engine then decodes into when readWire declines, and list results
// decode in place). Each text is one the decoder takes, made one it
// declines by a member it does not know, last, after the others were
// read; the receiver holds other values before.
func TestReadWireKeepsReceiver(t *testing.T) {
	tests := []struct {
		name string
		new  func() wireReader
		fill string // what the receiver holds before
		text string // a text the decoder takes
	}{
		{"CallToolParams", func() wireReader { return new(CallToolParams) },
			`{"name":"before","arguments":{"b":2}}`,
			`{"name":"echo","arguments":{"a":1}}`},
		{"CallToolResult", func() wireReader { return new(CallToolResult) },
			`{"content":[{"type":"text","text":"before"}],"isError":true}`,
			`{"content":[{"type":"text","text":"hi"}],"isError":false}`},
		{"GetTaskParams", func() wireReader { return new(GetTaskParams) },
			`{"taskId":"before"}`,
			`{"taskId":"t1"}`},
		{"InitializeParams", func() wireReader { return new(InitializeParams) },
			`{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"before","version":"0"}}`,
			`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`},
		{"InitializeResult", func() wireReader { return new(InitializeResult) },
			`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"before","version":"0"}}`,
			`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`},
		{"ListToolsResult", func() wireReader { return new(ListToolsResult) },
			`{"tools":[{"name":"before","inputSchema":{"type":"object"}}],"nextCursor":"b"}`,
			`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"n"}`},
		{"ListResourcesResult", func() wireReader { return new(ListResourcesResult) },
			`{"resources":[{"uri":"file:///before","name":"before"}],"nextCursor":"b"}`,
			`{"resources":[{"uri":"file:///a","name":"a"}],"nextCursor":"n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.new().readWire([]byte(tt.text), nil) {
				t.Fatalf("readWire does not take %s", tt.text)
			}
			declined := strings.TrimSuffix(tt.text, "}") + `,"unknownMember":1}`
			var metas capsCache
			metas.init()
			for _, cache := range []*capsCache{nil, &metas} {
				got, want := tt.new(), tt.new()
				for _, v := range []wireReader{got, want} {
					if err := unmarshalWith([]byte(tt.fill), v, wire().received...); err != nil {
						t.Fatal(err)
					}
				}
				if got.readWire([]byte(declined), cache) {
					t.Fatalf("readWire took %s", declined)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("readWire declined %s and changed its receiver:\n%#v\nwas\n%#v", declined, got, want)
				}
			}
		})
	}
}
