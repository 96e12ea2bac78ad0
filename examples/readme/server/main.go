// Command server is the server shown in README.md.
package main

import (
	"context"
	"log"

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
	if err := s.Run(context.Background(), &transport.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
