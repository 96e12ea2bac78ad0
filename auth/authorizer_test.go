package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestAuthorizerAuthorizationCode(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	rs.prmScopes = []string{"mcp:read", "mcp:write"}
	var logs bytes.Buffer
	a := testAuthorizer()
	a.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	rt := a.RoundTripper(nil)

	code, body, err := post(t, rt, rs.MCP(), `{"x":1}`)
	if err != nil || code != 200 || body != `ok:{"x":1}` {
		t.Fatalf("first request: %d %q %v", code, body, err)
	}
	code, _, err = post(t, rt, rs.MCP(), `{"x":2}`)
	if err != nil || code != 200 {
		t.Fatalf("second request: %d %v", code, err)
	}
	nAuth, nTok, nReg := as.counts()
	if nAuth != 1 || nTok != 1 || nReg != 1 {
		t.Fatalf("authorizations, token requests, registrations = %d, %d, %d; want 1 each", nAuth, nTok, nReg)
	}
	q := as.authReqs[0]
	for k, want := range map[string]string{
		"response_type":         "code",
		"code_challenge_method": "S256",
		"resource":              rs.MCP(),
		"scope":                 "mcp:read mcp:write",
		"redirect_uri":          a.RedirectURL,
	} {
		if got := q.Get(k); got != want {
			t.Errorf("authorization request %s = %q, want %q", k, got, want)
		}
	}
	if len(q.Get("state")) < 32 || len(q.Get("code_challenge")) < 43 {
		t.Errorf("state %q or code_challenge %q too short", q.Get("state"), q.Get("code_challenge"))
	}
	reg := as.regs[0]
	if reg["application_type"] != "native" || reg["token_endpoint_auth_method"] != "none" {
		t.Errorf("registration = %v; want application_type native, token_endpoint_auth_method none", reg)
	}
	if gt, _ := reg["grant_types"].([]any); !slices.Contains(gt, any("refresh_token")) {
		t.Errorf("registration grant_types = %v, want refresh_token among them", gt)
	}
	tr := as.tokReqs[0]
	if tr.Get("resource") != rs.MCP() || tr.Get("client_secret") != "" || as.tokAuthz[0] != "" {
		t.Errorf("token request: resource %q, secret sent %v, Authorization %q", tr.Get("resource"), tr.Get("client_secret") != "", as.tokAuthz[0])
	}
	if strings.Contains(logs.String(), tokenPrefix) || strings.Contains(logs.String(), codePrefix) || strings.Contains(logs.String(), secretPrefix) {
		t.Errorf("the log holds a secret:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "auth: authorized") {
		t.Errorf("the log lacks the authorization event:\n%s", logs.String())
	}
}

func TestAuthorizerTokenEndpointAuth(t *testing.T) {
	for _, tc := range []struct {
		methods    []string
		preSecret  bool
		wantHeader bool
		wantPost   bool
	}{
		{methods: []string{"none"}},
		{methods: []string{"client_secret_basic"}, wantHeader: true},
		{methods: []string{"client_secret_post"}, wantPost: true},
		{methods: []string{"client_secret_basic"}, preSecret: true, wantHeader: true},
	} {
		t.Run(strings.Join(tc.methods, ",")+map[bool]string{true: "-pre", false: ""}[tc.preSecret], func(t *testing.T) {
			as := newFakeAS(t)
			as.authMethods = tc.methods
			rs := newFakeRS(t, as)
			a := testAuthorizer()
			if tc.preSecret {
				as.noRegistration = true
				a.PreRegistered = func(issuer string) *ClientInfo {
					if issuer != as.URL() {
						return nil
					}
					return &ClientInfo{ClientID: "pre", ClientSecret: secretPrefix + "pre"}
				}
			}
			if code, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
				t.Fatalf("request: %d %v", code, err)
			}
			hdr := as.tokAuthz[0]
			post := as.tokReqs[0].Get("client_secret")
			if (hdr != "") != tc.wantHeader || (post != "") != tc.wantPost {
				t.Errorf("Authorization header %v, client_secret in body %v; want %v, %v", hdr != "", post != "", tc.wantHeader, tc.wantPost)
			}
			if tc.preSecret {
				if u, p, ok := (&http.Request{Header: http.Header{"Authorization": {hdr}}}).BasicAuth(); !ok || u != "pre" || p != secretPrefix+"pre" {
					t.Errorf("basic credentials %q %q", u, p)
				}
			}
		})
	}
}

