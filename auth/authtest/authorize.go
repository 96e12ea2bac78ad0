package authtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// A ConsentRequest is a valid authorization request, as Options.Consent
// sees it.
type ConsentRequest struct {
	// ClientID and RedirectURI identify the client and where the answer
	// goes.
	ClientID, RedirectURI string
	// Scopes are the scopes asked for; Consent may narrow them.
	Scopes []string
	// Resource is the resource indicator (RFC 8707), or "".
	Resource string
	// Subject is the user who consents (Options.Subject); Consent may
	// change it.
	Subject string
}

// An authCode is an authorization code not yet redeemed.
type authCode struct {
	clientID, redirectURI string
	redirectGiven         bool // the request named redirect_uri
	challenge             string
	resource              string
	subject               string
	dpopJKT               string
	scopes                []string
	expires               time.Time
}

// handleAuthorize is the authorization endpoint, with a consent given at
// once. Errors about the client or its redirect URI are answered to the
// user agent (400); others are sent to the redirect URI.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k, v := range q {
		if len(v) > 1 {
			writeError(w, errInvalidRequest("parameter "+strings.ToValidUTF8(truncate(k, 40), "?")+" appears more than once"))
			return
		}
	}
	c, err := s.client(r.Context(), q.Get("client_id"))
	if err != nil {
		writeError(w, &oauthError{status: http.StatusBadRequest, code: "invalid_client", description: err.Error()})
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !slices.Contains(c.RedirectURIs, redirect) {
		writeError(w, errInvalidRequest("redirect_uri is missing or not registered for the client"))
		return
	}
	fail := func(code, desc string) {
		s.redirect(w, r, redirect, url.Values{"error": {code}, "error_description": {desc}, "state": q["state"]})
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "response_type must be code")
		return
	}
	if !c.mayUse("authorization_code") {
		fail("unauthorized_client", "the client may not use the authorization code grant")
		return
	}
	challenge := q.Get("code_challenge")
	if challenge == "" || q.Get("code_challenge_method") != "S256" {
		fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method S256")
		return
	}
	if len(challenge) != 43 || !isBase64URL(challenge) {
		fail("invalid_request", "code_challenge must be a base64url SHA-256 (43 characters)")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if e := s.checkScopes(c, scopes); e != nil {
		fail(e.code, e.description)
		return
	}
	resource := q.Get("resource")
	if e := checkResource(resource); e != nil {
		fail(e.code, e.description)
		return
	}
	subject := s.opts.Subject
	cr := &ConsentRequest{ClientID: c.ID, RedirectURI: redirect, Scopes: slices.Clone(scopes), Resource: resource, Subject: subject}
	if s.opts.Consent != nil {
		if err := s.opts.Consent(cr); err != nil {
			fail("access_denied", "the user denied the request")
			return
		}
		if e := s.checkScopes(c, cr.Scopes); e != nil {
			fail(e.code, e.description)
			return
		}
	}
	code := rand.Text() + rand.Text()
	now := s.now()
	ttl := s.opts.CodeTTL
	if ttl <= 0 {
		ttl = DefaultCodeTTL
	}
	ac := &authCode{
		clientID: c.ID, redirectURI: redirect, redirectGiven: q.Has("redirect_uri"), challenge: challenge, resource: resource,
		subject: cr.Subject, dpopJKT: q.Get("dpop_jkt"), scopes: cr.Scopes, expires: now.Add(ttl),
	}
	s.mu.Lock()
	if len(s.codes) >= MaxCodes {
		for k, v := range s.codes {
			if !now.Before(v.expires) {
				delete(s.codes, k)
			}
		}
	}
	full := len(s.codes) >= MaxCodes
	if !full {
		s.codes[code] = ac
	}
	s.mu.Unlock()
	if full {
		fail("temporarily_unavailable", "too many authorization codes outstanding")
		return
	}
	s.redirect(w, r, redirect, url.Values{"code": {code}, "state": q["state"]})
}

// redirect answers 302 to the redirect URI with params and the issuer
// added to its query.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, redirect string, params url.Values) {
	u, err := url.Parse(redirect)
	if err != nil { // registered URIs parse
		writeError(w, errInvalidRequest("redirect_uri does not parse"))
		return
	}
	iss := s.URL
	if s.misbehavior().WrongResponseIssuer {
		iss += "/wrong"
	}
	params.Set("iss", iss)
	q := u.Query()
	for k, v := range params {
		if len(v) > 0 && v[0] != "" {
			q[k] = v[:1]
		}
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// checkScopes refuses scopes the server or the client does not allow.
func (s *Server) checkScopes(c *Client, scopes []string) *oauthError {
	for _, sc := range scopes {
		if s.opts.Scopes != nil && !slices.Contains(s.opts.Scopes, sc) {
			return errInvalidScope("scope " + quoteShort(sc) + " is not supported")
		}
		if c != nil && c.Scopes != nil && !slices.Contains(c.Scopes, sc) {
			return errInvalidScope("scope " + quoteShort(sc) + " is not allowed for the client")
		}
	}
	return nil
}

// checkResource accepts "" or an absolute URI without a fragment (RFC
// 8707 section 2).
func checkResource(resource string) *oauthError {
	if resource == "" {
		return nil
	}
	u, err := url.Parse(resource)
	if err != nil || u.Scheme == "" || u.Host == "" || strings.Contains(resource, "#") {
		return &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "resource must be an absolute URI without a fragment"}
	}
	return nil
}

func isBase64URL(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// quoteShort quotes a request value, truncated, for an error
// description. It is used only for values that are not credentials.
func quoteShort(s string) string {
	return `"` + strings.ToValidUTF8(truncate(s, 60), "?") + `"`
}

// ErrAuthorization reports an authorization request the server did not
// answer with a redirect: one whose client or redirect URI it refused.
var ErrAuthorization = errors.New("authtest: authorization request refused")

// Authorize plays the user's browser for an MCP host under test: it
// sends the authorization request authURL (a URL of this server's
// authorization endpoint) and returns where the server redirects to: the
// client's redirect URI with code, state and iss, or with an error. It
// does not follow the redirect; see Browse. Errors other than the
// request's own wrap ErrAuthorization.
func (s *Server) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	if !strings.HasPrefix(authURL, s.URL+pathAuthorize+"?") {
		return nil, fmt.Errorf("%w: not a URL of this server's authorization endpoint", ErrAuthorization)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	c := *s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		json.NewDecoder(io.LimitReader(resp.Body, MaxRequestBody)).Decode(&e)
		return nil, fmt.Errorf("%w: HTTP %d: %s: %s", ErrAuthorization, resp.StatusCode, e.Error, e.Description)
	}
	return url.Parse(resp.Header.Get("Location"))
}

// Browse plays the user's browser to the end: it sends the
// authorization request authURL (see Authorize), then delivers the
// server's answer to the client's redirect URI with a GET, which must
// answer 2xx. A host under test opens authURL with it instead of a
// browser.
func (s *Server) Browse(ctx context.Context, authURL string) error {
	to, err := s.Authorize(ctx, authURL)
	if err != nil {
		return err
	}
	if to.Scheme != "http" && to.Scheme != "https" {
		return fmt.Errorf("%w: cannot deliver to a %s redirect URI", ErrAuthorization, to.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, to.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("authtest: delivering the authorization response: %w", stripQuery(err))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxRequestBody))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("authtest: the redirect URI answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// stripQuery drops the URL of a *url.Error, whose query holds the
// authorization code.
func stripQuery(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, redact(ue.URL), ue.Err)
	}
	return err
}
