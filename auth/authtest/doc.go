// Package authtest provides an OAuth 2.1 authorization server for tests,
// as net/http/httptest provides HTTP servers: a [Server] listens on a
// loopback port, issues real signed tokens, and can be made to misbehave.
//
// Authors of protected MCP servers use it to obtain tokens their
// verifiers must accept (or refuse), and authors of MCP hosts use it as
// the authorization server their clients discover, register with and
// obtain tokens from, without a browser: the authorization endpoint
// consents at once, on behalf of a configurable subject.
//
// The server publishes Authorization Server Metadata (RFC 8414) and
// OpenID Connect discovery, and implements:
//
//   - the authorization code grant with PKCE (S256 only, required) and the
//     "iss" authorization response parameter (RFC 9207);
//   - dynamic client registration (RFC 7591) and Client ID Metadata
//     Documents (an HTTPS, or loopback HTTP, URL as client_id);
//   - the refresh token grant, with rotation;
//   - the client credentials grant, with client_secret_basic,
//     client_secret_post and private_key_jwt (RFC 7523) authentication;
//   - token exchange (RFC 8693) of an ID token for an Identity Assertion
//     JWT Authorization Grant (ID-JAG), playing the enterprise identity
//     provider of enterprise-managed authorization;
//   - the JWT bearer grant (RFC 7523) for ID-JAGs and workload identity
//     tokens from trusted issuers;
//   - resource indicators (RFC 8707): the resource becomes the token's
//     audience;
//   - DPoP (RFC 9449) at the token endpoint, with optional nonces;
//   - token introspection (RFC 7662) and revocation (RFC 7009).
//
// Access tokens are JWTs (RFC 9068, "typ" at+jwt) signed with ES256 by
// keys published at the jwks_uri; [Server.RotateKeys] rotates them. Tests
// may also mint tokens directly with [Server.Token].
//
// Everything the server holds is bounded (see the constants), it is safe
// for concurrent use, and it never logs nor echoes secrets, codes or
// tokens in its error descriptions. It is a test fixture: it fetches the
// URLs clients give it (client metadata documents, key sets) from the
// machine it runs on, and must not be exposed to untrusted networks.
package authtest
