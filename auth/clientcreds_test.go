package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

// seenRequest is what a test server received.
type seenRequest struct {
	Path   string
	Header http.Header
	Form   url.Values
	Body   string
}

// testServer is an httptest server on 127.0.0.1 that records requests
// and answers with handle.
type testServer struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []seenRequest
	handle func(w http.ResponseWriter, r *http.Request, form url.Values)
}

func newTestServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, form url.Values)) *testServer {
	t.Helper()
	s := &testServer{handle: handle}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		s.mu.Lock()
		s.seen = append(s.seen, seenRequest{Path: r.URL.Path, Header: r.Header.Clone(), Form: form, Body: string(b)})
		s.mu.Unlock()
		s.handle(w, r, form)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

// metadata returns server metadata naming s as issuer with a /token
// endpoint.
func (s *testServer) metadata(methods ...string) *ServerMetadata {
	return &ServerMetadata{Issuer: s.URL, TokenEndpoint: s.URL + "/token", TokenEndpointAuthMethodsSupported: methods}
}

// writeJSON answers status with v as JSON.
func writeGrantJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// okToken answers a bearer token.
func okToken(w http.ResponseWriter, _ *http.Request, _ url.Values) {
	writeGrantJSON(w, 200, map[string]any{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "scope": "a b"})
}

// basicCredentials decodes a Basic header without URL-decoding.
func basicCredentials(t *testing.T, h http.Header) string {
	t.Helper()
	v, ok := strings.CutPrefix(h.Get("Authorization"), "Basic ")
	if !ok {
		t.Fatalf("Authorization = %q, want Basic", h.Get("Authorization"))
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newGrantECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkNoSecrets fails if err's message holds any of secrets.
func checkGrantNoSecrets(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q reveals a secret", err)
		}
	}
}

func TestClientCredentialsForms(t *testing.T) {
	const id, secret = "my client:1", "s3cr:t/+é"
	key := newGrantECKey(t)
	tests := []struct {
		name    string
		grant   ClientCredentials
		methods []string
		check   func(t *testing.T, s *testServer, got seenRequest)
	}{
		{
			name:    "basic",
			grant:   ClientCredentials{ClientAuth: ClientAuth{ClientID: id, ClientSecret: secret}},
			methods: []string{"client_secret_basic"},
			check: func(t *testing.T, _ *testServer, got seenRequest) {
				// RFC 6749 section 2.3.1: form-urlencoded, then joined.
				if c := basicCredentials(t, got.Header); c != "my+client%3A1:s3cr%3At%2F%2B%C3%A9" {
					t.Errorf("Basic credentials = %q", c)
				}
				for _, k := range []string{"client_id", "client_secret", "client_assertion"} {
					if got.Form.Has(k) {
						t.Errorf("form has %s", k)
					}
				}
			},
		},
		{
			name:    "post",
			grant:   ClientCredentials{ClientAuth: ClientAuth{ClientID: id, ClientSecret: secret}},
			methods: []string{"client_secret_post"},
			check: func(t *testing.T, _ *testServer, got seenRequest) {
				if got.Header.Get("Authorization") != "" {
					t.Error("Authorization header sent with client_secret_post")
				}
				if got.Form.Get("client_id") != id || got.Form.Get("client_secret") != secret {
					t.Errorf("form credentials = %q, %q", got.Form.Get("client_id"), got.Form.Get("client_secret"))
				}
			},
		},
		{
			name:    "private_key_jwt",
			grant:   ClientCredentials{ClientAuth: ClientAuth{ClientID: id, Key: key, KeyID: "k1"}},
			methods: []string{"private_key_jwt"},
			check: func(t *testing.T, s *testServer, got seenRequest) {
				if got.Header.Get("Authorization") != "" || got.Form.Has("client_secret") {
					t.Error("secret-based authentication sent with private_key_jwt")
				}
				if got.Form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
					t.Errorf("client_assertion_type = %q", got.Form.Get("client_assertion_type"))
				}
				if got.Form.Get("client_id") != id {
					t.Errorf("client_id = %q", got.Form.Get("client_id"))
				}
				c := verifyAssertion(t, got.Form.Get("client_assertion"), &key.PublicKey, "ES256", "k1")
				if c.Issuer != id || c.Subject != id || c.Audience != s.URL {
					t.Errorf("claims iss=%q sub=%q aud=%q, want %q, %q, %q", c.Issuer, c.Subject, c.Audience, id, id, s.URL)
				}
			},
		},
		{
			name:    "private_key_jwt to the token endpoint",
			grant:   ClientCredentials{ClientAuth: ClientAuth{ClientID: id, Key: key, AssertionAudience: "https://as.example/token"}},
			methods: []string{"client_secret_basic", "private_key_jwt"},
			check: func(t *testing.T, _ *testServer, got seenRequest) {
				c := verifyAssertion(t, got.Form.Get("client_assertion"), &key.PublicKey, "ES256", "")
				if c.Audience != "https://as.example/token" {
					t.Errorf("aud = %q", c.Audience)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, okToken)
			tok, err := tt.grant.Token(context.Background(), &GrantRequest{
				Server:   s.metadata(tt.methods...),
				Resource: "https://mcp.example/mcp",
				Scopes:   []string{"a", "b"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at-1" || tok.Type() != "Bearer" || tok.Extra("scope") != "a b" {
				t.Errorf("token = %+v", tok)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if got.Path != "/token" || got.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				t.Errorf("path %q, Content-Type %q", got.Path, got.Header.Get("Content-Type"))
			}
			if got.Form.Get("grant_type") != "client_credentials" || got.Form.Get("resource") != "https://mcp.example/mcp" || got.Form.Get("scope") != "a b" {
				t.Errorf("form = %v", got.Form)
			}
			tt.check(t, s, got)
		})
	}
}

// verifyAssertion checks a client assertion's signature and shape and
// returns its claims.
func verifyAssertion(t *testing.T, assertion string, pub any, alg, kid string) assertionClaims {
	t.Helper()
	jws, err := jose.ParseSignedCompact(assertion, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
	if err != nil {
		t.Fatalf("assertion does not parse: %v", err)
	}
	h := jws.Signatures[0].Protected
	if h.KeyID != kid {
		t.Errorf("kid = %q, want %q", h.KeyID, kid)
	}
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "JWT" {
		t.Errorf("typ = %q", typ)
	}
	payload, err := jws.Verify(pub)
	if err != nil {
		t.Fatalf("assertion does not verify: %v", err)
	}
	var c assertionClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if c.IssuedAt < now-5 || c.IssuedAt > now+5 {
		t.Errorf("iat = %d, now %d", c.IssuedAt, now)
	}
	if c.Expiry-c.IssuedAt != int64(ClientAssertionLifetime/time.Second) {
		t.Errorf("exp - iat = %d", c.Expiry-c.IssuedAt)
	}
	if len(c.ID) < 16 {
		t.Errorf("jti = %q", c.ID)
	}
	return c
}

func TestClientAuthMethodChoice(t *testing.T) {
	key := newGrantECKey(t)
	tests := []struct {
		name      string
		ca        ClientAuth
		supported []string
		want      string
		wantErr   error
	}{
		{"secret, no list", ClientAuth{ClientSecret: "s"}, nil, AuthMethodClientSecretBasic, nil},
		{"key, no list", ClientAuth{Key: key}, nil, AuthMethodPrivateKeyJWT, nil},
		{"key and secret prefer key", ClientAuth{Key: key, ClientSecret: "s"}, []string{"client_secret_basic", "private_key_jwt"}, AuthMethodPrivateKeyJWT, nil},
		{"key and secret, key unsupported", ClientAuth{Key: key, ClientSecret: "s"}, []string{"client_secret_post"}, AuthMethodClientSecretPost, nil},
		{"secret prefers basic", ClientAuth{ClientSecret: "s"}, []string{"client_secret_post", "client_secret_basic"}, AuthMethodClientSecretBasic, nil},
		{"secret, post only", ClientAuth{ClientSecret: "s"}, []string{"none", "client_secret_post"}, AuthMethodClientSecretPost, nil},
		{"nothing in common", ClientAuth{ClientSecret: "s"}, []string{"private_key_jwt"}, "", ErrNoAuthMethod},
		{"no credentials", ClientAuth{}, []string{"client_secret_basic"}, AuthMethodNone, nil},
		{"explicit", ClientAuth{ClientSecret: "s", AuthMethod: AuthMethodClientSecretPost}, []string{"client_secret_basic"}, AuthMethodClientSecretPost, nil},
		{"unknown explicit", ClientAuth{AuthMethod: "tls_client_auth"}, nil, "", ErrGrantConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ca.method(&ServerMetadata{TokenEndpointAuthMethodsSupported: tt.supported})
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("method() = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestClientCredentialsScopes(t *testing.T) {
	tests := []struct {
		name      string
		override  []string
		requested []string
		want      string
		wantSent  bool
	}{
		{"requested", nil, []string{"x", "y"}, "x y", true},
		{"none", nil, nil, "", false},
		{"override", []string{"fixed"}, []string{"x"}, "fixed", true},
		{"empty override", []string{}, []string{"x"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, okToken)
			g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}, Scopes: tt.override}
			if _, err := g.Token(context.Background(), &GrantRequest{Server: s.metadata(), Resource: "https://mcp.example/", Scopes: tt.requested}); err != nil {
				t.Fatal(err)
			}
			f := s.requests()[0].Form
			if f.Has("scope") != tt.wantSent || f.Get("scope") != tt.want {
				t.Errorf("scope = %q (sent %v), want %q", f.Get("scope"), f.Has("scope"), tt.want)
			}
			if f.Get("resource") != "https://mcp.example/" {
				t.Errorf("resource = %q", f.Get("resource"))
			}
		})
	}
}

func TestClientCredentialsConfigErrors(t *testing.T) {
	md := &ServerMetadata{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token"}
	tests := []struct {
		name  string
		grant ClientCredentials
		req   *GrantRequest
	}{
		{"nil request", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}}, nil},
		{"no metadata", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}}, &GrantRequest{}},
		{"no token endpoint", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}}, &GrantRequest{Server: &ServerMetadata{Issuer: "https://as.example"}}},
		{"no client ID", ClientCredentials{ClientAuth: ClientAuth{ClientSecret: "s"}}, &GrantRequest{Server: md}},
		{"no credential", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c"}}, &GrantRequest{Server: md}},
		{"basic without secret", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", Key: newGrantECKey(t), AuthMethod: AuthMethodClientSecretBasic}}, &GrantRequest{Server: md}},
		{"jwt without key", ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s", AuthMethod: AuthMethodPrivateKeyJWT}}, &GrantRequest{Server: md}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.grant.Token(context.Background(), tt.req)
			if !errors.Is(err, ErrGrantConfig) {
				t.Errorf("err = %v, want ErrGrantConfig", err)
			}
		})
	}
}

