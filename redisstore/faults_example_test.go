package redisstore_test

import (
	"context"
	"errors"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// The stores and the bus of a replica, on one client, share one breaker:
// when Redis stops answering they fail fast together (503 with
// Retry-After for the requests that need a session record), and recover
// together once it is back.
func ExampleNewBreaker() {
	client := redis.NewClient(&redis.Options{
		Addr:                  "127.0.0.1:6379",
		ContextTimeoutEnabled: true, // the stores' Timeout is a context deadline
		MaxRetries:            -1,   // the stores retry reads once themselves, never writes
	})
	defer client.Close()
	br := redisstore.NewBreaker(nil) // 3 failures in a row open it; a probe every 500 ms
	sessions, err := redisstore.NewSessionStore(client, &redisstore.SessionStoreOptions{Prefix: "myserver:", Breaker: br})
	if err != nil {
		log.Fatal(err)
	}
	events, err := redisstore.NewEventStore(client, &redisstore.EventStoreOptions{Prefix: "myserver:", Breaker: br})
	if err != nil {
		log.Fatal(err)
	}
	bus, err := redisstore.NewBus(client, &redisstore.BusOptions{Prefix: "myserver:", Breaker: br})
	if err != nil {
		log.Fatal(err)
	}
	keys := mcp.NewRandomKeyRing() // replicas: the same keys, from your secret store (mcp.ReadKeyRing)
	s := mcp.NewServer(&mcp.Implementation{Name: "myserver", Version: "1"}, &mcp.ServerOptions{Keys: keys, Bus: bus})
	defer s.Close()
	h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: sessions, EventStore: events})
	defer h.Close()
	// Serve h as usual (http.Handle("/mcp", h)).

	// Code of your own that calls a store tells Redis' failures from
	// answers:
	if _, err := sessions.Get(context.Background(), "some-session-id"); errors.Is(err, redisstore.ErrUnavailable) {
		log.Print("Redis unavailable; the breaker is open: ", br.Open())
	}
}
