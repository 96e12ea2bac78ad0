package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// newTestEventStore returns an event store on c with the suite's bounds,
// a short blocking read (so that tails notice a deleted session soon) and
// the generous test timeout.
func newTestEventStore(t *testing.T, c redis.UniversalClient, prefix string, opts mcptest.EventStoreSuiteOptions) *EventStore {
	t.Helper()
	o := &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxTails: opts.MaxTails, TailBlock: 100 * time.Millisecond}
	if opts.Retain > 0 {
		o.MaxStreamEvents = opts.Retain
	}
	s, err := NewEventStore(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deleteUnder deletes the keys under prefix, as a Redis restarted empty
// would have lost them.
func deleteUnder(t *testing.T, c redis.UniversalClient, prefix string) {
	t.Helper()
	for k := range keysUnder(t, c, prefix) {
		if err := c.Del(t.Context(), k).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEventStoreSuite runs the transport event log suite on each backend.
func TestEventStoreSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.EventStoreSuite(t, func(t *testing.T, opts mcptest.EventStoreSuiteOptions) (transport.EventLog, func()) {
				c, prefix := b.client(t), testPrefix()
				return newTestEventStore(t, c, prefix, opts), func() { deleteUnder(t, c, prefix) }
			})
		})
	}
}

// TestEventStoreKeys checks the key layout: every key of a session has
// its hash tag and a TTL of at most MaxAge, one Redis Stream per SSE
// stream and the session's meta hash; priming events write nothing; none
// remains after DeleteSession; invalid session and stream IDs build no
// key.
func TestEventStoreKeys(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxAge: time.Minute, MaxSessionStreams: 2})
			if err != nil {
				t.Fatal(err)
			}
			const sid = "AbC-_x.y"
			if id, err := s.Append(ctx, sid, "1", nil); err != nil || id != s.StreamStart(sid, "1") {
				t.Fatalf("priming Append = %q, %v; want the stream's start", id, err)
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("a priming event wrote %v", keys)
			}
			for _, stream := range []string{"1", "get"} {
				for k := 1; k <= 3; k++ {
					if _, err := s.Write(ctx, sid, stream, transport.LogEvent{Seq: int64(k), Data: []byte("x")}); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A third stream is over MaxSessionStreams.
			if _, err := s.Write(ctx, sid, "3", transport.LogEvent{Seq: 1, Data: []byte("x")}); !errors.Is(err, ErrStreamLimit) {
				t.Fatalf("a third stream with MaxSessionStreams 2: %v", err)
			}
			// A stream whose events expired does not count.
			if err := c.Del(ctx, prefix+"ev:{"+sid+"}:s:get").Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(ctx, sid, "3", transport.LogEvent{Seq: 1, Data: []byte("x")}); err != nil {
				t.Fatalf("a new stream once another expired: %v", err)
			}
			if _, err := s.Write(ctx, sid, "4", transport.LogEvent{Seq: 1, Data: []byte("x")}); !errors.Is(err, ErrStreamLimit) {
				t.Fatalf("a third live stream with MaxSessionStreams 2: %v", err)
			}
			// The expired stream, written again, is a new log (a new
			// epoch): MaxSessionStreams counts it again.
			if err := c.Del(ctx, prefix+"ev:{"+sid+"}:s:3").Err(); err != nil {
				t.Fatal(err)
			}
			for k := 1; k <= 3; k++ {
				if _, err := s.Write(ctx, sid, "get", transport.LogEvent{Seq: int64(3 + k), Data: []byte("x")}); err != nil {
					t.Fatal(err)
				}
			}
			keys := keysUnder(t, c, prefix)
			want := []string{prefix + "ev:{" + sid + "}:m", prefix + "ev:{" + sid + "}:s:1", prefix + "ev:{" + sid + "}:s:get"}
			if len(keys) != len(want) {
				t.Fatalf("keys %v, want %v", keys, want)
			}
			for _, k := range want {
				if ttl, ok := keys[k]; !ok || ttl <= 0 || ttl > time.Minute {
					t.Errorf("key %s: TTL %v (present %v)", k, ttl, ok)
				}
			}
			if n, err := c.XLen(ctx, want[1]).Result(); err != nil || n != 3 {
				t.Errorf("stream 1 holds %d entries (%v), want one per event", n, err)
			}
			for _, bad := range []string{"", "{x}", "a}b", "a b", "a\n", strings.Repeat("s", MaxSessionIDBytes+1)} {
				if _, err := s.Write(ctx, bad, "1", transport.LogEvent{Seq: 1, Data: []byte("x")}); err == nil {
					t.Errorf("Write with session ID %q succeeded", bad)
				}
				s.DeleteSession(ctx, bad)
			}
			for _, bad := range []string{"", "a:b", "{1}", "1 2", "*", strings.Repeat("1", MaxStreamIDBytes+1)} {
				if _, err := s.Write(ctx, sid, bad, transport.LogEvent{Seq: 1, Data: []byte("x")}); err == nil {
					t.Errorf("Write with stream ID %q succeeded", bad)
				}
			}
			if got := keysUnder(t, c, prefix); len(got) != len(want) {
				t.Fatalf("invalid IDs made keys: %v", got)
			}
			if err := s.DeleteSession(ctx, sid); err != nil {
				t.Fatal(err)
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("after DeleteSession: %v", keys)
			}
		})
	}
}

