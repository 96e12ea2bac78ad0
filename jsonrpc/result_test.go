package jsonrpc

import (
	"encoding/json"
	"testing"
)

// TestMarshalResult checks how a handler's result becomes the response's
// result: raw JSON in any of its forms is used as it is, byte for byte (a
// *json.RawMessage is how package mcp hands over a result it encoded,
// without boxing a slice header), and anything else is encoded.
func TestMarshalResult(t *testing.T) {
	raw := json.RawMessage(`{"b": 1,  "a":"\u0041"}`)
	tests := []struct {
		name   string
		result any
		want   string
	}{
		{"nil", nil, `{}`},
		{"RawMessage", raw, string(raw)},
		{"*RawMessage", &raw, string(raw)},
		{"[]byte", []byte(raw), string(raw)},
		{"nil *RawMessage", (*json.RawMessage)(nil), `null`},
		{"map", map[string]int{"b": 1, "a": 2}, `{"a":2,"b":1}`},
		{"*Error", &Error{Code: 1, Message: "m"}, `{"code":1,"message":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshalResult(tt.result)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