func TestAuthorizerCIMD(t *testing.T) {
	as := newFakeAS(t)
	as.cimd = true
	rs := newFakeRS(t, as)
	a := testAuthorizer()
	a.ClientMetadataURL = "https://client.example.com/metadata.json"
	if code, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	if _, _, nReg := as.counts(); nReg != 0 {
		t.Errorf("%d registrations, want none", nReg)
	}
	if got := as.authReqs[0].Get("client_id"); got != a.ClientMetadataURL {
		t.Errorf("client_id = %q, want the metadata URL", got)
	}
}

func TestAuthorizerScopeSelection(t *testing.T) {
	for _, tc := range []struct {
		name               string
		challenge, prm, as []string
		want               string
	}{
		{name: "challenge", challenge: []string{"a"}, prm: []string{"b", "c"}, want: "a"},
		{name: "scopes_supported", prm: []string{"b", "c"}, want: "b c"},
		{name: "omitted", want: ""},
		{name: "offline_access", prm: []string{"b"}, as: []string{"b", "offline_access"}, want: "b offline_access"},
		{name: "offline_access not listed", prm: []string{"b"}, as: []string{"b"}, want: "b"},
		{name: "offline_access not alone", as: []string{"offline_access"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t)
			as.scopes = tc.as
			rs := newFakeRS(t, as)
			rs.challenge, rs.prmScopes = tc.challenge, tc.prm
			if code, _, err := post(t, testAuthorizer().RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
				t.Fatalf("request: %d %v", code, err)
			}
			q := as.authReqs[0]
			if got := q.Get("scope"); got != tc.want || (tc.want == "" && q.Has("scope")) {
				t.Errorf("scope = %q (present %v), want %q", got, q.Has("scope"), tc.want)
			}
		})
	}
}

func TestAuthorizerStepUp(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	rs.challenge = []string{"read"}
	a := testAuthorizer()
	rt := a.RoundTripper(nil)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	rs.mu.Lock()
	rs.required = []string{"write"}
	rs.mu.Unlock()
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("step-up request: %d %v", code, err)
	}
	if n, _, _ := as.counts(); n != 2 {
		t.Fatalf("%d authorization requests, want 2", n)
	}
	if got := as.authReqs[1].Get("scope"); got != "read write" {
		t.Errorf("step-up scope = %q, want the union %q", got, "read write")
	}
}

func TestAuthorizerStepUpLimit(t *testing.T) {
	for _, max := range []int{-1, 0, 1, 3} {
		t.Run("", func(t *testing.T) {
			as := newFakeAS(t)
			rs := newFakeRS(t, as)
			rs.always403 = true
			rs.required = []string{"admin"}
			a := testAuthorizer()
			a.MaxStepUps = max
			_, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}")
			if !errors.Is(err, ErrStepUpLimit) {
				t.Fatalf("err = %v, want ErrStepUpLimit", err)
			}
			var ae *AuthorizationError
			if !errors.As(err, &ae) || ae.Step != "step-up" {
				t.Errorf("err = %#v, want an *AuthorizationError of step step-up", err)
			}
			want := 1 + a.maxStepUps()
			if n, _, _ := as.counts(); n != want {
				t.Errorf("MaxStepUps %d: %d authorization requests, want %d", max, n, want)
			}
		})
	}
}

