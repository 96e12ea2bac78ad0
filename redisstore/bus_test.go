package redisstore

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/redis/go-redis/v9"
)

func TestBusSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.BusSuite(t, func(t *testing.T) mcp.Bus {
				bus, err := NewBus(b.client(t), &BusOptions{Prefix: testPrefix(), Timeout: testTimeout})
				if err != nil {
					t.Fatal(err)
				}
				return bus
			})
		})
	}
}

func TestNewBusOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		name    string
		client  redis.UniversalClient
		opts    *BusOptions
		channel string
		ok      bool
	}{
		{"defaults", c, nil, "mcpkit:bus", true},
		{"prefix", c, &BusOptions{Prefix: "app:"}, "app:bus", true},
		{"brace", c, &BusOptions{Prefix: "a{b}:"}, "", false},
		{"no client", nil, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBus(tc.client, tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("NewBus: %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				return
			}
			if b.channel != tc.channel || b.opts.Timeout != DefaultTimeout || b.opts.QueueSize != mcp.DefaultBusQueue || b.opts.MaxMessageBytes != DefaultMaxBusMessage {
				t.Errorf("channel %q, options %+v", b.channel, b.opts)
			}
		})
	}
}

// busReplica returns a server on bus that declares tools and subscribable
// resources, closed at the end of the test.
func busReplica(t *testing.T, bus mcp.Bus) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{
		Bus:              bus,
		ListChangedDelay: -1,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	t.Cleanup(func() { s.Close() })
	return s
}

func addTool(t *testing.T, s *mcp.Server, name string) {
	t.Helper()
	if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// notes records a client's change notifications.
func notes() (chan string, *mcp.ClientOptions) {
	ch := make(chan string, 64)
	return ch, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ClientRequest[*mcp.ToolListChangedParams]) { ch <- "tools" },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ClientRequest[*mcp.ResourceUpdatedParams]) {
			ch <- "updated " + req.Params.URI
		},
	}
}

func expect(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("received %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q", want)
	}
}

// TestBusReplicas runs three servers sharing a Redis bus, in each era,
// on each backend: a client of replica A hears the tools added on B and
// the resource updated on C, each once, and nothing of the resources it
// is not subscribed to. No goroutine of the servers, their buses or the
// sessions outlives the test.
func TestBusReplicas(t *testing.T) {
	for _, b := range backends() {
		for _, era := range mcptest.Eras() {
			t.Run(b.name+"/"+era, func(t *testing.T) {
				mcptest.CheckGoroutines(t, func(ctx context.Context) {
					c := b.client(t)
					prefix := testPrefix()
					var servers []*mcp.Server
					for range 3 {
						bus, err := NewBus(c, &BusOptions{Prefix: prefix, Timeout: testTimeout})
						if err != nil {
							t.Fatal(err)
						}
						servers = append(servers, busReplica(t, bus))
					}
					a, bb, cc := servers[0], servers[1], servers[2]
					ch, copts := notes()
					cs := mcptest.Connect(t, a, &mcptest.Options{ProtocolVersion: era, Client: copts})
					sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://r", "test://barrier"}})
					if err != nil {
						t.Fatal(err)
					}
					defer sub.Close()

					addTool(t, bb, "x")
					expect(t, ch, "tools")
					if err := cc.ResourceUpdated(ctx, &mcp.ResourceUpdatedParams{URI: "test://other"}); err != nil {
						t.Fatal(err)
					}
					if err := cc.ResourceUpdated(ctx, &mcp.ResourceUpdatedParams{URI: "test://r"}); err != nil {
						t.Fatal(err)
					}
					expect(t, ch, "updated test://r")
					// C publishes in order: once its barrier arrived,
					// nothing more of the above is on its way.
					if err := cc.ResourceUpdated(ctx, &mcp.ResourceUpdatedParams{URI: "test://barrier"}); err != nil {
						t.Fatal(err)
					}
					expect(t, ch, "updated test://barrier")
					select {
					case got := <-ch:
						t.Fatalf("then %q", got)
					default:
					}
				})
			})
		}
	}
}