// TestEventStoreForgetsEnded checks MaxSessionStreams on a busy session:
// a new stream past the bound makes the session forget the stream that
// ended first (its events no longer resume), never a live one; with no
// ended stream the write fails with ErrStreamLimit. Many calls of one
// session keep its keys within the bound (each call's stream ends), and
// every key has a TTL.
func TestEventStoreForgetsEnded(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxAge: time.Minute, MaxSessionStreams: 2})
			if err != nil {
				t.Fatal(err)
			}
			const sid = "sess-1"
			write := func(stream string, seq int64, end bool) (string, error) {
				return s.Write(ctx, sid, stream, transport.LogEvent{Seq: seq, Data: []byte(stream), End: end})
			}
			must := func(id string, err error) string {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			first := must(write("1", 1, false))
			must(write("1", 2, true))
			getID := must(write("get", 1, false))
			must(write("get", 2, false))
			// Stream 2 is over the bound: stream 1, ended, is forgotten.
			two := must(write("2", 1, false))
			if _, evs, err := s.After(ctx, sid, first); !errors.Is(err, transport.ErrEventNotFound) {
				t.Errorf("resuming the forgotten stream 1: %d events, %v; want ErrEventNotFound", len(evs), err)
			}
			if _, evs, err := s.After(ctx, sid, getID); err != nil || len(evs) != 1 {
				t.Errorf("resuming the live GET stream: %d events, %v; want 1", len(evs), err)
			}
			// Both streams live: one more is refused.
			if _, err := write("3", 1, true); !errors.Is(err, ErrStreamLimit) {
				t.Fatalf("a third stream, none ended: %v; want ErrStreamLimit", err)
			}
			must(write("2", 2, true))
			must(write("3", 1, true))
			if _, evs, err := s.After(ctx, sid, two); !errors.Is(err, transport.ErrEventNotFound) {
				t.Errorf("resuming stream 2, forgotten once ended: %d events, %v", len(evs), err)
			}
			// A busy session: many calls, each an ended stream.
			for k := 10; k < 60; k++ {
				must(write(strconv.Itoa(k), 1, true))
			}
			keys := keysUnder(t, c, prefix)
			streams := 0
			for k, ttl := range keys {
				if strings.Contains(k, "}:s:") {
					streams++
				}
				if ttl <= 0 || ttl > time.Minute {
					t.Errorf("key %s: TTL %v", k, ttl)
				}
			}
			if streams != 2 {
				t.Errorf("%d stream keys after 50 calls, want MaxSessionStreams (2): %v", streams, keys)
			}
			meta, _ := s.sessionKeys(sid)
			if n, err := c.HLen(ctx, meta).Result(); err != nil || n > 1+3*2 {
				t.Errorf("the meta hash holds %d fields (%v), want at most %d", n, err, 1+3*2)
			}
			if n, err := c.ZCard(ctx, endedKey(meta)).Result(); err != nil || n > 2 {
				t.Errorf("the ended set holds %d members (%v), want at most 2", n, err)
			}
			if _, evs, err := s.After(ctx, sid, getID); err != nil || len(evs) != 1 {
				t.Errorf("the live GET stream after 50 calls: %d events, %v; want 1", len(evs), err)
			}
			if err := s.DeleteSession(ctx, sid); err != nil {
				t.Fatal(err)
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("after DeleteSession: %v", keys)
			}
		})
	}
}

