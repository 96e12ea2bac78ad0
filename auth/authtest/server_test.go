package authtest_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
)

func TestMetadata(t *testing.T) {
	tests := []struct {
		name    string
		opts    authtest.Options
		paths   []string // well-known paths, relative to the origin
		wantIss func(s *authtest.Server) string
		check   func(t *testing.T, md map[string]json.RawMessage, size int)
	}{
		{
			name:  "root issuer",
			paths: []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"},
		},
		{
			name:  "issuer with a path",
			opts:  authtest.Options{Path: "/tenant1"},
			paths: []string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"},
		},
		{
			name:    "wrong issuer",
			opts:    authtest.Options{Misbehavior: authtest.Misbehavior{WrongIssuer: true}},
			paths:   []string{"/.well-known/oauth-authorization-server"},
			wantIss: func(s *authtest.Server) string { return s.URL + "/wrong" },
		},
		{
			name:  "no S256",
			opts:  authtest.Options{Misbehavior: authtest.Misbehavior{NoS256: true}},
			paths: []string{"/.well-known/oauth-authorization-server"},
			check: func(t *testing.T, md map[string]json.RawMessage, _ int) {
				if _, ok := md["code_challenge_methods_supported"]; ok {
					t.Error("code_challenge_methods_supported is published")
				}
			},
		},
		{
			name:  "oversized",
			opts:  authtest.Options{Misbehavior: authtest.Misbehavior{OversizedDocuments: true}},
			paths: []string{"/.well-known/oauth-authorization-server"},
			check: func(t *testing.T, _ map[string]json.RawMessage, size int) {
				if size <= auth.MaxDocumentSize {
					t.Errorf("document is %d bytes, want more than %d", size, auth.MaxDocumentSize)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, &tt.opts)
			origin := strings.TrimSuffix(s.URL, tt.opts.Path)
			for _, p := range tt.paths {
				resp, err := s.Client().Get(origin + p)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%s: HTTP %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				var md auth.ServerMetadata
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(b, &md); err != nil {
					t.Fatal(err)
				}
				json.Unmarshal(b, &raw)
				wantIss := s.URL
				if tt.wantIss != nil {
					wantIss = tt.wantIss(s)
				}
				if md.Issuer != wantIss || strings.HasSuffix(s.URL, "/") {
					t.Errorf("%s: issuer %q, server URL %q", p, md.Issuer, s.URL)
				}
				if tt.check != nil {
					tt.check(t, raw, len(b))
					continue
				}
				if md.TokenEndpoint != s.URL+"/token" || md.AuthorizationEndpoint != s.URL+"/authorize" ||
					!md.AuthorizationResponseIssParameterSupported || !md.ClientIDMetadataDocumentSupported ||
					!slices.Equal(md.CodeChallengeMethodsSupported, []string{"S256"}) ||
					!slices.Contains(md.TokenEndpointAuthMethodsSupported, "private_key_jwt") ||
					!slices.Contains(md.GrantTypesSupported, "urn:ietf:params:oauth:grant-type:jwt-bearer") ||
					len(md.DPoPSigningAlgValuesSupported) == 0 || md.IntrospectionEndpoint == "" || md.JWKSURI == "" {
					t.Errorf("%s: incomplete metadata %s", p, b)
				}
			}
		})
	}
}

func TestScopesSupported(t *testing.T) {
	s := newServer(t, &authtest.Options{Scopes: []string{"read", "write"}})
	if got := s.Metadata().ScopesSupported; !slices.Equal(got, []string{"read", "write"}) {
		t.Errorf("scopes_supported %v", got)
	}
}