// TestBusResubscribeGap kills the Pub/Sub connections of a private
// redis-server (CLIENT KILL TYPE pubsub): go-redis subscribes again on
// its own, and the bus tells of the gap: replica A's listen stream ends
// with its graceful result, its handshake-era session is told the tools
// changed, and a new listen stream on A hears B again.
func TestBusResubscribeGap(t *testing.T) {
	if serverAddr == "" {
		t.Skip("redisstore: no redis-server on PATH")
	}
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		prefix := testPrefix()
		newReplica := func() *mcp.Server {
			bus, err := NewBus(c, &BusOptions{Prefix: prefix, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			return busReplica(t, bus)
		}
		a, b := newReplica(), newReplica()
		modern, mopts := notes()
		cs := mcptest.Connect(t, a, &mcptest.Options{Client: mopts})
		handshake, hopts := notes()
		hs := mcptest.Connect(t, a, &mcptest.Options{ProtocolVersion: mcp.Version20251125, Client: hopts})
		if _, err := hs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true}); err != nil {
			t.Fatal(err)
		}
		sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()

		if n, err := c.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n < 2 {
			t.Fatalf("CLIENT KILL TYPE pubsub: %d killed, %v", n, err)
		}
		select {
		case <-sub.Done():
			if err := sub.Err(); err != nil {
				t.Fatalf("the listen stream ended with %v, want its graceful result", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the killed subscription did not end the listen stream")
		}
		expect(t, handshake, "tools")

		// The client listens again and hears B: A told the gap once
		// Redis confirmed its renewed subscription, so it is subscribed
		// again (B publishes on its ordinary connections, which were not
		// killed).
		sub2, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub2.Close()
		addTool(t, b, "x")
		expect(t, modern, "tools")
		expect(t, handshake, "tools")
	})
}

// TestBusGapCause checks the causes a Redis bus gives its subscriber.
func TestBusGapCause(t *testing.T) {
	var got []string
	q := &busQueue{sub: gapRecorder(func(s string) { got = append(got, s) }), limit: 2}
	q.mu.Lock()
	q.running = true // deliver by hand below
	q.mu.Unlock()
	q.push([]byte("1"))
	q.push([]byte("2"))
	q.push([]byte("3")) // overflow
	q.gap(ErrResubscribed)
	q.push([]byte("4")) // still over the limit: the gap stands
	q.mu.Lock()
	q.items = q.items[:len(q.items):len(q.items)]
	q.mu.Unlock()
	q.wg.Add(1)
	q.deliver()
	if want := []string{"1", "2", "gap: " + mcp.ErrBusOverflow.Error()}; !slices.Equal(got, want) {
		t.Errorf("delivered %q, want %q", got, want)
	}
}

type gapRecorder func(string)

func (g gapRecorder) BusMessage(m []byte) { g(string(m)) }
func (g gapRecorder) BusGap(err error)    { g("gap: " + err.Error()) }

// TestBusMessageTooLarge checks that a message over MaxMessageBytes is
// not queued: the subscriber is told of a gap in its place.
func TestBusMessageTooLarge(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.CheckGoroutines(t, func(ctx context.Context) {
				bus, err := NewBus(b.client(t), &BusOptions{Prefix: testPrefix(), Timeout: testTimeout, MaxMessageBytes: 8})
				if err != nil {
					t.Fatal(err)
				}
				events := make(chan string, 8)
				sub, err := bus.Subscribe(ctx, gapRecorder(func(s string) { events <- s }))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sub.Close() })
				for _, m := range []string{"small", "far too large", "fits"} {
					if err := bus.Publish(ctx, []byte(m)); err != nil {
						t.Fatal(err)
					}
				}
				for _, want := range []string{"small", "gap: " + ErrBusMessageTooLarge.Error(), "fits"} {
					expect(t, events, want)
				}
			})
		})
	}
}
