package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// authorizationCode runs the authorization code flow with PKCE (S256)
// at d's authorization server for scopes and returns the token.
func (a *Authorizer) authorizationCode(ctx context.Context, d *Discovery, c *ClientInfo, scopes []string) (*oauth2.Token, error) {
	meta := d.Server
	if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return nil, ErrNoPKCE
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return nil, fmt.Errorf("%w: the metadata of %s lacks an authorization or token endpoint", ErrNoAuthorizationServer, redactURL(meta.Issuer))
	}
	if a.Agent == nil {
		return nil, ErrNoAgent
	}
	if a.RedirectURL == "" {
		return nil, errors.New("auth: the Authorizer has no RedirectURL")
	}
	if err := CheckURL(a.RedirectURL); err != nil {
		if u, perr := url.Parse(a.RedirectURL); perr != nil || u.Scheme == "http" || u.Scheme == "https" {
			return nil, fmt.Errorf("auth: RedirectURL: %w", err)
		}
		// A private-use scheme (RFC 8252 section 7.1) is the agent's
		// business.
	}
	state, err := randomString()
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	cfg := oauthConfig(c, meta, a.RedirectURL, scopes)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if d.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", d.Resource))
	}
	authURL := cfg.AuthCodeURL(state, opts...)
	a.log(ctx, "auth: authorization request", "issuer", meta.Issuer, "scopes", strings.Join(scopes, " "))
	q, err := a.Agent.Authorize(ctx, authURL, a.RedirectURL)
	if err != nil {
		return nil, err
	}
	// RFC 9207: the issuer, checked before anything else in the
	// response, error responses included.
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != meta.Issuer {
			return nil, ErrIssuerMismatch
		}
	} else if meta.AuthorizationResponseIssParameterSupported {
		return nil, ErrMissingIssuer
	}
	if got := q.Get("state"); subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
		return nil, ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		return nil, &AuthorizationError{Step: "authorization", Code: truncate(e, 100), Err: ErrAccessDenied}
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("auth: the authorization response has no code")
	}
	xopts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if d.Resource != "" {
		xopts = append(xopts, oauth2.SetAuthURLParam("resource", d.Resource))
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, a.tokenClient()), code, xopts...)
	if err != nil {
		return nil, tokenError(meta.TokenEndpoint, err)
	}
	return tok, nil
}

// tokenError turns an oauth2 error into an *HTTPError, whose message
// holds no response body.
func tokenError(endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return &HTTPError{
			URL:         redactURL(endpoint),
			StatusCode:  re.Response.StatusCode,
			Code:        re.ErrorCode,
			Description: re.ErrorDescription,
			Header:      re.Response.Header,
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("auth: POST %s: %w", redactURL(endpoint), ue.Err)
	}
	return fmt.Errorf("auth: token request to %s: %w", redactURL(endpoint), err)
}

// refresh uses the refresh token of old at meta's token endpoint, with
// the resource parameter (RFC 8707), and returns the new token; one
// without a refresh token keeps the old one. The client authenticates as
// for the code exchange (clientAuthFor), the answer is read as a grant's
// (parseTokenAnswer: a DPoP-bound token when a.DPoP is set, expiry from
// a's clock), and redirects are not followed.
func (a *Authorizer) refresh(ctx context.Context, meta *ServerMetadata, c *ClientInfo, old *StoredToken) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {old.Token.RefreshToken},
	}
	if old.Resource != "" {
		form.Set("resource", old.Resource)
	}
	r := &GrantRequest{Server: meta, HTTPClient: a.tokenClient(), DPoP: a.DPoP}
	tok, err := postToken(ctx, r, clientAuthFor(c, meta), form, a.clock)
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = old.Token.RefreshToken
	}
	return tok, nil
}

// randomString returns 32 random bytes, base64url-encoded.
func randomString() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
