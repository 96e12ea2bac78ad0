package redisstore

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// soakChurn is how long TestSoak churns sessions.
const soakChurn = 15 * time.Second

// TestSoak churns sessions of the handshake era across three replicas on
// a private redis-server for soakChurn: workers each open a session on
// one replica, send initialized on the next, call a tool on the third,
// make a 2026-07-28 call, open the GET stream and leave it, and DELETE
// the session on another replica. Then, once the copies the replicas
// restored have gone idle (SessionIdleTimeout 1 s), the heap, the
// goroutines and the keys under the prefix are back to where they were
// before (polled, within 10 s). Not with -short.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: not with -short")
	}
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newFleet(t, startRedis(t), func(o *transport.StreamableHTTPOptions) { o.SessionIdleTimeout = time.Second })
		heap := heapAlloc
		// A first round warms what is made once (pools, caches, scripts
		// loaded): the baseline is taken after it.
		f.churn(t, 0)
		f.http.CloseIdleConnections()
		f.waitIdle(t)
		baseHeap, baseG := heap(), runtime.NumGoroutine()

		var rounds atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(soakChurn)
		for w := range 4 {
			wg.Go(func() {
				for i := w; time.Now().Before(stop) && !t.Failed(); i++ {
					f.churn(t, i)
					rounds.Add(1)
				}
			})
		}
		wg.Wait()
		t.Logf("%d sessions churned in %v", rounds.Load(), soakChurn)
		f.http.CloseIdleConnections()

		f.waitIdle(t)
		var h uint64
		var g int
		var keys map[string]time.Duration
		for deadline := time.Now().Add(10 * time.Second); ; {
			h, g = heap(), runtime.NumGoroutine()
			keys = keysUnder(t, f.client, f.prefix)
			if h <= baseHeap+4<<20 && g <= baseG+5 && len(keys) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the churn: heap %d B (before %d), goroutines %d (before %d), keys %v", h, baseHeap, g, baseG, keys)
			}
			time.Sleep(100 * time.Millisecond) // polling the process's state
		}
		t.Logf("heap %d -> %d B, goroutines %d -> %d, keys 0 -> %d", baseHeap, h, baseG, g, len(keys))
	})
}

// waitIdle waits (polling, up to 10 s) until no replica holds a
// session: the copies restored on other replicas than the one a DELETE
// reached go after SessionIdleTimeout.
func (f *fleet) waitIdle(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		n := 0
		for _, h := range f.hands {
			n += len(h.SessionIDs())
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still held", n)
		}
		time.Sleep(50 * time.Millisecond) // polling the handlers' tables
	}
}

// churn runs the life of one session across the replicas, from i.
func (f *fleet) churn(t *testing.T, i int) {
	ctx := t.Context()
	r := f.initialize(ctx, i%3)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Errorf("initialize: %d %s", r.status, r.body)
		return
	}
	if r := f.call(ctx, (i+1)%3, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Errorf("initialized: %d %s", r.status, r.body)
	}
	if r := f.echo(ctx, (i+2)%3, sid); r.status != 200 || r.rpc()["result"] == nil {
		t.Errorf("tools/call: %d %s", r.status, r.body)
	}
	if r := f.modern(ctx, i%3, "echo", ""); r.status != 200 || r.rpc()["result"] == nil {
		t.Errorf("2026-07-28 tools/call: %d %s", r.status, r.body)
	}
	gctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(gctx, http.MethodGet, f.urls[(i+1)%3], nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := f.http.Do(req); err != nil {
		t.Errorf("GET: %v", err)
	} else {
		if resp.StatusCode != 200 {
			t.Errorf("GET: %d", resp.StatusCode)
		}
		cancel() // the client leaves the stream
		resp.Body.Close()
	}
	cancel()
	r = f.send(ctx, (i+2)%3, http.MethodDelete, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	if r.status != http.StatusNoContent && r.status != 200 {
		t.Errorf("DELETE: %d %s", r.status, r.body)
	}
}
