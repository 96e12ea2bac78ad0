package interop

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// authRedirectURI is the redirect URI both clients register. Nothing
// listens there: the headless agents read the redirect instead of
// following it.
const authRedirectURI = "http://127.0.0.1/callback"

// authSubject is the user who consents at the test authorization
// server, the subject of the tokens it issues in the authorization code
// flow.
const authSubject = "ada@interop.example"

// testAuthServer is mcpkit's test authorization server (auth/authtest),
// with a confidential client registered for a resource server to
// introspect tokens with.
type testAuthServer struct {
	*authtest.Server
	// Issuer is the server's issuer identifier.
	Issuer string
	// Subject is the subject of the tokens issued to clients that log in.
	Subject string
	// IntrospectionClientID and IntrospectionClientSecret are the
	// credentials of the resource server's client (client_secret_basic).
	IntrospectionClientID, IntrospectionClientSecret string
}

// startTestAuthServer starts a test authorization server on a loopback
// port, until the test ends.
func startTestAuthServer(t *testing.T) *testAuthServer {
	t.Helper()
	s := authtest.NewServer(&authtest.Options{Subject: authSubject})
	t.Cleanup(s.Close)
	rs, err := s.RegisterClient(authtest.Client{
		Name:       "interop resource server",
		AuthMethod: "client_secret_basic",
		GrantTypes: []string{"client_credentials"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs.ID == "" || rs.Secret == "" {
		t.Fatalf("registered resource server client %q has no secret", rs.ID)
	}
	return &testAuthServer{
		Server:                    s,
		Issuer:                    s.URL,
		Subject:                   authSubject,
		IntrospectionClientID:     rs.ID,
		IntrospectionClientSecret: rs.Secret,
	}
}

// tsAuthSummary is what ts_auth_client.mjs prints.
type tsAuthSummary struct {
	AuthorizationRequests int               `json:"authorizationRequests"`
	FirstConnect          string            `json:"firstConnect"`
	AuthorizationServer   string            `json:"authorizationServer"`
	Resource              string            `json:"resource"`
	ClientRegistered      bool              `json:"clientRegistered"`
	AuthorizationRequest  tsAuthRequest     `json:"authorizationRequest"`
	Callback              tsAuthCallback    `json:"callback"`
	StepUp                string            `json:"stepUp"`
	StepUpRequest         tsAuthRequest     `json:"stepUpRequest"`
	StepUpCallback        tsAuthCallback    `json:"stepUpCallback"`
	Admin                 string            `json:"admin"`
	TokenType             string            `json:"tokenType"`
	DPoPThumbprint        string            `json:"dpopThumbprint"`
	ProtocolVersion       string            `json:"protocolVersion"`
	Whoami                string            `json:"whoami"`
	Errors                map[string]string `json:"errors"`
}

// tsAuthRequest is what ts_auth_client.mjs reports of an authorization
// request.
type tsAuthRequest struct {
	ResponseType        string `json:"responseType"`
	CodeChallengeMethod string `json:"codeChallengeMethod"`
	CodeChallenge       bool   `json:"codeChallenge"`
	State               bool   `json:"state"`
	RedirectURI         string `json:"redirectURI"`
	Resource            string `json:"resource"`
	Scope               string `json:"scope"`
}

// tsAuthCallback is what ts_auth_client.mjs reports of an authorization
// response.
type tsAuthCallback struct {
	Code         bool   `json:"code"`
	Iss          string `json:"iss"`
	StateMatches bool   `json:"stateMatches"`
	Error        string `json:"error"`
}

// runTSAuthClient runs ts_auth_client.mjs against the protected MCP
// server at url, in era ("legacy" or a version to pin), with tokens
// ("bearer" or "dpop"), and returns its summary.
func runTSAuthClient(ctx context.Context, t *testing.T, modules, url, era, tokens string) *tsAuthSummary {
	t.Helper()
	work, script := stageScript(t, modules, "ts_auth_client.mjs")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, url, era, tokens)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ts_auth_client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, tail(stderr.String(), 8000), tail(string(out), 8000))
	}
	var sum tsAuthSummary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, tail(string(out), 8000))
	}
	if s := stderr.String(); s != "" {
		t.Logf("stderr of ts_auth_client.mjs:\n%s", tail(s, 4000))
	}
	return &sum
}

