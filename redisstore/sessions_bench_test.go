package redisstore

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// benchSessionStore returns a session store on the private redis-server
// with its command counter, or skips b when none runs.
func benchSessionStore(b *testing.B) (*SessionStore, *counter) {
	b.Helper()
	if serverAddr == "" {
		b.Skip("redisstore: no redis-server on PATH")
	}
	c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	n := &counter{}
	c.AddHook(n)
	s, err := NewSessionStore(c, &SessionStoreOptions{Prefix: testPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	return s, n
}

// BenchmarkSessionStoreOps measures each operation of the Redis session
// store, with the Redis commands each sends.
func BenchmarkSessionStoreOps(b *testing.B) {
	ctx := context.Background()
	ring := mcp.NewRandomKeyRing()
	newRec := func() *transport.SessionRecord {
		return &transport.SessionRecord{ID: ring.MintSessionID(), Peer: "cGVlcg", State: []byte(`{"protocolVersion":"2025-06-18","logLevel":"info"}`), Expires: time.Now().Add(time.Minute)}
	}
	lim := transport.SessionLimits{MaxSessions: 1 << 30, MaxSessionsPerPeer: 1 << 30}
	b.Run("CreateDelete", func(b *testing.B) {
		s, n := benchSessionStore(b)
		n.n.Store(0)
		for b.Loop() {
			rec := newRec()
			if err := s.Create(ctx, rec, lim); err != nil {
				b.Fatal(err)
			}
			if err := s.Delete(ctx, rec.ID); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n.n.Load())/float64(b.N), "commands/op")
	})
	for _, op := range []string{"Get", "Touch", "Update"} {
		b.Run(op, func(b *testing.B) {
			s, n := benchSessionStore(b)
			rec := newRec()
			if err := s.Create(ctx, rec, lim); err != nil {
				b.Fatal(err)
			}
			n.n.Store(0)
			for b.Loop() {
				var err error
				switch op {
				case "Get":
					_, err = s.Get(ctx, rec.ID)
				case "Touch":
					_, err = s.Touch(ctx, rec.ID, time.Now().Add(time.Minute))
				case "Update":
					err = s.Update(ctx, rec)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n.n.Load())/float64(b.N), "commands/op")
		})
	}
}

// BenchmarkSessionStoreCall measures a tools/call of the handshake era
// over Streamable HTTP with no session store, the memory one and the
// Redis one (default SessionRecheck), with the Redis commands per call.
func BenchmarkSessionStoreCall(b *testing.B) {
	for _, kind := range []string{"none", "memory", "redis"} {
		b.Run(kind, func(b *testing.B) {
			opts := &transport.StreamableHTTPOptions{}
			var n *counter
			switch kind {
			case "memory":
				opts.SessionStore = transport.NewMemorySessionStore(nil)
			case "redis":
				opts.SessionStore, n = benchSessionStore(b)
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			type in struct {
				X int `json:"x"`
			}
			mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (in, error) { return in, nil })
			h := mcp.NewStreamableHTTPHandler(s, opts)
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.Close()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Era: mcp.EraHandshake})
			ctx := context.Background()
			cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "echo", Arguments: []byte(`{"x":1}`)}
			if n != nil {
				n.n.Store(0)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
			if n != nil {
				b.ReportMetric(float64(n.n.Load())/float64(b.N), "commands/op")
			}
		})
	}
}
