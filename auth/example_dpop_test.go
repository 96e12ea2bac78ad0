package auth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
)

// A client signs a DPoP proof for each request; a server checks it
// against the request and the access token it came with.
func ExampleDPoPKey() {
	key, err := auth.GenerateDPoPKey()
	if err != nil {
		panic(err)
	}
	proof, err := key.Proof(http.MethodPost, "https://mcp.example.com/mcp", &auth.ProofOptions{AccessToken: "the-token"})
	if err != nil {
		panic(err)
	}
	p, err := auth.ParseDPoPProof(proof, &auth.DPoPCheck{Method: http.MethodPost, URL: "https://mcp.example.com/mcp", AccessToken: "the-token"})
	fmt.Println(err, p.Thumbprint == key.Thumbprint())
	_, err = auth.ParseDPoPProof(proof, &auth.DPoPCheck{Method: http.MethodPost, URL: "https://mcp.example.com/other", AccessToken: "the-token"})
	fmt.Println(err != nil)
	// Output:
	// <nil> true
	// true
}

// The Protected Resource Metadata of an MCP endpoint is served at both
// well-known URLs a client tries.
func ExampleHandleProtectedResourceMetadata() {
	mux := http.NewServeMux()
	err := auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource:             "https://mcp.example.com/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
	})
	if err != nil {
		panic(err)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(w.Code, strings.Contains(w.Body.String(), `"resource":"https://mcp.example.com/mcp"`))
	}
	// Output:
	// 200 true
	// 200 true
}
