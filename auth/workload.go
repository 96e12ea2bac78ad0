package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// ErrNoAssertion reports that a grant's assertion source gave no
// assertion (or no ID token).
var ErrNoAssertion = errors.New("auth: no assertion")

// ErrAssertionRejected reports that a WorkloadGrant did not send an
// assertion because the authorization server already refused it for the
// same resource and scopes.
var ErrAssertionRejected = errors.New("auth: assertion already refused by the authorization server")

// WorkloadGrant is workload identity federation (SEP-1933): the JWT bearer
// grant (RFC 7523 section 2.1) with a token the workload's platform issues
// it (a Kubernetes service account token, a cloud instance identity token,
// a CI job's OIDC token) as the assertion. The authorization server trusts
// the platform's issuer; the workload holds no long-lived secret.
//
// A refused grant is reported, never retried and never replaced by
// another grant type: the *HTTPError of the server's answer (such as
// invalid_grant for an expired or wrongly addressed assertion,
// invalid_scope or unauthorized_client) is returned. The grant also
// remembers the last refusal: asked again with the same assertion, the
// same resource and the same scopes, it fails with ErrAssertionRejected
// (wrapping the first error) without sending anything; an Assertion func
// that returns a new token lifts this. A WorkloadGrant is safe for
// concurrent use and must not be copied after first use.
type WorkloadGrant struct {
	// Assertion returns the platform token to present, such as the
	// contents of a projected service account token file. It is called
	// for every token request, so it may return a fresh token each time.
	// Required.
	Assertion func(ctx context.Context) (string, error)
	// ClientAuth authenticates the client at the authorization server.
	// All empty: the assertion alone identifies the workload (method
	// "none"); a ClientID alone is sent as client_id.
	ClientAuth
	// Scopes, when non-nil, replace the scopes the Authorizer asks for.
	Scopes []string

	mu      sync.Mutex
	refused [sha256.Size]byte // hash of the refused request
	refusal error             // the server's answer, or nil
}

// Token implements [Grant]: one POST to the token endpoint with
// grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and the
// platform token as "assertion".
func (g *WorkloadGrant) Token(ctx context.Context, r *GrantRequest) (*oauth2.Token, error) {
	if err := checkGrantRequest(r); err != nil {
		return nil, err
	}
	if g.Assertion == nil {
		return nil, fmt.Errorf("%w: a workload grant needs an Assertion func", ErrGrantConfig)
	}
	assertion, err := g.Assertion(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: workload assertion: %w", err)
	}
	if assertion == "" {
		return nil, fmt.Errorf("%w: the workload assertion is empty", ErrNoAssertion)
	}
	form := url.Values{"grant_type": {grantJWTBearer}}
	addResourceScope(form, r, g.Scopes)
	key := requestHash(assertion, form.Get("resource"), form.Get("scope"))
	if err := g.refusedBefore(key); err != nil {
		return nil, err
	}
	form.Set("assertion", assertion)
	tok, err := postToken(ctx, r, &g.ClientAuth, form, time.Now)
	g.record(key, err)
	return tok, err
}

// requestHash identifies a token request without keeping its assertion.
func requestHash(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// refusedBefore returns the ErrAssertionRejected error if the request
// with hash key was refused last time.
func (g *WorkloadGrant) refusedBefore(key [sha256.Size]byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refusal != nil && g.refused == key {
		return fmt.Errorf("%w (not sent again): %w", ErrAssertionRejected, g.refusal)
	}
	return nil
}

// record remembers a refusal by the authorization server of the request
// with hash key, and forgets it on success. Transport errors and
// transient answers are not remembered.
func (g *WorkloadGrant) record(key [sha256.Size]byte, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var he *HTTPError
	switch {
	case err == nil:
		g.refusal = nil
	case errors.As(err, &he) && lastingRefusal(he):
		g.refused, g.refusal = key, err
	}
}

// lastingRefusal reports whether he is a lasting refusal: an OAuth error answer
// with a 4xx status other than 429 (too many requests) and other than a
// DPoP nonce challenge the HTTP client could not meet.
func lastingRefusal(he *HTTPError) bool {
	return he.StatusCode >= 400 && he.StatusCode < 500 && he.StatusCode != http.StatusTooManyRequests &&
		he.Code != "" && he.Code != "use_dpop_nonce"
}
