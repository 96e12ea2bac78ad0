package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// dpopServer is a token endpoint that checks the DPoP proof of every
// request and, when nonce is set, demands it.
type dpopServer struct {
	*testServer
	proofs []*DPoPProof
}

// newDPoPServer answers with answer after checking the proof; it fails
// the test on a missing or bad proof.
func newDPoPServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, p *DPoPProof)) *dpopServer {
	t.Helper()
	ds := &dpopServer{}
	ds.testServer = newTestServer(t, func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		if len(r.Header.Values("DPoP")) != 1 {
			t.Errorf("request has %d DPoP headers", len(r.Header.Values("DPoP")))
			http.Error(w, "no proof", 400)
			return
		}
		p, err := ParseDPoPProof(r.Header.Get("DPoP"), &DPoPCheck{Method: r.Method, URL: ds.URL + r.URL.Path})
		if err != nil {
			t.Errorf("bad proof: %v", err)
			http.Error(w, "bad proof", 400)
			return
		}
		if p.AccessTokenHash != "" {
			t.Error("proof to the authorization server carries ath")
		}
		ds.mu.Lock()
		ds.proofs = append(ds.proofs, p)
		ds.mu.Unlock()
		answer(w, r, p)
	})
	return ds
}

func (ds *dpopServer) seenProofs() []*DPoPProof {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return append([]*DPoPProof(nil), ds.proofs...)
}

// nonceChallenge answers 400 use_dpop_nonce with nonce.
func nonceChallenge(w http.ResponseWriter, nonce string) {
	w.Header().Set("DPoP-Nonce", nonce)
	writeGrantJSON(w, 400, map[string]string{"error": "use_dpop_nonce", "error_description": "nonce required"})
}

func newDPoPKeyT(t *testing.T) *DPoPKey {
	t.Helper()
	k, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func postDPoPTest(t *testing.T, c *http.Client, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestDPoPClientProofOnEveryRequest(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
		writeGrantJSON(w, 200, map[string]string{"ok": "yes"})
	})
	c := NewDPoPClient(key, nil)
	for i := range 3 {
		resp, _ := postDPoPTest(t, c, ds.URL+"/token?x=1", "a=b")
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	ps := ds.seenProofs()
	if len(ps) != 3 {
		t.Fatalf("%d proofs, want 3", len(ps))
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Method != "POST" || p.URL != ds.URL+"/token" || p.Nonce != "" || p.Thumbprint != key.Thumbprint() {
			t.Errorf("proof = %+v", p)
		}
		if seen[p.ID] {
			t.Error("a proof was reused")
		}
		seen[p.ID] = true
	}
}

func TestDPoPClientNonceRetry(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, p *DPoPProof) {
		if p.Nonce != "n-1" {
			nonceChallenge(w, "n-1")
			return
		}
		writeGrantJSON(w, 200, map[string]string{"ok": "yes"})
	})
	c := NewDPoPClient(key, nil)
	resp, body := postDPoPTest(t, c, ds.URL+"/token", "grant_type=client_credentials&scope=a")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	reqs := ds.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (challenge and retry)", len(reqs))
	}
	if reqs[0].Body != reqs[1].Body || reqs[1].Body != "grant_type=client_credentials&scope=a" {
		t.Errorf("retried body %q, first %q", reqs[1].Body, reqs[0].Body)
	}
	ps := ds.seenProofs()
	if ps[0].ID == ps[1].ID || ps[1].Nonce != "n-1" {
		t.Errorf("retry proof %+v after %+v", ps[1], ps[0])
	}
	// The nonce is remembered: the next request carries it at once.
	postDPoPTest(t, c, ds.URL+"/token", "x=y")
	if n := len(ds.requests()); n != 3 {
		t.Errorf("%d requests after a third call, want 3", n)
	}
}

func TestDPoPClientRetriesOnlyOnce(t *testing.T) {
	key := newDPoPKeyT(t)
	var n atomic.Int32
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
		nonceChallenge(w, fmt.Sprintf("n-%d", n.Add(1)))
	})
	resp, body := postDPoPTest(t, NewDPoPClient(key, nil), ds.URL+"/token", "a=b")
	if resp.StatusCode != 400 || !strings.Contains(body, "use_dpop_nonce") {
		t.Errorf("answer %d %q, want the second challenge", resp.StatusCode, body)
	}
	if got := len(ds.requests()); got != 2 {
		t.Errorf("%d requests, want 2", got)
	}
}

