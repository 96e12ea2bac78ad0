package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// observedBus wraps a Bus: it tells the test each message a Server's
// subscriber has handled (once BusMessage returned), and lets the test
// call the subscribers itself.
type observedBus struct {
	Bus
	handled chan handledMsg

	mu   sync.Mutex
	subs []BusSubscriber // in the order the Servers subscribed

	failPublish chan struct{} // each value received fails one Publish
}

type handledMsg struct {
	sub int // index in subs
	msg busMessage
}

func newObservedBus() *observedBus {
	return &observedBus{Bus: &MemoryBus{}, handled: make(chan handledMsg, 1024), failPublish: make(chan struct{}, 4)}
}

func (b *observedBus) Publish(ctx context.Context, msg []byte) error {
	select {
	case <-b.failPublish:
		return errors.New("test: publish fails")
	default:
	}
	return b.Bus.Publish(ctx, msg)
}

func (b *observedBus) Subscribe(ctx context.Context, sub BusSubscriber) (io.Closer, error) {
	b.mu.Lock()
	o := &observedSub{BusSubscriber: sub, i: len(b.subs), handled: b.handled}
	b.subs = append(b.subs, sub)
	b.mu.Unlock()
	return b.Bus.Subscribe(ctx, o)
}

func (b *observedBus) sub(i int) BusSubscriber {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subs[i]
}

type observedSub struct {
	BusSubscriber
	i       int
	handled chan<- handledMsg
}

func (o *observedSub) BusMessage(data []byte) {
	o.BusSubscriber.BusMessage(data)
	var m busMessage
	json.Unmarshal(data, &m)
	o.handled <- handledMsg{o.i, m}
}

// waitHandled waits until every one of n subscribers handled count
// messages of kind.
func (b *observedBus) waitHandled(t *testing.T, n int, kind string, count int) {
	t.Helper()
	left := make(map[int]int)
	for i := range n {
		left[i] = count
	}
	timeout := time.After(10 * time.Second)
	for len(left) > 0 {
		select {
		case h := <-b.handled:
			if h.msg.Kind == kind {
				if left[h.sub]--; left[h.sub] <= 0 {
					delete(left, h.sub)
				}
			}
		case <-timeout:
			t.Fatalf("subscribers %v did not handle a %q message", left, kind)
		}
	}
}

// recorder records the change notifications a client receives.
type recorder struct {
	events chan string
}

func newRecorder() *recorder { return &recorder{events: make(chan string, 256)} }

func (r *recorder) options(era Era) *ClientOptions {
	return &ClientOptions{
		Era:                        era,
		ToolListChangedHandler:     func(context.Context, *ClientRequest[*ToolListChangedParams]) { r.events <- "tools" },
		PromptListChangedHandler:   func(context.Context, *ClientRequest[*PromptListChangedParams]) { r.events <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *ClientRequest[*ResourceListChangedParams]) { r.events <- "resources" },
		ResourceUpdatedHandler: func(_ context.Context, req *ClientRequest[*ResourceUpdatedParams]) {
			r.events <- "updated " + req.Params.URI
		},
	}
}

// until returns the events received before the first one equal to last.
func (r *recorder) until(t *testing.T, last string) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-r.events:
			if e == last {
				return got
			}
			got = append(got, e)
		case <-timeout:
			t.Fatalf("no %q; received %q", last, got)
		}
	}
}

