// Command client is the client shown in README.md; it starts the README
// server with "go run" and calls its tool.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os/exec"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "readme-client", Version: "1.0.0"}, nil)
	cmd := exec.Command("go", "run", "./examples/readme/server")
	cs, err := c.Connect(ctx, &transport.CommandTransport{Command: cmd})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("tool:", tool.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: json.RawMessage(`{"name":"Gopher"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
}
