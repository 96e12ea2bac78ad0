package auth

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/internal/principal"
)

// TokenInfo is what a verified access token says: who it was issued to,
// by whom, for what, and until when. A [TokenVerifier] returns it, and the
// middleware puts it in the request's context, where handlers of both
// protocol eras find it with [TokenInfoFromContext].
type TokenInfo struct {
	// Issuer is the authorization server that issued the token ("iss").
	Issuer string
	// Subject is the resource owner or the client acting on its own
	// behalf ("sub").
	Subject string
	// ClientID is the OAuth client the token was issued to ("client_id"
	// or "azp"), or "".
	ClientID string
	// Audience lists the resources the token is for ("aud").
	Audience []string
	// Scopes lists the scopes granted ("scope" or "scp").
	Scopes []string
	// Expiry is when the token expires; zero for never.
	Expiry time.Time
	// IssuedAt is when the token was issued; zero when unknown.
	IssuedAt time.Time
	// ID is the token's unique identifier ("jti"), or "".
	ID string
	// ConfirmationThumbprint is the JWK SHA-256 thumbprint the token is
	// bound to ("cnf.jkt", RFC 9449), or "" for a bearer token.
	ConfirmationThumbprint string
	// Claims holds every claim of the token (or member of the
	// introspection answer) as the issuer sent it.
	Claims map[string]json.RawMessage

	principal string // Principal, computed once by the verifiers
}

// HasScopes reports whether every one of scopes was granted.
func (t *TokenInfo) HasScopes(scopes ...string) bool {
	for _, s := range scopes {
		if !slices.Contains(t.Scopes, s) {
			return false
		}
	}
	return true
}

// Principal returns the identity sessions are bound to: the issuer and
// subject, so that equal subjects of two issuers stay apart.
func (t *TokenInfo) Principal() string {
	if t.principal != "" {
		return t.principal
	}
	return t.Issuer + " " + t.Subject
}

// withPrincipal sets the cached Principal of a TokenInfo a verifier made,
// so that a cached token costs no string per request.
func (t *TokenInfo) withPrincipal() *TokenInfo {
	t.principal = t.Issuer + " " + t.Subject
	return t
}

// WithTokenInfo returns a context carrying info, and with it the
// principal that package transport binds sessions to. The middleware
// calls it; tests of handlers may too.
func WithTokenInfo(ctx context.Context, info *TokenInfo) context.Context {
	return principal.WithSource(ctx, info)
}

// TokenInfoFromContext returns the verified token of the request a
// handler serves, or nil when the request carried none (or did not come
// through the middleware).
func TokenInfoFromContext(ctx context.Context) *TokenInfo {
	t, _ := principal.Value(ctx).(*TokenInfo)
	return t
}
