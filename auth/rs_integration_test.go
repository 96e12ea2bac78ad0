package auth_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// rsIssuer is an authorization server for the integration tests: an ES256
// key whose key set an httptest server publishes.
type rsIssuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

func newRSIssuer(tb testing.TB) *rsIssuer {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	is := &rsIssuer{key: k}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	}))
	tb.Cleanup(is.srv.Close)
	return is
}

// token signs a token for sub and audience with scope, valid for an hour
// (expired when ttl is negative), with more claims.
func (is *rsIssuer) token(tb testing.TB, sub, audience, scope string, ttl time.Duration, more map[string]any) string {
	tb.Helper()
	claims := map[string]any{"iss": is.srv.URL, "sub": sub, "aud": audience, "scope": scope,
		"iat": time.Now().Unix(), "exp": time.Now().Add(ttl).Unix()}
	for k, v := range more {
		claims[k] = v
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		tb.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// protectedServer is an MCP server with a whoami tool (answering the
// token's subject) and an echo tool, behind RequireToken with a JWT
// verifier of is, on a loopback httptest server.
type protectedServer struct {
	srv      *httptest.Server
	resource string
	log      *bytes.Buffer
	logMu    *sync.Mutex
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newProtectedServer(tb testing.TB, is *rsIssuer, guarded bool, edit func(o *auth.ResourceOptions)) *protectedServer {
	tb.Helper()
	ps := &protectedServer{log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	logger := slog.New(slog.NewTextHandler(lockedWriter{ps.logMu, ps.log}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var h http.Handler
	ps.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	tb.Cleanup(ps.srv.Close)
	ps.resource = ps.srv.URL + "/mcp"

	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, &mcp.ServerOptions{Logger: logger})
	type none struct{}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (string, error) {
		info := auth.TokenInfoFromContext(ctx)
		if info == nil {
			return "", errors.New("no token information")
		}
		return info.Subject, nil
	}); err != nil {
		tb.Fatal(err)
	}
	type echoIn struct {
		Message string `json:"message"`
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
		return in.Message, nil
	}); err != nil {
		tb.Fatal(err)
	}
	mh := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{Logger: logger})
	tb.Cleanup(func() { mh.Close() })
	sh := mcp.NewSSEHandler(s, &transport.SSEOptions{Logger: logger})
	tb.Cleanup(func() { sh.Close() })
	mux := http.NewServeMux()
	if err := auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource: ps.resource, AuthorizationServers: []string{is.srv.URL}, ScopesSupported: []string{"mcp"},
	}); err != nil {
		tb.Fatal(err)
	}
	if !guarded {
		mux.Handle("/mcp", mh)
		mux.Handle("/sse", sh)
		h = mux
		return ps
	}
	v, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: is.srv.URL, Audience: ps.resource, JWKSURL: is.srv.URL + "/jwks"})
	if err != nil {
		tb.Fatal(err)
	}
	o := &auth.ResourceOptions{Verifier: v, Resource: ps.resource, Scopes: []string{"mcp"}, Logger: logger}
	if edit != nil {
		edit(o)
	}
	guard, err := auth.RequireToken(o)
	if err != nil {
		tb.Fatal(err)
	}
	mux.Handle("/mcp", guard(mh))
	mux.Handle("/sse", guard(sh))
	h = mux
	return ps
}

func (ps *protectedServer) logged() string {
	ps.logMu.Lock()
	defer ps.logMu.Unlock()
	return ps.log.String()
}

// connect connects a client of era to ps with token (none when "").
func (ps *protectedServer) connect(ctx context.Context, era mcp.Era, token string) (*mcp.ClientSession, error) {
	header := http.Header{}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{Era: era})
	return c.Connect(ctx, &transport.StreamableClientTransport{URL: ps.resource, Header: header, HTTPClient: ps.srv.Client()})
}