// protectedServer is mcpkit's MCP server behind auth.RequireToken, whose
// JWT verifier trusts a test authorization server, with its Protected
// Resource Metadata published, on a loopback port. Its tool whoami
// answers the subject of the request's verified token
// (auth.TokenInfoFromContext); admin_whoami answers "admin <subject>",
// and needs the scope interop:admin (ResourceOptions.ToolScopes).
type protectedServer struct {
	// Resource is the MCP endpoint's URL, the resource identifier.
	Resource string
	// seen and seenAdmin collect the verified tokens whoami and
	// admin_whoami were called with.
	seen, seenAdmin events[*auth.TokenInfo]

	mu           sync.Mutex
	unauthorized int            // 401 answers
	nonces       int            // 401 answers asking for a DPoP nonce
	forbidden    int            // 403 answers (insufficient_scope)
	admitted     map[string]int // requests answered otherwise, by Authorization scheme
}

// startProtectedServer starts a protectedServer trusting as, with the
// DPoP settings dpop, until the test ends.
func startProtectedServer(t *testing.T, as *testAuthServer, dpop auth.DPoPOptions) *protectedServer {
	t.Helper()
	p := &protectedServer{admitted: map[string]int{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Resource = srv.URL + "/mcp"
	verifier, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: as.Issuer, Audience: p.Resource})
	if err != nil {
		t.Fatal(err)
	}
	guard, err := auth.RequireToken(&auth.ResourceOptions{
		Verifier:   verifier,
		Resource:   p.Resource,
		ToolScopes: map[string][]string{"admin_whoami": {"interop:admin"}},
		DPoP:       dpop,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.HandleProtectedResourceMetadata(mux, &auth.ProtectedResourceMetadata{
		Resource:             p.Resource,
		AuthorizationServers: []string{as.Issuer},
		ResourceName:         "mcpkit interop",
	}); err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpkit-interop-protected", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", Description: "Answers the subject of the request's access token."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			info := auth.TokenInfoFromContext(ctx)
			if info == nil {
				return nil, errors.New("no verified token in the context")
			}
			p.seen.add(info)
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: info.Subject}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "admin_whoami", Description: "Answers the subject too, to a token with the scope interop:admin."},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			info := auth.TokenInfoFromContext(ctx)
			if info == nil {
				return nil, errors.New("no verified token in the context")
			}
			p.seenAdmin.add(info)
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "admin " + info.Subject}}}, nil
		})
	mux.Handle("/mcp", p.count(guard(mcp.NewStreamableHTTPHandler(s, nil))))
	return p
}

// count counts the answers of h.
func (p *protectedServer) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		p.mu.Lock()
		defer p.mu.Unlock()
		if rec.status == http.StatusUnauthorized {
			p.unauthorized++
			if strings.Contains(rec.Header().Get("WWW-Authenticate"), "use_dpop_nonce") {
				p.nonces++
			}
			return
		}
		if rec.status == http.StatusForbidden {
			p.forbidden++
			return
		}
		p.admitted[strings.ToLower(scheme)]++
	})
}

// counts returns the answers counted so far.
func (p *protectedServer) counts() (unauthorized, nonces, forbidden int, admitted map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unauthorized, p.nonces, p.forbidden, maps.Clone(p.admitted)
}

// statusRecorder records the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(p)
}

// Flush sends what the handler wrote so far (its SSE events).
func (r *statusRecorder) Flush() {
	r.wrote = true
	http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines of the Streamable HTTP handler).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// pathCounter counts the requests sent through the RoundTrippers it
// wraps, by method and path.
type pathCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *pathCounter) wrap(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		return base.RoundTrip(r)
	})
}