func busServer(bus Bus, logger *slog.Logger) *Server {
	return NewServer(&Implementation{Name: "replica", Version: "1"}, &ServerOptions{
		Bus:              bus,
		ListChangedDelay: -1,
		Logger:           logger,
		Capabilities: &ServerCapabilities{
			Tools:     &ToolCapabilities{ListChanged: true},
			Resources: &ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
}

func addNop(t *testing.T, s *Server, name string) {
	t.Helper()
	if err := s.AddTool(&Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBusReplicas runs three Servers sharing a bus, with a client of
// each era on replicas A and B: a change made on B reaches the clients
// of A once and those of B once (no echo), a Batch on B is one
// notification, a resource updated on C reaches the subscribers of A and
// B once, and a gap on A ends A's listen stream gracefully and tells A's
// handshake-era session that every list changed and every subscribed
// resource was updated.
func TestBusReplicas(t *testing.T) {
	for _, era := range []Era{EraHandshake, EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			checkGoroutines(t)
			bus := newObservedBus()
			servers := make([]*Server, 3)
			for i := range servers {
				servers[i] = busServer(bus, nil)
				t.Cleanup(func() { servers[i].Close() })
			}
			a, b, c := servers[0], servers[1], servers[2]
			type client struct {
				rec     *recorder
				sub     *Subscription
				barrier string
				s       *Server
			}
			clients := make([]*client, 2)
			for i, s := range []*Server{a, b} {
				cl := &client{rec: newRecorder(), barrier: "test://barrier/" + string(rune('A'+i)), s: s}
				var cs *ClientSession
				if era == EraModern {
					cs = modernPair(t, s, cl.rec.options(era))
				} else {
					cs, _ = connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, cl.rec.options(era)))
				}
				sub, err := cs.Listen(t.Context(), &SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: []string{"test://r", cl.barrier}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sub.Close() })
				cl.sub = sub
				clients[i] = cl
			}
			// check makes a local update on each client's replica, which
			// follows whatever the bus made it queue, and compares what
			// came before.
			check := func(step string, want []string) {
				t.Helper()
				for i, cl := range clients {
					if err := cl.s.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: cl.barrier}); err != nil {
						t.Fatal(err)
					}
					if got := cl.rec.until(t, "updated "+cl.barrier); !slices.Equal(got, want) {
						t.Errorf("%s: client on replica %c received %q, want %q", step, 'A'+i, got, want)
					}
				}
				// The barriers went over the bus too.
				bus.waitHandled(t, 3, busUpdated, 2)
			}

			addNop(t, b, "x")
			bus.waitHandled(t, 3, busListChanged, 1) // B's own included: dropped
			check("a tool added on B", []string{"tools"})

			if err := b.Batch(func() error {
				addNop(t, b, "y")
				addNop(t, b, "z")
				b.RemoveTools("x")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			bus.waitHandled(t, 3, busListChanged, 1)
			check("a Batch on B", []string{"tools"})

			if err := c.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://r"}); err != nil {
				t.Fatal(err)
			}
			if err := c.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://other"}); err != nil {
				t.Fatal(err)
			}
			bus.waitHandled(t, 3, busUpdated, 2)
			check("resources updated on C", []string{"updated test://r"})

			bus.sub(0).BusGap(errors.New("test: gap"))
			if era == EraModern {
				select {
				case <-clients[0].sub.Done():
					if err := clients[0].sub.Err(); err != nil {
						t.Errorf("the listen stream on A ended with %v, want its graceful result", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a gap did not end the listen stream on A")
				}
				select {
				case <-clients[1].sub.Done():
					t.Fatal("a gap on A ended the listen stream on B")
				default:
				}
				return
			}
			// Every list declared, every subscribed resource, in any
			// order; then, after them, a barrier.
			var got []string
			for range 4 {
				select {
				case e := <-clients[0].rec.events:
					got = append(got, e)
				case <-time.After(10 * time.Second):
					t.Fatalf("after a gap, the session on A received %q, then nothing", got)
				}
			}
			slices.Sort(got)
			if want := []string{"resources", "tools", "updated " + clients[0].barrier, "updated test://r"}; !slices.Equal(got, want) {
				t.Errorf("after a gap, the session on A received %q, want %q", got, want)
			}
			check("after the gap", nil)
		})
	}
}

// TestBusPublishFails checks that a replica that could not publish tells
// the others of a gap once the bus works again: their listen streams
// end gracefully.
func TestBusPublishFails(t *testing.T) {
	checkGoroutines(t)
	bus := newObservedBus()
	a, b := busServer(bus, nil), busServer(bus, nil)
	t.Cleanup(func() { a.Close(); b.Close() })
	cs := modernPair(t, a, nil)
	sub, err := cs.Listen(t.Context(), &SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	bus.failPublish <- struct{}{}
	addNop(t, b, "x")
	select {
	case <-sub.Done():
		if err := sub.Err(); err != nil {
			t.Errorf("the listen stream ended with %v, want its graceful result", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a failed publish on B did not end the listen stream on A")
	}
	bus.waitHandled(t, 2, busGap, 1)
}

// TestBusMalformed checks that messages a Server cannot read are dropped
// and logged, and that its own are ignored.
func TestBusMalformed(t *testing.T) {
	checkGoroutines(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	bus := newObservedBus()
	s := busServer(bus, logger)
	t.Cleanup(func() { s.Close() })
	rec := newRecorder()
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, rec.options(EraHandshake)))
	if _, err := cs.Listen(t.Context(), &SubscriptionFilter{ResourceSubscriptions: []string{"test://r", "test://barrier"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, msg string }{
		{"not JSON", `garbage`},
		{"no version", `{"o":"x","k":"gap"}`},
		{"no origin", `{"v":1,"k":"gap"}`},
		{"unknown kind", `{"v":1,"o":"x","k":"reboot"}`},
		{"unknown list", `{"v":1,"o":"x","k":"list","l":["notifications/skills/list_changed"]}`},
		{"no lists", `{"v":1,"o":"x","k":"list"}`},
		{"no URI", `{"v":1,"o":"x","k":"updated"}`},
		{"URI too long", `{"v":1,"o":"x","k":"updated","u":"` + strings.Repeat("u", DefaultMaxSubscriptionURILength+1) + `"}`},
		{"too large", `{"v":1,"o":"x","k":"gap","pad":"` + strings.Repeat("p", maxBusMessage) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			logs.Reset()
			mu.Unlock()
			bus.sub(0).BusMessage([]byte(tc.msg))
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(logs.String(), "malformed bus message") {
				t.Errorf("not logged: %q", logs.String())
			}
		})
	}
	// The server's own message is ignored; a later version's is read.
	own := (*busLink)(bus.sub(0).(*busSubscriber)).origin
	bus.sub(0).BusMessage([]byte(`{"v":1,"o":"` + own + `","k":"updated","u":"test://r"}`))
	bus.sub(0).BusMessage([]byte(`{"v":2,"o":"other","k":"updated","u":"test://r","new":true}`))
	if err := s.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://barrier"}); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.until(t, "updated test://barrier"), []string{"updated test://r"}; !slices.Equal(got, want) {
		t.Errorf("received %q, want %q (one update: the later version's, not the server's own)", got, want)
	}
}

// TestServerWithoutBus checks that a Server without a Bus has no busLink
// and starts no goroutine for one.
func TestServerWithoutBus(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "alone", Version: "1"}, nil)
	addNop(t, s, "x")
	if s.bus != nil {
		t.Fatal("a Server without a Bus has a busLink")
	}
	if err := s.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://r"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// BenchmarkNotify measures what a change costs a server with ten
// handshake-era sessions subscribed to the resource, with no bus (the
// single-process path) and with a MemoryBus shared by two replicas.
func BenchmarkNotify(b *testing.B) {
	for _, withBus := range []bool{false, true} {
		name := "no-bus"
		var bus Bus
		if withBus {
			name, bus = "memory-bus", &MemoryBus{}
		}
		b.Run(name, func(b *testing.B) {
			s := busServer(bus, nil)
			var other *Server
			if bus != nil {
				other = busServer(bus, nil)
			}
			var closers []func()
			for range 10 {
				ct, st := transport.NewInMemoryTransports()
				ss, err := s.Connect(context.Background(), st)
				if err != nil {
					b.Fatal(err)
				}
				cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake}).Connect(context.Background(), ct)
				if err != nil {
					b.Fatal(err)
				}
				closers = append(closers, func() { cs.Close(); ss.Close(); ss.Wait() })
				if _, err := cs.Listen(context.Background(), &SubscriptionFilter{ResourceSubscriptions: []string{"test://r"}}); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("ResourceUpdated", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					s.ResourceUpdated(context.Background(), &ResourceUpdatedParams{URI: "test://r"})
				}
			})
			b.Run("ListChanged", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					s.listChanged(NotificationToolListChanged)
				}
			})
			for _, c := range closers {
				c()
			}
			s.Close()
			if other != nil {
				other.Close()
			}
		})
	}
}

