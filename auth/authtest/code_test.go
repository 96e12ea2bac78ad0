package authtest_test

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth/authtest"
	"golang.org/x/oauth2"
)

const (
	redirectURI = "http://127.0.0.1:9999/callback"
	resourceURI = "https://mcp.example.com/mcp"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestAuthorizationCodeFlow(t *testing.T) {
	tests := []struct {
		name   string
		client authtest.Client
		style  oauth2.AuthStyle
	}{
		{"public client", authtest.Client{ID: "pub", RedirectURIs: []string{redirectURI}}, oauth2.AuthStyleInParams},
		{"client_secret_basic", authtest.Client{ID: "conf", Secret: "s3cret", RedirectURIs: []string{redirectURI}}, oauth2.AuthStyleInHeader},
		{"client_secret_post", authtest.Client{ID: "post", Secret: "s3cret", AuthMethod: "client_secret_post", RedirectURIs: []string{redirectURI}}, oauth2.AuthStyleInParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, &authtest.Options{Subject: "alice", Scopes: []string{"read", "write"}, Clients: []authtest.Client{tt.client}})
			cfg := config(s, tt.client.ID, tt.client.Secret, redirectURI, tt.style, "read", "write")
			verifier := oauth2.GenerateVerifier()
			status, loc := authorize(t, s, cfg.AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resourceURI)))
			if status != http.StatusFound {
				t.Fatalf("authorize: HTTP %d", status)
			}
			q := loc.Query()
			if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI || q.Get("state") != "st4te" || q.Get("iss") != s.URL || q.Get("code") == "" || q.Has("error") {
				t.Fatalf("redirect to %s", loc.Redacted())
			}
			ctx := ctxWith(s)
			tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatal(err)
			}
			if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
				t.Errorf("token %s %v %v", tok.TokenType, tok.RefreshToken != "", tok.Expiry)
			}
			info, err := s.Verify(tok.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if info.Subject != "alice" || info.ClientID != tt.client.ID || !slices.Equal(info.Audience, []string{resourceURI}) || !info.HasScopes("read", "write") {
				t.Errorf("token claims %+v", info)
			}

			// Refresh, with rotation: the old refresh token is spent.
			old := tok.RefreshToken
			tok.Expiry = time.Now().Add(-time.Minute)
			tok2, err := cfg.TokenSource(ctx, tok).Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok2.AccessToken == tok.AccessToken || tok2.RefreshToken == "" || tok2.RefreshToken == old {
				t.Errorf("refresh did not rotate")
			}
			if info, err := s.Verify(tok2.AccessToken); err != nil || !slices.Equal(info.Audience, []string{resourceURI}) {
				t.Errorf("refreshed token: %v %+v", err, info)
			}
			_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: old}).Token()
			if retrieveCode(err) != "invalid_grant" {
				t.Errorf("reused refresh token: %v", err)
			}
		})
	}
}

