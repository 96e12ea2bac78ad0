package authtest

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/mcpkit/mcpkit/auth"
)

// Token endpoint authentication methods.
const (
	methodNone          = "none"
	methodBasic         = "client_secret_basic"
	methodPost          = "client_secret_post"
	methodPrivateKeyJWT = "private_key_jwt"
)

// A Client is an OAuth client registered with a Server.
type Client struct {
	// ID is the client_id; "" makes RegisterClient choose one.
	ID string
	// Secret is the client secret of a client_secret_basic or
	// client_secret_post client; "" makes RegisterClient choose one for
	// those methods.
	Secret string
	// AuthMethod is how the client authenticates at the token endpoint:
	// "none" (a public client), "client_secret_basic",
	// "client_secret_post" or "private_key_jwt". "" means
	// private_key_jwt when PublicKeys or JWKSURI is set,
	// client_secret_basic when Secret is, and none otherwise. A client
	// must use its method and no other.
	AuthMethod string
	// RedirectURIs are the redirect URIs of the authorization code
	// grant; a request's redirect_uri must equal one exactly.
	RedirectURIs []string
	// PublicKeys verify a private_key_jwt client's assertions:
	// *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey or
	// jose.JSONWebKey values.
	PublicKeys []crypto.PublicKey
	// JWKSURI, when set, is a private_key_jwt client's key set, fetched
	// for an assertion none of PublicKeys verifies.
	JWKSURI string
	// Scopes, when not nil, are the only scopes the client may obtain.
	Scopes []string
	// GrantTypes, when not nil, are the only grant types the client may
	// use ("authorization_code", "refresh_token", "client_credentials",
	// and the token exchange and JWT bearer URNs).
	GrantTypes []string
	// Name is the client's human-readable name.
	Name string

	keys []jose.JSONWebKey // PublicKeys and registered jwks
}

// confidential reports whether the client authenticates.
func (c *Client) confidential() bool { return c.AuthMethod != methodNone }

// mayUse reports whether the client may use grant type g.
func (c *Client) mayUse(g string) bool {
	return c.GrantTypes == nil || slices.Contains(c.GrantTypes, g)
}

// ErrInvalidClient reports a client RegisterClient refuses.
var ErrInvalidClient = errors.New("authtest: invalid client")

// ErrTooManyClients reports that Options.MaxClients clients are
// registered already.
var ErrTooManyClients = errors.New("authtest: too many clients")

// RegisterClient registers c (or replaces the client with its ID), and
// returns the registered client, with its ID, secret and method filled
// in. It fails, with an error wrapping ErrInvalidClient, for an unknown
// method or grant type, a private_key_jwt client without keys, a redirect
// URI that is not HTTPS (or HTTP on loopback, or a private-use scheme),
// a URL as ID (those name client metadata documents); and with
// ErrTooManyClients when Options.MaxClients clients are registered.
func (s *Server) RegisterClient(c Client) (Client, error) {
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	c.Scopes = slices.Clone(c.Scopes)
	c.GrantTypes = slices.Clone(c.GrantTypes)
	c.PublicKeys = slices.Clone(c.PublicKeys)
	if c.AuthMethod == "" {
		switch {
		case len(c.PublicKeys) > 0 || c.JWKSURI != "":
			c.AuthMethod = methodPrivateKeyJWT
		case c.Secret != "":
			c.AuthMethod = methodBasic
		default:
			c.AuthMethod = methodNone
		}
	}
	if !slices.Contains(authMethods, c.AuthMethod) {
		return Client{}, fmt.Errorf("%w: unknown token_endpoint_auth_method %q", ErrInvalidClient, c.AuthMethod)
	}
	switch c.AuthMethod {
	case methodBasic, methodPost:
		if c.Secret == "" {
			c.Secret = rand.Text() + rand.Text()
		}
	case methodPrivateKeyJWT:
		c.keys = append(toJWKs(c.PublicKeys), c.keys...)
		if len(c.keys) == 0 && c.JWKSURI == "" {
			return Client{}, fmt.Errorf("%w: private_key_jwt needs keys or a jwks_uri", ErrInvalidClient)
		}
		if err := checkKeys(c.keys); err != nil {
			return Client{}, fmt.Errorf("%w: %v", ErrInvalidClient, err)
		}
		if c.JWKSURI != "" {
			if err := auth.CheckURL(c.JWKSURI); err != nil {
				return Client{}, fmt.Errorf("%w: jwks_uri: %w", ErrInvalidClient, err)
			}
		}
		c.Secret = ""
	default:
		c.Secret = ""
	}
	for _, u := range c.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return Client{}, fmt.Errorf("%w: %w", ErrInvalidClient, err)
		}
	}
	for _, g := range c.GrantTypes {
		if !slices.Contains(grantTypes, g) {
			return Client{}, fmt.Errorf("%w: unsupported grant type %q", ErrInvalidClient, g)
		}
	}
	if c.ID == "" {
		c.ID = strings.ToLower(rand.Text())
	}
	if isURLClientID(c.ID) {
		return Client{}, fmt.Errorf("%w: a URL client_id names a client metadata document", ErrInvalidClient)
	}
	max := s.opts.MaxClients
	if max <= 0 {
		max = DefaultMaxClients
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clients[c.ID]; !ok && len(s.clients) >= max {
		return Client{}, fmt.Errorf("%w: %d are registered", ErrTooManyClients, max)
	}
	stored := c
	s.clients[c.ID] = &stored
	return c, nil
}