// fixedClock is a settable clock.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fixedClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestAuthorizerRefreshBeforeExpiry(t *testing.T) {
	as := newFakeAS(t)
	as.expiresIn = 120
	as.refreshTokens = true
	rs := newFakeRS(t, as)
	clock := &fixedClock{t: time.Now()}
	a := testAuthorizer()
	a.now = clock.now
	rt := a.RoundTripper(nil)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	// The token the oauth2 package read expires two minutes from the
	// real clock; move the fake one past RefreshBefore of that.
	clock.advance(120*time.Second - RefreshBefore + time.Second)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request after the clock moved: %d %v", code, err)
	}
	nAuth, nTok, _ := as.counts()
	if nAuth != 1 || nTok != 2 {
		t.Fatalf("authorizations %d, token requests %d; want 1 and 2", nAuth, nTok)
	}
	r := as.tokReqs[1]
	if r.Get("grant_type") != "refresh_token" || r.Get("resource") != rs.MCP() {
		t.Errorf("second token request = grant_type %q resource %q, want a refresh with the resource", r.Get("grant_type"), r.Get("resource"))
	}
	// The refreshed token, not the old one, is sent now.
	clock.advance(time.Second)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request with the refreshed token: %d %v", code, err)
	}
	if _, nTok, _ := as.counts(); nTok != 2 {
		t.Errorf("%d token requests after using the refreshed token, want 2", nTok)
	}
}

func TestAuthorizerReregistersOnServerChange(t *testing.T) {
	as1, as2 := newFakeAS(t), newFakeAS(t)
	rs := newFakeRS(t, as1)
	a := testAuthorizer()
	rt := a.RoundTripper(nil)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	rs.setAS(as2) // as1's tokens are no longer accepted
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request after the migration: %d %v", code, err)
	}
	if _, _, n := as2.counts(); n != 1 {
		t.Fatalf("%d registrations at the new server, want 1", n)
	}
	as1ID := as1.authReqs[0].Get("client_id")
	for _, q := range append(as2.authReqs, as2.tokReqs...) {
		if q.Get("client_id") == as1ID {
			t.Errorf("the first server's client_id reached the second")
		}
	}
	// Back to the first: its stored registration is used again.
	rs.setAS(as1)
	if code, _, err := post(t, rt, rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request after moving back: %d %v", code, err)
	}
	if _, _, n := as1.counts(); n != 1 {
		t.Errorf("%d registrations at the first server, want 1 (the stored one reused)", n)
	}
}

func TestAuthorizerConcurrentRequestsShareOneLogin(t *testing.T) {
	const n = 8
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	gate := make(chan struct{})
	var once sync.Once
	rs.on401 = func() {
		rs.mu.Lock()
		all := rs.unauth == n
		rs.mu.Unlock()
		if all {
			once.Do(func() { close(gate) })
		}
	}
	a := testAuthorizer()
	a.Agent = gatedAgent{gate: gate, Agent: a.Agent}
	rt := a.RoundTripper(nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			code, _, err := post(t, rt, rs.MCP(), "{}")
			if err == nil && code != 200 {
				err = errors.New(http.StatusText(code))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if nAuth, _, nReg := as.counts(); nAuth != 1 || nReg != 1 {
		t.Errorf("%d authorizations and %d registrations for %d concurrent requests, want 1 each", nAuth, nReg, n)
	}
}

// gatedAgent waits for gate before authorizing.
type gatedAgent struct {
	Agent
	gate chan struct{}
}

func (g gatedAgent) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Agent.Authorize(ctx, authURL, redirectURL)
}

// tamperAgent changes the authorization response.
type tamperAgent struct {
	Agent
	tamper func(url.Values)
}

func (ta tamperAgent) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	q, err := ta.Agent.Authorize(ctx, authURL, redirectURL)
	if err == nil {
		ta.tamper(q)
	}
	return q, err
}

func TestAuthorizerRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(as *fakeAS, rs *fakeRS, a *Authorizer)
		want      error
		authorize bool // whether the authorization endpoint is reached
	}{
		{name: "issuer mismatch", want: ErrIssuerMismatch, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.issuer = "https://attacker.example.com"
		}},
		{name: "resource of another origin", want: ErrResourceMismatch, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			rs.resource = "https://evil.example.com/mcp"
		}},
		{name: "resource of another path", want: ErrResourceMismatch, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			rs.resource = rs.srv.URL + "/other"
		}},
		{name: "no S256", want: ErrNoPKCE, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.noS256 = true
		}},
		{name: "state mismatch", want: ErrStateMismatch, authorize: true, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			a.Agent = tamperAgent{Agent: a.Agent, tamper: func(q url.Values) { q.Set("state", "forged") }}
		}},
		{name: "iss wrong", want: ErrIssuerMismatch, authorize: true, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.issInRedirect = "wrong"
		}},
		{name: "iss normalized", want: ErrIssuerMismatch, authorize: true, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.advertiseIss = true
			as.issInRedirect = "normalized"
		}},
		{name: "iss advertised but missing", want: ErrMissingIssuer, authorize: true, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.advertiseIss = true
			as.issInRedirect = "omit"
		}},
		{name: "access denied", want: ErrAccessDenied, authorize: true, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			a.Agent = tamperAgent{Agent: a.Agent, tamper: func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") }}
		}},
		{name: "no client identity", want: ErrNoClientIdentity, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			as.noRegistration = true
		}},
		{name: "no agent", want: ErrNoAgent, setup: func(as *fakeAS, rs *fakeRS, a *Authorizer) {
			a.Agent = nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t)
			rs := newFakeRS(t, as)
			a := testAuthorizer()
			var logs bytes.Buffer
			a.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			tc.setup(as, rs, a)
			_, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}")
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for _, s := range []string{codePrefix, secretPrefix, tokenPrefix} {
				if strings.Contains(err.Error(), s) || strings.Contains(logs.String(), s) {
					t.Errorf("a secret (%s…) in the error %q or the log:\n%s", s, err, logs.String())
				}
			}
			var ae *AuthorizationError
			if !errors.As(err, &ae) {
				t.Errorf("err %T is not an *AuthorizationError", err)
			}
			nAuth, nTok, _ := as.counts()
			if (nAuth > 0) != tc.authorize || nTok != 0 {
				t.Errorf("authorization requests %d, token requests %d; want authorization %v and no token request", nAuth, nTok, tc.authorize)
			}
		})
	}
}

func TestAuthorizerIssAccepted(t *testing.T) {
	for _, tc := range []struct {
		advertise bool
		iss       string
	}{
		{true, "correct"}, {false, "correct"}, {false, "omit"},
	} {
		as := newFakeAS(t)
		as.advertiseIss, as.issInRedirect = tc.advertise, tc.iss
		rs := newFakeRS(t, as)
		if code, _, err := post(t, testAuthorizer().RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
			t.Errorf("advertised %v, iss %s: %d %v", tc.advertise, tc.iss, code, err)
		}
	}
}

func TestAuthorizerNotReplayable(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rs.MCP(), strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = nil
	resp, err := testAuthorizer().RoundTripper(nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("status %d, want the server's 401", resp.StatusCode)
	}
}

