package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"golang.org/x/oauth2"
)

// ClientMetadata is the client metadata an [Authorizer] sends in a
// dynamic client registration request (RFC 7591 section 2). Empty
// members take defaults: ClientName "MCP client", RedirectURIs the
// Authorizer's RedirectURL, GrantTypes authorization_code and
// refresh_token, ResponseTypes code, TokenEndpointAuthMethod from what
// the authorization server supports (none first), ApplicationType
// "native" for a loopback or non-HTTP redirect URL and "web" otherwise.
type ClientMetadata struct {
	// ClientName is the name shown to the user at the authorization
	// server.
	ClientName string `json:"client_name,omitempty"`
	// ClientURI is the URL of the client's home page.
	ClientURI string `json:"client_uri,omitempty"`
	// LogoURI is the URL of the client's logo.
	LogoURI string `json:"logo_uri,omitempty"`
	// RedirectURIs are the client's redirect URIs.
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// GrantTypes are the grant types the client uses; without
	// refresh_token, offline_access is never asked for.
	GrantTypes []string `json:"grant_types,omitempty"`
	// ResponseTypes are the response types the client uses.
	ResponseTypes []string `json:"response_types,omitempty"`
	// TokenEndpointAuthMethod is how the client means to authenticate at
	// the token endpoint (AuthMethodNone and the like).
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// ApplicationType is "native" or "web" (OpenID Connect Dynamic
	// Client Registration; required by MCP).
	ApplicationType string `json:"application_type,omitempty"`
	// Scope is the space-separated scopes the client may ask for.
	Scope string `json:"scope,omitempty"`
	// SoftwareID identifies the client software across registrations.
	SoftwareID string `json:"software_id,omitempty"`
	// SoftwareVersion is the client software's version.
	SoftwareVersion string `json:"software_version,omitempty"`
	// DPoPBoundAccessTokens asks for DPoP-bound tokens always (RFC 9449
	// section 5.2); it is set when the Authorizer has a DPoP key.
	DPoPBoundAccessTokens bool `json:"dpop_bound_access_tokens,omitempty"`
}

// registrationResponse is the part of an RFC 7591 answer the client keeps.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	RedirectURIs            []string `json:"redirect_uris"`
}

// clientFor returns the client's identity at the authorization server of
// d, in the specification's order: pre-registered for its issuer; a
// Client ID Metadata Document URL when the server accepts one; a stored
// registration; dynamic client registration.
func (a *Authorizer) clientFor(ctx context.Context, meta *ServerMetadata) (*ClientInfo, error) {
	if a.PreRegistered != nil {
		if c := a.PreRegistered(meta.Issuer); c != nil && c.ClientID != "" {
			return c, nil
		}
	}
	if meta.ClientIDMetadataDocumentSupported && isMetadataDocumentURL(a.ClientMetadataURL) {
		return &ClientInfo{ClientID: a.ClientMetadataURL, TokenEndpointAuthMethod: AuthMethodNone}, nil
	}
	store := a.store()
	stored, err := store.LoadClient(ctx, meta.Issuer)
	if err != nil {
		return nil, err
	}
	if stored != nil && stored.ClientID != "" && (a.RedirectURL == "" || slices.Contains(stored.RedirectURIs, a.RedirectURL)) {
		return stored, nil
	}
	if meta.RegistrationEndpoint == "" {
		return nil, ErrNoClientIdentity
	}
	c, err := a.register(ctx, meta)
	if err != nil {
		return nil, err
	}
	if err := store.SaveClient(ctx, meta.Issuer, c); err != nil {
		return nil, err
	}
	return c, nil
}

// isMetadataDocumentURL reports whether s can be a Client ID Metadata
// Document URL: HTTPS, with a path.
func isMetadataDocumentURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.User == nil && u.Fragment == ""
}

