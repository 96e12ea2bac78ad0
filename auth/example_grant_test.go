package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

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
		ClientAuth: auth.ClientAuth{ClientID: "reporting-service", ClientSecret: "s3cr3t"},
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

// A workload on Kubernetes presents its projected service account token,
// read afresh for every token request, to an authorization server that
// trusts the cluster's issuer. Given to an Authorizer, the grant is used
// after discovery in place of the authorization code flow.
func ExampleWorkloadGrant() {
	grant := &auth.WorkloadGrant{
		Assertion: func(context.Context) (string, error) {
			b, err := os.ReadFile("/var/run/secrets/tokens/mcp-token")
			return strings.TrimSpace(string(b)), err
		},
		ClientAuth: auth.ClientAuth{ClientID: "inventory-worker"},
	}
	var _ auth.Grant = grant
}

// An MCP client whose user signed in with the company's identity provider
// trades the user's ID token for an ID-JAG there, and the ID-JAG for an
// access token at the MCP server's authorization server.
func ExampleEnterpriseGrant() {
	var idToken string // kept from the user's sign-in
	grant := &auth.EnterpriseGrant{
		IDToken:     func(context.Context) (string, error) { return idToken, nil },
		IdPTokenURL: "https://idp.example.com/oauth2/token",
		// A public client at the identity provider.
		IdPAuth: auth.ClientAuth{ClientID: "mcp-desktop"},
		// The client's registration at the MCP authorization server.
		ClientAuth: auth.ClientAuth{
			ClientID:     "mcp-desktop-at-crm",
			ClientSecret: os.Getenv("CRM_CLIENT_SECRET"),
		},
	}
	var _ auth.Grant = grant
}
