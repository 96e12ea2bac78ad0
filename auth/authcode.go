package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

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

// tokenResponse is an RFC 6749 section 5.1 answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    json64 `json:"expires_in"`
	Scope        string `json:"scope"`
}

// json64 is a number that may arrive as a JSON string.
type json64 int64

func (n *json64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	var v int64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return fmt.Errorf("expires_in %q is not a number", truncate(s, 20))
	}
	*n = json64(v)
	return nil
}

// refresh uses the refresh token of old at meta's token endpoint, with
// the resource parameter (RFC 8707), and returns the new token; one
// without a refresh token keeps the old one.
func (a *Authorizer) refresh(ctx context.Context, meta *ServerMetadata, c *ClientInfo, old *StoredToken) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {old.Token.RefreshToken},
	}
	if old.Resource != "" {
		form.Set("resource", old.Resource)
	}
	method := authMethod(c, meta)
	if method != AuthMethodClientSecretBasic {
		form.Set("client_id", c.ClientID)
	}
	if method == AuthMethodClientSecretPost {
		form.Set("client_secret", c.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if method == AuthMethodClientSecretBasic {
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	var tr tokenResponse
	if _, err := doJSON(a.tokenClient(), req, &tr); err != nil {
		return nil, err
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("auth: the token answer from %s has no access_token", redactURL(meta.TokenEndpoint))
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	if tr.ExpiresIn > 0 {
		tok.ExpiresIn = int64(tr.ExpiresIn)
		tok.Expiry = a.clock().Add(time.Duration(tr.ExpiresIn) * time.Second)
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
