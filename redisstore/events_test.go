package redisstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
		o.MaxEvents = opts.Retain
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

// TestEventStoreKeys checks the key layout: a session's events, of all
// its streams, are one Redis Stream under its hash tag with a TTL of at
// most MaxAge, one entry per event; priming events write nothing; none
// remains after DeleteSession; invalid session and stream IDs build no
// key.
func TestEventStoreKeys(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxAge: time.Minute})
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
			for _, stream := range []string{"1", "get", "3"} {
				for k := 1; k <= 3; k++ {
					if _, err := s.Write(ctx, sid, stream, transport.LogEvent{Seq: int64(k), Data: []byte("x")}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := s.Append(ctx, sid, "get", []byte("y")); err != nil {
				t.Fatal(err)
			}
			keys := keysUnder(t, c, prefix)
			want := prefix + "ev:{" + sid + "}:l"
			if ttl, ok := keys[want]; len(keys) != 1 || !ok || ttl <= 0 || ttl > time.Minute {
				t.Fatalf("keys %v, want %s alone, with a TTL of at most a minute", keys, want)
			}
			if n, err := c.XLen(ctx, want).Result(); err != nil || n != 10 {
				t.Errorf("the log holds %d entries (%v), want one per event (10)", n, err)
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
			if got := keysUnder(t, c, prefix); len(got) != 1 {
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

// TestEventStoreSessionBound checks MaxEvents on a busy session: however
// many streams it opens (a call's each), its log keeps about MaxEvents
// events, the oldest go first (resuming from them is refused), and a
// stream that is still written, such as the GET stream, resumes from its
// recent events; the log's TTL is at most MaxAge.
func TestEventStoreSessionBound(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			const maxEvents = 30
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxAge: time.Minute, MaxEvents: maxEvents})
			if err != nil {
				t.Fatal(err)
			}
			const sid = "sess-1"
			write := func(stream string, seq int64, end bool) string {
				t.Helper()
				id, err := s.Write(ctx, sid, stream, transport.LogEvent{Seq: seq, Data: []byte(stream), End: end})
				if err != nil {
					t.Fatal(err)
				}
				return id
			}
			first := write("1", 1, true)
			get := int64(0)
			var getID string
			for k := 10; k < 1010; k++ {
				write(strconv.Itoa(k), 1, true)
				if k%100 == 0 {
					get++
					getID = write("get", get, false)
				}
			}
			key := prefix + "ev:{" + sid + "}:l"
			// XADD MAXLEN ~ trims whole macro-nodes (100 entries by
			// default): the log keeps at most about that many more.
			if n, err := c.XLen(ctx, key).Result(); err != nil || n < maxEvents || n > maxEvents+150 {
				t.Errorf("the log holds %d entries (%v) after 1010 events, want about %d", n, err, maxEvents)
			}
			if _, evs, err := s.After(ctx, sid, first); !errors.Is(err, transport.ErrEventNotFound) {
				t.Errorf("resuming the first call's stream, trimmed: %d events, %v; want ErrEventNotFound", len(evs), err)
			}
			if _, evs, err := s.After(ctx, sid, getID); err != nil || len(evs) != 0 {
				t.Errorf("resuming the GET stream from its last event: %d events, %v; want none", len(evs), err)
			}
			next := write("get", get+1, false)
			if _, evs, err := s.After(ctx, sid, getID); err != nil || len(evs) != 1 || evs[0].ID != next {
				t.Errorf("resuming the GET stream: %+v, %v; want its next event", evs, err)
			}
			for k, ttl := range keysUnder(t, c, prefix) {
				if ttl <= 0 || ttl > time.Minute {
					t.Errorf("key %s: TTL %v", k, ttl)
				}
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

// TestEventStoreMaxAge: an event older than MaxAge is refused as
// unknown, even while the log keeps it.
func TestEventStoreMaxAge(t *testing.T) {
	b := backends()[0]
	c, prefix := b.client(t), testPrefix()
	s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// An entry written as if two minutes ago, then a fresh one.
	old := time.Now().Add(-2 * time.Minute).UnixMilli()
	entry := strconv.FormatInt(old, 10) + "-0"
	if err := c.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "ev:{s}:l", ID: entry, Values: []any{"s", "1", "q", "1", "d", "a"}}).Err(); err != nil {
		t.Fatal(err)
	}
	oldID := position{stream: "1", tag: s.tag("s"), seq: 1, entry: entry}.eventID()
	if _, err := s.Write(ctx, "s", "1", transport.LogEvent{Seq: 2, Data: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if _, evs, err := s.After(ctx, "s", oldID); !errors.Is(err, transport.ErrEventNotFound) {
		t.Fatalf("After(an event of two minutes ago, MaxAge a minute) = %d events, %v; want ErrEventNotFound", len(evs), err)
	}
	s.opts.MaxAge = 3 * time.Minute
	if _, evs, err := s.After(ctx, "s", oldID); err != nil || len(evs) != 1 {
		t.Fatalf("After(the same, MaxAge three minutes) = %d events, %v; want 1", len(evs), err)
	}
	s.DeleteSession(ctx, "s")
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
	id := position{stream: "1", tag: s.tag("s"), seq: 1, entry: "1-0"}.eventID()
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

// TestEventStoreInterleaved: a session's streams share its log, so a read
// pages through the other streams' entries (Batch 3, four streams written
// in turn), and a tail woken by another stream's events keeps waiting for
// its own.
func TestEventStoreInterleaved(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout, Batch: 3, TailBlock: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			streams := []string{"a", "b", "c", "d"}
			ids := map[string][]string{}
			for k := 1; k <= 10; k++ {
				for _, st := range streams {
					id, err := s.Write(ctx, "s", st, transport.LogEvent{Seq: int64(k), Data: []byte(st + strconv.Itoa(k))})
					if err != nil {
						t.Fatal(err)
					}
					ids[st] = append(ids[st], id)
				}
			}
			for _, st := range streams {
				for _, from := range []string{s.StreamStart("s", st), ids[st][0], ids[st][6]} {
					_, evs, err := s.After(ctx, "s", from)
					if err != nil {
						t.Fatalf("After(%s): %v", from, err)
					}
					want := ids[st]
					if from != s.StreamStart("s", st) {
						want = want[slices.Index(want, from)+1:]
					}
					if len(evs) != len(want) {
						t.Fatalf("After(%s) = %d events, want %d", from, len(evs), len(want))
					}
					for i, e := range evs {
						if e.ID != want[i] || !strings.HasPrefix(string(e.Data), st) {
							t.Fatalf("After(%s) event %d = %s %q, want %s", from, i, e.ID, e.Data, want[i])
						}
					}
				}
			}
			// A tail of stream a, at its end: stream b's entries, written
			// after the read that found nothing, come first to its
			// blocking read, which skips them and goes on until a's own.
			p, _ := parseEventID(ids["a"][9])
			r, err := s.read(ctx, "s", p)
			if err != nil || len(r.events) != 0 || r.ended {
				t.Fatalf("read(a's last event) = %+v, %v", r, err)
			}
			for k := 11; k <= 15; k++ {
				if _, err := s.Write(ctx, "s", "b", transport.LogEvent{Seq: int64(k), Data: []byte("b")}); err != nil {
					t.Fatal(err)
				}
			}
			got := make(chan readResult, 1)
			go func() {
				r, err := s.wait(ctx, "s", p, r, 5*time.Second)
				if err != nil {
					t.Errorf("wait: %v", err)
				}
				got <- r
			}()
			next, err := s.Write(ctx, "s", "a", transport.LogEvent{Seq: 11, Data: []byte("a11"), End: true})
			if err != nil {
				t.Fatal(err)
			}
			if r := <-got; len(r.events) != 1 || r.events[0].ID != next || !r.ended {
				t.Fatalf("the tail of stream a got %+v, want its event 11 and its end", r)
			}
			s.DeleteSession(ctx, "s")
		})
	}
}

// pipelineCounter counts the pipelines of XADD a client sends.
type pipelineCounter struct{ n atomic.Int64 }

func (c *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "xadd" {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// TestEventStoreWriteBatch: writes that arrive while a round trip is
// under way go together in the next one, sent by the first of them; and
// many concurrent writers (8 streams of 50 events) each find their events
// stored, in order, once.
func TestEventStoreWriteBatch(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			c, prefix := b.client(t), testPrefix()
			pipes := new(pipelineCounter)
			c.AddHook(pipes)
			s, err := NewEventStore(c, &EventStoreOptions{Prefix: prefix, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			// A round trip under way: the writes queue behind it.
			s.batch.mu.Lock()
			s.batch.sending = true
			s.batch.mu.Unlock()
			const n = 20
			type result struct {
				stream, id string
				err        error
			}
			results := make(chan result, n)
			for i := range n {
				go func() {
					st := "q" + strconv.Itoa(i)
					id, err := s.Write(ctx, "s", st, transport.LogEvent{Seq: 1, Data: []byte(st)})
					results <- result{st, id, err}
				}()
			}
			for queued := 0; queued < n; {
				runtime.Gosched()
				s.batch.mu.Lock()
				queued = len(s.batch.queue)
				s.batch.mu.Unlock()
			}
			// The round trip ends: the first waiting write sends the rest.
			before := pipes.n.Load()
			s.batch.mu.Lock()
			s.batch.queue[0].lead = true
			close(s.batch.queue[0].done)
			s.batch.mu.Unlock()
			for range n {
				r := <-results
				if r.err != nil {
					t.Fatalf("Write(%s): %v", r.stream, r.err)
				}
				_, evs, err := s.After(ctx, "s", s.StreamStart("s", r.stream))
				if err != nil || len(evs) != 1 || evs[0].ID != r.id || string(evs[0].Data) != r.stream {
					t.Fatalf("After(start of %s) = %+v, %v; want its event %s", r.stream, evs, err, r.id)
				}
			}
			if got := pipes.n.Load() - before; got != 1 {
				t.Errorf("%d writes queued behind a round trip went in %d round trips, want 1", n, got)
			}
			s.batch.mu.Lock()
			if s.batch.sending || len(s.batch.queue) != 0 {
				t.Errorf("after the writes: sending %v, %d queued", s.batch.sending, len(s.batch.queue))
			}
			s.batch.mu.Unlock()

			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					st := "w" + strconv.Itoa(i)
					for k := 1; k <= 50; k++ {
						if _, err := s.Write(ctx, "s", st, transport.LogEvent{Seq: int64(k), Data: []byte(st + "." + strconv.Itoa(k)), End: k == 50}); err != nil {
							t.Errorf("Write(%s, %d): %v", st, k, err)
							return
						}
					}
				})
			}
			wg.Wait()
			for i := range 8 {
				st := "w" + strconv.Itoa(i)
				_, evs, err := s.After(ctx, "s", s.StreamStart("s", st))
				if err != nil || len(evs) != 50 {
					t.Fatalf("After(start of %s) = %d events, %v; want 50", st, len(evs), err)
				}
				for k, e := range evs {
					if string(e.Data) != st+"."+strconv.Itoa(k+1) {
						t.Fatalf("%s event %d = %q", st, k+1, e.Data)
					}
				}
			}
			s.DeleteSession(ctx, "s")
		})
	}
}