func (c *pathCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

func (c *pathCounter) all() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// roundTripFunc is an http.RoundTripper in a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTypeScriptClientOAuthAgainstOurProtectedServer runs the official
// TypeScript SDK v2 client (ts_auth_client.mjs) against mcpkit's MCP
// server behind auth.RequireToken, whose JWT verifier trusts mcpkit's
// test authorization server, with the Protected Resource Metadata
// published; in the handshake era and in 2026-07-28, with bearer tokens,
// with DPoP-bound tokens, and with DPoP-bound tokens at a server that
// requires its nonces. The client's first connection is refused (401);
// the SDK follows the challenge to the metadata and the authorization
// server, registers dynamically and sends an authorization request with
// PKCE (S256), state and the resource indicator, which the script's
// headless user agent takes to the test server's consent and back;
// finishAuth checks iss and redeems the code; the second connection, with
// the token, calls whoami, which answers the token's subject from
// auth.TokenInfoFromContext. Then it calls admin_whoami, which needs a
// scope the token lacks: the middleware answers 403 insufficient_scope,
// the SDK asks for a new authorization with the union of the scopes
// (step-up), and the call succeeds with the new token. A DPoP-bound token
// is bound to the client's key, and every request admitted carries it
// with the DPoP scheme.
func TestTypeScriptClientOAuthAgainstOurProtectedServer(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	as := startTestAuthServer(t)

	for _, era := range []struct {
		name, arg, want string
	}{
		{"handshake era", "legacy", mcp.Version20251125},
		{"2026-07-28", mcp.Version20260728, mcp.Version20260728},
	} {
		for _, tc := range []struct {
			name   string
			tokens string // ts_auth_client.mjs's third argument
			dpop   auth.DPoPOptions
		}{
			{"bearer", "bearer", auth.DPoPOptions{}},
			{"DPoP", "dpop", auth.DPoPOptions{}},
			{"DPoP with nonces", "dpop", auth.DPoPOptions{Nonce: true}},
		} {
			t.Run(era.name+"/"+tc.name, func(t *testing.T) {
				srv := startProtectedServer(t, as, tc.dpop)
				sum := runTSAuthClient(ctx, t, modules, srv.Resource, era.arg, tc.tokens)
				if len(sum.Errors) > 0 {
					t.Fatalf("errors: %v\nsummary: %s", sum.Errors, mustJSON(sum))
				}
				checkTSAuthSummary(t, sum, as, srv.Resource, era.want)
				dpop := tc.tokens == "dpop"
				if want := map[bool]string{false: "bearer", true: "dpop"}[dpop]; !strings.EqualFold(sum.TokenType, want) {
					t.Errorf("token type %q, want %s", sum.TokenType, want)
				}
				seen := srv.seen.all()
				if len(seen) != 1 {
					t.Fatalf("whoami saw %d tokens", len(seen))
				}
				if seen[0].Subject != as.Subject || seen[0].Issuer != as.Issuer || !slices.Contains(seen[0].Audience, srv.Resource) {
					t.Errorf("verified token: subject %q, issuer %q, audience %v", seen[0].Subject, seen[0].Issuer, seen[0].Audience)
				}
				if dpop == (sum.DPoPThumbprint == "") {
					t.Errorf("the client's DPoP key thumbprint is %q", sum.DPoPThumbprint)
				}
				if got, want := seen[0].ConfirmationThumbprint, sum.DPoPThumbprint; got != want {
					t.Errorf("token bound to %q, want %q (the client's DPoP key)", got, want)
				}
				if slices.Contains(seen[0].Scopes, "interop:admin") {
					t.Errorf("the first token has the scopes %v", seen[0].Scopes)
				}
				admins := srv.seenAdmin.all()
				if len(admins) != 1 {
					t.Fatalf("admin_whoami saw %d tokens", len(admins))
				}
				if a := admins[0]; a.Subject != as.Subject || !slices.Contains(a.Scopes, "interop:admin") || a.ConfirmationThumbprint != sum.DPoPThumbprint {
					t.Errorf("the stepped-up token: subject %q, scopes %v, bound to %q", a.Subject, a.Scopes, a.ConfirmationThumbprint)
				}
				unauthorized, nonces, forbidden, admitted := srv.counts()
				if unauthorized < 1 || forbidden < 1 {
					t.Errorf("the server answered 401 %d times and 403 %d times", unauthorized, forbidden)
				}
				if tc.dpop.Nonce && nonces < 1 {
					t.Errorf("the server never asked for a DPoP nonce (%d 401s)", unauthorized)
				}
				scheme := map[bool]string{false: "bearer", true: "dpop"}[dpop]
				if admitted[scheme] < 1 || len(admitted) != 1 {
					t.Errorf("admitted requests by scheme %v, want %s only", admitted, scheme)
				}
			})
		}
	}
}

// checkTSAuthSummary checks what ts_auth_client.mjs reports of its login
// to the server at resource with as, and the protocol version it then
// spoke.
func checkTSAuthSummary(t *testing.T, sum *tsAuthSummary, as *testAuthServer, resource, version string) {
	t.Helper()
	if sum.FirstConnect != "UnauthorizedError" {
		t.Errorf("first connection without a token: %q, want UnauthorizedError", sum.FirstConnect)
	}
	if sum.AuthorizationRequests != 2 {
		t.Errorf("%d authorization requests, want 2 (login and step-up)", sum.AuthorizationRequests)
	}
	if sum.AuthorizationServer != as.Issuer {
		t.Errorf("discovered authorization server %q, want %q", sum.AuthorizationServer, as.Issuer)
	}
	if sum.Resource != resource {
		t.Errorf("discovered resource %q, want %q", sum.Resource, resource)
	}
	if !sum.ClientRegistered {
		t.Error("the client did not register")
	}
	for _, step := range []struct {
		name string
		ar   tsAuthRequest
		cb   tsAuthCallback
	}{
		{"login", sum.AuthorizationRequest, sum.Callback},
		{"step-up", sum.StepUpRequest, sum.StepUpCallback},
	} {
		ar, cb := step.ar, step.cb
		if ar.ResponseType != "code" || ar.CodeChallengeMethod != "S256" || !ar.CodeChallenge || !ar.State ||
			ar.RedirectURI != authRedirectURI || ar.Resource != resource {
			t.Errorf("%s: authorization request %+v", step.name, ar)
		}
		if !cb.Code || !cb.StateMatches || cb.Error != "" || cb.Iss != as.Issuer {
			t.Errorf("%s: authorization response %+v; want a code, the state and iss %q", step.name, cb, as.Issuer)
		}
	}
	if !slices.Contains(strings.Fields(sum.StepUpRequest.Scope), "interop:admin") {
		t.Errorf("the step-up asked for the scopes %q, not interop:admin", sum.StepUpRequest.Scope)
	}
	if sum.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %s", sum.ProtocolVersion, version)
	}
	if sum.Whoami != as.Subject {
		t.Errorf("whoami answered %q, want %q", sum.Whoami, as.Subject)
	}
	if sum.StepUp != "UnauthorizedError" || sum.Admin != "admin "+as.Subject {
		t.Errorf("admin_whoami: step-up %q, answer %q; want UnauthorizedError, then %q", sum.StepUp, sum.Admin, "admin "+as.Subject)
	}
}

