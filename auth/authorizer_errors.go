package auth

import (
	"errors"
)

// Reasons an [Authorizer] refuses to go on. An *AuthorizationError wraps
// one of them (errors.Is finds it) or the failure underneath.
var (
	// ErrNoAuthorizationServer reports that discovery found no
	// authorization server: no Protected Resource Metadata naming one,
	// and no usable fallback.
	ErrNoAuthorizationServer = errors.New("auth: no authorization server found")
	// ErrIssuerMismatch reports authorization server metadata whose
	// issuer is not the issuer it was discovered from (RFC 8414 section
	// 3.3), or an authorization response whose "iss" is not the
	// server's issuer (RFC 9207).
	ErrIssuerMismatch = errors.New("auth: issuer mismatch")
	// ErrMissingIssuer reports an authorization response without "iss"
	// from a server that advertises it (RFC 9207).
	ErrMissingIssuer = errors.New("auth: authorization response lacks iss")
	// ErrNoPKCE reports an authorization server that does not list S256
	// in code_challenge_methods_supported.
	ErrNoPKCE = errors.New("auth: authorization server does not support PKCE with S256")
	// ErrResourceMismatch reports Protected Resource Metadata whose
	// resource is not the MCP server being accessed.
	ErrResourceMismatch = errors.New("auth: protected resource metadata names another resource")
	// ErrStateMismatch reports an authorization response whose state is
	// not the one sent.
	ErrStateMismatch = errors.New("auth: authorization response state mismatch")
	// ErrStepUpLimit reports a request still refused for insufficient
	// scope after MaxStepUps re-authorizations.
	ErrStepUpLimit = errors.New("auth: insufficient scope after the step-up limit")
	// ErrNoClientIdentity reports that the client has no identity at the
	// authorization server: none pre-registered, no Client ID Metadata
	// Document accepted, and no registration endpoint.
	ErrNoClientIdentity = errors.New("auth: no client identity for the authorization server")
	// ErrNoAgent reports an authorization code flow without an Agent to
	// send the user to the authorization server.
	ErrNoAgent = errors.New("auth: no agent for the authorization code flow")
	// ErrAccessDenied reports an authorization response carrying an
	// OAuth error, such as access_denied; the *AuthorizationError's
	// Code holds it.
	ErrAccessDenied = errors.New("auth: authorization refused")
	// ErrUnauthorized reports a server that refused the request again
	// right after authorization succeeded.
	ErrUnauthorized = errors.New("auth: server refused the new token")
	// ErrNotReplayable reports a request whose body cannot be sent again
	// (no GetBody) after authorization.
	ErrNotReplayable = errors.New("auth: request body cannot be replayed")
)

// An AuthorizationError reports why authorizing a request to an MCP
// server failed. Its message never holds a token, secret, code or
// verifier.
type AuthorizationError struct {
	// Server is the MCP server's origin.
	Server string
	// Step names the step that failed, such as "discovery",
	// "registration", "authorization", "token" or "step-up".
	Step string
	// Code is the OAuth error code of an authorization or token error
	// response, such as "access_denied", or "".
	Code string
	// Err is the cause: a sentinel of this package, an *HTTPError, or
	// another error.
	Err error
}

// Error implements error.
func (e *AuthorizationError) Error() string {
	s := "auth: authorizing at " + e.Server
	if e.Step != "" {
		s += " (" + e.Step + ")"
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *AuthorizationError) Unwrap() error { return e.Err }