// TestEventStoreTimeout: a Redis that does not answer fails a write within
// the store's Timeout (a listener that accepts and never replies).
func TestEventStoreDown(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s, err := NewEventStore(c, &EventStoreOptions{Prefix: testPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Write(ctx, "s", "1", transport.LogEvent{Seq: 1, Data: []byte("x")}); err == nil {
		t.Fatal("Write with Redis down succeeded")
	}
	id := position{stream: "1", epoch: "0123456789ab", seq: 1, entry: "1-0"}.eventID()
	if _, _, err := s.After(ctx, "s", id); err == nil || errors.Is(err, transport.ErrEventNotFound) {
		t.Fatalf("After with Redis down: %v; want an error other than ErrEventNotFound", err)
	}
}

// TestEventStoreTailGoroutines: tails ended by a write, their context,
// their bounded wait and DeleteSession leave no goroutine once the client
// is closed (the store starts none).
func TestEventStoreTailGoroutines(t *testing.T) {
	b := backends()[len(backends())-1]
	c := b.client(t)
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		t.Cleanup(func() { c.Close() })
		s := newTestEventStore(t, c, testPrefix(), mcptest.EventStoreSuiteOptions{})
		first, err := s.Write(ctx, "s", "1", transport.LogEvent{Seq: 1, Data: []byte("a")})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 3)
		tail := func(ctx context.Context) {
			for {
				b, err := s.Tail(ctx, "s", first)
				if err != nil || len(b.Events) > 0 {
					done <- err
					return
				}
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		go tail(cctx)
		go tail(ctx)
		cancel()
		if _, err := s.Write(ctx, "s", "1", transport.LogEvent{Seq: 2, Data: []byte("b")}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
		}
		second, _ := s.Write(ctx, "s", "1", transport.LogEvent{Seq: 3, Data: []byte("c")})
		go func() {
			for {
				b, err := s.Tail(ctx, "s", second)
				if err != nil || len(b.Events) > 0 {
					done <- err
					return
				}
			}
		}()
		if err := s.DeleteSession(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, transport.ErrEventNotFound) {
			t.Fatalf("a tail of a deleted session: %v", err)
		}
	})
}

// FuzzParseEventID: an event ID the store accepts is its own spelling of
// a position (no second spelling of one event, no range syntax, brace or
// space), within the length bound.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"1:0:0:0-0", "get:0123456789ab:12:1795740475669-3", "a-b.c_d:0123456789ab:1:1-0",
		"1:0123456789ab:01:1-0", "1:0123456789AB:1:1-0", "1:0:1:1-0", "1:x:1:1-0", "{1}:0:0:0-0", "1:0:0:(0-0", "1:0:0:+", "1:0:0:-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, ok := parseEventID(id)
		if !ok {
			return
		}
		if got := p.eventID(); got != id {
			t.Fatalf("%q parses to a position spelt %q", id, got)
		}
		if len(id) > transport.MaxEventIDBytes || strings.ContainsAny(id, "{}()+ $*\n") || !validStreamID(p.stream) {
			t.Fatalf("accepted %q", id)
		}
	})
}
