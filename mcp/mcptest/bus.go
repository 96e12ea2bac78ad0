package mcptest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// busWait bounds how long BusSuite waits for a message to arrive.
const busWait = 10 * time.Second

// BusSuite checks that a [mcp.Bus] keeps the contract mcp.Server relies
// on. newBus returns a bus for one subtest; buses returned for one
// subtest are independent of those of others (a Redis bus gets a prefix
// of its own), and newBus registers with t.Cleanup whatever must be
// closed. Every subtest fails if a goroutine the bus started is still
// running once its cleanups have run ([CheckGoroutines]).
//
// The suite assumes the bus buffers at least a few hundred messages for
// a subscriber that keeps up. It checks that a message reaches every subscription, the
// publisher's included, once and intact; that each publisher's messages
// arrive in order; that Close stops delivery and waits for a delivery in
// progress; that Publish and Subscribe honour a done context; and that a
// subscriber that falls behind never holds up Publish nor other
// subscribers, and is never silently left incomplete: it receives every
// message, or is told of a gap where it lost some. A bus that is an
// [mcp.AddressedBus] is checked for it too: a message addressed to a
// replica reaches every subscription of that replica and no other, in
// the publisher's order with the broadcast ones; one addressed to a
// replica with no subscription returns nil or an error matching
// [mcp.ErrNoSubscriber].
func BusSuite(t *testing.T, newBus func(t *testing.T) mcp.Bus) {
	t.Run("Delivery", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			subs := []*busRecorder{subscribe(t, ctx, bus), subscribe(t, ctx, bus)}
			msgs := []string{"a", "{\"json\":true}", strings.Repeat("x", 8<<10), "\x00binary\xff"}
			for _, m := range msgs {
				if err := bus.Publish(ctx, []byte(m)); err != nil {
					t.Fatalf("Publish: %v", err)
				}
			}
			for i, s := range subs {
				if got := s.next(t, len(msgs)); !slices.Equal(got, msgs) {
					t.Errorf("subscription %d received %q, want %q", i, shorten(got), shorten(msgs))
				}
			}
		})
	})
	t.Run("PublisherOrder", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			sub := subscribe(t, ctx, bus)
			const publishers, each = 4, 50
			var wg sync.WaitGroup
			errs := make(chan error, publishers)
			for p := range publishers {
				wg.Go(func() {
					for i := range each {
						if err := bus.Publish(ctx, fmt.Appendf(nil, "%d:%d", p, i)); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("Publish: %v", err)
			}
			next := make([]int, publishers)
			for _, m := range sub.next(t, publishers*each) {
				p, i, ok := strings.Cut(m, ":")
				pi, err1 := strconv.Atoi(p)
				ii, err2 := strconv.Atoi(i)
				if !ok || err1 != nil || err2 != nil || pi < 0 || pi >= publishers {
					t.Fatalf("received %q, never published", m)
				}
				if ii != next[pi] {
					t.Fatalf("publisher %d: received message %d, want %d (out of order, lost or twice)", pi, ii, next[pi])
				}
				next[pi]++
			}
		})
	})
	t.Run("Close", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			stay := subscribe(t, ctx, bus)
			gone := subscribe(t, ctx, bus)
			if err := bus.Publish(ctx, []byte("before")); err != nil {
				t.Fatal(err)
			}
			gone.next(t, 1)
			if err := gone.closer.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			gone.closer.Close() // a second Close is harmless
			if err := bus.Publish(ctx, []byte("after")); err != nil {
				t.Fatal(err)
			}
			// stay receives both in order: once "after" reached it, a
			// closed subscription that was still subscribed would have
			// been given it too.
			if got := stay.next(t, 2); !slices.Equal(got, []string{"before", "after"}) {
				t.Errorf("received %q", got)
			}
			if n := gone.calls(); n != 1 {
				t.Errorf("a closed subscription received %d calls, want the 1 before Close", n)
			}
		})
	})
	t.Run("DoneContext", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			done, cancel := context.WithCancel(ctx)
			cancel()
			if err := bus.Publish(done, []byte("x")); !errors.Is(err, context.Canceled) {
				t.Errorf("Publish with a done context: %v, want context.Canceled", err)
			}
			if c, err := bus.Subscribe(done, &busRecorder{}); err == nil {
				c.Close()
				t.Errorf("Subscribe with a done context succeeded")
			}
		})
	})
	t.Run("Addressed", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			ab, ok := bus.(mcp.AddressedBus)
			if !ok {
				t.Skip("the bus is no mcp.AddressedBus")
			}
			plain := subscribe(t, ctx, bus)
			r1 := subscribeReplica(t, ctx, bus, "replica-1")
			r1b := subscribeReplica(t, ctx, bus, "replica-1") // a second subscription of the same replica
			r2 := subscribeReplica(t, ctx, bus, "r_2")
			for _, step := range []struct{ to, msg string }{
				{"", "all 1"}, {"replica-1", "to 1"}, {"r_2", "to 2"}, {"nobody", "lost"}, {"", "all 2"}, {"replica-1", "to 1 again"},
			} {
				var err error
				if step.to == "" {
					err = bus.Publish(ctx, []byte(step.msg))
				} else {
					err = ab.PublishTo(ctx, step.to, []byte(step.msg))
				}
				// To a replica with no subscription: nil from a bus that
				// cannot tell, else ErrNoSubscriber.
				if err != nil && !(step.to == "nobody" && errors.Is(err, mcp.ErrNoSubscriber)) {
					t.Fatalf("publishing %q: %v", step.msg, err)
				}
			}
			// Each receives, in the publisher's order, the broadcasts and
			// what was addressed to its replica, and nothing else: what
			// follows the last message it should get would have come
			// before "all 2" or the end.
			for _, c := range []struct {
				who  string
				sub  *busRecorder
				want []string
			}{
				{"the plain subscriber", plain, []string{"all 1", "all 2"}},
				{"replica-1", r1, []string{"all 1", "to 1", "all 2", "to 1 again"}},
				{"replica-1's second subscription", r1b, []string{"all 1", "to 1", "all 2", "to 1 again"}},
				{"r_2", r2, []string{"all 1", "to 2", "all 2"}},
			} {
				if got := c.sub.next(t, len(c.want)); !slices.Equal(got, c.want) {
					t.Errorf("%s received %q, want %q", c.who, got, c.want)
				}
			}
			if err := bus.Publish(ctx, []byte("end")); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*busRecorder{plain, r1, r1b, r2} {
				if got := s.next(t, 1); got[0] != "end" {
					t.Errorf("received %q after the expected messages, want \"end\"", got[0])
				}
			}
			if err := r2.closer.Close(); err != nil {
				t.Fatal(err)
			}
			if err := ab.PublishTo(ctx, "r_2", []byte("after close")); err != nil && !errors.Is(err, mcp.ErrNoSubscriber) {
				t.Errorf("PublishTo a replica without subscriptions: %v, want nil or ErrNoSubscriber", err)
			}
			for _, bad := range []string{"", "a b", "a{b}", "x:y", strings.Repeat("x", 65)} {
				if err := ab.PublishTo(ctx, bad, []byte("x")); err == nil {
					t.Errorf("PublishTo(%q) succeeded, want an error for an invalid replica ID", bad)
				}
			}
			done, cancel := context.WithCancel(ctx)
			cancel()
			if err := ab.PublishTo(done, "replica-1", []byte("x")); !errors.Is(err, context.Canceled) {
				t.Errorf("PublishTo with a done context: %v, want context.Canceled", err)
			}
		})
	})
	t.Run("SlowSubscriber", func(t *testing.T) {
		CheckGoroutines(t, func(ctx context.Context) {
			bus := newBus(t)
			fast := subscribe(t, ctx, bus)
			slow := subscribe(t, ctx, bus)
			slow.block = make(chan struct{})
			var release sync.Once
			unblock := func() { release.Do(func() { close(slow.block) }) }
			t.Cleanup(unblock) // before the subscriptions' Close
			// Enough to overflow the buffers of the buses we know of;
			// a bus that holds them all passes too.
			const n = 3000
			for i := range n {
				if err := bus.Publish(ctx, []byte(strconv.Itoa(i))); err != nil {
					t.Fatalf("Publish %d, with a subscriber blocked: %v", i, err)
				}
			}
			if err := bus.Publish(ctx, []byte("end")); err != nil {
				t.Fatal(err)
			}
			// The other subscriber gets to the end while the slow one
			// is still blocked. It too may fall behind a publisher in a
			// tight loop and be told of a gap, which may have taken
			// "end": then "end" is published again.
			var fastEvents []string
			timeout := time.After(busWait)
			for end := false; !end; {
				select {
				case e := <-fast.events:
					switch e {
					case "end":
						end = true
						continue
					case gapEvent:
						if err := bus.Publish(ctx, []byte("end")); err != nil {
							t.Fatal(err)
						}
					}
					fastEvents = append(fastEvents, e)
				case <-timeout:
					t.Fatalf("the other subscriber: no \"end\" after %d events", len(fastEvents))
				}
			}
			checkComplete(t, "the other subscriber", fastEvents, n)
			unblock()
			// The slow one may have lost "end" too, and receives either
			// it or a gap in its place; then its queue has room, and
			// "last" is published (again, after a later gap).
			var events []string
			timeout = time.After(busWait)
			for last := false; !last; {
				select {
				case e := <-slow.events:
					switch e {
					case "last":
						last = true
					case gapEvent, "end":
						if err := bus.Publish(ctx, []byte("last")); err != nil {
							t.Fatal(err)
						}
					}
					if e != "end" && e != "last" {
						events = append(events, e)
					}
				case <-timeout:
					t.Fatalf("no \"last\" after %d events", len(events))
				}
			}
			checkComplete(t, "the blocked subscriber", events, n)
		})
	})
}

