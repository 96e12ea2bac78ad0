package hostile_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// soakServer is an MCP server with a fast tool, and a slow tool that
// reports progress until it is cancelled or a few seconds pass.
func soakServer(t *testing.T) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "soak", Version: "0"}, nil)
	err := s.AddTool(&mcp.Tool{Name: "fast"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "ok"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.AddTool(&mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := range 400 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tick.C:
			}
			if err := req.ReportProgress(ctx, float64(i), 400, ""); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "done"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const slowCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":%d}}}`

// behaviours are what one soak client does with its session.
var behaviours = []struct {
	name string
	run  func(ctx context.Context, url string, hc *http.Client) error
}{
	{"call and close", func(ctx context.Context, url string, hc *http.Client) error {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil).
			Connect(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc})
		if err != nil {
			return err
		}
		defer cs.Close()
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fast"})
		return err
	}},
	{"cancel a slow call and close", func(ctx context.Context, url string, hc *http.Client) error {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "0"}, nil).
			Connect(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc})
		if err != nil {
			return err
		}
		defer cs.Close()
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow"})
		return nil
	}},
	{"drop a stream mid-call, resume, vanish", func(ctx context.Context, url string, hc *http.Client) error {
		p := &hostile.HTTPPeer{URL: url, Client: hc}
		if err := p.Initialize(ctx, "2025-11-25"); err != nil {
			return err
		}
		resp, err := p.Post(ctx, fmt.Sprintf(slowCall, 1, 1))
		if err != nil {
			return err
		}
		r := bufio.NewReader(resp.Body)
		var last string
		for range 3 {
			ev, err := hostile.ReadEvent(r)
			if err != nil {
				break
			}
			last = ev.ID
		}
		resp.Body.Close() // drop the stream mid-call
		if last == "" {
			return nil
		}
		resp, err = p.Get(ctx, last)
		if err != nil {
			return err
		}
		r = bufio.NewReader(resp.Body)
		for range 3 {
			if _, err := hostile.ReadEvent(r); err != nil {
				break
			}
		}
		resp.Body.Close() // and vanish without DELETE
		return nil
	}},
	{"post cancelled with the call open, vanish", func(ctx context.Context, url string, hc *http.Client) error {
		p := &hostile.HTTPPeer{URL: url, Client: hc}
		if err := p.Initialize(ctx, "2025-11-25"); err != nil {
			return err
		}
		resp, err := p.Post(ctx, fmt.Sprintf(slowCall, 7, 7))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, err := p.Post(ctx, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, n.Body)
		n.Body.Close()
		return nil // the call's stream is dropped unread
	}},
	{"initialize and vanish", func(ctx context.Context, url string, hc *http.Client) error {
		p := &hostile.HTTPPeer{URL: url, Client: hc}
		return p.Initialize(ctx, "2025-06-18")
	}},
	{"initialize without initialized, vanish", func(ctx context.Context, url string, hc *http.Client) error {
		p := &hostile.HTTPPeer{URL: url, Client: hc}
		resp, err := p.Post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"0"}}}`)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}},
}

// heapLive returns the bytes of live heap objects. Two collections empty
// sync.Pools, whose contents survive one.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoakHTTP runs many clients over Streamable HTTP that call, cancel,
// drop streams mid-call, resume and vanish, then checks that sessions,
// goroutines and heap come back to their baseline once the idle timeout
// has passed. It takes about half a minute; -short skips it.
func TestSoakHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test")
	}
	const (
		clients  = 16
		duration = 15 * time.Second
		idle     = time.Second
	)
	server := soakServer(t)
	h := mcp.NewStreamableHTTPHandler(server, &transport.StreamableHTTPOptions{
		EventStore:         transport.NewMemoryEventStore(&transport.MemoryEventStoreOptions{MaxAge: 2 * time.Second}),
		SessionIdleTimeout: idle,
	})
	url, closeServer := startHTTPServer(t, h)
	defer closeServer()
	defer h.Close()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	// A first round warms up pools and caches, so the baseline is fair.
	if err := behaviours[0].run(context.Background(), url, hc); err != nil {
		t.Fatal(err)
	}
	hc.CloseIdleConnections()
	baseGoroutines := runtime.NumGoroutine()
	baseHeap := heapLive()

	var (
		wg          sync.WaitGroup
		fails, peak atomic.Int64
	)
	counts := make([]atomic.Int64, len(behaviours))
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; ctx.Err() == nil; i++ {
				b := i % len(behaviours)
				rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
				err := behaviours[b].run(rctx, url, hc)
				rcancel()
				if err != nil && ctx.Err() == nil {
					fails.Add(1)
					t.Logf("%s: %v", behaviours[b].name, err)
				}
				counts[b].Add(1)
				if n := int64(len(h.SessionIDs())); n > peak.Load() {
					peak.Store(n)
				}
			}
		}()
	}
	wg.Wait()
	hc.CloseIdleConnections()
	for i, b := range behaviours {
		t.Logf("%-45s %d", b.name, counts[i].Load())
	}
	if n := fails.Load(); n > 0 {
		t.Errorf("%d rounds failed", n)
	}

	// Every session ends within a few idle timeouts.
	deadline := time.Now().Add(10 * idle)
	for len(h.SessionIDs()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling a bound, not synchronising
	}
	if n := len(h.SessionIDs()); n > 0 {
		t.Errorf("%d sessions still open %v after the clients stopped (idle timeout %v)", n, 10*idle, idle)
	}
	if n := len(server.Sessions()); n > 0 {
		t.Errorf("%d server sessions still open", n)
	}
	// Goroutines and heap come back to the baseline.
	var goroutines int
	for time.Now().Before(deadline.Add(5 * time.Second)) {
		hc.CloseIdleConnections()
		if goroutines = runtime.NumGoroutine(); goroutines <= baseGoroutines+2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	heap := heapLive()
	t.Logf("peak sessions %d; goroutines %d -> %d; live heap %.1f -> %.1f MiB",
		peak.Load(), baseGoroutines, goroutines, float64(baseHeap)/(1<<20), float64(heap)/(1<<20))
	if goroutines > baseGoroutines+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d, baseline %d\n%s", goroutines, baseGoroutines, buf[:runtime.Stack(buf, true)])
	}
	if heap > baseHeap+8<<20 {
		t.Errorf("live heap grew from %d to %d bytes", baseHeap, heap)
	}
}
