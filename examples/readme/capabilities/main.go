// Command capabilities is a server that adds its tools after clients may
// have connected (README.md's tour shows the option in "Change
// notifications and subscriptions"): it declares the tools capability
// up front, serves stdio, and adds a tool once it runs.
package main

import (
	"context"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	impl := &mcp.Implementation{Name: "late-tools", Version: "1.0.0"}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	go func() {
		// Registered later, perhaps once a plugin loads: connected clients
		// get notifications/tools/list_changed and may call it.
		err := s.AddTool(&mcp.Tool{Name: "ping"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "pong"}}}, nil
		})
		if err != nil {
			log.Print(err)
		}
	}()
	if err := s.Run(context.Background(), &transport.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
