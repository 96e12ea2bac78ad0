//go:build !mcpkit_nohttp

package transport

import (
	"io"
	"testing"

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