// errRedirectURI reports a redirect URI that cannot be registered.
var errRedirectURI = errors.New("invalid redirect URI")

// checkRedirectURI accepts an absolute URI without a fragment: HTTPS, or
// HTTP on loopback, or a private-use scheme of a native application.
// Errors wrap errRedirectURI.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("%w: not an absolute URI", errRedirectURI)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("%w: it has a fragment", errRedirectURI)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if err := auth.CheckURL(raw); err != nil {
			return fmt.Errorf("%w: %w", errRedirectURI, err)
		}
	case "javascript", "data", "file", "vbscript":
		return fmt.Errorf("%w: scheme %q is not allowed", errRedirectURI, u.Scheme)
	}
	return nil
}

// isURLClientID reports whether id is a URL, naming a client metadata
// document.
func isURLClientID(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// A metadataClient is a client described by a fetched client metadata
// document.
type metadataClient struct {
	client  *Client
	expires time.Time
}

// client returns the client with id: a registered one or, for a URL, the
// client its metadata document describes (fetched, or cached for
// MetadataClientTTL).
func (s *Server) client(ctx context.Context, id string) (*Client, error) {
	if id == "" {
		return nil, errors.New("no client_id")
	}
	now := s.now()
	s.mu.Lock()
	c, ok := s.clients[id]
	if !ok {
		if m, found := s.metaCache[id]; found && now.Before(m.expires) {
			c, ok = m.client, true
		}
	}
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	if !isURLClientID(id) {
		return nil, errors.New("unknown client")
	}
	c, err := s.fetchMetadataClient(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.metaCache) >= MaxCachedMetadataClients {
		for k, m := range s.metaCache {
			if !now.Before(m.expires) {
				delete(s.metaCache, k)
			}
		}
	}
	if len(s.metaCache) < MaxCachedMetadataClients {
		s.metaCache[id] = &metadataClient{client: c, expires: now.Add(MetadataClientTTL)}
	}
	return c, nil
}

// clientMetadata is a client metadata document or a dynamic client
// registration request (RFC 7591 section 2).
type clientMetadata struct {
	ClientID      string              `json:"client_id,omitempty"`
	RedirectURIs  []string            `json:"redirect_uris,omitempty"`
	AuthMethod    string              `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes    []string            `json:"grant_types,omitempty"`
	ResponseTypes []string            `json:"response_types,omitempty"`
	ClientName    string              `json:"client_name,omitempty"`
	ClientURI     string              `json:"client_uri,omitempty"`
	Scope         string              `json:"scope,omitempty"`
	JWKS          *jose.JSONWebKeySet `json:"jwks,omitempty"`
	JWKSURI       string              `json:"jwks_uri,omitempty"`
	SoftwareID    string              `json:"software_id,omitempty"`
	SoftwareVer   string              `json:"software_version,omitempty"`
}

// toClient validates m and makes the Client it describes. defaultMethod
// is the method when m names none.
func (m *clientMetadata) toClient(defaultMethod string) (*Client, error) {
	c := &Client{
		ID:           m.ClientID,
		AuthMethod:   m.AuthMethod,
		RedirectURIs: m.RedirectURIs,
		GrantTypes:   m.GrantTypes,
		Name:         m.ClientName,
		JWKSURI:      m.JWKSURI,
	}
	if c.AuthMethod == "" {
		c.AuthMethod = defaultMethod
	}
	if !slices.Contains(authMethods, c.AuthMethod) {
		return nil, fmt.Errorf("unsupported token_endpoint_auth_method %q", c.AuthMethod)
	}
	if m.JWKS != nil && m.JWKSURI != "" {
		return nil, errors.New("jwks and jwks_uri are mutually exclusive")
	}
	if m.JWKS != nil {
		if err := checkKeys(m.JWKS.Keys); err != nil {
			return nil, fmt.Errorf("jwks: %w", err)
		}
		c.keys = m.JWKS.Keys
	}
	if c.AuthMethod == methodPrivateKeyJWT && len(c.keys) == 0 && c.JWKSURI == "" {
		return nil, errors.New("private_key_jwt needs jwks or jwks_uri")
	}
	if c.JWKSURI != "" {
		if err := auth.CheckURL(c.JWKSURI); err != nil {
			return nil, fmt.Errorf("jwks_uri: %w", err)
		}
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return nil, fmt.Errorf("unsupported response type %q", rt)
		}
	}
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range c.GrantTypes {
		if !slices.Contains(grantTypes, g) {
			return nil, fmt.Errorf("unsupported grant type %q", g)
		}
	}
	if slices.Contains(c.GrantTypes, "authorization_code") && len(c.RedirectURIs) == 0 {
		return nil, fmt.Errorf("%w: the authorization_code grant needs redirect_uris", errRedirectURI)
	}
	for _, u := range c.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// fetchMetadataClient fetches and validates the client metadata document
// at id.
func (s *Server) fetchMetadataClient(ctx context.Context, id string) (*Client, error) {
	u, err := url.Parse(id)
	if err != nil || auth.CheckURL(id) != nil {
		return nil, errors.New("client_id URL must be https (or http on loopback)")
	}
	if u.Path == "" || u.Path == "/" || u.RawQuery != "" {
		return nil, errors.New("client_id URL must have a path and no query")
	}
	var m clientMetadata
	if err := s.fetchJSON(ctx, id, &m); err != nil {
		return nil, fmt.Errorf("client metadata document: %w", err)
	}
	if m.ClientID != id {
		return nil, errors.New("client metadata document's client_id is not its URL")
	}
	if m.AuthMethod != "" && m.AuthMethod != methodNone && m.AuthMethod != methodPrivateKeyJWT {
		return nil, errors.New("a client metadata document cannot use a shared secret")
	}
	c, err := m.toClient(methodNone)
	if err != nil {
		return nil, fmt.Errorf("client metadata document: %w", err)
	}
	return c, nil
}

// registrationResponse is the answer to a registration (RFC 7591
// section 3.2.1).
type registrationResponse struct {
	clientMetadata
	ClientSecret          string `json:"client_secret,omitempty"`
	ClientIDIssuedAt      int64  `json:"client_id_issued_at"`
	ClientSecretExpiresAt *int64 `json:"client_secret_expires_at,omitempty"`
}

// handleRegister is dynamic client registration (RFC 7591).
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var m clientMetadata
	r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBody)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&m); err != nil {
		writeError(w, &oauthError{status: http.StatusBadRequest, code: "invalid_client_metadata", description: "the body is not a JSON object of client metadata (or is larger than 64 KiB)"})
		return
	}
	if m.ClientID != "" {
		writeError(w, &oauthError{status: http.StatusBadRequest, code: "invalid_client_metadata", description: "client_id is assigned by the server"})
		return
	}
	c, err := m.toClient(methodBasic) // RFC 7591 section 2: the default
	if err != nil {
		code := "invalid_client_metadata"
		if errors.Is(err, errRedirectURI) {
			code = "invalid_redirect_uri"
		}
		writeError(w, &oauthError{status: http.StatusBadRequest, code: code, description: err.Error()})
		return
	}
	if m.Scope != "" {
		c.Scopes = nil // the requested scope is recorded, not enforced
	}
	reg, err := s.RegisterClient(*c)
	if errors.Is(err, ErrTooManyClients) {
		writeError(w, errUnavailable("the server holds too many clients"))
		return
	}
	if err != nil {
		writeError(w, &oauthError{status: http.StatusBadRequest, code: "invalid_client_metadata", description: err.Error()})
		return
	}
	resp := registrationResponse{clientMetadata: m, ClientIDIssuedAt: s.now().Unix()}
	resp.ClientID = reg.ID
	resp.AuthMethod = reg.AuthMethod
	resp.GrantTypes = reg.GrantTypes
	if len(resp.ResponseTypes) == 0 && slices.Contains(reg.GrantTypes, "authorization_code") {
		resp.ResponseTypes = []string{"code"}
	}
	if reg.Secret != "" {
		var never int64
		resp.ClientSecret = reg.Secret
		resp.ClientSecretExpiresAt = &never
	}
	writeJSON(w, http.StatusCreated, resp, true)
}