// registrationMetadata returns the metadata sent to register at meta.
func (a *Authorizer) registrationMetadata(meta *ServerMetadata) ClientMetadata {
	m := a.Registration
	m.RedirectURIs = slices.Clone(m.RedirectURIs)
	if m.ClientName == "" {
		m.ClientName = "MCP client"
	}
	if len(m.RedirectURIs) == 0 && a.RedirectURL != "" {
		m.RedirectURIs = []string{a.RedirectURL}
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	if m.TokenEndpointAuthMethod == "" {
		switch {
		case supportsAuthMethod(meta, AuthMethodNone):
			m.TokenEndpointAuthMethod = AuthMethodNone
		case supportsAuthMethod(meta, AuthMethodClientSecretBasic):
			m.TokenEndpointAuthMethod = AuthMethodClientSecretBasic
		case supportsAuthMethod(meta, AuthMethodClientSecretPost):
			m.TokenEndpointAuthMethod = AuthMethodClientSecretPost
		default:
			m.TokenEndpointAuthMethod = AuthMethodClientSecretBasic
		}
	}
	if a.DPoP != nil {
		m.DPoPBoundAccessTokens = true
	}
	if m.ApplicationType == "" {
		m.ApplicationType = "web"
		if len(m.RedirectURIs) > 0 {
			if u, err := url.Parse(m.RedirectURIs[0]); err == nil {
				if (u.Scheme != "https" && u.Scheme != "http") || IsLoopback(u.Hostname()) {
					m.ApplicationType = "native"
				}
			}
		}
	}
	return m
}

// register performs dynamic client registration (RFC 7591).
func (a *Authorizer) register(ctx context.Context, meta *ServerMetadata) (*ClientInfo, error) {
	m := a.registrationMetadata(meta)
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var r registrationResponse
	if _, err := doJSON(a.httpClient(), req, &r); err != nil {
		return nil, err
	}
	if r.ClientID == "" {
		return nil, fmt.Errorf("auth: the registration answer from %s has no client_id", redactURL(meta.RegistrationEndpoint))
	}
	c := &ClientInfo{
		ClientID:                r.ClientID,
		ClientSecret:            r.ClientSecret,
		TokenEndpointAuthMethod: r.TokenEndpointAuthMethod,
		RedirectURIs:            r.RedirectURIs,
	}
	if c.TokenEndpointAuthMethod == "" {
		c.TokenEndpointAuthMethod = m.TokenEndpointAuthMethod
	}
	if len(c.RedirectURIs) == 0 {
		c.RedirectURIs = m.RedirectURIs
	}
	a.log(ctx, "auth: registered a client", "issuer", meta.Issuer, "method", c.TokenEndpointAuthMethod)
	return c, nil
}

// supportsAuthMethod reports whether the server accepts method at its
// token endpoint; an absent list means client_secret_basic only
// (RFC 8414 section 2).
func supportsAuthMethod(meta *ServerMetadata, method string) bool {
	if len(meta.TokenEndpointAuthMethodsSupported) == 0 {
		return method == AuthMethodClientSecretBasic
	}
	return slices.Contains(meta.TokenEndpointAuthMethodsSupported, method)
}

// authMethod returns how c authenticates at meta's token endpoint: its
// registered method, else one the server supports for a client with (or
// without) a secret.
func authMethod(c *ClientInfo, meta *ServerMetadata) string {
	if c.TokenEndpointAuthMethod != "" {
		return c.TokenEndpointAuthMethod
	}
	switch {
	case c.ClientSecret == "":
		return AuthMethodNone
	case supportsAuthMethod(meta, AuthMethodClientSecretBasic):
		return AuthMethodClientSecretBasic
	case supportsAuthMethod(meta, AuthMethodClientSecretPost):
		return AuthMethodClientSecretPost
	case supportsAuthMethod(meta, AuthMethodNone):
		return AuthMethodNone
	}
	return AuthMethodClientSecretBasic
}

// clientAuthFor returns how c authenticates at meta's token endpoint, in
// the code exchange and in refresh: client_secret_basic or
// client_secret_post when authMethod says so, else the client_id alone
// (none), whatever other method c registered.
func clientAuthFor(c *ClientInfo, meta *ServerMetadata) *ClientAuth {
	ca := &ClientAuth{ClientID: c.ClientID, AuthMethod: AuthMethodNone}
	switch m := authMethod(c, meta); m {
	case AuthMethodClientSecretBasic, AuthMethodClientSecretPost:
		ca.ClientSecret, ca.AuthMethod = c.ClientSecret, m
	}
	return ca
}

// oauthConfig returns the oauth2 configuration for c at meta.
func oauthConfig(c *ClientInfo, meta *ServerMetadata, redirectURL string, scopes []string) *oauth2.Config {
	cfg := &oauth2.Config{
		ClientID:    c.ClientID,
		RedirectURL: redirectURL,
		Scopes:      scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:  meta.AuthorizationEndpoint,
			TokenURL: meta.TokenEndpoint,
		},
	}
	ca := clientAuthFor(c, meta)
	cfg.ClientSecret = ca.ClientSecret
	cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams // client_secret_post, or none: the client_id alone
	if ca.AuthMethod == AuthMethodClientSecretBasic {
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	return cfg
}
