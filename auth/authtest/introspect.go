package authtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/auth"
)

// ErrInvalidToken reports an access token the server did not issue, or
// that expired, was revoked, or was signed by a key since dropped.
var ErrInvalidToken = errors.New("authtest: invalid access token")

// Verify checks an access token the server issued and returns what it
// says. Errors wrap ErrInvalidToken.
func (s *Server) Verify(token string) (*auth.TokenInfo, error) {
	p, err := s.verifyAccessToken(token)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(p.jws.UnsafePayloadWithoutVerification(), &raw); err != nil {
		return nil, fmt.Errorf("%w: claims", ErrInvalidToken)
	}
	cl := &p.claims
	info := &auth.TokenInfo{
		Issuer: cl.Issuer, Subject: cl.Subject, ClientID: cl.ClientID,
		Audience: []string(cl.Audience), Scopes: strings.Fields(cl.Scope),
		Expiry: cl.Expiry.Time(), ID: cl.ID, Claims: raw,
	}
	if cl.IssuedAt != nil {
		info.IssuedAt = cl.IssuedAt.Time()
	}
	if cl.Cnf != nil {
		info.ConfirmationThumbprint = cl.Cnf.JKT
	}
	return info, nil
}

func (s *Server) verifyAccessToken(token string) (*parsedJWT, error) {
	p, err := parseJWT(token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if p.typ != typAccessToken {
		return nil, fmt.Errorf("%w: typ is not at+jwt", ErrInvalidToken)
	}
	if err := p.verify(s.ownKeys()); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if p.claims.Issuer != s.URL {
		return nil, fmt.Errorf("%w: another issuer's", ErrInvalidToken)
	}
	now := s.now()
	if p.claims.Expiry == nil || !now.Before(p.claims.Expiry.Time()) {
		return nil, fmt.Errorf("%w: expired", ErrInvalidToken)
	}
	if s.revoked.has(p.claims.ID, now) {
		return nil, fmt.Errorf("%w: revoked", ErrInvalidToken)
	}
	return p, nil
}

// Revoke revokes an access token or a refresh token the server issued.
// It reports whether it knew the token.
func (s *Server) Revoke(token string) bool {
	return s.revoke(token, nil)
}

// revoke revokes token; when c is not nil, only a refresh token of c.
func (s *Server) revoke(token string, c *Client) bool {
	s.mu.Lock()
	g, ok := s.refresh[token]
	if ok && (c == nil || g.clientID == c.ID) {
		delete(s.refresh, token)
	}
	s.mu.Unlock()
	if ok {
		return true
	}
	p, err := s.verifyAccessToken(token)
	if err != nil || p.claims.ID == "" {
		return false
	}
	if c != nil && p.claims.ClientID != c.ID {
		return false
	}
	return s.revoked.add(p.claims.ID, p.claims.Expiry.Time(), s.now()) == nil
}

// handleIntrospect is token introspection (RFC 7662), for confidential
// clients.
func (s *Server) handleIntrospect(w http.ResponseWriter, r *http.Request) {
	form, e := readForm(w, r)
	if e == nil {
		var c *Client
		c, e = s.authenticateClient(r, form)
		if e == nil && (c == nil || !c.confidential()) {
			e = errInvalidClient("introspection requires client authentication")
		}
	}
	if e != nil {
		if e.code == "invalid_client" {
			e.header = http.Header{"Www-Authenticate": {`Basic realm="authtest"`}}
		}
		writeError(w, e)
		return
	}
	token := form.Get("token")
	if token == "" {
		writeError(w, errInvalidRequest("token is required"))
		return
	}
	now := s.now()
	s.mu.Lock()
	g, isRefresh := s.refresh[token]
	s.mu.Unlock()
	if isRefresh && now.Before(g.expires) {
		writeJSON(w, http.StatusOK, map[string]any{
			"active": true, "token_type": "refresh_token", "iss": s.URL,
			"sub": g.subject, "client_id": g.clientID, "scope": strings.Join(g.scopes, " "),
			"exp": g.expires.Unix(),
		}, true)
		return
	}
	p, err := s.verifyAccessToken(token)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"active": false}, true)
		return
	}
	var resp map[string]any
	if err := json.Unmarshal(p.jws.UnsafePayloadWithoutVerification(), &resp); err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"active": false}, true)
		return
	}
	resp["active"] = true
	resp["token_type"] = "Bearer"
	if p.claims.Cnf != nil && p.claims.Cnf.JKT != "" {
		resp["token_type"] = "DPoP"
	}
	writeJSON(w, http.StatusOK, resp, true)
}

// handleRevoke is token revocation (RFC 7009): a client revokes its own
// tokens; the answer is 200 whether the token was known or not.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	form, e := readForm(w, r)
	var c *Client
	if e == nil {
		c, e = s.authenticateClient(r, form)
		if e == nil && c == nil {
			e = errInvalidClient("revocation requires the client's identification")
		}
	}
	if e == nil && form.Get("token") == "" {
		e = errInvalidRequest("token is required")
	}
	if e != nil {
		writeError(w, e)
		return
	}
	s.revoke(form.Get("token"), c)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}