func TestClientCredentialsInsecureEndpoint(t *testing.T) {
	g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "hunter2"}}
	_, err := g.Token(context.Background(), &GrantRequest{Server: &ServerMetadata{Issuer: "http://as.example", TokenEndpoint: "http://as.example/token"}})
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("err = %v, want ErrInsecureURL", err)
	}
	checkGrantNoSecrets(t, err, "hunter2")
}

func TestTokenEndpointErrors(t *testing.T) {
	const secret = "very-secret-value"
	big := strings.Repeat("x", MaxDocumentSize+10)
	tests := []struct {
		name     string
		handle   func(w http.ResponseWriter, r *http.Request, form url.Values)
		dpop     bool
		wantErr  error
		wantHTTP *HTTPError
	}{
		{"invalid_client", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": "bad credentials"})
		}, false, nil, &HTTPError{StatusCode: 401, Code: "invalid_client", Description: "bad credentials"}},
		{"invalid_scope", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 400, map[string]string{"error": "invalid_scope"})
		}, false, nil, &HTTPError{StatusCode: 400, Code: "invalid_scope"}},
		{"server error, no JSON", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			http.Error(w, "boom", 500)
		}, false, nil, &HTTPError{StatusCode: 500}},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{access_token: at")
		}, false, nil, nil},
		{"HTML", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `{"access_token":"at","token_type":"Bearer"}`)
		}, false, nil, nil},
		{"oversized", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]string{"access_token": big, "token_type": "Bearer"})
		}, false, ErrTooLarge, nil},
		{"no access token", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]string{"token_type": "Bearer"})
		}, false, ErrMalformedToken, nil},
		{"access token not a string", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]any{"access_token": 12, "token_type": "Bearer"})
		}, false, ErrMalformedToken, nil},
		{"negative expires_in", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": -1})
		}, false, ErrMalformedToken, nil},
		{"unknown token type", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]any{"access_token": "at", "token_type": "mac"})
		}, false, ErrTokenType, nil},
		{"bearer when DPoP asked", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]any{"access_token": "at", "token_type": "Bearer"})
		}, true, ErrTokenType, nil},
		{"DPoP when not asked", func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]any{"access_token": "at", "token_type": "DPoP"})
		}, false, ErrTokenType, nil},
	}
	dk, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, tt.handle)
			r := &GrantRequest{Server: s.metadata("client_secret_post"), Resource: "https://mcp.example/mcp"}
			if tt.dpop {
				r.DPoP = dk
			}
			g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: secret}}
			tok, err := g.Token(context.Background(), r)
			if err == nil {
				t.Fatalf("Token() = %+v, want an error", tok)
			}
			checkGrantNoSecrets(t, err, secret, big[:100])
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantHTTP != nil {
				var he *HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("err = %v, want *HTTPError", err)
				}
				if he.StatusCode != tt.wantHTTP.StatusCode || he.Code != tt.wantHTTP.Code || he.Description != tt.wantHTTP.Description {
					t.Errorf("HTTPError = %+v, want %+v", he, tt.wantHTTP)
				}
				if he.URL != s.URL+"/token" {
					t.Errorf("HTTPError.URL = %q", he.URL)
				}
			}
		})
	}
}