func TestDPoPClientNoRetry(t *testing.T) {
	key := newDPoPKeyT(t)
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, _ *http.Request, p *DPoPProof)
		body   func(url string) *http.Request
	}{
		{"other error with a nonce", func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
			w.Header().Set("DPoP-Nonce", "n-1")
			writeGrantJSON(w, 400, map[string]string{"error": "invalid_grant"})
		}, nil},
		{"use_dpop_nonce without a nonce", func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
			writeGrantJSON(w, 400, map[string]string{"error": "use_dpop_nonce"})
		}, nil},
		{"malformed nonce", func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
			nonceChallenge(w, `bad "nonce"`)
		}, nil},
		{"401 use_dpop_nonce", func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
			w.Header().Set("DPoP-Nonce", "n-1")
			writeGrantJSON(w, 401, map[string]string{"error": "use_dpop_nonce"})
		}, nil},
		{"body not replayable", func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
			nonceChallenge(w, "n-1")
		}, func(u string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, u, io.NopCloser(strings.NewReader("a=b")))
			return req
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := newDPoPServer(t, tt.answer)
			c := NewDPoPClient(key, nil)
			var req *http.Request
			if tt.body != nil {
				req = tt.body(ds.URL + "/token")
				if req.GetBody != nil {
					t.Fatal("test request is replayable")
				}
			} else {
				req, _ = http.NewRequest(http.MethodPost, ds.URL+"/token", strings.NewReader("a=b"))
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || !strings.Contains(string(b), "error") {
				t.Errorf("answer body %q, %v: want the server's error intact", b, err)
			}
			if got := len(ds.requests()); got != 1 {
				t.Errorf("%d requests, want 1", got)
			}
		})
	}
}

func TestDPoPClientOversizedChallenge(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
		w.Header().Set("DPoP-Nonce", "n-1")
		writeGrantJSON(w, 400, map[string]string{"error": "use_dpop_nonce", "pad": strings.Repeat("x", MaxDocumentSize)})
	})
	req, _ := http.NewRequest(http.MethodPost, ds.URL+"/token", strings.NewReader("a=b"))
	resp, err := NewDPoPClient(key, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, ErrTooLarge) {
		t.Errorf("reading the answer: %v, want ErrTooLarge", err)
	}
	if got := len(ds.requests()); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

func TestDPoPClientRemembersNonceFromSuccess(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
		w.Header().Set("DPoP-Nonce", "next")
		writeGrantJSON(w, 200, map[string]string{})
	})
	c := NewDPoPClient(key, nil)
	postDPoPTest(t, c, ds.URL+"/token", "")
	postDPoPTest(t, c, ds.URL+"/other", "")
	ps := ds.seenProofs()
	if ps[0].Nonce != "" || ps[1].Nonce != "next" {
		t.Errorf("nonces %q, %q; want \"\", \"next\"", ps[0].Nonce, ps[1].Nonce)
	}
}

func TestDPoPNonceMemoryBounded(t *testing.T) {
	tr := &dpopTransport{}
	for i := range 3 * maxDPoPNonceOrigins {
		resp := &http.Response{Header: http.Header{"Dpop-Nonce": {"n"}}}
		tr.remember(fmt.Sprintf("https://as%d.example", i), resp)
	}
	if len(tr.nonces) > maxDPoPNonceOrigins {
		t.Errorf("%d origins remembered, bound %d", len(tr.nonces), maxDPoPNonceOrigins)
	}
	long := &http.Response{Header: http.Header{"Dpop-Nonce": {strings.Repeat("a", maxDPoPNonceSize+1)}}}
	if tr.remember("https://x.example", long) != "" {
		t.Error("an oversized nonce was kept")
	}
}

func TestDPoPClientCanceledContext(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) { nonceChallenge(w, "n") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ds.URL+"/token", strings.NewReader("a=b"))
	if _, err := NewDPoPClient(key, nil).Do(req); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestClientCredentialsDPoP runs a grant through the DPoP client against a
// server demanding a nonce, as the auth/dpop-nonce scenario's token
// endpoint does.
func TestClientCredentialsDPoP(t *testing.T) {
	key := newDPoPKeyT(t)
	ds := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, p *DPoPProof) {
		if p.Nonce != "as-nonce" {
			nonceChallenge(w, "as-nonce")
			return
		}
		writeGrantJSON(w, 200, map[string]any{"access_token": "bound", "token_type": "DPoP", "expires_in": 60})
	})
	g := &ClientCredentials{ClientAuth: ClientAuth{ClientID: "c", ClientSecret: "s"}}
	tok, err := g.Token(context.Background(), &GrantRequest{
		Server: ds.metadata(), Resource: "https://mcp.example/mcp", HTTPClient: NewDPoPClient(key, nil), DPoP: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Type() != "DPoP" || tok.AccessToken != "bound" {
		t.Errorf("token = %+v", tok)
	}
	reqs := ds.requests()
	if len(reqs) != 2 || basicCredentials(t, reqs[1].Header) != "c:s" {
		t.Errorf("%d requests; retry lost its authentication", len(reqs))
	}
}
