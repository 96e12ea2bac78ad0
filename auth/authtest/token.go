package authtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Grant type and token type URNs.
const (
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer       = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDToken     = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG       = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	assertionTypeJWT     = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	typIDJAG             = "oauth-id-jag+jwt"
	typAccessToken       = "at+jwt"
)

// A tokenRequest is a parsed token request.
type tokenRequest struct {
	r      *http.Request
	form   url.Values
	client *Client // the authenticated client, or nil
	jkt    string  // the DPoP key's thumbprint, or ""
}

// readForm reads a bounded, form-encoded POST body in which no parameter
// appears twice.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *oauthError) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/x-www-form-urlencoded" {
		return nil, errInvalidRequest("the body must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBody)
	if err := r.ParseForm(); err != nil {
		return nil, errInvalidRequest("the body is not a form of at most 64 KiB")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, errInvalidRequest("parameter " + quoteShort(k) + " appears more than once")
		}
	}
	return r.PostForm, nil
}

// handleToken is the token endpoint.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	form, e := readForm(w, r)
	if e == nil {
		var resp map[string]any
		resp, e = s.token(r, form)
		if e == nil {
			if s.opts.RequireDPoPNonce {
				w.Header().Set("DPoP-Nonce", s.currentNonce())
			}
			writeJSON(w, http.StatusOK, resp, true)
			return
		}
	}
	if e.code == "invalid_client" && r.Header.Get("Authorization") != "" {
		if e.header == nil {
			e.header = http.Header{}
		}
		e.header.Set("WWW-Authenticate", `Basic realm="authtest"`)
	}
	writeError(w, e)
}

// token serves a token request.
func (s *Server) token(r *http.Request, form url.Values) (map[string]any, *oauthError) {
	grant := form.Get("grant_type")
	if grant == "" {
		return nil, errInvalidRequest("grant_type is required")
	}
	if !slices.Contains(grantTypes, grant) {
		return nil, &oauthError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: "grant_type " + quoteShort(grant) + " is not supported"}
	}
	// DPoP first: a nonce challenge must come before anything is
	// consumed (a code, an assertion's jti).
	jkt, e := s.checkDPoP(r)
	if e != nil {
		return nil, e
	}
	client, e := s.authenticateClient(r, form)
	if e != nil {
		return nil, e
	}
	if client == nil && grant != grantJWTBearer {
		return nil, errInvalidClient("client authentication (or client_id, for a public client) is required")
	}
	if client != nil && !client.mayUse(grant) {
		return nil, &oauthError{status: http.StatusBadRequest, code: "unauthorized_client", description: "the client may not use this grant type"}
	}
	tr := &tokenRequest{r: r, form: form, client: client, jkt: jkt}
	switch grant {
	case "authorization_code":
		return s.grantCode(tr)
	case "refresh_token":
		return s.grantRefresh(tr)
	case "client_credentials":
		return s.grantClientCredentials(tr)
	case grantTokenExchange:
		return s.grantTokenExchange(tr)
	default: // grantJWTBearer
		return s.grantJWTBearer(tr)
	}
}

// authenticateClient authenticates the client of a token, introspection
// or revocation request. It returns nil and no error when the request
// names no client at all.
func (s *Server) authenticateClient(r *http.Request, form url.Values) (*Client, *oauthError) {
	ctx := r.Context()
	id := form.Get("client_id")
	var method, secret string
	used := 0
	if user, pass, ok := r.BasicAuth(); ok {
		uid, err1 := url.QueryUnescape(user)
		upass, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil {
			return nil, errInvalidClient("malformed Basic credentials")
		}
		if id != "" && id != uid {
			return nil, errInvalidRequest("client_id differs from the Basic credentials")
		}
		id, secret, method = uid, upass, methodBasic
		used++
	} else if r.Header.Get("Authorization") != "" {
		return nil, errInvalidClient("unsupported Authorization scheme")
	}
	if form.Has("client_secret") {
		secret, method = form.Get("client_secret"), methodPost
		used++
	}
	assertion := form.Get("client_assertion")
	if assertion != "" || form.Has("client_assertion_type") {
		if form.Get("client_assertion_type") != assertionTypeJWT {
			return nil, errInvalidRequest("client_assertion_type must be " + assertionTypeJWT)
		}
		method = methodPrivateKeyJWT
		used++
	}
	if used > 1 {
		return nil, errInvalidRequest("more than one client authentication method")
	}
	var p *parsedJWT
	if method == methodPrivateKeyJWT {
		var err error
		if p, err = parseJWT(assertion); err != nil {
			return nil, errInvalidClient("client_assertion: " + err.Error())
		}
		if id == "" {
			id = p.claims.Issuer
		}
	}
	if method == "" {
		if id == "" {
			return nil, nil
		}
		method = methodNone
	}
	c, err := s.client(ctx, id)
	if err != nil {
		return nil, errInvalidClient("client " + quoteShort(id) + ": " + err.Error())
	}
	if c.AuthMethod != method {
		return nil, errInvalidClient("the client must authenticate with " + c.AuthMethod + ", not " + method)
	}
	switch method {
	case methodBasic, methodPost:
		if subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1 {
			return nil, errInvalidClient("wrong client secret")
		}
	case methodPrivateKeyJWT:
		if err := s.checkClientAssertion(ctx, c, p); err != nil {
			return nil, errInvalidClient("client_assertion: " + err.Error())
		}
	}
	return c, nil
}