// checkComplete checks that events holds the messages "0" to "n-1" in
// order, save where a gap was told.
func checkComplete(t *testing.T, who string, events []string, n int) {
	t.Helper()
	want, gaps := 0, 0
	for _, e := range events {
		if e == gapEvent {
			gaps++
			want = -1 // anything may follow a gap, in order
			continue
		}
		i, err := strconv.Atoi(e)
		if err != nil {
			t.Fatalf("%s received %q", who, e)
		}
		if want >= 0 && i != want {
			t.Fatalf("%s received %d after %d without a gap between: silently incomplete", who, i, want-1)
		}
		want = i + 1
	}
	if want >= 0 && want != n {
		t.Fatalf("%s received %d last before the end marker, want %d, and no gap was told", who, want-1, n-1)
	}
	t.Logf("%s received %d events, %d of them gaps", who, len(events), gaps)
}

// gapEvent is what a busRecorder records for a gap.
const gapEvent = "<gap>"

// busRecorder is a subscriber that records what it receives.
type busRecorder struct {
	closer interface{ Close() error }
	block  chan struct{} // if set, the first message waits for it to close
	events chan string

	mu sync.Mutex
	n  int
}

// subscribe subscribes a new busRecorder, closed at the end of the test.
func subscribe(t *testing.T, ctx context.Context, bus mcp.Bus) *busRecorder {
	t.Helper()
	r := &busRecorder{events: make(chan string, 8192)}
	c, err := bus.Subscribe(ctx, r)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	r.closer = c
	t.Cleanup(func() { c.Close() })
	return r
}