// blockingSub records what it receives; its first call waits for release.
type blockingSub struct {
	release chan struct{}
	once    sync.Once
	events  chan string
}

func (b *blockingSub) BusMessage(msg []byte) {
	b.once.Do(func() { <-b.release })
	b.events <- string(msg)
}

func (b *blockingSub) BusGap(error) {
	b.once.Do(func() { <-b.release })
	b.events <- "gap"
}

// TestMemoryBusOverflow checks that a MemoryBus subscriber that falls
// behind by QueueSize loses the messages past it, is told of one gap
// where they were, and receives the messages published later; and that
// Publish never waits for it.
func TestMemoryBusOverflow(t *testing.T) {
	checkGoroutines(t)
	bus := &MemoryBus{QueueSize: 4}
	sub := &blockingSub{release: make(chan struct{}), events: make(chan string, 64)}
	c, err := bus.Subscribe(t.Context(), sub)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 10 {
		if err := bus.Publish(t.Context(), []byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	close(sub.release)
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) == 0 || got[len(got)-1] != "after" {
		select {
		case e := <-sub.events:
			got = append(got, e)
			if e == "gap" {
				// The queue is empty now: "after" is delivered.
				if err := bus.Publish(t.Context(), []byte("after")); err != nil {
					t.Fatal(err)
				}
			}
		case <-timeout:
			t.Fatalf("received %q, then nothing", got)
		}
	}
	// The first message may have been taken for delivery before the
	// queue filled: 4 or 5 come before the gap.
	want4 := []string{"0", "1", "2", "3", "gap", "after"}
	want5 := []string{"0", "1", "2", "3", "4", "gap", "after"}
	if !slices.Equal(got, want4) && !slices.Equal(got, want5) {
		t.Errorf("received %q, want %q or %q", got, want4, want5)
	}
}

// TestBusHTTP checks the bus over Streamable HTTP: a handshake-era
// session's GET stream on replica A, and a listen stream of 2026-07-28 on
// A, hear the tools added on B.
func TestBusHTTP(t *testing.T) {
	for _, era := range []Era{EraHandshake, EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			checkGoroutines(t)
			bus := &MemoryBus{}
			a, b := busServer(bus, nil), busServer(bus, nil)
			t.Cleanup(func() { a.Close(); b.Close() })
			h := NewStreamableHTTPHandler(a, nil)
			srv := httptest.NewServer(h)
			t.Cleanup(func() { srv.Close(); h.Close() })
			rec := newRecorder()
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, rec.options(era)).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			sub, err := cs.Listen(t.Context(), &SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://r"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sub.Close() })
			addNop(t, b, "x")
			if got := rec.until(t, "tools"); len(got) != 0 {
				t.Errorf("before tools: %q", got)
			}
			if err := b.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://r"}); err != nil {
				t.Fatal(err)
			}
			if got := rec.until(t, "updated test://r"); len(got) != 0 {
				t.Errorf("before the update: %q", got)
			}
		})
	}
}