// checkClientAssertion checks a private_key_jwt assertion (RFC 7523
// section 3, as RFC 7521 section 4.2 uses it): signed by the client's
// key, iss and sub the client_id, aud the token endpoint or the issuer,
// unexpired, and its jti not seen before.
func (s *Server) checkClientAssertion(ctx context.Context, c *Client, p *parsedJWT) error {
	if err := s.verifyClientKey(ctx, c, p); err != nil {
		return err
	}
	cl := &p.claims
	if cl.Issuer != c.ID || cl.Subject != c.ID {
		return errors.New("iss and sub must be the client_id")
	}
	if !cl.hasAudience(s.URL+pathToken, s.URL, s.URL+"/") {
		return errors.New("aud must be the token endpoint or the issuer")
	}
	return s.useAssertion(cl)
}

// verifyClientKey verifies p with the client's keys, fetching its key
// set if need be.
func (s *Server) verifyClientKey(ctx context.Context, c *Client, p *parsedJWT) error {
	if len(c.keys) == 0 && c.JWKSURI == "" {
		return errors.New("the client has no keys")
	}
	if p.verify(c.keys) == nil {
		return nil
	}
	if c.JWKSURI != "" {
		set, err := s.fetchKeySet(ctx, c.JWKSURI)
		if err != nil {
			return err
		}
		return p.verify(set.Keys)
	}
	return errNoKey
}

// useAssertion checks an assertion's times and records its jti, refusing
// one seen before.
func (s *Server) useAssertion(cl *claims) error {
	now := s.now()
	if err := cl.checkTimes(now, MaxAssertionLifetime); err != nil {
		return err
	}
	if cl.ID == "" {
		return errors.New("no jti")
	}
	switch s.assertionIDs.add(cl.Issuer+" "+cl.ID, cl.Expiry.Time().Add(clockSkew), now) {
	case nil:
		return nil
	case errSeen:
		return errors.New("jti was used before")
	}
	return errors.New("too many assertions to remember; try later")
}

// grantCode redeems an authorization code (with its PKCE verifier).
func (s *Server) grantCode(tr *tokenRequest) (map[string]any, *oauthError) {
	code := tr.form.Get("code")
	if code == "" {
		return nil, errInvalidRequest("code is required")
	}
	s.mu.Lock()
	ac, ok := s.codes[code]
	delete(s.codes, code) // single use, whatever follows
	s.mu.Unlock()
	now := s.now()
	if !ok || !now.Before(ac.expires) {
		return nil, errInvalidGrant("the code is invalid, expired or already used")
	}
	if ac.clientID != tr.client.ID {
		return nil, errInvalidGrant("the code was issued to another client")
	}
	// redirect_uri must repeat the authorization request's, if that had
	// one (RFC 6749 section 4.1.3).
	if rr := tr.form.Get("redirect_uri"); rr != ac.redirectURI && (ac.redirectGiven || rr != "") {
		return nil, errInvalidGrant("redirect_uri does not match the authorization request")
	}
	verifier := tr.form.Get("code_verifier")
	if len(verifier) < 43 || len(verifier) > 128 || strings.Trim(verifier, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") != "" {
		return nil, errInvalidGrant("code_verifier is missing or malformed")
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(ac.challenge)) != 1 {
		return nil, errInvalidGrant("code_verifier does not match the code_challenge")
	}
	resource := ac.resource
	if rr := tr.form.Get("resource"); rr != "" {
		if e := checkResource(rr); e != nil {
			return nil, e
		}
		if resource != "" && rr != resource {
			return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource differs from the authorization request's"}
		}
		resource = rr
	}
	scopes, e := narrowScopes(tr.form.Get("scope"), ac.scopes)
	if e != nil {
		return nil, e
	}
	if ac.dpopJKT != "" && tr.jkt != ac.dpopJKT {
		return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_dpop_proof", description: "the proof's key is not the dpop_jkt of the authorization request"}
	}
	g := &issued{subject: ac.subject, clientID: tr.client.ID, scopes: scopes, resource: resource, jkt: tr.jkt}
	return s.issue(g, tr.client)
}

// narrowScopes returns the requested scopes, which must be among
// granted, or granted when none are requested.
func narrowScopes(requested string, granted []string) ([]string, *oauthError) {
	req := strings.Fields(requested)
	if len(req) == 0 {
		return granted, nil
	}
	for _, sc := range req {
		if !slices.Contains(granted, sc) {
			return nil, errInvalidScope("scope " + quoteShort(sc) + " was not granted")
		}
	}
	return req, nil
}

// A refreshGrant is what a refresh token stands for.
type refreshGrant struct {
	issued
	expires time.Time
	bound   bool // the token is bound to the DPoP key jkt
}

