package authtest

import (
	"crypto/rand"
	"errors"
	"maps"
	"strings"
	"time"
)

// A TokenRequest describes an access token for Server.Token to mint.
type TokenRequest struct {
	// Subject is "sub"; "" means Options.Subject (or "user").
	Subject string
	// ClientID is "client_id"; "" leaves it out.
	ClientID string
	// Scopes are the granted scopes ("scope").
	Scopes []string
	// Resource is the audience ("aud"): the canonical URL of the MCP
	// server; "" leaves "aud" out.
	Resource string
	// DPoPThumbprint, when set, binds the token to a DPoP key
	// ("cnf.jkt").
	DPoPThumbprint string
	// TTL is the token's lifetime; zero means Options.AccessTokenTTL. A
	// negative TTL makes a token that expired that long ago.
	TTL time.Duration
	// Claims are extra claims; they cannot replace the ones above, nor
	// "iss", "iat", "exp" and "jti".
	Claims map[string]any
}

// Token mints an access token as the token endpoint would issue it,
// without a flow: a JWT of type at+jwt signed by the current key.
func (s *Server) Token(r TokenRequest) (string, error) {
	subject := r.Subject
	if subject == "" {
		subject = s.opts.Subject
	}
	ttl := r.TTL
	if ttl == 0 {
		ttl = s.opts.AccessTokenTTL
	}
	if ttl == 0 {
		ttl = DefaultAccessTokenTTL
	}
	now := s.now()
	cl := maps.Clone(r.Claims)
	if cl == nil {
		cl = map[string]any{}
	}
	cl["iss"] = s.URL
	cl["sub"] = subject
	cl["iat"] = now.Unix()
	cl["exp"] = now.Add(ttl).Unix()
	cl["jti"] = rand.Text()
	cl["scope"] = strings.Join(r.Scopes, " ")
	delete(cl, "client_id")
	delete(cl, "aud")
	delete(cl, "cnf")
	if r.ClientID != "" {
		cl["client_id"] = r.ClientID
	}
	if r.Resource != "" {
		cl["aud"] = r.Resource
	}
	if r.DPoPThumbprint != "" {
		cl["cnf"] = map[string]string{"jkt": r.DPoPThumbprint}
	}
	return s.sign(typAccessToken, cl)
}

// An IDTokenRequest describes an OpenID Connect ID token for
// Server.IDToken to mint.
type IDTokenRequest struct {
	// Subject is "sub"; "" means Options.Subject (or "user").
	Subject string
	// Audience is "aud": the client_id of the client the ID token is
	// for. Required.
	Audience string
	// Email is "email", or "" to leave it out.
	Email string
	// TTL is the token's lifetime; zero means one hour, and a negative
	// TTL makes a token that expired that long ago.
	TTL time.Duration
}

// IDToken mints an ID token, as an identity provider issues at login: a
// client presents it in token exchange for an ID-JAG (to this server, or
// to another that trusts this one).
func (s *Server) IDToken(r IDTokenRequest) (string, error) {
	if r.Audience == "" {
		return "", errors.New("authtest: an ID token needs an audience")
	}
	subject := r.Subject
	if subject == "" {
		subject = s.opts.Subject
	}
	ttl := r.TTL
	if ttl == 0 {
		ttl = time.Hour
	}
	now := s.now()
	cl := map[string]any{
		"iss": s.URL, "sub": subject, "aud": r.Audience,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(), "jti": rand.Text(),
	}
	if r.Email != "" {
		cl["email"] = r.Email
	}
	return s.sign("JWT", cl)
}

// An IDJAGRequest describes an Identity Assertion JWT Authorization
// Grant for Server.IDJAG to mint.
type IDJAGRequest struct {
	// Subject is "sub"; "" means Options.Subject (or "user").
	Subject string
	// Audience is "aud": the issuer of the authorization server the
	// grant is for. Required.
	Audience string
	// ClientID is "client_id": the client's identifier at that
	// authorization server. Required.
	ClientID string
	// Resource is "resource", or "" to leave it out.
	Resource string
	// Scopes are "scope".
	Scopes []string
	// Email is "email", or "" to leave it out.
	Email string
	// TTL is the grant's lifetime; zero means IDJAGTTL, and a negative
	// TTL makes a grant that expired that long ago.
	TTL time.Duration
}

// IDJAG mints an ID-JAG (typ oauth-id-jag+jwt) as this server's token
// exchange issues it, for a client to present in the JWT bearer grant to
// an authorization server that trusts this one.
func (s *Server) IDJAG(r IDJAGRequest) (string, error) {
	if r.Audience == "" || r.ClientID == "" {
		return "", errors.New("authtest: an ID-JAG needs an audience and a client_id")
	}
	subject := r.Subject
	if subject == "" {
		subject = s.opts.Subject
	}
	ttl := r.TTL
	if ttl == 0 {
		ttl = IDJAGTTL
	}
	now := s.now()
	cl := map[string]any{
		"iss": s.URL, "sub": subject, "aud": r.Audience, "client_id": r.ClientID,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(), "jti": rand.Text(),
	}
	if r.Resource != "" {
		cl["resource"] = r.Resource
	}
	if len(r.Scopes) > 0 {
		cl["scope"] = strings.Join(r.Scopes, " ")
	}
	if r.Email != "" {
		cl["email"] = r.Email
	}
	return s.sign(typIDJAG, cl)
}
