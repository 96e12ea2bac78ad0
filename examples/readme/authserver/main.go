// Command authserver is the protected server of README.md's
// "Authorization" section and docs/AUTH.md: the README's greeter behind OAuth 2.1, trusting
// the tokens of https://auth.example.com (replace it with your
// authorization server; examples/protected-server runs one of its own).
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
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
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets the caller."},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + auth.TokenInfoFromContext(ctx).Subject + "!"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	resource := "https://mcp.example.com/mcp"
	verifier, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: "https://auth.example.com", Audience: resource})
	if err != nil {
		log.Fatal(err)
	}
	guard, err := auth.RequireToken(&auth.ResourceOptions{
		Verifier:   verifier,
		Resource:   resource,
		ToolScopes: map[string][]string{"admin": {"mcp:admin"}}, // 403 insufficient_scope, so clients step up
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard(mcp.NewStreamableHTTPHandler(s, nil)))
	err = auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{"https://auth.example.com"},
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}
