package authtest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpkit/mcpkit/auth/authtest"
)

func TestIntrospectionAndRevocation(t *testing.T) {
	s := newServer(t, &authtest.Options{Clients: []authtest.Client{
		{ID: "rs", Secret: "rs-secret"},
		{ID: "app", Secret: "app-secret"},
		{ID: "pub", RedirectURIs: []string{redirectURI}},
	}})
	tok, err := s.Token(authtest.TokenRequest{Subject: "alice", ClientID: "app", Scopes: []string{"read"}, Resource: resourceURI, DPoPThumbprint: "jkt"})
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := s.Token(authtest.TokenRequest{TTL: -1})
	introspect := func(token string, h http.Header) *tokenAnswer {
		return post(t, s, "/introspect", url.Values{"token": {token}}, h)
	}

	tests := []struct {
		name       string
		token      string
		header     http.Header
		wantStatus int
		wantActive bool
	}{
		{"active", tok, basic("rs", "rs-secret"), 200, true},
		{"expired", expired, basic("rs", "rs-secret"), 200, false},
		{"garbage", "nope", basic("rs", "rs-secret"), 200, false},
		{"unauthenticated", tok, nil, 401, false},
		{"wrong secret", tok, basic("rs", "bad"), 401, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := introspect(tt.token, tt.header)
			if a.status != tt.wantStatus {
				t.Fatalf("HTTP %d %s", a.status, a.body)
			}
			if a.status != 200 {
				return
			}
			if active, _ := a.fields["active"].(bool); active != tt.wantActive {
				t.Fatalf("active %v: %s", active, a.body)
			}
			if tt.wantActive && (a.str("sub") != "alice" || a.str("client_id") != "app" || a.str("scope") != "read" || a.str("aud") != resourceURI || a.str("token_type") != "DPoP" || a.str("iss") != s.URL) {
				t.Errorf("introspection %s", a.body)
			}
			if a.header.Get("Cache-Control") != "no-store" {
				t.Error("introspection answer is cacheable")
			}
		})
	}
	t.Run("public client may not introspect", func(t *testing.T) {
		if a := post(t, s, "/introspect", url.Values{"token": {tok}, "client_id": {"pub"}}, nil); a.status != 401 {
			t.Errorf("HTTP %d", a.status)
		}
	})

	t.Run("revocation", func(t *testing.T) {
		// Another client's token is not revoked.
		a := post(t, s, "/revoke", url.Values{"token": {tok}}, basic("rs", "rs-secret"))
		if a.status != 200 {
			t.Fatalf("HTTP %d %s", a.status, a.body)
		}
		if _, err := s.Verify(tok); err != nil {
			t.Fatalf("another client revoked the token: %v", err)
		}
		if a := post(t, s, "/revoke", url.Values{"token": {tok}}, basic("app", "app-secret")); a.status != 200 {
			t.Fatalf("HTTP %d %s", a.status, a.body)
		}
		if _, err := s.Verify(tok); err == nil {
			t.Fatal("a revoked token verifies")
		}
		if active, _ := introspect(tok, basic("rs", "rs-secret")).fields["active"].(bool); active {
			t.Error("a revoked token is active")
		}
		other, _ := s.Token(authtest.TokenRequest{})
		if !s.Revoke(other) {
			t.Error("Revoke did not know a token of the server")
		}
		if s.Revoke("nope") {
			t.Error("Revoke knew garbage")
		}
	})

	t.Run("refresh tokens", func(t *testing.T) {
		a := post(t, s, "/token", url.Values{"grant_type": {"client_credentials"}}, basic("app", "app-secret"))
		if a.status != 200 {
			t.Fatal(a.body)
		}
		if _, ok := a.fields["refresh_token"]; ok {
			t.Error("client_credentials issued a refresh token")
		}
	})
}
