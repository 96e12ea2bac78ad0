package auth

import (
	"bytes"
	"context"
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

	"github.com/mcpkit/mcpkit/internal/principal"
)

// syncBuffer is a bytes.Buffer for a logger used by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// seen is what the handler behind the middleware saw of a request.
type seen struct {
	info      *TokenInfo
	principal string
	body      string
}

// rsHarness is the middleware in front of a handler that records what it
// sees, with a JWT verifier of a test issuer.
type rsHarness struct {
	is     *testIssuer
	clock  *fakeClock
	h      http.Handler
	log    *syncBuffer
	last   *seen
	mu     sync.Mutex
	tokens []string // every token and proof used, for the secrets check
}

func newRSHarness(t testing.TB, edit func(o *ResourceOptions)) *rsHarness {
	t.Helper()
	x := &rsHarness{is: newTestIssuer(t), clock: newFakeClock(), log: &syncBuffer{}}
	o := &ResourceOptions{
		Verifier:   x.is.verifier(x.clock, nil),
		Resource:   testResource,
		Scopes:     []string{"read"},
		ToolScopes: map[string][]string{"delete": {"admin", "write"}, "echo": nil},
		Logger:     slog.New(slog.NewTextHandler(x.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:        x.clock.now,
	}
	if edit != nil {
		edit(o)
	}
	guard, err := RequireToken(o)
	if err != nil {
		t.Fatal(err)
	}
	x.h = guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		x.mu.Lock()
		x.last = &seen{info: TokenInfoFromContext(r.Context()), principal: principal.From(r.Context()), body: string(b)}
		x.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	return x
}

// token mints a token of the harness's issuer for sub with scope.
func (x *rsHarness) token(t *testing.T, sub, scope string, kv ...any) string {
	tok := mint(t, x.is.key, "k1", with(x.is.claims(sub), append([]any{"scope", scope}, kv...)...))
	x.mu.Lock()
	x.tokens = append(x.tokens, tok)
	x.mu.Unlock()
	return tok
}

// do serves one request to testResource (path replaced when target
// starts with "/").
func (x *rsHarness) do(method, target, body string, header http.Header) *httptest.ResponseRecorder {
	if strings.HasPrefix(target, "/") || target == "" {
		target = "http://127.0.0.1:9/mcp" + strings.TrimPrefix(target, "/mcp")
	}
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	x.mu.Lock()
	x.last = nil
	x.mu.Unlock()
	x.h.ServeHTTP(w, r)
	return w
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const prmURL = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"

func callBody(tools ...string) string {
	var msgs []string
	for i, name := range tools {
		msgs = append(msgs, `{"jsonrpc":"2.0","id":`+jsonInt(int64(i+1))+`,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

func TestRequireToken(t *testing.T) {
	x := newRSHarness(t, func(o *ResourceOptions) { o.MaxBodySize = 1 << 10 })
	bearer := func(tok string) http.Header { return hdr("Authorization", "Bearer "+tok) }
	read := x.token(t, "alice", "read")
	all := x.token(t, "alice", "read write admin")
	modern := func(tok, method, name string, more ...string) http.Header {
		h := hdr(append([]string{"Authorization", "Bearer " + tok, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name}, more...)...)
		return h
	}
	tests := []struct {
		name      string
		method    string
		target    string
		body      string
		header    http.Header
		status    int
		challenge string // the WWW-Authenticate header, exactly; "" for any
		contains  string // a substring of WWW-Authenticate
	}{
		{"no token", "POST", "", "{}", nil, 401, `Bearer scope="read", resource_metadata="` + prmURL + `"`, ""},
		{"valid", "POST", "", callBody("echo"), bearer(read), 200, "", ""},
		{"valid GET", "GET", "", "", bearer(read), 200, "", ""},
		{"scheme in lower case", "POST", "", "{}", hdr("Authorization", "bearer "+read), 200, "", ""},
		{"expired", "POST", "", "{}", bearer(x.token(t, "alice", "read", "exp", testNow.Add(-time.Hour).Unix())), 401,
			`Bearer error="invalid_token", error_description="the access token expired", resource_metadata="` + prmURL + `"`, ""},
		{"another resource", "POST", "", "{}", bearer(x.token(t, "alice", "read", "aud", "https://other.example/mcp")), 401, "", `error="invalid_token", error_description="the access token was issued for another resource"`},
		{"garbage", "POST", "", "{}", bearer("abc.def.ghi"), 401, "", `error="invalid_token"`},
		{"token in query", "POST", "/mcp?access_token=" + read, "{}", nil, 400, "", `error="invalid_request"`},
		{"token in query and header", "POST", "/mcp?x=1&access_token=" + read, "{}", bearer(read), 400, "", `error="invalid_request"`},
		{"oversized Authorization", "POST", "", "{}", hdr("Authorization", "Bearer "+strings.Repeat("a", DefaultMaxAuthorizationSize)), 431, "", ""},
		{"two Authorization headers", "POST", "", "{}", hdr("Authorization", "Bearer "+read, "Authorization", "Bearer "+read), 400, "", `error="invalid_request"`},
		{"Basic", "POST", "", "{}", hdr("Authorization", "Basic YTpi"), 401, `Bearer scope="read", resource_metadata="` + prmURL + `"`, ""},
		{"scheme alone", "POST", "", "{}", hdr("Authorization", "Bearer"), 400, "", `error="invalid_request"`},
		{"not a token68", "POST", "", "{}", hdr("Authorization", "Bearer a b"), 400, "", `error="invalid_request"`},
		{"no read scope", "POST", "", "{}", bearer(x.token(t, "alice", "write")), 403,
			`Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="read", resource_metadata="` + prmURL + `"`, ""},
		{"tool scopes, body", "POST", "", callBody("delete"), bearer(read), 403, "", `scope="read admin write"`},
		{"tool scopes granted", "POST", "", callBody("delete"), bearer(all), 200, "", ""},
		{"tool scopes, batch", "POST", "", callBody("echo", "delete"), bearer(read), 403, "", `scope="read admin write"`},
		{"tool scopes, escaped name", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"del\u0065te"}}`, bearer(read), 403, "", `scope="read admin write"`},
		{"tool scopes, case-folded member", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"echo","name":"delete"}}`, bearer(read), 403, "", `scope="read admin write"`},
		{"tool scopes, case-folded member first", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","Name":"echo"}}`, bearer(read), 403, "", `scope="read admin write"`},
		{"tool scopes, modern headers", "POST", "", "", modern(read, "tools/call", "delete"), 403, "", `scope="read admin write"`},
		{"tool scopes, modern headers in base64", "POST", "", "", modern(read, "tools/call", "=?base64?ZGVsZXRl?="), 403, "", `scope="read admin write"`},
		{"modern headers, other method", "POST", "", callBody("delete"), modern(read, "tools/list", ""), 200, "", ""},
		{"modern headers with a session: body read", "POST", "", callBody("delete"), modern(read, "tools/call", "echo", "Mcp-Session-Id", "s1"), 403, "", `scope="read admin write"`},
		{"handshake version: body read", "POST", "", callBody("delete"), hdr("Authorization", "Bearer "+read, "MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/call", "Mcp-Name", "echo"), 403, "", `scope="read admin write"`},
		{"unknown tool", "POST", "", callBody("other"), bearer(read), 200, "", ""},
		{"body too large", "POST", "", `{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("a", 2<<10) + `"}}`, bearer(read), 413, "", ""},
		{"body not JSON", "POST", "", `{"jsonrpc":`, bearer(read), 400, "", `error="invalid_request"`},
		{"DPoP-bound token as Bearer", "POST", "", "{}", bearer(x.token(t, "alice", "read", "cnf", map[string]string{"jkt": "thumb"})), 401, "", `DPoP error="invalid_token"`},
		{"bearer token with the DPoP scheme", "POST", "", "{}", hdr("Authorization", "DPoP "+read, "DPoP", "x"), 401, "", `DPoP error="invalid_token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := x.do(tt.method, tt.target, tt.body, tt.header)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s %s", w.Code, tt.status, w.Header().Get("WWW-Authenticate"), w.Body)
			}
			got := w.Header().Get("WWW-Authenticate")
			if tt.challenge != "" && got != tt.challenge {
				t.Fatalf("WWW-Authenticate:\n%s\nwant\n%s", got, tt.challenge)
			}
			if tt.contains != "" && !strings.Contains(got, tt.contains) {
				t.Fatalf("WWW-Authenticate %q lacks %q", got, tt.contains)
			}
			if (tt.status == 401 || tt.status == 403) && !strings.Contains(got, `resource_metadata="`+prmURL+`"`) {
				t.Fatalf("WWW-Authenticate %q lacks resource_metadata", got)
			}
			x.mu.Lock()
			last := x.last
			x.mu.Unlock()
			if tt.status != 200 {
				if last != nil {
					t.Fatal("a refused request reached the handler")
				}
				return
			}
			if last == nil || last.info == nil || last.info.Subject != "alice" || last.principal != x.is.srv.URL+" alice" {
				t.Fatalf("the handler saw %+v", last)
			}
			if last.body != tt.body {
				t.Fatalf("the handler read %q, want %q", last.body, tt.body)
			}
		})
	}
	checkNoSecrets(t, x.log.String(), x.tokens)
}

// checkNoSecrets fails when text holds any of secrets (or a long part of
// one: the signature of a JWT).
func checkNoSecrets(t *testing.T, text string, secrets []string) {
	t.Helper()
	if text == "" {
		return
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if strings.Contains(text, s) {
			t.Fatalf("a secret was logged or returned: %q in\n%s", truncate(s, 20), text)
		}
		if i := strings.LastIndexByte(s, '.'); i >= 0 && len(s)-i > 16 && strings.Contains(text, s[i+1:]) {
			t.Fatalf("a token's signature was logged or returned")
		}
	}
}

func TestRequireTokenScopeHierarchy(t *testing.T) {
	// "admin" implies every "x:..." scope; "files" implies "files:read".
	satisfied := func(granted []string, need string) bool {
		for _, g := range granted {
			if g == need || g == "admin" || strings.HasPrefix(need, g+":") {
				return true
			}
		}
		return false
	}
	x := newRSHarness(t, func(o *ResourceOptions) {
		o.Scopes = []string{"files:read"}
		o.ToolScopes = map[string][]string{"delete": {"files:write"}}
		o.ScopeSatisfied = satisfied
	})
	tests := []struct {
		scope  string
		body   string
		status int
	}{
		{"files:read", "{}", 200},
		{"files", callBody("delete"), 200},
		{"admin", callBody("delete"), 200},
		{"files:read", callBody("delete"), 403},
		{"other", "{}", 403},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			w := x.do("POST", "", tt.body, hdr("Authorization", "Bearer "+x.token(t, "alice", tt.scope)))
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d", w.Code, tt.status)
			}
		})
	}
}

func TestRequireTokenVerifierDown(t *testing.T) {
	var log syncBuffer
	guard, err := RequireToken(&ResourceOptions{
		Resource: testResource,
		Verifier: TokenVerifierFunc(func(ctx context.Context, token string) (*TokenInfo, error) {
			return nil, errors.New("auth: key set: connection refused")
		}),
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", testResource, strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer secret-token-value")
	guard(http.NotFoundHandler()).ServeHTTP(w, r)
	if w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d", w.Code)
	}
	if !strings.Contains(log.String(), "level=WARN") {
		t.Fatalf("log: %s", log.String())
	}
	checkNoSecrets(t, log.String()+w.Body.String(), []string{"secret-token-value"})
}

func TestRequireTokenOptions(t *testing.T) {
	v := TokenVerifierFunc(func(context.Context, string) (*TokenInfo, error) { return nil, ErrInvalidToken })
	tests := []struct {
		name string
		opts *ResourceOptions
	}{
		{"nil", nil},
		{"no verifier", &ResourceOptions{Resource: testResource}},
		{"no resource", &ResourceOptions{Verifier: v}},
		{"insecure resource", &ResourceOptions{Verifier: v, Resource: "http://mcp.example/mcp"}},
		{"insecure metadata URL", &ResourceOptions{Verifier: v, Resource: testResource, ResourceMetadataURL: "http://mcp.example/prm"}},
		{"bad scope", &ResourceOptions{Verifier: v, Resource: testResource, Scopes: []string{`a"b`}}},
		{"bad tool scope", &ResourceOptions{Verifier: v, Resource: testResource, ToolScopes: map[string][]string{"t": {"a b"}}}},
		{"DPoP base URL with a path", &ResourceOptions{Verifier: v, Resource: testResource, DPoP: DPoPOptions{BaseURL: "https://a.example/x"}}},
		{"short nonce key", &ResourceOptions{Verifier: v, Resource: testResource, DPoP: DPoPOptions{Nonce: true, NonceKey: []byte("short")}}},
		{"only HMAC for DPoP", &ResourceOptions{Verifier: v, Resource: testResource, DPoP: DPoPOptions{Algorithms: []string{"HS256"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := RequireToken(tt.opts); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestToolsCalled(t *testing.T) {
	tests := []struct {
		body string
		want string
		err  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", false},
		{callBody("a"), "a", false},
		{" \n" + callBody("a", "b"), "a b", false},
		{`[{"jsonrpc":"2.0","method":"notifications/initialized"},` + callBody("c") + `]`, "c", false},
		{`{"method":"tools/call","params":null}`, "", false},
		{`{"method":"tools/call","params":[]}`, "", true},
		{`{"method":"tools/call","params":{"name":7}}`, "", true},
		{`[1,2]`, "", true},
		{`"x"`, "", true},
		{``, "", true},
	}
	for _, tt := range tests {
		names, err := toolsCalled([]byte(tt.body))
		if (err != nil) != tt.err || strings.Join(names, " ") != tt.want {
			t.Errorf("toolsCalled(%s) = %q, %v", tt.body, names, err)
		}
	}
}

func TestIsToken68(t *testing.T) {
	for s, want := range map[string]bool{
		"abc": true, "a-._~+/b==": true, "abc=": true, "": false, "=": false, "a=b": false, "a b": false, "a,b": false, `a"`: false,
	} {
		if isToken68(s) != want {
			t.Errorf("isToken68(%q) = %v", s, !want)
		}
	}
}

// The JSON body of a refusal is an OAuth error.
func TestRefusalBody(t *testing.T) {
	x := newRSHarness(t, nil)
	w := x.do("POST", "", "{}", hdr("Authorization", "Bearer abc"))
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error != "invalid_token" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("%s, %v", w.Body, err)
	}
}

// FuzzToolsCalled: any body is parsed without panicking, and every tool
// name found is in the body.
func FuzzToolsCalled(f *testing.F) {
	f.Add([]byte(callBody("a")))
	f.Add([]byte(callBody("a", "b")))
	f.Add([]byte(`{"method":"tools/call","params":{"name":"x","NAME":"y"}}`))
	f.Add([]byte(`[{"method":"tools/call"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		names, err := toolsCalled(body)
		if err != nil && names != nil {
			t.Fatal("names with an error")
		}
	})
}

// FuzzRequireToken: any Authorization, DPoP and Mcp-Name headers and
// body are answered without panicking, and none is admitted (no token of
// the issuer can be forged).
func FuzzRequireToken(f *testing.F) {
	f.Add("Bearer abc", "", "", []byte(callBody("delete")))
	f.Add("DPoP a.b.c", "a.b.c", "=?base64?ZGVsZXRl?=", []byte(`{}`))
	f.Add("bearer   x==", "", "", []byte(`[`))
	x := newRSHarness(f, nil)
	f.Fuzz(func(t *testing.T, authz, proof, name string, body []byte) {
		r := httptest.NewRequest("POST", testResource, bytes.NewReader(body))
		r.Header["Authorization"] = []string{authz}
		if proof != "" {
			r.Header["Dpop"] = []string{proof}
		}
		if name != "" {
			r.Header["Mcp-Method"] = []string{"tools/call"}
			r.Header["Mcp-Name"] = []string{name}
			r.Header["Mcp-Protocol-Version"] = []string{"2026-07-28"}
		}
		w := httptest.NewRecorder()
		x.h.ServeHTTP(w, r)
		switch w.Code {
		case 400, 401, 403, 413, 431:
		default:
			t.Fatalf("status %d", w.Code)
		}
	})
}

// BenchmarkRequireToken measures the middleware alone on an admitted
// request: a JWT found in the verified-token cache, no tool scopes.
func BenchmarkRequireToken(b *testing.B) {
	x := newRSHarness(b, func(o *ResourceOptions) { o.ToolScopes = nil })
	x.clock = nil
	guard, _ := RequireToken(&ResourceOptions{Verifier: x.is.verifier(newFakeClock(), nil), Resource: testResource, Scopes: []string{"read"}})
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tok := mint(b, x.is.key, "k1", with(x.is.claims("alice"), "scope", "read"))
	r := httptest.NewRequest("POST", testResource, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		b.Fatal(w.Code)
	}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}
