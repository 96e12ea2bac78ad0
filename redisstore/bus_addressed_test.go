package redisstore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// TestBusReplicasAddressed runs the scenarios of messages for one
// session across three replicas (mcptest.BusReplicas: delete, cancel,
// answers to server requests, the bus down, the GET stream held on
// another replica, the record kept by a live stream) on a Redis session
// store and a Redis bus, on each backend.
func TestBusReplicasAddressed(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			// The store and the bus of a scenario share a client and a
			// prefix.
			var mu sync.Mutex
			type shared struct {
				c      redis.UniversalClient
				prefix string
			}
			of := map[*testing.T]shared{}
			get := func(t *testing.T) shared {
				mu.Lock()
				defer mu.Unlock()
				s, ok := of[t]
				if !ok {
					c := b.client(t)
					// A Cluster client's own goroutines start with its
					// first command, before the goroutine check.
					if err := c.Ping(t.Context()).Err(); err != nil {
						t.Fatal(err)
					}
					s = shared{c, testPrefix()}
					of[t] = s
				}
				return s
			}
			mcptest.BusReplicas(t, func(t *testing.T) transport.SessionStore {
				s := get(t)
				st, err := NewSessionStore(s.c, &SessionStoreOptions{Prefix: s.prefix, Timeout: testTimeout})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}, func(t *testing.T) mcp.Bus {
				s := get(t)
				bus, err := NewBus(s.c, &BusOptions{Prefix: s.prefix, Timeout: testTimeout})
				if err != nil {
					t.Fatal(err)
				}
				return bus
			})
		})
	}
}

// replicaSub is a subscriber of a replica that records nothing.
type replicaSub struct{ replica string }

func (replicaSub) BusMessage([]byte)    {}
func (replicaSub) BusGap(error)         {}
func (r replicaSub) BusReplica() string { return r.replica }

// TestBusReplicaChannel checks that a subscriber naming its replica is
// subscribed to the broadcast channel and its replica's channel on one
// Pub/Sub connection (a private redis-server: CLIENT LIST), and that the
// replica channel is Prefix+"bus:r:"+replica.
func TestBusReplicaChannel(t *testing.T) {
	if serverAddr == "" {
		t.Skip("no private redis-server (needs CLIENT LIST)")
	}
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { c.Close() })
		prefix := testPrefix()
		bus, err := NewBus(c, &BusOptions{Prefix: prefix, Timeout: testTimeout})
		if err != nil {
			t.Fatal(err)
		}
		before := pubsubConns(t, ctx, c)
		sub, err := bus.Subscribe(ctx, replicaSub{"r-1"})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if got := pubsubConns(t, ctx, c) - before; got != 1 {
			t.Errorf("%d Pub/Sub connections for one subscription, want 1", got)
		}
		n, err := c.PubSubNumSub(ctx, prefix+"bus", prefix+"bus:r:r-1").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n[prefix+"bus"] != 1 || n[prefix+"bus:r:r-1"] != 1 {
			t.Errorf("subscribers by channel %v, want one on each", n)
		}
	})
}

// pubsubConns counts the Pub/Sub connections of the server.
func pubsubConns(t *testing.T, ctx context.Context, c *redis.Client) int {
	t.Helper()
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, " sub=") && !strings.Contains(l, " sub=0 ") {
			n++
		}
	}
	return n
}

// TestBusSubscribed checks mcp.ReplicaChecker on every backend: a
// replica is subscribed while its subscription lives, and not before or
// after it, nor is one never seen; an invalid ID is an error.
func TestBusSubscribed(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			if err := c.Ping(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			mcptest.CheckGoroutines(t, func(ctx context.Context) {
				bus, err := NewBus(c, &BusOptions{Prefix: testPrefix(), Timeout: testTimeout})
				if err != nil {
					t.Fatal(err)
				}
				check := func(replica string, want bool) {
					t.Helper()
					got, err := bus.Subscribed(ctx, replica)
					if err != nil || got != want {
						t.Errorf("Subscribed(%q) = %v, %v; want %v", replica, got, err, want)
					}
				}
				check("r-1", false)
				sub, err := bus.Subscribe(ctx, replicaSub{"r-1"})
				if err != nil {
					t.Fatal(err)
				}
				check("r-1", true)
				check("r-2", false)
				if err := sub.Close(); err != nil {
					t.Fatal(err)
				}
				// Redis drops the subscription when it reads the closed
				// connection's end, after Close returns: ask until then.
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for deadline := time.Now().Add(5 * time.Second); ; <-tick.C {
					got, err := bus.Subscribed(ctx, "r-1")
					if err == nil && !got {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("Subscribed(r-1) = %v, %v five seconds after the subscription closed", got, err)
					}
				}
				if _, err := bus.Subscribed(ctx, "r{1}"); err == nil {
					t.Error("Subscribed of an invalid replica ID: no error")
				}
			})
		})
	}
}
