// Command http serves the README's server over HTTP, as README.md's "Over
// HTTP" section shows: Streamable HTTP at /mcp and the legacy HTTP+SSE
// transport at /sse.
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// GreetIn is the greet tool's input.
type GreetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// GreetOut is the greet tool's output.
type GreetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{
		EventStore: transport.NewMemoryEventStore(nil), // optional: resumable SSE streams
	})
	http.Handle("/mcp", h)
	http.Handle("/sse", mcp.NewSSEHandler(s, nil)) // optional: clients of the legacy HTTP+SSE transport
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
