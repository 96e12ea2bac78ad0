package auth_test

import (
	"context"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// A command-line host logs in to a protected MCP server: the user opens
// the printed URL, the authorization server redirects to a loopback
// listener, and the tokens are kept in a file for the next run.
func ExampleAuthorizer() {
	agent, err := auth.ListenLoopback("127.0.0.1:0", "/callback")
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	dir, err := os.UserConfigDir()
	if err != nil {
		log.Fatal(err)
	}
	a := &auth.Authorizer{
		Agent:        agent,
		RedirectURL:  agent.RedirectURL(),
		Store:        &auth.FileStore{Path: filepath.Join(dir, "example", "tokens.json")},
		Registration: auth.ClientMetadata{ClientName: "Example CLI"},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), &transport.StreamableClientTransport{
		URL:        "https://mcp.example.com/mcp",
		Authorizer: a,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
}
