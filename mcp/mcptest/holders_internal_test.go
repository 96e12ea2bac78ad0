package mcptest

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// deletedCounter is an AddressedBus that counts the "deleted" messages
// published on it.
type deletedCounter struct {
	mcp.AddressedBus
	deleted atomic.Int64
}

func (b *deletedCounter) Publish(ctx context.Context, msg []byte) error {
	if bytes.Contains(msg, []byte(`"k":"deleted"`)) {
		b.deleted.Add(1)
	}
	return b.AddressedBus.Publish(ctx, msg)
}

// plainStore hides the SessionHolders methods of the store it holds.
type plainStore struct{ transport.SessionStore }

// TestDeleteToldWhenHeldElsewhere checks that a DELETE publishes the
// "deleted" message on the bus exactly when another replica may hold a
// copy of the session: never for a session only its creator held, with a
// store that records the holders; always with one that does not.
func TestDeleteToldWhenHeldElsewhere(t *testing.T) {
	tests := []struct {
		name     string
		holders  bool // the store records the holders
		readOn   int  // the replica a request restores the session on, or -1
		deleteOn int
		want     int64
	}{
		{"held by its creator alone", true, -1, 0, 0},
		{"restored on another replica", true, 1, 0, 1},
		{"deleted by a replica that restored it", true, 1, 1, 1},
		{"deleted by a replica that never held it", true, -1, 2, 1},
		{"a store that does not record holders", false, -1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var store transport.SessionStore = transport.NewMemorySessionStore(nil)
			if !tt.holders {
				store = plainStore{store}
			}
			bus := &deletedCounter{AddressedBus: &mcp.MemoryBus{}}
			c := newBusCluster(t, store, bus, transport.StreamableHTTPOptions{})
			ctx := t.Context()
			sid := initializeOn(t, ctx, c.https[0].URL)
			if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[0].URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
				t.Fatalf("notifications/initialized: status %d", st)
			}
			if tt.readOn >= 0 {
				if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[tt.readOn].URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusOK {
					t.Fatalf("tools/list on replica %d: status %d", tt.readOn, st)
				}
			}
			before := bus.deleted.Load()
			if st, _ := rawRequest(t, ctx, http.MethodDelete, c.https[tt.deleteOn].URL, sid, ""); st != http.StatusNoContent {
				t.Fatalf("DELETE on replica %d: status %d, want 204", tt.deleteOn, st)
			}
			if got := bus.deleted.Load() - before; got != tt.want {
				t.Errorf("%d deleted messages published, want %d", got, tt.want)
			}
		})
	}
}

// initializeOn initializes a session of the handshake era on the replica
// at url and returns its ID.
func initializeOn(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, sid)
	}
	return sid
}