// TestIntegrationBothEras: a tool handler behind the middleware reads the
// verified token's subject, in the handshake era and in 2026-07-28; a
// client without a token, or with a token for another resource, cannot
// connect.
func TestIntegrationBothEras(t *testing.T) {
	is := newRSIssuer(t)
	ps := newProtectedServer(t, is, true, nil)
	ctx := context.Background()
	alice := is.token(t, "alice", ps.resource, "mcp", time.Hour, nil)
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			cs, err := ps.connect(ctx, era, alice)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if cs.Era() != era {
				t.Fatalf("era %v", cs.Era())
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "alice" || res.IsError {
				t.Fatalf("whoami = %q", got)
			}
			for name, tok := range map[string]string{
				"no token":         "",
				"another resource": is.token(t, "alice", "https://other.example/mcp", "mcp", time.Hour, nil),
				"expired":          is.token(t, "alice", ps.resource, "mcp", -time.Hour, nil),
				"no scope":         is.token(t, "alice", ps.resource, "other", time.Hour, nil),
			} {
				if cs, err := ps.connect(ctx, era, tok); err == nil {
					cs.Close()
					t.Fatalf("%s: connected", name)
				}
			}
		})
	}
}

// post sends a JSON-RPC body to ps with token and session ID.
func (ps *protectedServer) post(t *testing.T, token, session, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ps.resource, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := ps.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestIntegrationSessionBinding: a session created with alice's token is
// refused (403) with bob's, and stays usable with alice's.
func TestIntegrationSessionBinding(t *testing.T) {
	is := newRSIssuer(t)
	ps := newProtectedServer(t, is, true, nil)
	alice := is.token(t, "alice", ps.resource, "mcp", time.Hour, nil)
	bob := is.token(t, "bob", ps.resource, "mcp", time.Hour, nil)
	resp, body := ps.post(t, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := ps.post(t, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	if resp, body := ps.post(t, bob, sid, call); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bob on alice's session: %d %s", resp.StatusCode, body)
	}
	if resp, body := ps.post(t, alice, sid, call); resp.StatusCode != 200 || !strings.Contains(body, `"alice"`) {
		t.Fatalf("alice on her session: %d %s", resp.StatusCode, body)
	}
}

// TestIntegrationChallenge: the 401 names the Protected Resource
// Metadata, which the server publishes, naming the issuer.
func TestIntegrationChallenge(t *testing.T) {
	is := newRSIssuer(t)
	ps := newProtectedServer(t, is, true, nil)
	resp, _ := ps.post(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	challenge := resp.Header.Get("WWW-Authenticate")
	prm := ps.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	if resp.StatusCode != 401 || challenge != `Bearer scope="mcp", resource_metadata="`+prm+`"` {
		t.Fatalf("%d %q", resp.StatusCode, challenge)
	}
	r, err := ps.srv.Client().Get(prm)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var md auth.ProtectedResourceMetadata
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || md.Resource != ps.resource || md.AuthorizationServers[0] != is.srv.URL {
		t.Fatalf("%+v, %v", md, err)
	}
}

// TestIntegrationNoSecrets runs refused and accepted requests of both
// eras, DPoP misuse among them, collecting the server's log (debug level)
// and every error the client and the verifiers return, and checks that no
// token, proof or secret appears in any of them.
func TestIntegrationNoSecrets(t *testing.T) {
	is := newRSIssuer(t)
	ps := newProtectedServer(t, is, true, func(o *auth.ResourceOptions) {
		o.ToolScopes = map[string][]string{"echo": {"echo"}}
	})
	ctx := context.Background()
	key, err := auth.GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{
		is.token(t, "alice", ps.resource, "mcp echo", time.Hour, nil),
		is.token(t, "alice", "https://other.example/mcp", "mcp", time.Hour, nil),
		is.token(t, "alice", ps.resource, "mcp", -time.Hour, nil),
		is.token(t, "alice", ps.resource, "mcp", time.Hour, nil),
		is.token(t, "alice", ps.resource, "mcp", time.Hour, map[string]any{"cnf": map[string]string{"jkt": key.Thumbprint()}}),
		is.token(t, "alice", ps.resource, "mcp", time.Hour, map[string]any{"iss": "https://evil.example"}),
		"opaque-secret-token-1234567890",
	}
	var errs []string
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		for _, tok := range secrets {
			cs, err := ps.connect(ctx, era, tok)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}); err != nil {
				errs = append(errs, err.Error())
			}
			cs.Close()
		}
	}
	// DPoP misuse: a bound token as Bearer, a replayed proof, a proof for
	// another URL.
	bound := secrets[4]
	proof, _ := key.Proof("POST", ps.resource, &auth.ProofOptions{AccessToken: bound})
	other, _ := key.Proof("POST", ps.srv.URL+"/other", &auth.ProofOptions{AccessToken: bound})
	secrets = append(secrets, proof, other)
	for i, h := range []http.Header{
		{},
		{"Authorization": {"Bearer " + bound}, "Dpop": {proof}},
		{"Authorization": {"DPoP " + bound}, "Dpop": {proof}},
		{"Authorization": {"DPoP " + bound}, "Dpop": {proof}},
		{"Authorization": {"DPoP " + bound}, "Dpop": {other}},
	} {
		target := ps.resource
		if i == 0 {
			target += "?access_token=" + secrets[0] // refused, and not logged
		}
		req, _ := http.NewRequest("POST", target, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		resp, err := ps.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		errs = append(errs, resp.Header.Get("WWW-Authenticate"), string(b))
	}
	// The verifiers' own errors.
	v, _ := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: is.srv.URL, Audience: ps.resource, JWKSURL: is.srv.URL + "/jwks"})
	for _, tok := range secrets {
		if _, err := v.VerifyToken(ctx, tok); err != nil {
			errs = append(errs, err.Error())
		}
	}
	text := ps.logged() + "\n" + strings.Join(errs, "\n")
	if testing.Verbose() {
		t.Log(text)
	}
	if !strings.Contains(text, "level=INFO") || len(errs) < 10 {
		t.Fatalf("too little was collected to check:\n%s", text)
	}
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("a token or proof appears in the log or an error:\n%s", text)
		}
		if i := strings.LastIndexByte(s, '.'); i > 0 && i < len(s)-1 && strings.Contains(text, s[i+1:]) {
			t.Fatalf("a signature appears in the log or an error")
		}
	}
}

