package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
)

// The auth/* scenarios: the suite's mock MCP server refuses requests
// without a token, and its mock authorization server answers an
// authorization request with an immediate redirect carrying the code. The
// client authorizes through an auth.Authorizer whose agent reads that
// redirect without following it (nobody listens at the redirect URL),
// then lists the tools and calls test-tool.

// authRedirectURL is the redirect URI the client registers and sends.
const authRedirectURL = "http://127.0.0.1:3939/callback"

// cimdURL is the Client ID Metadata Document URL the suite expects a
// client to use at servers that accept one (auth/basic-cimd).
const cimdURL = "https://conformance-test.local/client-metadata.json"

// isAuthScenario reports whether the scenario needs authorization.
func isAuthScenario(scenario string) bool {
	return strings.HasPrefix(scenario, "auth/")
}

// authContext is what MCP_CONFORMANCE_CONTEXT holds for the auth
// scenarios that pass credentials (auth/pre-registration).
type authContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// newAuthorizer returns the Authorizer for an auth scenario: with a DPoP
// key for the auth/dpop scenarios.
func newAuthorizer(scenario string) (*auth.Authorizer, error) {
	a := &auth.Authorizer{
		Agent:             &auth.HeadlessAgent{},
		RedirectURL:       authRedirectURL,
		ClientMetadataURL: cimdURL,
		Registration:      auth.ClientMetadata{ClientName: "mcpkit-conformance-client"},
	}
	if strings.HasPrefix(scenario, "auth/dpop") {
		key, err := auth.GenerateDPoPKey()
		if err != nil {
			return nil, err
		}
		a.DPoP = key
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		var ac authContext
		if err := json.Unmarshal([]byte(raw), &ac); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if ac.ClientID != "" {
			// The scenario names no issuer: the credentials are the
			// ones for whichever server the MCP server names.
			a.PreRegistered = func(string) *auth.ClientInfo {
				return &auth.ClientInfo{ClientID: ac.ClientID, ClientSecret: ac.ClientSecret}
			}
		}
	}
	return a, nil
}

// refusedForSafety reports whether err is the Authorizer refusing to go
// on for a reason the auth scenarios test on purpose: PRM naming another
// resource, authorization server metadata or an authorization response
// from the wrong issuer, a response without the advertised iss, or a
// server still wanting more scope after the step-up limit. Stopping there
// is the scenario's expected outcome, which the suite's checks judge.
func refusedForSafety(err error) bool {
	var ae *auth.AuthorizationError
	if !errors.As(err, &ae) {
		return false
	}
	for _, want := range []error{auth.ErrResourceMismatch, auth.ErrIssuerMismatch, auth.ErrMissingIssuer, auth.ErrStepUpLimit} {
		if errors.Is(err, want) {
			return true
		}
	}
	return false
}
