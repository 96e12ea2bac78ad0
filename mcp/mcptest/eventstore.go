package mcptest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// EventStoreSuiteOptions are the bounds [EventStoreSuite] asks a store
// for. The zero value of a field means the store's default.
type EventStoreSuiteOptions struct {
	// MaxTails is how many [transport.EventLog.Tail] calls may wait at
	// once; more are refused with [transport.ErrTailLimit].
	MaxTails int
	// Retain, when positive, asks the store to keep only about the last
	// Retain events of a stream: it may keep more (Redis trims streams
	// approximately), but not ten times as many. The suite's events carry
	// EventStoreSuiteEventBytes bytes of data each, for stores bounded by
	// size.
	Retain int
}

// EventStoreSuiteEventBytes is the size of the data of each event the
// suite stores.
const EventStoreSuiteEventBytes = 64

// EventStoreSuite checks that the stores newStore makes behave as
// [transport.EventLog] says: events of a stream replayed in order after
// any of their IDs; an event numbered by the store after the stream's
// last (Seq 0); a tail that gets every event of a stream exactly once
// and in order while another goroutine writes it, and stops at the
// stream's end; gaps (a write marked as following a lost event, or whose
// number does not follow the last stored) refusing the resumptions that
// cross them; event IDs that never resolve in another store, another
// session or, when the store can lose its data, after it did; invalid IDs
// (range syntax, braces, absurd lengths) refused without waiting;
// DeleteSession; the bound on waiting tails and the trimming of long
// streams.
//
// newStore must return a new, empty store honouring opts, and lose, when
// the store can lose what it holds (a Redis restarted empty), a function
// that makes it lose everything while it stays in use; lose may be nil.
// The suite closes stores that implement io.Closer at the end of each
// subtest.
func EventStoreSuite(t *testing.T, newStore func(t *testing.T, opts EventStoreSuiteOptions) (store transport.EventLog, lose func())) {
	for _, tc := range eventStoreCases {
		t.Run(tc.name, func(t *testing.T) {
			store, lose := newStore(t, tc.opts)
			if c, ok := store.(interface{ Close() error }); ok {
				t.Cleanup(func() { c.Close() })
			}
			h := &logHarness{t: t, ctx: context.Background(), store: store, lose: lose, newStore: newStore}
			tc.run(h)
		})
	}
}

// logHarness is what a case of the event store suite works with.
type logHarness struct {
	t        *testing.T
	ctx      context.Context
	store    transport.EventLog
	lose     func()
	newStore func(t *testing.T, opts EventStoreSuiteOptions) (transport.EventLog, func())
}

// eventData returns the data of event k of a stream, of
// EventStoreSuiteEventBytes bytes.
func eventData(stream string, k int) []byte {
	s := fmt.Sprintf(`{"s":%q,"k":%d,"p":"`, stream, k)
	return []byte(s + strings.Repeat("x", max(EventStoreSuiteEventBytes-len(s)-2, 0)) + `"}`)
}

// write stores event k of the stream, failing the test on error.
func (h *logHarness) write(session, stream string, e transport.LogEvent) string {
	h.t.Helper()
	if e.Data == nil {
		e.Data = eventData(stream, int(e.Seq))
	}
	id, err := h.store.Write(h.ctx, session, stream, e)
	if err != nil {
		h.t.Fatalf("Write(%q, %q, %d): %v", session, stream, e.Seq, err)
	}
	if id == "" {
		h.t.Fatalf("Write(%q, %q, %d): empty event ID", session, stream, e.Seq)
	}
	return id
}

// writeN stores events 1 to n of the stream, the last marked as its end
// when end is set, and returns their IDs.
func (h *logHarness) writeN(session, stream string, n int, end bool) []string {
	h.t.Helper()
	ids := make([]string, n)
	for k := 1; k <= n; k++ {
		ids[k-1] = h.write(session, stream, transport.LogEvent{Seq: int64(k), End: end && k == n})
	}
	return ids
}

// after returns the events After returns, failing the test on error.
func (h *logHarness) after(session, last string) []transport.StoredEvent {
	h.t.Helper()
	_, evs, err := h.store.After(h.ctx, session, last)
	if err != nil {
		h.t.Fatalf("After(%q, %q): %v", session, last, err)
	}
	return evs
}