func TestAuthorizerLoginAndStore(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	store := &FileStore{Path: t.TempDir() + "/tokens.json"}
	a := testAuthorizer()
	a.Store = store
	if err := a.Login(t.Context(), rs.MCP()); err != nil {
		t.Fatal(err)
	}
	// A new Authorizer on the same store sends the stored token at once.
	b := testAuthorizer()
	b.Store = store
	if code, _, err := post(t, b.RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	rs.mu.Lock()
	unauth := rs.unauth
	rs.mu.Unlock()
	if nAuth, _, _ := as.counts(); nAuth != 1 || unauth != 0 {
		t.Errorf("authorizations %d, 401s %d; want 1 and 0", nAuth, unauth)
	}
	if err := b.Logout(t.Context(), rs.MCP()); err != nil {
		t.Fatal(err)
	}
	if st, err := store.LoadToken(t.Context(), origin(mustParse(t, rs.MCP()))); err != nil || st != nil {
		t.Errorf("after Logout: %v, %v", st, err)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestAuthorizerErrorsHoldNoSecrets(t *testing.T) {
	// Fail at the token endpoint after a code was issued, and at the
	// resource after a token was: neither error may name them.
	as := newFakeAS(t)
	as.authMethods = []string{"client_secret_post"}
	rs := newFakeRS(t, as)
	a := testAuthorizer()
	a.Agent = tamperAgent{Agent: a.Agent, tamper: func(q url.Values) { q.Set("code", codePrefix+"forged") }}
	_, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}")
	if err == nil {
		t.Fatal("no error with a forged code")
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.Code != "invalid_grant" {
		t.Errorf("err = %v, want an *HTTPError invalid_grant inside", err)
	}
	for _, s := range []string{codePrefix, secretPrefix, tokenPrefix, "code_verifier"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q names %s", err, s)
		}
	}
}

func TestAuthorizerRefusedAgain(t *testing.T) {
	// The server refuses every token: one authorization, then an error.
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	a := testAuthorizer()
	rt := a.RoundTripper(nil)
	rs.refuseAll = true
	_, _, err := post(t, rt, rs.MCP(), "{}")
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if n, _, _ := as.counts(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

func TestAuthorizerLegacyServer(t *testing.T) {
	// A 2025-03-26 server: no PRM, no metadata; the default endpoints at
	// its origin, and no resource parameter.
	as := newFakeAS(t)
	as.issInRedirect = "omit"
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, ok := as.scopesOf(tok); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer`)
			w.WriteHeader(401)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/authorize", as.serve)
	mux.HandleFunc("/token", as.serve)
	mux.HandleFunc("/register", as.serve)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if code, _, err := post(t, testAuthorizer().RoundTripper(nil), srv.URL+"/mcp", "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	nAuth, nTok, nReg := as.counts()
	if nAuth != 1 || nTok != 1 || nReg != 1 {
		t.Fatalf("authorizations, token requests, registrations = %d, %d, %d; want 1 each", nAuth, nTok, nReg)
	}
	if as.authReqs[0].Has("resource") || as.tokReqs[0].Has("resource") {
		t.Errorf("a resource parameter was sent to a 2025-03-26 server")
	}
}

func TestAuthorizerRefreshesStoredTokenOn401(t *testing.T) {
	as := newFakeAS(t)
	as.refreshTokens = true
	rs := newFakeRS(t, as)
	store := &MemoryStore{}
	key := origin(mustParse(t, rs.MCP()))
	// A token from an earlier run, expired, with a refresh token.
	store.SaveToken(t.Context(), key, &StoredToken{
		Token:    &oauth2.Token{AccessToken: "stale", RefreshToken: refreshPrefix + "old", Expiry: time.Now().Add(-time.Hour)},
		Issuer:   as.URL(),
		Resource: rs.MCP(),
	})
	a := testAuthorizer()
	a.Store = store
	if code, _, err := post(t, a.RoundTripper(nil), rs.MCP(), "{}"); err != nil || code != 200 {
		t.Fatalf("request: %d %v", code, err)
	}
	nAuth, nTok, _ := as.counts()
	if nAuth != 0 || nTok != 1 || as.tokReqs[0].Get("grant_type") != "refresh_token" {
		t.Errorf("authorizations %d, token requests %d; want a refresh alone", nAuth, nTok)
	}
	st, _ := store.LoadToken(t.Context(), key)
	if st == nil || !strings.HasPrefix(st.Token.AccessToken, tokenPrefix) {
		t.Errorf("stored token after the refresh: %+v", st)
	}
}

// firstCallWaits makes its first Authorize wait for the caller to give
// up.
type firstCallWaits struct {
	Agent
	mu      sync.Mutex
	calls   int
	started chan struct{}
}

func (f *firstCallWaits) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.mu.Unlock()
	if first {
		close(f.started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.Agent.Authorize(ctx, authURL, redirectURL)
}

func TestAuthorizerWaiterOutlivesCancelledLeader(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	ctx1, cancel1 := context.WithCancel(t.Context())
	defer cancel1()
	rs.on401 = func() {
		rs.mu.Lock()
		n := rs.unauth
		rs.mu.Unlock()
		if n == 2 {
			cancel1() // the second request is on its way to wait for the first's flow
		}
	}
	a := testAuthorizer()
	agent := &firstCallWaits{Agent: a.Agent, started: make(chan struct{})}
	a.Agent = agent
	rt := a.RoundTripper(nil)
	send := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs.MCP(), strings.NewReader("{}"))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return errors.New(resp.Status)
		}
		return nil
	}
	first := make(chan error, 1)
	go func() { first <- send(ctx1) }()
	<-agent.started
	if err := send(t.Context()); err != nil {
		t.Fatalf("the waiting request: %v", err)
	}
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled request: %v", err)
	}
}