func TestTokenEndpointRedirectNotFollowed(t *testing.T) {
	s := newTestServer(t, func(w http.ResponseWriter, r *http.Request, f url.Values) {
		if r.URL.Path == "/token" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		okToken(w, r, f)
	})
	g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s", AuthMethod: AuthMethodClientSecretPost}}
	_, err := g.Token(context.Background(), &GrantRequest{Server: s.metadata()})
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("err = %v, want *HTTPError 307", err)
	}
	if reqs := s.requests(); len(reqs) != 1 {
		t.Errorf("%d requests: the credentials followed the redirect", len(reqs))
	}
}

func TestTokenEndpointHangs(t *testing.T) {
	release := make(chan struct{})
	s := newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before s.Close
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}}
	_, err := g.Token(ctx, &GrantRequest{Server: s.metadata()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestParseTokenAnswer(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		raw        string
		dpop       bool
		wantType   string
		wantExpiry time.Time
		wantErr    error
	}{
		{"bearer", `{"access_token":"a","token_type":"bearer","expires_in":60}`, false, "Bearer", now.Add(time.Minute), nil},
		{"absent type is bearer", `{"access_token":"a"}`, false, "Bearer", time.Time{}, nil},
		{"dpop any case", `{"access_token":"a","token_type":"dPoP"}`, true, "DPoP", time.Time{}, nil},
		{"expires_in string", `{"access_token":"a","token_type":"Bearer","expires_in":"120"}`, false, "Bearer", now.Add(2 * time.Minute), nil},
		{"expires_in null", `{"access_token":"a","token_type":"Bearer","expires_in":null}`, false, "Bearer", time.Time{}, nil},
		{"expires_in huge", `{"access_token":"a","token_type":"Bearer","expires_in":1e300}`, false, "Bearer", now.Add(maxExpiresIn * time.Second), nil},
		{"expires_in bad string", `{"access_token":"a","token_type":"Bearer","expires_in":"soon"}`, false, "", time.Time{}, ErrMalformedToken},
		{"expires_in object", `{"access_token":"a","token_type":"Bearer","expires_in":{}}`, false, "", time.Time{}, ErrMalformedToken},
		{"array", `[1]`, false, "", time.Time{}, ErrMalformedToken},
		{"type not string", `{"access_token":"a","token_type":1}`, false, "", time.Time{}, ErrMalformedToken},
		{"N_A", `{"access_token":"a","token_type":"N_A"}`, false, "", time.Time{}, ErrTokenType},
		{"error with status 200", `{"error":"invalid_client"}`, false, "", time.Time{}, ErrMalformedToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := parseTokenAnswer([]byte(tt.raw), tt.dpop, now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if tok.TokenType != tt.wantType || !tok.Expiry.Equal(tt.wantExpiry) {
				t.Errorf("type %q expiry %v, want %q %v", tok.TokenType, tok.Expiry, tt.wantType, tt.wantExpiry)
			}
		})
	}
}

func TestParseTokenAnswerKeepsMembers(t *testing.T) {
	tok, err := parseTokenAnswer([]byte(`{"access_token":"a","token_type":"Bearer","refresh_token":"r","scope":"s t","id_token":"x"}`), false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "r" || tok.Extra("scope") != "s t" || tok.Extra("id_token") != "x" {
		t.Errorf("token = %+v", tok)
	}
	var _ *oauth2.Token = tok
}

func FuzzParseTokenAnswer(f *testing.F) {
	f.Add([]byte(`{"access_token":"a","token_type":"Bearer","expires_in":3600,"scope":"x"}`), false)
	f.Add([]byte(`{"access_token":"a","token_type":"DPoP","expires_in":"3600"}`), true)
	f.Add([]byte(`{"access_token":"","expires_in":-1}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, dpop bool) {
		tok, err := parseTokenAnswer(raw, dpop, time.Unix(1e9, 0))
		if err != nil {
			return
		}
		if tok.AccessToken == "" || (tok.TokenType != "Bearer" && tok.TokenType != "DPoP") || tok.ExpiresIn < 0 || tok.ExpiresIn > maxExpiresIn {
			t.Fatalf("accepted %q as %+v", raw, tok)
		}
		if dpop != (tok.TokenType == "DPoP") {
			t.Fatalf("dpop %v but type %q", dpop, tok.TokenType)
		}
	})
}
