package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Two replicas of one server behind a round-robin balancer share a key
// ring (read from a key file; across processes, the same file) and a
// session store (here in memory; across processes,
// redisstore.NewSessionStore): a handshake-era session initialized on one
// replica is served by the other.
func ExampleReadKeyRing() {
	keys, err := mcp.ReadKeyRing(strings.NewReader("# the first key signs, every key verifies\n" +
		strings.Repeat("ab", 32) + "\n"))
	if err != nil {
		log.Fatal(err)
	}
	store := transport.NewMemorySessionStore(nil)
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
		handlers[i] = mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store})
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
