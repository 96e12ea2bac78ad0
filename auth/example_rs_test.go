package auth_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
)

// ExampleRequireToken protects an MCP server with access tokens issued by
// one authorization server, publishes its Protected Resource Metadata, and
// shows the challenge a client without a token gets.
func ExampleRequireToken() {
	const resource = "https://mcp.example.com/mcp"
	server := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	// ... add tools; their handlers find the caller's token with
	// auth.TokenInfoFromContext(ctx).

	verifier, err := auth.NewJWTVerifier(&auth.JWTOptions{
		Issuer:   "https://login.example.com",
		Audience: resource, // tokens must be issued for this server (RFC 8707)
	})
	if err != nil {
		log.Fatal(err)
	}
	guard, err := auth.RequireToken(&auth.ResourceOptions{
		Verifier:   verifier,
		Resource:   resource,
		Scopes:     []string{"files:read"},
		ToolScopes: map[string][]string{"delete_file": {"files:write"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard(mcp.NewStreamableHTTPHandler(server, nil)))
	if err := auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{"https://login.example.com"},
		ScopesSupported:      []string{"files:read", "files:write"},
	}); err != nil {
		log.Fatal(err)
	}
	// http.ListenAndServeTLS(":443", "cert.pem", "key.pem", mux)

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("POST", resource, nil))
	fmt.Println(w.Code)
	fmt.Println(w.Header().Get("WWW-Authenticate"))
	// Output:
	// 401
	// Bearer scope="files:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
}