// startTSAuthServer runs ts_auth_server.mjs with as as its authorization
// server (the introspection client's credentials in its environment),
// until the test ends, and returns the URL of its MCP endpoint, which is
// also its resource identifier. The script's standard error goes to
// stderr, and is shown if the test fails.
func startTSAuthServer(ctx context.Context, t *testing.T, modules string, as *testAuthServer, stderr *syncBuffer) string {
	t.Helper()
	work, script := stageScript(t, modules, "ts_auth_server.mjs")
	cmd := exec.CommandContext(ctx, "node", script, as.Issuer)
	cmd.Dir = work
	cmd.Stderr = stderr
	cmd.Env = os.Environ()
	if as.IntrospectionClientID != "" {
		cmd.Env = append(cmd.Env,
			"MCPKIT_INTROSPECTION_CLIENT_ID="+as.IntrospectionClientID,
			"MCPKIT_INTROSPECTION_CLIENT_SECRET="+as.IntrospectionClientSecret)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stderr of ts_auth_server.mjs:\n%s", tail(stderr.String(), 4000))
		}
	})
	return startListening(t, cmd)
}

// tsAuthTokenInfo is what token_info of ts_auth_server.mjs answers.
type tsAuthTokenInfo struct {
	Subject  string   `json:"subject"`
	Issuer   string   `json:"issuer"`
	ClientID string   `json:"client_id"`
	Scopes   []string `json:"scopes"`
	Resource string   `json:"resource"`
}