func TestAuthorizationRefusals(t *testing.T) {
	const secret = "hunter2-secret"
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	denied := false
	s := newServer(t, &authtest.Options{
		Now:    clock.now,
		Scopes: []string{"read", "write", "admin"},
		Clients: []authtest.Client{
			{ID: "app", Secret: secret, RedirectURIs: []string{redirectURI}, Scopes: []string{"read", "write"}},
			{ID: "other", RedirectURIs: []string{redirectURI}},
			{ID: "machine", Secret: "m", GrantTypes: []string{"client_credentials"}},
		},
		Consent: func(r *authtest.ConsentRequest) error {
			if denied {
				return errors.New("no")
			}
			return nil
		},
	})
	cfg := config(s, "app", secret, redirectURI, oauth2.AuthStyleInHeader, "read")
	ctx := ctxWith(s)
	codeFor := func(t *testing.T, verifier string) string {
		t.Helper()
		_, loc := authorize(t, s, cfg.AuthCodeURL("x", oauth2.S256ChallengeOption(verifier)))
		if loc == nil || loc.Query().Get("code") == "" {
			t.Fatalf("no code: %v", loc)
		}
		return loc.Query().Get("code")
	}

	t.Run("authorization endpoint", func(t *testing.T) {
		challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
		tests := []struct {
			name       string
			params     string
			wantStatus int
			wantError  string // in the redirect
		}{
			{"unknown client", "client_id=nope&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusBadRequest, ""},
			{"unregistered redirect_uri", "client_id=app&redirect_uri=" + url.QueryEscape("http://127.0.0.1:1/evil"), http.StatusBadRequest, ""},
			{"no PKCE", "response_type=code&client_id=app&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "invalid_request"},
			{"plain PKCE", "response_type=code&client_id=app&code_challenge_method=plain&code_challenge=" + challenge + "&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "invalid_request"},
			{"bad response_type", "response_type=token&client_id=app&code_challenge_method=S256&code_challenge=" + challenge + "&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "unsupported_response_type"},
			{"unknown scope", "response_type=code&scope=nope&client_id=app&code_challenge_method=S256&code_challenge=" + challenge + "&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "invalid_scope"},
			{"scope the client may not have", "response_type=code&scope=admin&client_id=app&code_challenge_method=S256&code_challenge=" + challenge + "&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "invalid_scope"},
			{"bad resource", "response_type=code&resource=relative&client_id=app&code_challenge_method=S256&code_challenge=" + challenge + "&redirect_uri=" + url.QueryEscape(redirectURI), http.StatusFound, "invalid_target"},
			{"duplicate parameter", "client_id=app&client_id=app", http.StatusBadRequest, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, loc := authorize(t, s, s.URL+"/authorize?"+tt.params)
				if status != tt.wantStatus {
					t.Fatalf("HTTP %d, want %d", status, tt.wantStatus)
				}
				if tt.wantError != "" && (loc.Query().Get("error") != tt.wantError || loc.Query().Get("iss") != s.URL || loc.Query().Has("code")) {
					t.Errorf("redirect %s, want error %s", loc, tt.wantError)
				}
			})
		}
		denied = true
		_, loc := authorize(t, s, cfg.AuthCodeURL("x", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		denied = false
		if loc == nil || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "x" {
			t.Errorf("denied consent: %v", loc)
		}
	})

	t.Run("token endpoint", func(t *testing.T) {
		tests := []struct {
			name string
			try  func(t *testing.T) error
			want string
		}{
			{"bad verifier", func(t *testing.T) error {
				code := codeFor(t, oauth2.GenerateVerifier())
				_, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
				return err
			}, "invalid_grant"},
			{"no verifier", func(t *testing.T) error {
				_, err := cfg.Exchange(ctx, codeFor(t, oauth2.GenerateVerifier()))
				return err
			}, "invalid_grant"},
			{"reused code", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(v)); err != nil {
					t.Fatal(err)
				}
				_, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_grant"},
			{"wrong redirect_uri", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				c2 := *cfg
				c2.RedirectURL = "http://127.0.0.1:9999/other"
				_, err := c2.Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_grant"},
			{"another client", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				_, err := config(s, "other", "", redirectURI, oauth2.AuthStyleInParams).Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_grant"},
			{"expired code", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				clock.advance(authtest.DefaultCodeTTL + time.Second)
				_, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_grant"},
			{"wrong secret", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				c2 := *cfg
				c2.ClientSecret = "wrong"
				_, err := c2.Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_client"},
			{"secret sent in the body by a basic client", func(t *testing.T) error {
				v := oauth2.GenerateVerifier()
				code := codeFor(t, v)
				c2 := *cfg
				c2.Endpoint.AuthStyle = oauth2.AuthStyleInParams
				_, err := c2.Exchange(ctx, code, oauth2.VerifierOption(v))
				return err
			}, "invalid_client"},
			{"grant type the client may not use", func(t *testing.T) error {
				_, err := config(s, "machine", "m", redirectURI, oauth2.AuthStyleInHeader).Exchange(ctx, "x", oauth2.VerifierOption(oauth2.GenerateVerifier()))
				return err
			}, "unauthorized_client"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.try(t)
				if got := retrieveCode(err); got != tt.want {
					t.Fatalf("error %v, want %s", err, tt.want)
				}
				var re *oauth2.RetrieveError
				errors.As(err, &re)
				if strings.Contains(string(re.Body), secret) || strings.Contains(string(re.Body), "code_verifier=") {
					t.Errorf("the error answer holds a credential: %s", re.Body)
				}
			})
		}
	})

	t.Run("bounded body", func(t *testing.T) {
		a := post(t, s, "/token", url.Values{"grant_type": {"client_credentials"}, "pad": {strings.Repeat("x", authtest.MaxRequestBody)}}, basic("machine", "m"))
		if a.status != http.StatusBadRequest || a.str("error") != "invalid_request" {
			t.Errorf("oversized body: %d %s", a.status, a.body)
		}
	})
}
