package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// newExampleClient returns a client of an in-process Redis (miniredis),
// standing in for a real one, and a function that stops both.
func newExampleClient() (redis.UniversalClient, func()) {
	m, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	c := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{m.Addr()}, ContextTimeoutEnabled: true})
	return c, func() { c.Close(); m.Close() }
}

// Two replicas share their sessions through Redis, behind a round-robin
// balancer: the session initialized on one is served by the other. They
// also share a key ring, which tags the session IDs.
func ExampleNewSessionStore() {
	client, stop := newExampleClient()
	defer stop()
	store, err := redisstore.NewSessionStore(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	keys, err := mcp.ReadKeyRing(strings.NewReader(strings.Repeat("cd", 32) + "\n")) // the same file on every replica
	if err != nil {
		log.Fatal(err)
	}
	var served [2]atomic.Int64
	var handlers [2]http.Handler
	for i := range handlers {
		s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, &mcp.ServerOptions{Keys: keys})
		defer s.Close()
		type in struct {
			Name string `json:"name"`
		}
		if err := mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (string, error) {
			served[i].Add(1)
			return "hello, " + a.Name, nil
		}); err != nil {
			log.Fatal(err)
		}
		h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store})
		defer h.Close()
		handlers[i] = h
	}
	var next atomic.Int64
	balancer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[next.Add(1)%2].ServeHTTP(w, r)
	}))
	defer balancer.Close()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{Era: mcp.EraHandshake}).
		Connect(ctx, &transport.StreamableClientTransport{URL: balancer.URL, DisableStandaloneStream: true})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for _, name := range []string{"ada", "grace"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: []byte(`{"name":"` + name + `"}`)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	fmt.Println("both replicas served the session:", served[0].Load() > 0 && served[1].Load() > 0)
	// Output:
	// hello, ada
	// hello, grace
	// both replicas served the session: true
}

// A client resumes on replica B (Last-Event-ID) a stream that replica A
// still writes: B replays what A stored after the client's last event,
// then follows the log until its end. The Streamable HTTP handler does
// this itself when its EventStore is shared
// (transport.StreamableHTTPOptions.EventStore); here the two stores stand
// for the two replicas.
func ExampleNewEventStore() {
	client, stop := newExampleClient()
	defer stop()
	onA, err := redisstore.NewEventStore(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	onB, err := redisstore.NewEventStore(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	session := mcp.NewRandomKeyRing().MintSessionID()

	// A writes the first two events of a response stream; the client got
	// the first, then its connection broke.
	last, err := onA.Write(ctx, session, "s1", transport.LogEvent{Seq: 1, Data: []byte("progress 1/2")})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := onA.Write(ctx, session, "s1", transport.LogEvent{Seq: 2, Data: []byte("progress 2/2")}); err != nil {
		log.Fatal(err)
	}
	// The client resumes on B, which replays the log after its last event.
	batch, err := onB.Tail(ctx, session, last)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range batch.Events {
		fmt.Printf("replayed on B: %s\n", e.Data)
		last = e.ID
	}
	// A writes the response, the stream's last event; B follows.
	if _, err := onA.Write(ctx, session, "s1", transport.LogEvent{Seq: 3, Data: []byte("the result"), End: true}); err != nil {
		log.Fatal(err)
	}
	batch, err = onB.Tail(ctx, session, last)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range batch.Events {
		fmt.Printf("followed on B: %s\n", e.Data)
	}
	fmt.Println("ended:", batch.Ended)
	// Output:
	// replayed on B: progress 2/2
	// followed on B: the result
	// ended: true
}

// busPrinter prints the messages of a bus subscription.
type busPrinter chan string

func (p busPrinter) BusMessage(msg []byte) { p <- string(msg) }
func (p busPrinter) BusGap(err error)      { p <- "gap: " + err.Error() }

// Every replica subscribes to the bus and receives what any replica
// publishes, its own messages included. A Server given the bus
// (mcp.ServerOptions.Bus) publishes its list changes and resource
// updates there, and tells its clients of those made on other replicas.
func ExampleNewBus() {
	client, stop := newExampleClient()
	defer stop()
	bus, err := redisstore.NewBus(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	received := make(busPrinter, 1)
	sub, err := bus.Subscribe(ctx, received) // on replica B
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	if err := bus.Publish(ctx, []byte("tools changed on A")); err != nil { // on replica A
		log.Fatal(err)
	}
	select {
	case msg := <-received:
		fmt.Println(msg)
	case <-time.After(10 * time.Second):
		fmt.Println("nothing received")
	}
	// Output:
	// tools changed on A
}

// A request state is claimed once across the replicas: the first claim
// of its ID wins, a replay on any replica finds the claim. A Server given
// the claimer (mcp.ServerOptions.StateClaimer) claims each retry's state
// after it verified, and refuses a replayed one.
func ExampleNewStateClaimer() {
	client, stop := newExampleClient()
	defer stop()
	claimer, err := redisstore.NewStateClaimer(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	expires := time.Now().Add(10 * time.Minute)
	for _, replica := range []string{"A", "B"} {
		first, err := claimer.Claim(ctx, "c3RhdGUtaWQ", expires)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("claim on %s: first %v\n", replica, first)
	}
	// Output:
	// claim on A: first true
	// claim on B: first false
}
