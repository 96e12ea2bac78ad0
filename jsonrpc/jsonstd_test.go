package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEncodingJSON checks that messages and errors encode through
// encoding/json as they do on the wire, and decode back.
func TestEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		msg  any
		want string
		back func() any
	}{
		{"request", &Request{ID: Int64ID(1), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, func() any { return new(Request) }},
		{"notification", Request{Method: "notifications/initialized"},
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`, func() any { return new(Request) }},
		{"result", &Response{ID: StringID("a"), Result: json.RawMessage(`{"ok":true}`)},
			`{"jsonrpc":"2.0","id":"a","result":{"ok":true}}`, func() any { return new(Response) }},
		{"error response", Response{ID: Int64ID(2), Error: &Error{Code: CodeMethodNotFound, Message: "nope", Data: json.RawMessage(`{"m":"x"}`)}},
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope","data":{"m":"x"}}}`, func() any { return new(Response) }},
		{"error", Error{Code: -32000, Message: "a<b", Data: json.RawMessage(`{"k": "\u0041"}`)},
			`{"code":-32000,"message":"a<b","data":{"k":"A"}}`, func() any { return new(Error) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.msg); err != nil {
				t.Fatal(err)
			}
			got := bytes.TrimSpace(buf.Bytes())
			if string(got) != tt.want {
				t.Fatalf("encoding/json: %s\nwant %s", got, tt.want)
			}
			back := tt.back()
			if err := json.Unmarshal(got, back); err != nil {
				t.Fatalf("decode: %v", err)
			}
			again, err := json.Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			var esc bytes.Buffer
			json.HTMLEscape(&esc, got)
			if !bytes.Equal(again, esc.Bytes()) {
				t.Fatalf("round trip: %s\nwant %s", again, esc.Bytes())
			}
		})
	}
	var r Request
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), &r); err == nil {
		t.Fatal("a response decoded into a Request")
	}
}
