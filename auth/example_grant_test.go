package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/auth"
)

// A service with a client ID and secret obtains a token for an MCP server
// with the client credentials grant. An Authorizer given the grant does
// this itself after discovery; here the grant is called directly.
func ExampleClientCredentials() {
	// A stand-in authorization server.
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "reporting-service" || secret != "s3cr3t" || r.PostFormValue("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": "opaque-token", "token_type": "Bearer", "expires_in": 3600,
			"scope": r.PostFormValue("scope"),
		})
	}))
	defer as.Close()

	grant := &auth.ClientCredentials{
		ClientID:     "reporting-service",
		ClientSecret: "s3cr3t",
	}
	tok, err := grant.Token(context.Background(), &auth.GrantRequest{
		Server: &auth.ServerMetadata{
			Issuer:                            as.URL,
			TokenEndpoint:                     as.URL + "/token",
			TokenEndpointAuthMethodsSupported: []string{"client_secret_basic"},
		},
		Resource: "https://mcp.example.com/mcp",
		Scopes:   []string{"reports:read"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.Type(), tok.Extra("scope"), tok.Valid())
	// Output: Bearer reports:read true
}
