package auth

import (
	"context"
	"net/http"

	"golang.org/x/oauth2"
)

// A Grant obtains an access token from an authorization server without a
// user at a browser: client credentials, enterprise-managed authorization
// or workload identity. An [Authorizer] with a Grant uses it, after
// discovery has found the authorization server, instead of the
// authorization code flow.
type Grant interface {
	// Token obtains a new token for r.Resource with r.Scopes. Errors from
	// the token endpoint are *HTTPError values.
	Token(ctx context.Context, r *GrantRequest) (*oauth2.Token, error)
}

// A GrantRequest is what a [Grant] is asked for.
type GrantRequest struct {
	// Server is the authorization server's validated metadata.
	Server *ServerMetadata
	// Resource is the canonical URI of the MCP server, sent as the
	// "resource" parameter (RFC 8707).
	Resource string
	// Scopes are the scopes to ask for; nil omits the "scope" parameter.
	Scopes []string
	// HTTPClient sends the requests to the authorization server. When
	// DPoP is in use it adds a DPoP proof to each, and retries once with
	// the server's nonce when asked to.
	HTTPClient *http.Client
	// DPoP is the key tokens are bound to, or nil for bearer tokens. The
	// HTTPClient already proves possession; a Grant needs it only to
	// check the token type it gets back.
	DPoP *DPoPKey
}
