// Command authclient is the host of docs/AUTH.md (README.md links it):
// it connects to a protected MCP server (the URL given, by default
// examples/protected-server's), logging in through the browser when the
// server asks for it, and keeps its tokens in a file for the next run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "the protected MCP server")
	flag.Parse()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "readme-auth-client", Version: "1.0.0"}, nil)
	tokenFile := filepath.Join(os.TempDir(), "mcpkit-readme-tokens.json")

	agent, err := auth.ListenLoopback("127.0.0.1:0", "/callback") // prints the URL to open
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	a := &auth.Authorizer{
		Agent:       agent,
		RedirectURL: agent.RedirectURL(),
		Store:       &auth.FileStore{Path: tokenFile}, // 0600, atomic writes; MemoryStore by default
	}
	cs, err := client.Connect(ctx, &transport.StreamableClientTransport{URL: *url, Authorizer: a})
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
}