// replicaRecorder is a busRecorder naming its replica.
type replicaRecorder struct {
	*busRecorder
	replica string
}

// BusReplica implements mcp.ReplicaSubscriber.
func (r replicaRecorder) BusReplica() string { return r.replica }

// subscribeReplica subscribes a new busRecorder of replica, closed at the
// end of the test.
func subscribeReplica(t *testing.T, ctx context.Context, bus mcp.Bus, replica string) *busRecorder {
	t.Helper()
	r := &busRecorder{events: make(chan string, 8192)}
	c, err := bus.Subscribe(ctx, replicaRecorder{r, replica})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	r.closer = c
	t.Cleanup(func() { c.Close() })
	return r
}

func (r *busRecorder) wait() {
	r.mu.Lock()
	r.n++
	first := r.n == 1
	r.mu.Unlock()
	if first && r.block != nil {
		<-r.block
	}
}

func (r *busRecorder) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// BusMessage implements mcp.BusSubscriber.
func (r *busRecorder) BusMessage(msg []byte) {
	r.wait()
	r.events <- string(msg)
}

// BusGap implements mcp.BusSubscriber.
func (r *busRecorder) BusGap(error) {
	r.wait()
	r.events <- gapEvent
}

// next returns the next n events.
func (r *busRecorder) next(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	timeout := time.After(busWait)
	for len(out) < n {
		select {
		case e := <-r.events:
			out = append(out, e)
		case <-timeout:
			t.Fatalf("received %d messages of %d", len(out), n)
		}
	}
	return out
}

func shorten(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		if len(m) > 32 {
			m = m[:32] + "…"
		}
		out[i] = m
	}
	return out
}
