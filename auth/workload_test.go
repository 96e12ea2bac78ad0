package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
)

const testPlatformToken = "eyJ.platform-token.sig"

func platformToken(context.Context) (string, error) { return testPlatformToken, nil }

func TestWorkloadGrantForm(t *testing.T) {
	key := newGrantECKey(t)
	tests := []struct {
		name    string
		grant   *WorkloadGrant
		methods []string
		check   func(t *testing.T, got seenRequest)
	}{
		{"public", &WorkloadGrant{Assertion: platformToken, ClientAuth: ClientAuth{ClientID: "wl"}}, []string{"none"}, func(t *testing.T, got seenRequest) {
			if got.Form.Get("client_id") != "wl" || got.Header.Get("Authorization") != "" || got.Form.Has("client_assertion") {
				t.Errorf("client auth: form %v, Authorization %q", got.Form, got.Header.Get("Authorization"))
			}
		}},
		{"no client ID", &WorkloadGrant{Assertion: platformToken}, nil, func(t *testing.T, got seenRequest) {
			if got.Form.Has("client_id") {
				t.Error("client_id sent without one configured")
			}
		}},
		{"with a secret", &WorkloadGrant{Assertion: platformToken, ClientAuth: ClientAuth{ClientID: "wl", ClientSecret: "s"}}, nil, func(t *testing.T, got seenRequest) {
			if basicCredentials(t, got.Header) != "wl:s" {
				t.Error("no Basic authentication")
			}
		}},
		{"with a key", &WorkloadGrant{Assertion: platformToken, ClientAuth: ClientAuth{ClientID: "wl", Key: key}}, []string{"private_key_jwt"}, func(t *testing.T, got seenRequest) {
			if got.Form.Get("client_assertion") == "" || got.Form.Get("client_assertion") == testPlatformToken {
				t.Error("no separate client assertion")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, okToken)
			tok, err := tt.grant.Token(context.Background(), &GrantRequest{
				Server: s.metadata(tt.methods...), Resource: "https://mcp.example/mcp", Scopes: []string{"tools"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at-1" {
				t.Errorf("token %+v", tok)
			}
			got := s.requests()[0]
			want := map[string]string{
				"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
				"assertion":  testPlatformToken,
				"resource":   "https://mcp.example/mcp",
				"scope":      "tools",
			}
			for k, v := range want {
				if g := got.Form.Get(k); g != v {
					t.Errorf("%s = %q, want %q", k, g, v)
				}
			}
			tt.check(t, got)
		})
	}
}

// TestWorkloadGrantNoRetry follows the auth/wif-jwt-bearer scenario: a
// refused JWT bearer request is reported, not retried and not replaced by
// another grant type.
func TestWorkloadGrantNoRetry(t *testing.T) {
	for _, code := range []string{"unauthorized_client", "invalid_scope", "invalid_grant"} {
		t.Run(code, func(t *testing.T) {
			s := newTestServer(t, func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
				writeGrantJSON(w, 400, map[string]string{"error": code})
			})
			g := &WorkloadGrant{Assertion: platformToken, ClientAuth: ClientAuth{ClientID: "wl"}}
			r := &GrantRequest{Server: s.metadata("none"), Resource: "https://mcp.example/mcp", Scopes: []string{"x"}}
			for i := range 3 {
				_, err := g.Token(context.Background(), r)
				var he *HTTPError
				if !errors.As(err, &he) || he.Code != code {
					t.Fatalf("call %d: err = %v, want *HTTPError %s", i, err, code)
				}
				if i > 0 && !errors.Is(err, ErrAssertionRejected) {
					t.Errorf("call %d: err = %v, want ErrAssertionRejected", i, err)
				}
				checkGrantNoSecrets(t, err, testPlatformToken)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if reqs[0].Form.Get("grant_type") != grantJWTBearer {
				t.Errorf("grant_type %q", reqs[0].Form.Get("grant_type"))
			}
			// Other scopes, or a new assertion, are a new request.
			r2 := *r
			r2.Scopes = []string{"y"}
			g.Token(context.Background(), &r2)
			g.Assertion = func(context.Context) (string, error) { return "eyJ.new.sig", nil }
			g.Token(context.Background(), r)
			if got := len(s.requests()); got != 3 {
				t.Errorf("%d requests after new scopes and a new assertion, want 3", got)
			}
		})
	}
}

func TestWorkloadGrantTransientFailureNotRemembered(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	s := newTestServer(t, func(w http.ResponseWriter, r *http.Request, f url.Values) {
		if fail.Load() {
			writeGrantJSON(w, 503, map[string]string{"error": "temporarily_unavailable"})
			return
		}
		okToken(w, r, f)
	})
	g := &WorkloadGrant{Assertion: platformToken}
	r := &GrantRequest{Server: s.metadata()}
	if _, err := g.Token(context.Background(), r); err == nil {
		t.Fatal("no error from a 503")
	}
	fail.Store(false)
	if _, err := g.Token(context.Background(), r); err != nil {
		t.Fatalf("after a 503: %v", err)
	}
}

func TestWorkloadGrantAssertionErrors(t *testing.T) {
	md := &ServerMetadata{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token"}
	tests := []struct {
		name    string
		g       *WorkloadGrant
		wantErr error
	}{
		{"no Assertion func", &WorkloadGrant{ClientAuth: ClientAuth{ClientID: "wl"}}, ErrGrantConfig},
		{"empty assertion", &WorkloadGrant{Assertion: func(context.Context) (string, error) { return "", nil }}, ErrNoAssertion},
		{"assertion source fails", &WorkloadGrant{Assertion: func(context.Context) (string, error) { return "", context.DeadlineExceeded }}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.g.Token(context.Background(), &GrantRequest{Server: md}); !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
