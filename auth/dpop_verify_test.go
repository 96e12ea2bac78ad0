package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// dpopHarness is the middleware with DPoP options, and a client key the
// tokens are bound to.
type dpopHarness struct {
	*rsHarness
	key *DPoPKey
}

func newDPoPHarness(t *testing.T, opts DPoPOptions) *dpopHarness {
	x := newRSHarness(t, func(o *ResourceOptions) { o.DPoP = opts })
	k, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	return &dpopHarness{rsHarness: x, key: k}
}

// bound mints a token bound to the harness's key.
func (x *dpopHarness) bound(t *testing.T) string {
	return x.token(t, "alice", "read", "cnf", map[string]string{"jkt": x.key.Thumbprint()})
}

// proof signs a proof with k for method, url, token and nonce, at the
// harness's clock.
func (x *dpopHarness) proof(t *testing.T, k *DPoPKey, method, url, token, nonce string) string {
	p, err := k.Proof(method, url, &ProofOptions{AccessToken: token, Nonce: nonce, Now: x.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	x.mu.Lock()
	x.tokens = append(x.tokens, p)
	x.mu.Unlock()
	return p
}

func TestRequireTokenDPoP(t *testing.T) {
	x := newDPoPHarness(t, DPoPOptions{})
	tok := x.bound(t)
	other, _ := GenerateDPoPKey()
	const u = "http://127.0.0.1:9/mcp"
	replayed := x.proof(t, x.key, "POST", u, tok, "")
	if w := x.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", replayed)); w.Code != 200 {
		t.Fatalf("first use: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	dpop := func(tok, proof string) http.Header { return hdr("Authorization", "DPoP "+tok, "DPoP", proof) }
	old, err := x.key.Proof("POST", u, &ProofOptions{AccessToken: tok, Now: func() time.Time { return x.clock.now().Add(-DefaultDPoPWindow - time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	future, err := x.key.Proof("POST", u, &ProofOptions{AccessToken: tok, Now: func() time.Time { return x.clock.now().Add(DefaultDPoPWindow + time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	x.tokens = append(x.tokens, old, future)
	tests := []struct {
		name   string
		method string
		header http.Header
		status int
		want   string // in WWW-Authenticate
	}{
		{"valid", "POST", dpop(tok, x.proof(t, x.key, "POST", u, tok, "")), 200, ""},
		{"valid GET", "GET", dpop(tok, x.proof(t, x.key, "GET", u, tok, "")), 200, ""},
		{"valid, URL case and query ignored", "POST", dpop(tok, x.proof(t, x.key, "POST", "HTTP://127.0.0.1:9/mcp?x=1", tok, "")), 200, ""},
		{"replayed", "POST", dpop(tok, replayed), 401, `DPoP error="invalid_dpop_proof"`},
		{"too old", "POST", dpop(tok, old), 401, `error="invalid_dpop_proof"`},
		{"from the future", "POST", dpop(tok, future), 401, `error="invalid_dpop_proof"`},
		{"other htu", "POST", dpop(tok, x.proof(t, x.key, "POST", "http://127.0.0.1:9/other", tok, "")), 401, `error="invalid_dpop_proof"`},
		{"other host", "POST", dpop(tok, x.proof(t, x.key, "POST", "http://evil.example/mcp", tok, "")), 401, `error="invalid_dpop_proof"`},
		{"other htm", "POST", dpop(tok, x.proof(t, x.key, "GET", u, tok, "")), 401, `error="invalid_dpop_proof"`},
		{"other ath", "POST", dpop(tok, x.proof(t, x.key, "POST", u, "another-token", "")), 401, `error="invalid_dpop_proof"`},
		{"no ath", "POST", dpop(tok, x.proof(t, x.key, "POST", u, "", "")), 401, `error="invalid_dpop_proof"`},
		{"other key", "POST", dpop(tok, x.proof(t, other, "POST", u, tok, "")), 401, `error="invalid_dpop_proof"`},
		{"no proof", "POST", hdr("Authorization", "DPoP "+tok), 401, `error="invalid_dpop_proof"`},
		{"two proofs", "POST", hdr("Authorization", "DPoP "+tok, "DPoP", x.proof(t, x.key, "POST", u, tok, ""), "DPoP", x.proof(t, x.key, "POST", u, tok, "")), 401, `error="invalid_dpop_proof"`},
		{"garbage proof", "POST", dpop(tok, "a.b.c"), 401, `error="invalid_dpop_proof"`},
		{"bound token as Bearer", "POST", hdr("Authorization", "Bearer "+tok, "DPoP", x.proof(t, x.key, "POST", u, tok, "")), 401, `DPoP error="invalid_token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := x.do(tt.method, "", "{}", tt.header)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Header().Get("WWW-Authenticate"))
			}
			if got := w.Header().Get("WWW-Authenticate"); !strings.Contains(got, tt.want) {
				t.Fatalf("WWW-Authenticate %q lacks %q", got, tt.want)
			}
			if tt.status == 200 && x.last.info.ConfirmationThumbprint != x.key.Thumbprint() {
				t.Fatalf("the handler saw %+v", x.last.info)
			}
		})
	}
	checkNoSecrets(t, x.log.String(), x.tokens)
}

func TestRequireTokenDPoPRequired(t *testing.T) {
	x := newDPoPHarness(t, DPoPOptions{Required: true})
	bearer := x.token(t, "alice", "read")
	tests := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"no token", nil, `DPoP scope="read", algs="ES256 `},
		{"bearer scheme", hdr("Authorization", "Bearer "+bearer), `DPoP error="invalid_token"`},
		{"unbound token with DPoP", hdr("Authorization", "DPoP "+bearer, "DPoP", x.proof(t, x.key, "POST", testResource, bearer, "")), `DPoP error="invalid_token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := x.do("POST", "", "{}", tt.header)
			if got := w.Header().Get("WWW-Authenticate"); w.Code != 401 || !strings.HasPrefix(got, tt.want[:5]) || !strings.Contains(got, tt.want) {
				t.Fatalf("%d %q, want 401 %q", w.Code, got, tt.want)
			}
		})
	}
	tok := x.bound(t)
	if w := x.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", x.proof(t, x.key, "POST", testResource, tok, ""))); w.Code != 200 {
		t.Fatalf("bound token: %d", w.Code)
	}
}

// TestRequireTokenDPoPNonce: a proof without the server's nonce is
// challenged with one; a retry with it passes; the previous nonce stays
// valid for one lifetime after rotation, and answers carry the new one.
func TestRequireTokenDPoPNonce(t *testing.T) {
	x := newDPoPHarness(t, DPoPOptions{Nonce: true, NonceLifetime: time.Minute})
	tok := x.bound(t)
	send := func(nonce string) (int, string, string) {
		w := x.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", x.proof(t, x.key, "POST", testResource, tok, nonce)))
		return w.Code, w.Header().Get("WWW-Authenticate"), w.Header().Get("DPoP-Nonce")
	}
	code, challenge, nonce := send("")
	if code != 401 || !strings.HasPrefix(challenge, `DPoP error="use_dpop_nonce"`) || nonce == "" {
		t.Fatalf("without a nonce: %d %q %q", code, challenge, nonce)
	}
	if code, _, _ := send("made-up"); code != 401 {
		t.Fatalf("a made-up nonce: %d", code)
	}
	if code, _, again := send(nonce); code != 200 || again != "" {
		t.Fatalf("with the nonce: %d, DPoP-Nonce %q", code, again)
	}
	x.clock.advance(time.Minute)
	code, _, next := send(nonce)
	if code != 200 || next == "" || next == nonce {
		t.Fatalf("the previous nonce: %d, DPoP-Nonce %q", code, next)
	}
	x.clock.advance(time.Minute)
	if code, challenge, fresh := send(nonce); code != 401 || !strings.Contains(challenge, "use_dpop_nonce") || fresh == nonce {
		t.Fatalf("an expired nonce: %d %q", code, challenge)
	}
}

// TestRequireTokenDPoPNonceShared: servers sharing a nonce key accept
// each other's nonces.
func TestRequireTokenDPoPNonceShared(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	a := newDPoPHarness(t, DPoPOptions{Nonce: true, NonceKey: key})
	b := newRSHarness(t, func(o *ResourceOptions) {
		o.DPoP = DPoPOptions{Nonce: true, NonceKey: key}
		o.Verifier = a.is.verifier(a.clock, nil)
		o.Now = a.clock.now
	})
	tok := a.bound(t)
	w := a.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", a.proof(t, a.key, "POST", testResource, tok, "")))
	nonce := w.Header().Get("DPoP-Nonce")
	if w := b.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", a.proof(t, a.key, "POST", testResource, tok, nonce))); w.Code != 200 {
		t.Fatalf("the other server: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

func TestRequireTokenDPoPURL(t *testing.T) {
	tests := []struct {
		name   string
		opts   DPoPOptions
		header []string
		htu    string
		status int
	}{
		{"base URL", DPoPOptions{BaseURL: "https://mcp.example"}, nil, "https://mcp.example/mcp", 200},
		{"base URL, resource origin refused", DPoPOptions{BaseURL: "https://mcp.example"}, nil, testResource, 401},
		{"from request", DPoPOptions{URLFromRequest: true}, []string{"Host", "front.example"}, "http://front.example/mcp", 200},
		{"forwarded proto not trusted", DPoPOptions{URLFromRequest: true}, []string{"X-Forwarded-Proto", "https"}, "https://127.0.0.1:9/mcp", 401},
		{"forwarded proto trusted", DPoPOptions{URLFromRequest: true, TrustForwardedProto: true}, []string{"X-Forwarded-Proto", "https"}, "https://127.0.0.1:9/mcp", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newDPoPHarness(t, tt.opts)
			tok := x.bound(t)
			target := testResource
			h := hdr("Authorization", "DPoP "+tok, "DPoP", x.proof(t, x.key, "POST", tt.htu, tok, ""))
			r := x.do
			if len(tt.header) > 0 && tt.header[0] == "Host" {
				target = "http://" + tt.header[1] + "/mcp"
			} else if len(tt.header) > 0 {
				h.Set(tt.header[0], tt.header[1])
			}
			if w := r("POST", target, "{}", h); w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestReplayCache: bounded in time (IDs leave after the TTL) and in size
// (a full cache refuses rather than forgets).
func TestReplayCache(t *testing.T) {
	c := newReplayCache(2, time.Minute)
	now := testNow
	steps := []struct {
		tp, id string
		at     time.Duration
		want   error
	}{
		{"k", "1", 0, nil},
		{"k", "1", time.Second, ErrDPoPReplayed},
		{"other", "1", time.Second, nil},
		{"k", "2", 2 * time.Second, errReplayCacheFull},
		{"k", "1", time.Minute, nil}, // the first entry left
		{"k", "3", time.Minute + time.Second, nil},
		{"k", "3", time.Minute + 2*time.Second, ErrDPoPReplayed},
	}
	for i, s := range steps {
		if err := c.add(s.tp, s.id, now.Add(s.at)); err != s.want {
			t.Fatalf("step %d: err = %v, want %v", i, err, s.want)
		}
	}
}

func TestRequireTokenDPoPReplayCacheFull(t *testing.T) {
	x := newDPoPHarness(t, DPoPOptions{ReplayCacheSize: 1})
	tok := x.bound(t)
	send := func() int {
		return x.do("POST", "", "{}", hdr("Authorization", "DPoP "+tok, "DPoP", x.proof(t, x.key, "POST", testResource, tok, ""))).Code
	}
	if send() != 200 || send() != 503 {
		t.Fatal("a full replay cache did not refuse")
	}
	x.clock.advance(2 * DefaultDPoPWindow)
	if code := send(); code != 200 {
		t.Fatalf("after the window: %d", code)
	}
}