// wantEvents fails the test unless evs are events from..to of the stream
// with the given IDs (ids[k-1] for event k).
func (h *logHarness) wantEvents(what string, evs []transport.StoredEvent, stream string, ids []string, from, to int) {
	h.t.Helper()
	if len(evs) != to-from+1 {
		h.t.Fatalf("%s: %d events, want events %d to %d", what, len(evs), from, to)
	}
	for i, e := range evs {
		k := from + i
		if string(e.Data) != string(eventData(stream, k)) || (ids != nil && e.ID != ids[k-1]) {
			h.t.Fatalf("%s: event %d is %s %q, want %s %q", what, i, e.ID, e.Data, ids[k-1], eventData(stream, k))
		}
	}
}

// wantNotFound fails the test unless both After and Tail refuse last
// with ErrEventNotFound, without waiting (the Tail's context is already
// cancelled: a Tail that waited would return its error).
func (h *logHarness) wantNotFound(session, last string) {
	h.t.Helper()
	if _, evs, err := h.store.After(h.ctx, session, last); !errors.Is(err, transport.ErrEventNotFound) {
		h.t.Fatalf("After(%q, %.80q) = %d events, %v; want ErrEventNotFound", session, last, len(evs), err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	if b, err := h.store.Tail(ctx, session, last); !errors.Is(err, transport.ErrEventNotFound) {
		h.t.Fatalf("Tail(%q, %.80q) = %d events, %v; want ErrEventNotFound", session, last, len(b.Events), err)
	}
}

// tailAll follows the stream from last until its end, failing the test
// on error, and returns every event it got.
func (h *logHarness) tailAll(ctx context.Context, session, last string) ([]transport.StoredEvent, error) {
	var all []transport.StoredEvent
	for {
		b, err := h.store.Tail(ctx, session, last)
		if err != nil {
			return all, err
		}
		all = append(all, b.Events...)
		if len(b.Events) > 0 {
			last = b.Events[len(b.Events)-1].ID
		}
		if b.Ended {
			return all, nil
		}
	}
}

// suiteDeadline bounds the waits of the suite: a store that never wakes a
// tail fails rather than hangs.
const suiteDeadline = 30 * time.Second

var eventStoreCases = []struct {
	name string
	opts EventStoreSuiteOptions
	run  func(h *logHarness)
}{
	{name: "AfterLast", run: func(h *logHarness) {
		// Seq 0 numbers the event after the stream's last: a resumption
		// from before it replays the writer's events, then it, with
		// no gap; on a stream with none, it is the first.
		ids := h.writeN("s1", "get.a", 3, false)
		data := eventData("get.a", 4)
		id4, err := h.store.Write(h.ctx, "s1", "get.a", transport.LogEvent{Data: data})
		if err != nil || id4 == "" {
			h.t.Fatalf("Write(Seq 0) = %q, %v", id4, err)
		}
		h.wantEvents("After(event 2)", h.after("s1", ids[1]), "get.a", append(ids, id4), 3, 4)
		id5, err := h.store.Write(h.ctx, "s1", "get.a", transport.LogEvent{Data: eventData("get.a", 5)})
		if err != nil {
			h.t.Fatal(err)
		}
		h.wantEvents("After(event 3)", h.after("s1", ids[2]), "get.a", append(ids, id4, id5), 4, 5)
		start := h.store.StreamStart("s1", "get.b")
		first, err := h.store.Write(h.ctx, "s1", "get.b", transport.LogEvent{Data: eventData("get.b", 1)})
		if err != nil {
			h.t.Fatal(err)
		}
		h.wantEvents("After(start) of a stream begun with Seq 0", h.after("s1", start), "get.b", []string{first}, 1, 1)
	}},
	{name: "Order", run: func(h *logHarness) {
		start := h.store.StreamStart("s1", "1")
		var ids []string
		for k := 1; k <= 20; k++ {
			ids = append(ids, h.write("s1", "1", transport.LogEvent{Seq: int64(k)}))
			h.write("s1", "2", transport.LogEvent{Seq: int64(k)}) // another stream, interleaved
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] || id == start {
				h.t.Fatalf("event ID %q given twice", id)
			}
			seen[id] = true
		}
		if id, evs, err := h.store.After(h.ctx, "s1", start); err != nil || id != "1" {
			h.t.Fatalf("After(start) = %q, %v", id, err)
		} else {
			h.wantEvents("After(start)", evs, "1", ids, 1, 20)
		}
		h.wantEvents("After(event 10)", h.after("s1", ids[9]), "1", ids, 11, 20)
		h.wantEvents("After(event 20)", h.after("s1", ids[19]), "1", ids, 21, 20)
		// A tail returns what is stored at once, in order.
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		b, err := h.store.Tail(ctx, "s1", ids[4])
		if err != nil || b.StreamID != "1" || len(b.Events) == 0 || b.Ended {
			h.t.Fatalf("Tail(event 5) = %+v, %v", b, err)
		}
		h.wantEvents("Tail(event 5)", b.Events, "1", ids, 6, 5+len(b.Events))
		// The start of a stream with no events yet.
		if again := h.store.StreamStart("s1", "3"); again == "" {
			h.t.Fatal("empty StreamStart")
		} else if evs := h.after("s1", again); len(evs) != 0 {
			h.t.Fatalf("After(start of a stream with no events) = %d events", len(evs))
		}
	}},
	{name: "ExactlyOnceWithConcurrentWriter", run: func(h *logHarness) {
		const n = 300
		start := h.store.StreamStart("s1", "1")
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		var (
			mu  sync.Mutex
			ids = make([]string, n)
		)
		midway := make(chan string, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			for k := 1; k <= n; k++ {
				id, err := h.store.Write(h.ctx, "s1", "1", transport.LogEvent{Seq: int64(k), Data: eventData("1", k), End: k == n})
				if err != nil {
					h.t.Errorf("Write(%d): %v", k, err)
					cancel()
					return
				}
				mu.Lock()
				ids[k-1] = id
				mu.Unlock()
				if k == n/3 {
					midway <- id
				}
			}
		})
		type result struct {
			evs []transport.StoredEvent
			err error
		}
		fromStart, fromMidway := make(chan result, 1), make(chan result, 1)
		wg.Go(func() {
			evs, err := h.tailAll(ctx, "s1", start)
			fromStart <- result{evs, err}
		})
		wg.Go(func() {
			select {
			case id := <-midway:
				evs, err := h.tailAll(ctx, "s1", id)
				fromMidway <- result{evs, err}
			case <-ctx.Done():
				fromMidway <- result{err: ctx.Err()}
			}
		})
		wg.Wait()
		for _, c := range []struct {
			name string
			r    result
			from int
		}{{"from the start", <-fromStart, 1}, {"from midway", <-fromMidway, n/3 + 1}} {
			if c.r.err != nil {
				h.t.Fatalf("tail %s: %v after %d events", c.name, c.r.err, len(c.r.evs))
			}
			h.wantEvents("tail "+c.name, c.r.evs, "1", ids, c.from, n)
		}
	}},
	{name: "EndOfStream", run: func(h *logHarness) {
		ids := h.writeN("s1", "1", 3, true)
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		b, err := h.store.Tail(ctx, "s1", ids[2])
		if err != nil || len(b.Events) != 0 || !b.Ended {
			h.t.Fatalf("Tail(the last event) = %+v, %v; want the end at once", b, err)
		}
		evs, err := h.tailAll(ctx, "s1", ids[0])
		if err != nil {
			h.t.Fatalf("Tail(event 1): %v", err)
		}
		h.wantEvents("Tail(event 1)", evs, "1", ids, 2, 3)
		// A bare end mark (an event without data) ends a stream too; it
		// comes with nil Data.
		two := h.writeN("s1", "3", 2, false)
		if _, err := h.store.Write(h.ctx, "s1", "3", transport.LogEvent{Seq: 3, End: true}); err != nil {
			h.t.Fatalf("Write of a bare end mark: %v", err)
		}
		if evs, err := h.tailAll(ctx, "s1", two[1]); err != nil || len(evs) != 1 || evs[0].Data != nil {
			h.t.Fatalf("Tail(before a bare end mark) = %+v, %v; want one event with nil Data", evs, err)
		}
		// A stream that has not ended: a tail waits with its context.
		open := h.writeN("s1", "2", 2, false)
		done, stop := context.WithCancel(h.ctx)
		stop()
		if b, err := h.store.Tail(done, "s1", open[1]); !errors.Is(err, context.Canceled) || len(b.Events) != 0 || b.Ended {
			h.t.Fatalf("Tail(the last event of a live stream) with a cancelled context = %+v, %v; want context.Canceled", b, err)
		}
		// A write wakes a waiting tail.
		got := make(chan []transport.StoredEvent, 1)
		go func() {
			for {
				b, err := h.store.Tail(ctx, "s1", open[1])
				if err != nil || len(b.Events) > 0 {
					if err != nil {
						h.t.Errorf("Tail: %v", err)
					}
					got <- b.Events
					return
				}
			}
		}()
		third := h.write("s1", "2", transport.LogEvent{Seq: 3})
		if evs := <-got; len(evs) != 1 || evs[0].ID != third {
			h.t.Fatalf("the woken tail got %+v, want event 3 (%s)", evs, third)
		}
	}},
	{name: "Gaps", run: func(h *logHarness) {
		// The writer failed to store event 3: event 4 comes with Seq 4.
		start := h.store.StreamStart("s1", "1")
		ids := []string{h.write("s1", "1", transport.LogEvent{Seq: 1}), h.write("s1", "1", transport.LogEvent{Seq: 2})}
		ids = append(ids, "", h.write("s1", "1", transport.LogEvent{Seq: 4}), h.write("s1", "1", transport.LogEvent{Seq: 5}))
		for _, last := range []string{start, ids[0], ids[1]} {
			if _, evs, err := h.store.After(h.ctx, "s1", last); !errors.Is(err, transport.ErrEventNotFound) {
				h.t.Fatalf("After(%s), across the lost event 3 = %d events, %v; want ErrEventNotFound", last, len(evs), err)
			}
		}
		h.wantNotFound("s1", ids[1])
		evs := h.after("s1", ids[3])
		if len(evs) != 1 || evs[0].ID != ids[4] {
			h.t.Fatalf("After(event 4) = %+v, want event 5", evs)
		}
		// A tail from before the gap stops before it.
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		if b, err := h.store.Tail(ctx, "s1", ids[0]); err != nil || len(b.Events) != 1 || b.Events[0].ID != ids[1] || b.Ended {
			h.t.Fatalf("Tail(event 1) = %+v, %v; want event 2 alone", b, err)
		}
		// The writer does not know whether event 3 was stored: event 4,
		// with the next number, carries a gap mark.
		more := h.writeN("s1", "2", 3, false)
		more = append(more, h.write("s1", "2", transport.LogEvent{Seq: 4, Gap: true}), h.write("s1", "2", transport.LogEvent{Seq: 5}))
		if _, evs, err := h.store.After(h.ctx, "s1", more[1]); !errors.Is(err, transport.ErrEventNotFound) {
			h.t.Fatalf("After(event 2), across the gap mark = %d events, %v; want ErrEventNotFound", len(evs), err)
		}
		if b, err := h.store.Tail(ctx, "s1", more[1]); err != nil || len(b.Events) != 1 || b.Events[0].ID != more[2] {
			h.t.Fatalf("Tail(event 2) = %+v, %v; want event 3 alone", b, err)
		}
		h.wantNotFound("s1", more[2])
		h.wantEvents("After(event 4, the gap mark)", h.after("s1", more[3]), "2", more, 5, 5)
	}},
	{name: "Epochs", run: func(h *logHarness) {
		ids := h.writeN("s1", "1", 5, false)
		start := h.store.StreamStart("s1", "1")
		// Another store (generation) with the same session and stream
		// knows none of these IDs.
		other, _ := h.newStore(h.t, EventStoreSuiteOptions{})
		if c, ok := other.(interface{ Close() error }); ok {
			defer c.Close()
		}
		otherIDs := make([]string, 7)
		for k := 1; k <= 7; k++ {
			id, err := other.Write(h.ctx, "s1", "1", transport.LogEvent{Seq: int64(k), Data: eventData("1", k)})
			if err != nil {
				h.t.Fatal(err)
			}
			otherIDs[k-1] = id
		}
		for _, id := range ids {
			if _, evs, err := other.After(h.ctx, "s1", id); !errors.Is(err, transport.ErrEventNotFound) {
				h.t.Fatalf("another store's After(%s) = %d events, %v; want ErrEventNotFound", id, len(evs), err)
			}
		}
		if h.lose == nil {
			return
		}
		// The store loses everything; the writer goes on with event 6.
		h.lose()
		next := []string{h.write("s1", "1", transport.LogEvent{Seq: 6}), h.write("s1", "1", transport.LogEvent{Seq: 7})}
		for _, id := range append(ids, start) {
			h.wantNotFound("s1", id)
			for _, n := range next {
				if n == id {
					h.t.Fatalf("event ID %s given again after the store lost its data", id)
				}
			}
		}
		h.wantEvents("After(event 6)", h.after("s1", next[0]), "1", []string{6: next[1]}, 7, 7)
	}},
	{name: "InvalidIDs", run: func(h *logHarness) {
		ids := h.writeN("s1", "1", 3, false)
		h.writeN("s2", "1", 3, false)
		bad := []string{
			"", "x", "-", "+", "(", "0", "0-0", "-1", "$", ">", "*", "{s1}", "1-1", "(1-1",
			"{", "}", ids[0] + "x", "x" + ids[0], ids[0] + "-", ids[0] + "}", ids[0] + "\n", " " + ids[0],
			strings.Repeat("9", 100_000), strings.Repeat(ids[0], 1000), strings.ToUpper(ids[0]),
		}
		for _, id := range bad {
			if id == strings.ToUpper(ids[0]) && id == ids[0] {
				continue
			}
			h.wantNotFound("s1", id)
		}
		// Another session's event IDs replay nothing.
		for _, id := range ids {
			h.wantNotFound("s2", id)
		}
		// Nor do event IDs under a session ID that is not one.
		for _, sid := range []string{"", "{s1}", "s1}", "*", strings.Repeat("s", 100_000)} {
			h.wantNotFound(sid, ids[0])
		}
	}},
	{name: "DeleteSession", run: func(h *logHarness) {
		a := h.writeN("s1", "1", 3, false)
		b := h.writeN("s1", "2", 3, true)
		c := h.writeN("s2", "1", 3, false)
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		tailed := make(chan error, 1)
		go func() {
			_, err := h.tailAll(ctx, "s1", a[2])
			tailed <- err
		}()
		if err := h.store.DeleteSession(h.ctx, "s1"); err != nil {
			h.t.Fatal(err)
		}
		// A tail waiting on the session ends.
		if err := <-tailed; !errors.Is(err, transport.ErrEventNotFound) {
			h.t.Fatalf("a tail of the deleted session returned %v; want ErrEventNotFound", err)
		}
		for _, id := range append(a, b...) {
			h.wantNotFound("s1", id)
		}
		h.wantEvents("the other session", h.after("s2", c[0]), "1", c, 2, 3)
		if err := h.store.DeleteSession(h.ctx, "s1"); err != nil {
			h.t.Fatalf("DeleteSession again: %v", err)
		}
		if err := h.store.DeleteSession(h.ctx, "never"); err != nil {
			h.t.Fatalf("DeleteSession of an unknown session: %v", err)
		}
	}},
	{name: "TailLimit", opts: EventStoreSuiteOptions{MaxTails: 2}, run: func(h *logHarness) {
		ids := h.writeN("s1", "1", 1, false)
		ctx, cancel := context.WithTimeout(h.ctx, suiteDeadline)
		defer cancel()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					b, err := h.store.Tail(ctx, "s1", ids[0])
					if err != nil && !errors.Is(err, transport.ErrTailLimit) {
						h.t.Errorf("Tail: %v", err)
						return
					}
					if len(b.Events) > 0 {
						return
					}
				}
			})
		}
		// A third tail is refused at once while both wait.
		probe, stop := context.WithCancel(h.ctx)
		stop()
		for {
			_, err := h.store.Tail(probe, "s1", ids[0])
			if errors.Is(err, transport.ErrTailLimit) {
				break
			}
			if ctx.Err() != nil {
				h.t.Fatalf("no ErrTailLimit with two tails waiting at a bound of 2: %v", err)
			}
		}
		h.write("s1", "1", transport.LogEvent{Seq: 2})
		wg.Wait()
		// Once they returned, tails are admitted again.
		if b, err := h.store.Tail(ctx, "s1", ids[0]); err != nil || len(b.Events) != 1 {
			h.t.Fatalf("Tail after the waiting ones returned = %+v, %v", b, err)
		}
	}},
	{name: "Retain", opts: EventStoreSuiteOptions{Retain: 50}, run: func(h *logHarness) {
		const n = 1000
		start := h.store.StreamStart("s1", "1")
		ids := h.writeN("s1", "1", n, false)
		h.wantNotFound("s1", start)
		h.wantNotFound("s1", ids[0])
		h.wantNotFound("s1", ids[n-10*50-1])
		h.wantEvents("After(the 6th last)", h.after("s1", ids[n-6]), "1", ids, n-4, n)
	}},
}
