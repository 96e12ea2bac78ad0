// Package auth will hold MCP authorization: the OAuth 2.1 client side
// (metadata discovery, dynamic and client-ID-metadata registration, PKCE,
// token refresh, step-up) and the resource-server side (bearer token
// verification, protected resource metadata, audience checks).
//
// It is empty until the authorization work lands. Like package schema, it
// will never import package mcp: the mcp and transport packages plug it in
// through small interfaces.
package auth
