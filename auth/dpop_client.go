package auth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Bounds on the DPoP nonces an authorization-server client remembers.
const (
	// maxDPoPNonceOrigins bounds the origins whose latest nonce a client
	// keeps; past it, one is forgotten for each new one.
	maxDPoPNonceOrigins = 32
	// maxDPoPNonceSize bounds a nonce taken from a DPoP-Nonce header;
	// longer ones are ignored.
	maxDPoPNonceSize = 1024
)

// NewDPoPClient returns an HTTP client for requests to an authorization
// server (token, token exchange and similar endpoints) that proves
// possession of key: each request carries a fresh DPoP proof for its
// method and URL, with no "ath" (RFC 9449 section 5). The client
// remembers the latest DPoP-Nonce each origin sent (of at most 32
// origins) and puts it in later proofs; when a server answers 400 with
// error "use_dpop_nonce" and a new DPoP-Nonce (section 8), the request is
// sent again, once, with a proof carrying that nonce. Only requests whose
// body can be replayed (no body, or a GetBody, as http.NewRequest sets for
// in-memory bodies) are retried.
//
// base supplies the transport, timeout, jar and redirect policy; nil means
// http.DefaultTransport with redirects limited to HTTPS or loopback
// targets. The client is safe for concurrent use; use one per key.
func NewDPoPClient(key *DPoPKey, base *http.Client) *http.Client {
	c := *defaultClient(base)
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = &dpopTransport{key: key, base: rt}
	return &c
}

// dpopTransport adds DPoP proofs to requests to an authorization server.
type dpopTransport struct {
	key  *DPoPKey
	base http.RoundTripper

	mu     sync.Mutex
	nonces map[string]string // origin -> latest nonce
}

// RoundTrip implements http.RoundTripper.
func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	origin := requestOrigin(req)
	nonce := t.nonce(origin)
	resp, err := t.send(req, req.Body, nonce)
	if err != nil {
		return nil, err
	}
	fresh := t.remember(origin, resp)
	if resp.StatusCode != http.StatusBadRequest || fresh == "" || fresh == nonce {
		return resp, nil
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	if !peekNonceError(resp) {
		return resp, nil
	}
	body := req.Body
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	resp, err = t.send(req, body, fresh)
	if err != nil {
		return nil, err
	}
	t.remember(origin, resp)
	return resp, nil
}

// send sends a copy of req with body and a proof carrying nonce.
func (t *dpopTransport) send(req *http.Request, body io.ReadCloser, nonce string) (*http.Response, error) {
	proof, err := t.key.Proof(req.Method, req.URL.String(), &ProofOptions{Nonce: nonce})
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("DPoP", proof)
	return t.base.RoundTrip(r)
}

// peekNonceError reads resp's body (at most MaxDocumentSize) to see
// whether it is an OAuth error "use_dpop_nonce". It closes the body and
// puts the bytes back for the caller (or, past the bound, a body that
// fails with ErrTooLarge).
func peekNonceError(resp *http.Response) bool {
	b, err := readBody(resp.Body)
	resp.Body.Close()
	if err != nil {
		resp.Body = io.NopCloser(errReader{err})
		return false
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var oe struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(b, &oe) == nil && oe.Error == "use_dpop_nonce"
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// nonce returns the latest nonce from origin, or "".
func (t *dpopTransport) nonce(origin string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nonces[origin]
}

// remember keeps the DPoP-Nonce of resp, if any and well-formed, as the
// latest of origin, and returns it.
func (t *dpopTransport) remember(origin string, resp *http.Response) string {
	n := resp.Header.Get("DPoP-Nonce")
	if !validNonce(n) {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nonces == nil {
		t.nonces = make(map[string]string)
	}
	if _, ok := t.nonces[origin]; !ok && len(t.nonces) >= maxDPoPNonceOrigins {
		for k := range t.nonces {
			delete(t.nonces, k)
			break
		}
	}
	t.nonces[origin] = n
	return n
}

// validNonce reports whether n is a DPoP nonce (RFC 9449 section 8.1:
// one or more NQCHAR) of at most maxDPoPNonceSize bytes.
func validNonce(n string) bool {
	if n == "" || len(n) > maxDPoPNonceSize {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// requestOrigin returns the scheme and host of req's URL, lower-cased.
func requestOrigin(req *http.Request) string {
	return strings.ToLower(req.URL.Scheme) + "://" + strings.ToLower(req.URL.Host)
}
