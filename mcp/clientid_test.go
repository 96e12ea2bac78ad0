package mcp

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// TestClientSessionID checks that a client session reports the transport's
// session ID: the Mcp-Session-Id over Streamable HTTP, "" where there is
// none.
func TestClientSessionID(t *testing.T) {
	checkGoroutines(t)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, nil)
	ctx := context.Background()

	cs, _ := connect(t, testServer(t, nil), c)
	if id := cs.ID(); id != "" {
		t.Errorf("in-memory session ID %q; want \"\"", id)
	}

	for _, stateless := range []bool{false, true} {
		h := NewStreamableHTTPHandler(testServer(t, nil), &transport.StreamableHTTPOptions{Stateless: stateless})
		srv := httptest.NewServer(h)
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL})
		must(t, err)
		want := ""
		if ids := h.SessionIDs(); !stateless && len(ids) == 1 {
			want = ids[0]
		}
		if id := cs.ID(); id != want || (!stateless && id == "") {
			t.Errorf("stateless=%v: session ID %q; want %q", stateless, id, want)
		}
		cs.Close()
		srv.Close()
		h.Close()
	}
}