// TestOurClientAgainstTypeScriptProtectedServer connects mcpkit's client,
// with an auth.Authorizer and its headless agent, to the official
// TypeScript SDK v2 server (ts_auth_server.mjs) behind the SDK's
// requireBearerAuth, whose verifier asks mcpkit's test authorization
// server's introspection endpoint, with the SDK's Protected Resource
// Metadata pointing at that server; in 2026-07-28 and in the handshake
// era. The first request is refused (401); the Authorizer discovers the
// authorization server from the challenge, registers, runs the
// authorization code flow with PKCE and sends the request again with the
// token; the tools then answer the token's subject and what the
// TypeScript verifier saw of it (its audience being the server's URL).
// Then a tool behind the SDK's requireScopes answers 403
// insufficient_scope, and the Authorizer steps up: it logs in again for
// the scopes it had and the one the challenge names, and retries the call.
func TestOurClientAgainstTypeScriptProtectedServer(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	as := startTestAuthServer(t)
	var stderr syncBuffer
	url := startTSAuthServer(ctx, t, modules, as, &stderr)

	// Without a token the server refuses, pointing at its metadata.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if challenge := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, "resource_metadata=") {
		t.Fatalf("without a token: %d, WWW-Authenticate %q", resp.StatusCode, challenge)
	}

	for _, tc := range []struct {
		name string
		era  mcp.Era
		want string
	}{
		{"EraModern", mcp.EraModern, mcp.Version20260728},
		{"EraHandshake", mcp.EraHandshake, mcp.Version20251125},
		{"EraAuto", mcp.EraAuto, mcp.Version20260728},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wire syncBuffer
			var asRequests pathCounter // the client's requests to the authorization server
			az := &auth.Authorizer{
				RedirectURL:  authRedirectURI,
				Agent:        &auth.HeadlessAgent{HTTPClient: &http.Client{Transport: asRequests.wrap(http.DefaultTransport)}},
				Registration: auth.ClientMetadata{ClientName: "mcpkit-interop"},
				HTTPClient:   &http.Client{Transport: asRequests.wrap(http.DefaultTransport)},
			}
			tr := &transport.LoggingTransport{
				Transport: &transport.StreamableClientTransport{URL: url, DisableSSEFallback: true, Authorizer: az},
				Writer:    &wire,
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop-oauth", Version: "1.0.0"}, &mcp.ClientOptions{Era: tc.era})
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cs, err := c.Connect(cctx, tr)
			if err != nil {
				t.Fatalf("connect: %v\nwire:\n%s\nserver stderr:\n%s", err, tail(wire.String(), 8000), tail(stderr.String(), 4000))
			}
			defer cs.Close()
			if got := cs.ProtocolVersion(); got != tc.want {
				t.Errorf("speaks %q, want %q", got, tc.want)
			}
			call := func(name string) string {
				t.Helper()
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name})
				if err != nil {
					t.Fatalf("tools/call %s: %v\nserver stderr:\n%s", name, err, tail(stderr.String(), 4000))
				}
				if res.IsError {
					t.Fatalf("tools/call %s: error result %q", name, texts(res.Content))
				}
				return texts(res.Content)
			}
			if got := call("whoami"); got != as.Subject {
				t.Errorf("whoami answered %q, want %q", got, as.Subject)
			}
			var info tsAuthTokenInfo
			if err := json.Unmarshal([]byte(call("token_info")), &info); err != nil {
				t.Fatalf("token_info: %v", err)
			}
			if info.Subject != as.Subject || info.Issuer != as.Issuer ||
				info.ClientID == "" || info.Resource != url {
				t.Errorf("the TypeScript verifier saw %+v; want subject %q, issuer %q, a client_id, resource %q", info, as.Subject, as.Issuer, url)
			}
			// One login: the client registered, was authorized and
			// redeemed its code once, however many requests it sent.
			for _, path := range []string{"POST /register", "GET /authorize", "POST /token"} {
				if n := asRequests.count(path); n != 1 {
					t.Errorf("%s: %d requests, want 1 (all: %v)", path, n, asRequests.all())
				}
			}

			// Step-up: admin_whoami needs interop:admin, which the token
			// lacks; the server refuses the call with 403
			// insufficient_scope, and the Authorizer logs in again asking
			// for it besides the scopes it had, and retries the call.
			if slices.Contains(info.Scopes, "interop:admin") {
				t.Fatalf("the first token already has interop:admin: %v", info.Scopes)
			}
			if got, want := call("admin_whoami"), "admin "+as.Subject; got != want {
				t.Errorf("admin_whoami answered %q, want %q", got, want)
			}
			if err := json.Unmarshal([]byte(call("token_info")), &info); err != nil {
				t.Fatalf("token_info: %v", err)
			}
			if !slices.Contains(info.Scopes, "interop:admin") {
				t.Errorf("after the step-up, the token's scopes are %v", info.Scopes)
			}
			for path, want := range map[string]int{"POST /register": 1, "GET /authorize": 2, "POST /token": 2} {
				if n := asRequests.count(path); n != want {
					t.Errorf("after the step-up, %s: %d requests, want %d (all: %v)", path, n, want, asRequests.all())
				}
			}
			if t.Failed() {
				t.Logf("wire:\n%s\nserver stderr:\n%s", tail(wire.String(), 8000), tail(stderr.String(), 4000))
			}
		})
	}
}
