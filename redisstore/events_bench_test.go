package redisstore

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// BenchmarkEventStore measures a stored event (Write: XADD and PEXPIRE in
// one round trip) and the replay of 100 events (After: an XRANGE per
// batch of 100 entries of the session's log) on a local redis-server,
// with the Redis commands each sends.
func BenchmarkEventStore(b *testing.B) {
	if serverAddr == "" {
		b.Skip("redisstore: no redis-server on PATH")
	}
	c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	n := new(counter)
	c.AddHook(n)
	s, err := NewEventStore(c, &EventStoreOptions{Prefix: testPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
	b.Run("Write", func(b *testing.B) {
		seq := int64(0)
		b.ReportAllocs()
		start := n.n.Load()
		for b.Loop() {
			seq++
			if _, err := s.Write(ctx, "bench-w", "1", transport.LogEvent{Seq: seq, Data: data}); err != nil {
				b.Fatal(err)
			}
		}
		reportCommands(b, n, start)
	})
	b.Run("Replay100", func(b *testing.B) {
		begin := s.StreamStart("bench-r", "1")
		for k := 1; k <= 100; k++ {
			if _, err := s.Write(ctx, "bench-r", "1", transport.LogEvent{Seq: int64(k), Data: data}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		start := n.n.Load()
		for b.Loop() {
			if _, evs, err := s.After(ctx, "bench-r", begin); err != nil || len(evs) != 100 {
				b.Fatal(len(evs), err)
			}
		}
		reportCommands(b, n, start)
	})
	s.DeleteSession(ctx, "bench-w")
	s.DeleteSession(ctx, "bench-r")
}
