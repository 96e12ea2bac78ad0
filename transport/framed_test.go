//go:build !mcpkit_nohttp

package transport

import (
	"io"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/internal/mcplink"
)

// The connections that encode each message into memory of its own say so
// (mcp then encodes with room for the envelope); those that reuse a
// buffer do not; a logging connection says what it wraps says.
func TestFramedWrites(t *testing.T) {
	framed := func(c any) bool {
		f, ok := c.(mcplink.FramedWriter)
		return ok && f.FramedWrites()
	}
	tests := []struct {
		name string
		conn any
		want bool
	}{
		{"streamable server session", &httpSession{}, true},
		{"stateless exchange", statelessConn{&httpSession{}}, true},
		{"streamable client", &streamableClientConn{}, true},
		{"legacy SSE server session", &sseSession{}, true},
		{"legacy SSE client", &sseClientConn{}, true},
		{"lines", &lineConn{}, false},
		{"logging lines", &loggingConn{inner: &lineConn{}, w: io.Discard}, false},
		{"logging streamable client", &loggingConn{inner: &streamableClientConn{}, w: io.Discard}, true},
	}
	for _, tt := range tests {
		if got := framed(tt.conn); got != tt.want {
			t.Errorf("%s: framed %v, want %v", tt.name, got, tt.want)
		}
	}
}

// resultVersionCases are initialize results, as servers write them and not.
var resultVersionCases = []string{
	`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`,
	`{"capabilities":{"logging":{}},"protocolVersion":"2025-06-18"}`,
	`{"protocolVersion":"2025\u002d03-26"}`,
	`{"protocolVersion":"v","protocolVersion":"w"}`,
	`{"ProtocolVersion":"v"}`,
	`{"protocolVersion":1}`,
	`{"protocolVersion":null}`,
	`{"protocolVersion":"\xff"}`,
	`{}`,
	`[]`,
	`{"protocolVersion":"v"`,
	`{"a":{"protocolVersion":"nested"},"protocolVersion":"top"}`,
}

// resultVersion reads an initialize result's protocolVersion as the
// engine does, whatever the text.
func TestResultVersion(t *testing.T) {
	for _, c := range resultVersionCases {
		checkResultVersion(t, []byte(c))
	}
}

func checkResultVersion(t *testing.T, data []byte) {
	t.Helper()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	err := jsonv2.Unmarshal(data, &res)
	got, ok := resultVersion(data)
	if ok != (err == nil) || ok && got != res.ProtocolVersion {
		t.Fatalf("%q: %q, %v; the engine %q, %v", data, got, ok, res.ProtocolVersion, err)
	}
}

func FuzzResultVersion(f *testing.F) {
	for _, c := range resultVersionCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkResultVersion)
}
