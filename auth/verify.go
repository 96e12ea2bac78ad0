package auth

import (
	"context"
	"errors"
	"fmt"
)

// A TokenVerifier checks an access token presented to a resource server
// (an MCP server) and says what it grants. [JWTVerifier] checks JSON Web
// Tokens signed by a trusted authorization server, [IntrospectionVerifier]
// asks the authorization server (RFC 7662), and [TokenVerifierFunc] adapts
// any function.
//
// VerifyToken must check that the token is for this resource (its
// audience), from a trusted issuer, and not expired. An error that wraps
// [ErrInvalidToken] says the token is refused (the middleware answers 401
// error="invalid_token"); any other error says that the token could not be
// checked at all (the middleware answers 503). Errors must not contain the
// token. The TokenInfo returned may be shared between calls and must not
// be modified.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string) (*TokenInfo, error)
}

// TokenVerifierFunc adapts a function to [TokenVerifier].
type TokenVerifierFunc func(ctx context.Context, token string) (*TokenInfo, error)

// VerifyToken calls f(ctx, token).
func (f TokenVerifierFunc) VerifyToken(ctx context.Context, token string) (*TokenInfo, error) {
	return f(ctx, token)
}

// Errors of token verification. Every one of them wraps ErrInvalidToken,
// so errors.Is(err, ErrInvalidToken) tells a refused token from a
// verifier that could not work ([ErrVerifierUnavailable]).
var (
	// ErrInvalidToken reports a token that is refused: malformed, badly
	// signed, for another resource, from another issuer, or no longer
	// valid.
	ErrInvalidToken = errors.New("auth: invalid token")
	// ErrExpiredToken reports a token whose "exp" has passed.
	ErrExpiredToken = fmt.Errorf("%w: expired", ErrInvalidToken)
	// ErrTokenNotYetValid reports a token whose "nbf" or "iat" lies in
	// the future.
	ErrTokenNotYetValid = fmt.Errorf("%w: not yet valid", ErrInvalidToken)
	// ErrWrongAudience reports a token issued for another resource
	// (RFC 8707): its "aud" does not name this one.
	ErrWrongAudience = fmt.Errorf("%w: issued for another resource", ErrInvalidToken)
	// ErrWrongIssuer reports a token from an issuer that is not trusted.
	ErrWrongIssuer = fmt.Errorf("%w: wrong issuer", ErrInvalidToken)
	// ErrBadSignature reports a token whose signature does not verify,
	// whose algorithm is not allowed, or whose key is unknown.
	ErrBadSignature = fmt.Errorf("%w: signature not verified", ErrInvalidToken)
	// ErrInactiveToken reports a token the authorization server's
	// introspection endpoint says is not active.
	ErrInactiveToken = fmt.Errorf("%w: not active", ErrInvalidToken)
)

// ErrVerifierUnavailable reports that a token could not be checked: the
// authorization server's metadata, key set or introspection endpoint
// failed to answer usably. It does not wrap [ErrInvalidToken]; the
// middleware answers 503.
var ErrVerifierUnavailable = errors.New("auth: token verifier unavailable")

// invalid returns an error wrapping kind (which wraps ErrInvalidToken)
// with a detail that must never hold the token.
func invalid(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}