func TestMintAndVerify(t *testing.T) {
	s := newServer(t, &authtest.Options{Subject: "alice"})
	tests := []struct {
		name    string
		req     authtest.TokenRequest
		mutate  func(string) string
		wantErr bool
		check   func(t *testing.T, info *auth.TokenInfo)
	}{
		{
			name: "defaults",
			req:  authtest.TokenRequest{Scopes: []string{"a", "b"}},
			check: func(t *testing.T, info *auth.TokenInfo) {
				if info.Subject != "alice" || info.Issuer != s.URL || !info.HasScopes("a", "b") || len(info.Audience) != 0 {
					t.Errorf("%+v", info)
				}
			},
		},
		{
			name: "bound to a resource and a DPoP key",
			req:  authtest.TokenRequest{Subject: "bob", ClientID: "c1", Resource: "https://mcp.example.com/mcp", DPoPThumbprint: "jkt1", Claims: map[string]any{"tenant": "t1", "iss": "ignored"}},
			check: func(t *testing.T, info *auth.TokenInfo) {
				if info.Subject != "bob" || info.ClientID != "c1" || !slices.Equal(info.Audience, []string{"https://mcp.example.com/mcp"}) ||
					info.ConfirmationThumbprint != "jkt1" || string(info.Claims["tenant"]) != `"t1"` || info.Issuer != s.URL {
					t.Errorf("%+v", info)
				}
			},
		},
		{name: "expired", req: authtest.TokenRequest{TTL: -1}, wantErr: true},
		{name: "tampered", req: authtest.TokenRequest{}, mutate: func(tok string) string {
			return tok[:len(tok)-4] + "AAAA"
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := s.Token(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.mutate != nil {
				tok = tt.mutate(tok)
			}
			info, err := s.Verify(tok)
			if tt.wantErr {
				if !errors.Is(err, authtest.ErrInvalidToken) {
					t.Fatalf("Verify: %v, want ErrInvalidToken", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, info)
		})
	}
}

func TestRotateKeys(t *testing.T) {
	s := newServer(t, nil)
	old, err := s.Token(authtest.TokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kid, err := s.RotateKeys()
	if err != nil {
		t.Fatal(err)
	}
	set := s.KeySet()
	if len(set.Keys) != 2 || set.Keys[1].KeyID != kid {
		t.Fatalf("key set after rotation: %+v", set.Keys)
	}
	resp, err := s.Client().Get(s.Metadata().JWKSURI)
	if err != nil {
		t.Fatal(err)
	}
	var published struct {
		Keys []struct {
			Kid, Kty, Crv string
			D             string `json:"d"`
		} `json:"keys"`
	}
	json.NewDecoder(resp.Body).Decode(&published)
	resp.Body.Close()
	if len(published.Keys) != 2 || published.Keys[1].Kid != kid || published.Keys[0].D != "" || published.Keys[0].Crv != "P-256" {
		t.Errorf("published key set %+v", published)
	}
	fresh, _ := s.Token(authtest.TokenRequest{})
	if _, err := s.Verify(old); err != nil {
		t.Errorf("a token of the retired key: %v", err)
	}
	s.DropRetiredKeys()
	if _, err := s.Verify(old); !errors.Is(err, authtest.ErrInvalidToken) {
		t.Errorf("a token of a dropped key: %v", err)
	}
	if _, err := s.Verify(fresh); err != nil {
		t.Errorf("a token of the current key: %v", err)
	}
	for range authtest.MaxSigningKeys + 3 {
		s.RotateKeys()
	}
	if n := len(s.KeySet().Keys); n != authtest.MaxSigningKeys {
		t.Errorf("%d keys published, want at most %d", n, authtest.MaxSigningKeys)
	}
}

func TestBlockAndClose(t *testing.T) {
	block := make(chan struct{})
	s := authtest.NewServer(&authtest.Options{Misbehavior: authtest.Misbehavior{Block: block}})
	defer s.Close()
	done := make(chan int)
	go func() {
		resp, err := s.Client().Get(s.URL + "/.well-known/oauth-authorization-server")
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	close(block)
	if code := <-done; code != http.StatusOK {
		t.Errorf("after Block was closed: %d", code)
	}

	// Close releases a held request.
	s.Misbehave(authtest.Misbehavior{Block: make(chan struct{})})
	go func() {
		resp, err := s.Client().Get(s.URL + "/jwks")
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	s.Close()
	if code := <-done; code == http.StatusOK {
		t.Errorf("a request held by Block was served")
	}
}