// grantRefresh redeems a refresh token, which is rotated.
func (s *Server) grantRefresh(tr *tokenRequest) (map[string]any, *oauthError) {
	rt := tr.form.Get("refresh_token")
	if rt == "" {
		return nil, errInvalidRequest("refresh_token is required")
	}
	g, e := s.spendRefresh(tr, rt)
	if e != nil {
		return nil, e
	}
	return s.issue(g, tr.client)
}

// spendRefresh checks the refresh token rt and, when the request may
// use it, spends it and returns what to issue.
func (s *Server) spendRefresh(tr *tokenRequest, rt string) (*issued, *oauthError) {
	// Every check comes before the token is spent: a request that fails
	// leaves it usable.
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.refresh[rt]
	if !ok || !s.now().Before(g.expires) || g.clientID != tr.client.ID {
		return nil, errInvalidGrant("the refresh token is invalid, expired, used or another client's")
	}
	if g.bound && tr.jkt != g.jkt {
		return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_dpop_proof", description: "the refresh token is bound to another DPoP key"}
	}
	scopes, e := narrowScopes(tr.form.Get("scope"), g.scopes)
	if e != nil {
		return nil, e
	}
	if rr := tr.form.Get("resource"); rr != "" && rr != g.resource {
		return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource differs from the grant's"}
	}
	delete(s.refresh, rt) // rotation: each refresh token is used once
	n := g.issued
	n.scopes, n.jkt = scopes, tr.jkt
	n.refreshScopes = g.scopes
	return &n, nil
}

// grantClientCredentials issues a token to a confidential client on its
// own behalf.
func (s *Server) grantClientCredentials(tr *tokenRequest) (map[string]any, *oauthError) {
	if !tr.client.confidential() {
		return nil, &oauthError{status: http.StatusBadRequest, code: "unauthorized_client", description: "a public client cannot use client_credentials"}
	}
	scopes := strings.Fields(tr.form.Get("scope"))
	if e := s.checkScopes(tr.client, scopes); e != nil {
		return nil, e
	}
	resource := tr.form.Get("resource")
	if e := checkResource(resource); e != nil {
		return nil, e
	}
	g := &issued{subject: tr.client.ID, clientID: tr.client.ID, scopes: scopes, resource: resource, jkt: tr.jkt, noRefresh: true}
	return s.issue(g, tr.client)
}

// issued describes a token to issue.
type issued struct {
	subject, clientID string
	scopes            []string
	resource          string
	jkt               string
	noRefresh         bool
	refreshScopes     []string // the scopes a refresh token carries, when not scopes
}

// issue signs an access token for g and, when the client may refresh, a
// refresh token; it returns the token response.
func (s *Server) issue(g *issued, c *Client) (map[string]any, *oauthError) {
	ttl := s.opts.AccessTokenTTL
	if ttl <= 0 {
		ttl = DefaultAccessTokenTTL
	}
	at, err := s.accessToken(g.subject, g.clientID, g.scopes, g.resource, g.jkt, ttl)
	if err != nil {
		return nil, errUnavailable("signing failed")
	}
	resp := map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int64(ttl / time.Second),
		"scope":        strings.Join(g.scopes, " "),
	}
	if g.jkt != "" {
		resp["token_type"] = "DPoP"
	}
	if g.noRefresh || c == nil || !c.mayUse("refresh_token") {
		return resp, nil
	}
	rttl := s.opts.RefreshTokenTTL
	if rttl <= 0 {
		rttl = DefaultRefreshTokenTTL
	}
	now := s.now()
	rg := &refreshGrant{issued: *g, expires: now.Add(rttl), bound: g.jkt != "" && !c.confidential()}
	if g.refreshScopes != nil {
		rg.scopes = g.refreshScopes
	}
	rg.refreshScopes = nil
	rt := rand.Text() + rand.Text()
	s.mu.Lock()
	if len(s.refresh) >= MaxRefreshTokens {
		for k, v := range s.refresh {
			if !now.Before(v.expires) {
				delete(s.refresh, k)
			}
		}
	}
	full := len(s.refresh) >= MaxRefreshTokens
	if !full {
		s.refresh[rt] = rg
	}
	s.mu.Unlock()
	if !full {
		resp["refresh_token"] = rt
	}
	return resp, nil
}

// accessToken signs an access token (RFC 9068).
func (s *Server) accessToken(subject, clientID string, scopes []string, resource, jkt string, ttl time.Duration) (string, error) {
	now := s.now()
	cl := map[string]any{
		"iss":   s.URL,
		"sub":   subject,
		"iat":   now.Unix(),
		"exp":   now.Add(ttl).Unix(),
		"jti":   rand.Text(),
		"scope": strings.Join(scopes, " "),
	}
	if clientID != "" {
		cl["client_id"] = clientID
	}
	if resource != "" {
		cl["aud"] = resource
	}
	if jkt != "" {
		cl["cnf"] = map[string]string{"jkt": jkt}
	}
	return s.sign(typAccessToken, cl)
}
