// Package auth is MCP authorization (OAuth 2.1) for both sides of an HTTP
// connection.
//
// For server authors (resource servers) it verifies bearer and DPoP-bound
// access tokens in front of an MCP HTTP handler ([RequireToken] with a
// [JWTVerifier] or an [IntrospectionVerifier]), publishes OAuth 2.0
// Protected Resource Metadata (RFC 9728, [HandleProtectedResourceMetadata]),
// answers 401 and 403 challenges that tell a client where to log in and
// which scopes it lacks, and passes the verified identity to handlers in
// both protocol eras ([TokenInfoFromContext]).
//
// For hosts (clients) an [Authorizer] finds the authorization server of a
// protected MCP server, registers or identifies the client, obtains,
// stores ([TokenStore]) and refreshes tokens (authorization code with PKCE
// through an [Agent], or a [Grant]: [ClientCredentials], [EnterpriseGrant],
// [WorkloadGrant]), signs DPoP proofs ([DPoPKey]), and retries a request
// that a server refused for want of a token or of a scope.
//
// Package auth/authtest is an authorization server for tests.
//
// The package builds on golang.org/x/oauth2 for tokens and grants and on
// github.com/go-jose/go-jose/v4 for JWS, JWK and JWT. It imports neither
// package mcp nor package transport: an HTTP client transport takes an
// authorizing [http.RoundTripper], and an HTTP handler is wrapped by the
// middleware.
//
// URLs: every authorization server, resource and redirect URL must use
// HTTPS, except loopback URLs (http://127.0.0.1, http://[::1] and
// http://localhost), which are accepted for development and tests.
package auth
