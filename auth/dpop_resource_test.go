package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

// staticGrant issues one token.
type staticGrant struct {
	tok *oauth2.Token
	mu  sync.Mutex
	req *GrantRequest
}

func (g *staticGrant) Token(_ context.Context, r *GrantRequest) (*oauth2.Token, error) {
	g.mu.Lock()
	g.req = r
	g.mu.Unlock()
	t := *g.tok
	return &t, nil
}

func TestAuthorizerGrantAndDPoP(t *testing.T) {
	as := newFakeAS(t)
	key, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	const nonce = "server-nonce-1"
	var mu sync.Mutex
	var challenged, accepted int
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == wellKnownPRM+"/mcp" {
			writeJSON(w, 200, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{as.URL()}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP ")
		if !ok || tok != "bound" {
			w.Header().Set("WWW-Authenticate", `DPoP algs="ES256"`)
			w.WriteHeader(401)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := ParseDPoPProof(r.Header.Get("DPoP"), &DPoPCheck{Method: r.Method, URL: srv.URL + r.URL.Path, AccessToken: tok, Nonce: nonce}); err != nil {
			challenged++
			w.Header().Set("DPoP-Nonce", nonce)
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", algs="ES256"`)
			w.WriteHeader(401)
			return
		}
		accepted++
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	g := &staticGrant{tok: &oauth2.Token{AccessToken: "bound", TokenType: "DPoP"}}
	a := &Authorizer{Grant: g, DPoP: key}
	rt := a.RoundTripper(nil)
	for range 2 {
		if code, _, err := post(t, rt, srv.URL+"/mcp", "{}"); err != nil || code != 200 {
			t.Fatalf("request: %d %v", code, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if challenged != 1 || accepted != 2 {
		t.Errorf("nonce challenges %d, accepted %d; want 1 and 2 (the nonce remembered)", challenged, accepted)
	}
	if g.req == nil || g.req.Resource != srv.URL+"/mcp" || g.req.DPoP != key || g.req.Server.Issuer != as.URL() {
		t.Errorf("grant request %+v", g.req)
	}
	if n, _, _ := as.counts(); n != 0 {
		t.Errorf("%d authorization requests with a Grant, want none", n)
	}
}
