package auth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// TestAuthorizerRefreshClientAuth checks how refresh authenticates the
// client: as the code exchange does (clientAuthFor).
func TestAuthorizerRefreshClientAuth(t *testing.T) {
	const id, secret = "client:1", "s3cr:t/+"
	tests := []struct {
		name    string
		client  ClientInfo
		methods []string
		check   func(t *testing.T, got seenRequest)
	}{
		{"basic", ClientInfo{ClientID: id, ClientSecret: secret, TokenEndpointAuthMethod: AuthMethodClientSecretBasic}, nil, func(t *testing.T, got seenRequest) {
			if c := basicCredentials(t, got.Header); c != url.QueryEscape(id)+":"+url.QueryEscape(secret) {
				t.Errorf("Basic credentials %q", c)
			}
			if got.Form.Has("client_id") || got.Form.Has("client_secret") {
				t.Errorf("form credentials with client_secret_basic: %v", got.Form)
			}
		}},
		{"post", ClientInfo{ClientID: id, ClientSecret: secret, TokenEndpointAuthMethod: AuthMethodClientSecretPost}, nil, func(t *testing.T, got seenRequest) {
			if got.Header.Get("Authorization") != "" || got.Form.Get("client_id") != id || got.Form.Get("client_secret") != secret {
				t.Errorf("Authorization %q, form %v", got.Header.Get("Authorization"), got.Form)
			}
		}},
		{"unregistered method, server lists post", ClientInfo{ClientID: id, ClientSecret: secret}, []string{"client_secret_post"}, func(t *testing.T, got seenRequest) {
			if got.Form.Get("client_secret") != secret {
				t.Errorf("form %v, want client_secret_post", got.Form)
			}
		}},
		{"public", ClientInfo{ClientID: id, TokenEndpointAuthMethod: AuthMethodNone}, nil, func(t *testing.T, got seenRequest) {
			if got.Header.Get("Authorization") != "" || got.Form.Get("client_id") != id || got.Form.Has("client_secret") {
				t.Errorf("Authorization %q, form %v", got.Header.Get("Authorization"), got.Form)
			}
		}},
		{"other registered method", ClientInfo{ClientID: id, ClientSecret: secret, TokenEndpointAuthMethod: "tls_client_auth"}, nil, func(t *testing.T, got seenRequest) {
			if got.Header.Get("Authorization") != "" || got.Form.Get("client_id") != id || got.Form.Has("client_secret") {
				t.Errorf("Authorization %q, form %v; want client_id alone", got.Header.Get("Authorization"), got.Form)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, okToken)
			a := &Authorizer{}
			old := &StoredToken{Token: &oauth2.Token{RefreshToken: "rt-old"}, Resource: "https://mcp.example/mcp"}
			if _, err := a.refresh(t.Context(), s.metadata(tt.methods...), &tt.client, old); err != nil {
				t.Fatal(err)
			}
			got := s.requests()[0]
			if got.Form.Get("grant_type") != "refresh_token" || got.Form.Get("refresh_token") != "rt-old" || got.Form.Get("resource") != "https://mcp.example/mcp" {
				t.Errorf("form %v", got.Form)
			}
			tt.check(t, got)
		})
	}
}

// TestAuthorizerRefreshAnswer checks how refresh reads the answer: the
// refresh token kept when none comes back, the expiry from the
// Authorizer's clock, the token type against DPoP, malformed answers and
// redirects.
func TestAuthorizerRefreshAnswer(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	answer := func(status int, v map[string]any) func(http.ResponseWriter, *http.Request, url.Values) {
		return func(w http.ResponseWriter, _ *http.Request, _ url.Values) { writeGrantJSON(w, status, v) }
	}
	tests := []struct {
		name        string
		dpop        bool
		resource    string
		handle      func(http.ResponseWriter, *http.Request, url.Values)
		wantErr     error
		wantRefresh string
		wantType    string
		wantExpiry  time.Time
	}{
		{name: "new refresh token", handle: answer(200, map[string]any{"access_token": "at", "token_type": "bearer", "expires_in": 60, "refresh_token": "rt-new"}),
			wantRefresh: "rt-new", wantType: "Bearer", wantExpiry: at.Add(time.Minute)},
		{name: "old refresh token kept", handle: answer(200, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": "120"}),
			wantRefresh: "rt-old", wantType: "Bearer", wantExpiry: at.Add(2 * time.Minute)},
		{name: "no expiry, no resource", resource: "-", handle: answer(200, map[string]any{"access_token": "at"}),
			wantRefresh: "rt-old", wantType: "Bearer"},
		{name: "DPoP", dpop: true, handle: answer(200, map[string]any{"access_token": "at", "token_type": "DPoP", "expires_in": 60}),
			wantRefresh: "rt-old", wantType: "DPoP", wantExpiry: at.Add(time.Minute)},
		{name: "bearer when DPoP was asked for", dpop: true, handle: answer(200, map[string]any{"access_token": "at", "token_type": "Bearer"}), wantErr: ErrTokenType},
		{name: "DPoP unasked", handle: answer(200, map[string]any{"access_token": "at", "token_type": "DPoP"}), wantErr: ErrTokenType},
		{name: "no access token", handle: answer(200, map[string]any{"token_type": "Bearer"}), wantErr: ErrMalformedToken},
		{name: "bad expires_in", handle: answer(200, map[string]any{"access_token": "at", "expires_in": -1}), wantErr: ErrMalformedToken},
		{name: "refused", handle: answer(400, map[string]any{"error": "invalid_grant"}), wantErr: &HTTPError{}},
		{name: "redirect not followed", handle: func(w http.ResponseWriter, r *http.Request, _ url.Values) {
			if r.URL.Path == "/token" {
				http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
				return
			}
			okToken(w, r, nil)
		}, wantErr: &HTTPError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, tt.handle)
			a := &Authorizer{now: func() time.Time { return at }}
			if tt.dpop {
				a.DPoP = newDPoPKeyT(t)
			}
			old := &StoredToken{Token: &oauth2.Token{RefreshToken: "rt-old"}, Resource: "https://mcp.example/mcp"}
			if tt.resource == "-" {
				old.Resource = ""
			}
			c := &ClientInfo{ClientID: "c", ClientSecret: "SECRET-refresh", TokenEndpointAuthMethod: AuthMethodClientSecretBasic}
			tok, err := a.refresh(t.Context(), s.metadata(), c, old)
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1 (no redirect followed)", len(reqs))
			}
			if got := reqs[0].Form.Get("resource"); got != old.Resource {
				t.Errorf("resource = %q, want %q", got, old.Resource)
			}
			if tt.dpop != (reqs[0].Header.Get("DPoP") != "") {
				t.Errorf("DPoP proof sent: %v, want %v", !tt.dpop, tt.dpop)
			}
			if tt.wantErr != nil {
				var he *HTTPError
				if _, isHTTP := tt.wantErr.(*HTTPError); isHTTP && !errors.As(err, &he) || !isHTTP && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %T %v", err, tt.wantErr, tt.wantErr)
				}
				for _, secret := range []string{"SECRET-refresh", "rt-old"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q reveals a secret", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at" || tok.RefreshToken != tt.wantRefresh || tok.TokenType != tt.wantType || !tok.Expiry.Equal(tt.wantExpiry) {
				t.Errorf("token %q type %q refresh %q expiry %v; want type %q refresh %q expiry %v",
					tok.AccessToken, tok.TokenType, tok.RefreshToken, tok.Expiry, tt.wantType, tt.wantRefresh, tt.wantExpiry)
			}
		})
	}
}