// TestIntegrationSSE: the middleware in front of the legacy HTTP+SSE
// handler: a tool reads the subject, and a session opened with alice's
// token is refused (403) with bob's.
func TestIntegrationSSE(t *testing.T) {
	is := newRSIssuer(t)
	ps := newProtectedServer(t, is, true, nil)
	ctx := context.Background()
	alice := is.token(t, "alice", ps.resource, "mcp", time.Hour, nil)
	bob := is.token(t, "bob", ps.resource, "mcp", time.Hour, nil)

	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{Era: mcp.EraHandshake})
	cs, err := c.Connect(ctx, &transport.SSEClientTransport{URL: ps.srv.URL + "/sse", HTTPClient: ps.srv.Client(),
		Header: http.Header{"Authorization": {"Bearer " + alice}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "alice" {
		t.Fatalf("%v, %v", res, err)
	}
	cs.Close()

	// A raw session: open the stream as alice, read the endpoint, post as bob.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", ps.srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := ps.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var endpoint string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = e
			break
		}
	}
	if !strings.Contains(endpoint, "sessionId=") {
		t.Fatalf("endpoint %q", endpoint)
	}
	if strings.HasPrefix(endpoint, "/") {
		endpoint = ps.srv.URL + endpoint
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, tt := range []struct {
		token  string
		status int
	}{{bob, http.StatusForbidden}, {"", http.StatusUnauthorized}, {alice, http.StatusAccepted}} {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		r, err := ps.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != tt.status {
			t.Fatalf("POST: %d, want %d", r.StatusCode, tt.status)
		}
	}
}
