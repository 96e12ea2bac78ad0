package auth

import (
	"net/url"
	"strings"
)

// ProtectedResourceMetadata is an OAuth 2.0 Protected Resource Metadata
// document (RFC 9728): what an MCP server publishes about itself so that
// clients find its authorization servers.
type ProtectedResourceMetadata struct {
	// Resource is the resource identifier: the canonical URL of the MCP
	// server, such as "https://mcp.example.com/mcp". Required.
	Resource string `json:"resource"`
	// AuthorizationServers lists the issuer URLs of the authorization
	// servers that issue tokens for this resource. MCP requires at least
	// one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// JWKSURI is the URL of the resource's own key set, if any.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// ScopesSupported lists the scopes basic use of the resource needs.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported lists how tokens may be sent; MCP allows
	// only "header".
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a human-readable name of the resource.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation is the URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	// DPoPSigningAlgValuesSupported lists the JWS algorithms accepted in
	// DPoP proofs (RFC 9449).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// DPoPBoundAccessTokensRequired says that the resource accepts only
	// DPoP-bound tokens.
	DPoPBoundAccessTokensRequired bool `json:"dpop_bound_access_tokens_required,omitempty"`
}

// ServerMetadata is an OAuth 2.0 Authorization Server Metadata document
// (RFC 8414), which OpenID Connect Discovery documents extend. Only the
// members authorization uses are named; others are ignored.
type ServerMetadata struct {
	// Issuer is the authorization server's issuer identifier. It must
	// equal the issuer the document was discovered from.
	Issuer string `json:"issuer"`
	// AuthorizationEndpoint is the URL of the authorization endpoint.
	AuthorizationEndpoint string `json:"authorization_endpoint,omitempty"`
	// TokenEndpoint is the URL of the token endpoint.
	TokenEndpoint string `json:"token_endpoint,omitempty"`
	// RegistrationEndpoint is the URL of the dynamic client registration
	// endpoint (RFC 7591), or "".
	RegistrationEndpoint string `json:"registration_endpoint,omitempty"`
	// JWKSURI is the URL of the server's signing keys.
	JWKSURI string `json:"jwks_uri,omitempty"`
	// IntrospectionEndpoint is the URL of the token introspection endpoint
	// (RFC 7662), or "".
	IntrospectionEndpoint string `json:"introspection_endpoint,omitempty"`
	// RevocationEndpoint is the URL of the token revocation endpoint
	// (RFC 7009), or "".
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	// ScopesSupported lists the scopes the server knows.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// ResponseTypesSupported lists the response types, such as "code".
	ResponseTypesSupported []string `json:"response_types_supported,omitempty"`
	// GrantTypesSupported lists the grant types, such as
	// "authorization_code". Absent means authorization_code and implicit.
	GrantTypesSupported []string `json:"grant_types_supported,omitempty"`
	// TokenEndpointAuthMethodsSupported lists the ways a client
	// authenticates at the token endpoint, such as "client_secret_basic".
	// Absent means client_secret_basic.
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// TokenEndpointAuthSigningAlgValuesSupported lists the JWS algorithms
	// accepted in private_key_jwt client assertions.
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	// CodeChallengeMethodsSupported lists the PKCE methods; MCP clients
	// require "S256".
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported says that authorization
	// responses carry "iss" (RFC 9207).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// ClientIDMetadataDocumentSupported says that the server accepts an
	// HTTPS URL as client_id and fetches the client's metadata from it.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// DPoPSigningAlgValuesSupported lists the JWS algorithms accepted in
	// DPoP proofs (RFC 9449).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// Well-known path suffixes.
const (
	wellKnownPRM    = "/.well-known/oauth-protected-resource"
	wellKnownOAuth  = "/.well-known/oauth-authorization-server"
	wellKnownOpenID = "/.well-known/openid-configuration"
)

// ProtectedResourceMetadataURLs returns the well-known URLs of the
// Protected Resource Metadata of resource, in the order a client tries
// them: the path-suffixed URL (RFC 9728 section 3.1), then the root one.
// A resource at the root has only the root URL.
func ProtectedResourceMetadataURLs(resource string) ([]string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	root := origin + wellKnownPRM
	if path == "" {
		return []string{root}, nil
	}
	return []string{origin + wellKnownPRM + path, root}, nil
}

// ServerMetadataURLs returns the URLs a client tries, in order, to
// discover the metadata of the authorization server issuer: for an issuer
// with a path, OAuth metadata with the path inserted, OpenID Connect
// discovery with the path inserted, then OpenID Connect discovery with the
// path appended; for one without, OAuth metadata then OpenID Connect
// discovery.
func ServerMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{origin + wellKnownOAuth, origin + wellKnownOpenID}, nil
	}
	return []string{
		origin + wellKnownOAuth + path,
		origin + wellKnownOpenID + path,
		origin + path + wellKnownOpenID,
	}, nil
}
