package authtest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/auth/authtest"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// A test of a protected MCP server mints tokens for it directly, and
// checks what the server's verifier makes of them.
func Example() {
	as := authtest.NewServer(&authtest.Options{Subject: "alice", Scopes: []string{"tools:read"}})
	defer as.Close()

	token, err := as.Token(authtest.TokenRequest{
		ClientID: "test-client",
		Scopes:   []string{"tools:read"},
		Resource: "https://mcp.example.com/mcp",
	})
	if err != nil {
		log.Fatal(err)
	}
	// A resource server verifies token against as.Metadata().JWKSURI;
	// the authorization server can tell what it issued.
	info, err := as.Verify(token)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Subject, info.ClientID, info.Audience, info.Scopes)
	// Output: alice test-client [https://mcp.example.com/mcp] [tools:read]
}

// A machine-to-machine client obtains a token with the client
// credentials grant.
func ExampleServer_RegisterClient() {
	as := authtest.NewServer(nil)
	defer as.Close()
	client, err := as.RegisterClient(authtest.Client{ID: "worker", Secret: "s3cret"})
	if err != nil {
		log.Fatal(err)
	}
	cfg := clientcredentials.Config{
		ClientID:     client.ID,
		ClientSecret: client.Secret,
		TokenURL:     as.Metadata().TokenEndpoint,
		Scopes:       []string{"jobs"},
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, as.Client())
	tok, err := cfg.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	info, err := as.Verify(tok.AccessToken)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.TokenType, info.Subject, info.Scopes)
	// Output: Bearer worker [jobs]
}
