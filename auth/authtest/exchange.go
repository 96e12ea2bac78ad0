package authtest

import (
	"net/http"
	"slices"
	"strings"
)

// grantTokenExchange exchanges an ID token for an ID-JAG (RFC 8693, as
// the Identity Assertion JWT Authorization Grant profiles it): the
// server plays the enterprise identity provider.
func (s *Server) grantTokenExchange(tr *tokenRequest) (map[string]any, *oauthError) {
	f := tr.form
	if f.Get("requested_token_type") != tokenTypeIDJAG {
		return nil, errInvalidRequest("requested_token_type must be " + tokenTypeIDJAG)
	}
	if f.Get("subject_token_type") != tokenTypeIDToken {
		return nil, errInvalidRequest("subject_token_type must be " + tokenTypeIDToken)
	}
	if f.Get("subject_token") == "" {
		return nil, errInvalidRequest("subject_token is required")
	}
	audience := f.Get("audience")
	if audience == "" {
		return nil, errInvalidRequest("audience (the authorization server's issuer) is required")
	}
	resource := f.Get("resource")
	if e := checkResource(resource); e != nil {
		return nil, e
	}
	p, err := s.verifyTrusted(tr.r.Context(), f.Get("subject_token"))
	if err != nil {
		return nil, errInvalidGrant("subject_token: " + err.Error())
	}
	if p.typ == typAccessToken || p.typ == typIDJAG {
		return nil, errInvalidGrant("subject_token is not an ID token")
	}
	if p.claims.Subject == "" {
		return nil, errInvalidGrant("subject_token has no sub")
	}
	if !p.claims.Audience.Contains(tr.client.ID) {
		return nil, errInvalidGrant("subject_token was not issued to the client")
	}
	clientID := tr.client.ID
	if s.opts.IDJAGClientID != nil {
		clientID = s.opts.IDJAGClientID(audience, clientID)
		if clientID == "" {
			return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "the client has no client_id at the audience"}
		}
	}
	jag, err := s.IDJAG(IDJAGRequest{
		Subject: p.claims.Subject, Audience: audience, ClientID: clientID,
		Resource: resource, Scopes: strings.Fields(f.Get("scope")), Email: p.claims.Email,
	})
	if err != nil {
		return nil, errUnavailable("signing failed")
	}
	resp := map[string]any{
		"access_token":      jag,
		"issued_token_type": tokenTypeIDJAG,
		"token_type":        "N_A",
		"expires_in":        int64(IDJAGTTL.Seconds()),
	}
	if sc := f.Get("scope"); sc != "" {
		resp["scope"] = sc
	}
	return resp, nil
}

// grantJWTBearer serves the JWT bearer grant (RFC 7523 section 2.1)
// for three kinds of assertion: an ID-JAG ("typ" oauth-id-jag+jwt) from a
// trusted identity provider, which names the client and the resource; a
// workload identity token from a trusted issuer; and a registered
// private_key_jwt client's own assertion (iss and sub its client_id).
func (s *Server) grantJWTBearer(tr *tokenRequest) (map[string]any, *oauthError) {
	assertion := tr.form.Get("assertion")
	if assertion == "" {
		return nil, errInvalidRequest("assertion is required")
	}
	p, err := parseJWT(assertion)
	if err != nil {
		return nil, errInvalidGrant("assertion: " + err.Error())
	}
	switch p.typ {
	case typIDJAG:
		return s.grantIDJAG(tr, assertion)
	case typAccessToken:
		return nil, errInvalidGrant("assertion: an access token is not a grant")
	}
	cl := &p.claims
	ctx := tr.r.Context()
	if _, trusted := s.issuerKeys(ctx, cl.Issuer, p); trusted {
		p, err = s.verifyTrusted(ctx, assertion)
		if err != nil {
			return nil, errInvalidGrant("assertion: " + err.Error())
		}
		cl = &p.claims
	} else {
		// A client's own assertion, signed with its registered key.
		c, err := s.client(ctx, cl.Issuer)
		if err != nil || c.AuthMethod != methodPrivateKeyJWT || cl.Subject != cl.Issuer {
			return nil, errInvalidGrant("assertion: the issuer is neither trusted nor a private_key_jwt client")
		}
		if tr.client != nil && tr.client.ID != c.ID {
			return nil, errInvalidGrant("assertion: issued by another client")
		}
		if err := s.verifyClientKey(ctx, c, p); err != nil {
			return nil, errInvalidGrant("assertion: " + err.Error())
		}
		if err := s.useAssertion(cl); err != nil {
			return nil, errInvalidGrant("assertion: " + err.Error())
		}
		tr.client = c
	}
	if cl.Subject == "" {
		return nil, errInvalidGrant("assertion has no sub")
	}
	if !cl.hasAudience(s.URL, s.URL+"/", s.URL+pathToken) {
		return nil, errInvalidGrant("assertion: aud must be the issuer or the token endpoint")
	}
	scopes := strings.Fields(tr.form.Get("scope"))
	if e := s.checkScopes(tr.client, scopes); e != nil {
		return nil, e
	}
	resource := tr.form.Get("resource")
	if e := checkResource(resource); e != nil {
		return nil, e
	}
	clientID := cl.Subject
	if tr.client != nil {
		clientID = tr.client.ID
	}
	g := &issued{subject: cl.Subject, clientID: clientID, scopes: scopes, resource: resource, jkt: tr.jkt, noRefresh: true}
	return s.issue(g, tr.client)
}

// grantIDJAG redeems an ID-JAG: issued by a trusted identity provider
// for this server, to the authenticated client, once.
func (s *Server) grantIDJAG(tr *tokenRequest, assertion string) (map[string]any, *oauthError) {
	if tr.client == nil {
		return nil, errInvalidClient("an ID-JAG must be presented by the client it names")
	}
	p, err := s.verifyTrusted(tr.r.Context(), assertion)
	if err != nil {
		return nil, errInvalidGrant("ID-JAG: " + err.Error())
	}
	cl := &p.claims
	if !cl.hasAudience(s.URL, s.URL+"/") {
		return nil, errInvalidGrant("ID-JAG: aud is not this issuer")
	}
	if cl.ClientID != tr.client.ID {
		return nil, errInvalidGrant("ID-JAG: client_id is not the authenticated client")
	}
	if cl.Subject == "" {
		return nil, errInvalidGrant("ID-JAG has no sub")
	}
	if err := s.useAssertion(cl); err != nil {
		return nil, errInvalidGrant("ID-JAG: " + err.Error())
	}
	resource := tr.form.Get("resource")
	if len(cl.Resource) > 0 {
		if resource == "" {
			resource = cl.Resource[0]
		} else if !cl.Resource.Contains(resource) {
			return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource is not the ID-JAG's"}
		}
	}
	if e := checkResource(resource); e != nil {
		return nil, e
	}
	scopes := strings.Fields(cl.Scope)
	if req := strings.Fields(tr.form.Get("scope")); len(req) > 0 {
		if cl.Scope != "" {
			for _, sc := range req {
				if !slices.Contains(scopes, sc) {
					return nil, errInvalidScope("scope " + quoteShort(sc) + " is not in the ID-JAG")
				}
			}
		}
		scopes = req
	}
	if e := s.checkScopes(tr.client, scopes); e != nil {
		return nil, e
	}
	g := &issued{subject: cl.Subject, clientID: tr.client.ID, scopes: scopes, resource: resource, jkt: tr.jkt, noRefresh: true}
	return s.issue(g, tr.client)
}
