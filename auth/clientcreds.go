package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// This file holds the client credentials grant (RFC 6749 section 4.4) and
// what every token request shares (the grants' and the Authorizer's
// refresh): posting an authenticated form to a token endpoint (the
// authentication is ClientAuth's) and reading a token answer. Requests are posted with the
// package's bounded JSON client rather than golang.org/x/oauth2's
// token fetcher, so that every grant reports *HTTPError values, reads at
// most MaxDocumentSize, checks the token type against DPoP, and never
// sends a secret twice the way an auto-detected auth style does.

// Grant type and token type identifiers.
const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	assertionTypeJWT       = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// ErrGrantConfig reports a Grant or GrantRequest that lacks what the
// grant needs, such as a client ID, a credential or a token endpoint.
var ErrGrantConfig = errors.New("auth: grant misconfigured")

// ErrTokenType reports a token answer whose token_type the client cannot
// use: Bearer when a DPoP-bound token was asked for, DPoP when it was not,
// or any other type.
var ErrTokenType = errors.New("auth: unexpected token type")

// ErrMalformedToken reports a token answer that is not a valid RFC 6749
// section 5.1 answer: no access_token, a bad expires_in, or members of
// the wrong JSON type.
var ErrMalformedToken = errors.New("auth: malformed token answer")

// ClientCredentials is the client credentials grant (RFC 6749 section
// 4.4, the MCP OAuth client credentials extension, SEP-1046): a
// confidential client obtains a token for itself, with no user, by
// authenticating at the token endpoint with a secret or a private key.
//
// Every token request carries "resource" (RFC 8707) and, when scopes are
// asked for, "scope". The zero value lacks credentials; set ClientID and
// either ClientSecret or Key. A ClientCredentials is safe for concurrent
// use.
type ClientCredentials struct {
	// ClientAuth authenticates the client at the token endpoint: a
	// ClientID and either a ClientSecret or a Key are required.
	ClientAuth
	// Scopes, when non-nil, replace the scopes the Authorizer asks for
	// (GrantRequest.Scopes): a client allowed only a fixed set of scopes
	// asks for exactly those.
	Scopes []string
}

// Token implements [Grant]: one POST to the token endpoint with
// grant_type=client_credentials.
func (g *ClientCredentials) Token(ctx context.Context, r *GrantRequest) (*oauth2.Token, error) {
	if err := checkGrantRequest(r); err != nil {
		return nil, err
	}
	if g.ClientID == "" {
		return nil, fmt.Errorf("%w: client credentials need a client ID", ErrGrantConfig)
	}
	if g.ClientSecret == "" && g.Key == nil {
		return nil, fmt.Errorf("%w: client credentials need a client secret or a key", ErrGrantConfig)
	}
	form := url.Values{"grant_type": {grantClientCredentials}}
	addResourceScope(form, r, g.Scopes)
	return postToken(ctx, r, &g.ClientAuth, form, time.Now)
}

// checkGrantRequest checks what every grant needs from its request.
func checkGrantRequest(r *GrantRequest) error {
	switch {
	case r == nil || r.Server == nil:
		return fmt.Errorf("%w: no authorization server metadata", ErrGrantConfig)
	case r.Server.TokenEndpoint == "":
		return fmt.Errorf("%w: the authorization server has no token endpoint", ErrGrantConfig)
	}
	return nil
}

// addResourceScope adds "resource" and, when there are scopes, "scope" to
// form. override, when non-nil, replaces r.Scopes.
func addResourceScope(form url.Values, r *GrantRequest, override []string) {
	if r.Resource != "" {
		form.Set("resource", r.Resource)
	}
	scopes := r.Scopes
	if override != nil {
		scopes = override
	}
	if s := strings.Join(scopes, " "); s != "" {
		form.Set("scope", s)
	}
}

// postToken authenticates and posts form to the token endpoint of
// r.Server and reads the token answer, whose expiry counts from now() at
// its arrival.
func postToken(ctx context.Context, r *GrantRequest, ca *ClientAuth, form url.Values, now func() time.Time) (*oauth2.Token, error) {
	header := make(http.Header)
	if err := ca.apply(r.Server, form, header); err != nil {
		return nil, err
	}
	raw, err := postForm(ctx, r.HTTPClient, r.Server.TokenEndpoint, form, header)
	if err != nil {
		return nil, err
	}
	return parseTokenAnswer(raw, r.DPoP != nil, now())
}

// postForm posts form to endpoint with client (nil: a default client)
// and returns the raw JSON of a 2xx answer (see doJSON for the bounds).
// Redirects are not followed: the form holds credentials, which a 307 or
// 308 would carry to the new location; a 3xx answer is an *HTTPError.
func postForm(ctx context.Context, client *http.Client, endpoint string, form url.Values, header http.Header) (json.RawMessage, error) {
	c := *defaultClient(client)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("auth: token endpoint %q: %w", redactURL(endpoint), stripURLError(err))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var raw json.RawMessage
	if _, err := doJSON(&c, req, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// maxExpiresIn bounds the lifetime taken from expires_in: ten years.
// Longer values are cut to it, keeping Expiry arithmetic far from
// overflow.
const maxExpiresIn = 10 * 365 * 24 * 3600

// tokenAnswer is an RFC 6749 section 5.1 token answer.
type tokenAnswer struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        string          `json:"scope"`
}

// parseTokenAnswer reads a token answer received at now. wantDPoP says
// whether a DPoP-bound token was asked for: the token_type must then be
// DPoP, and Bearer otherwise (an absent token_type counts as Bearer). The
// type is normalised to "Bearer" or "DPoP"; every member of the answer is
// kept in the token's Extra.
func parseTokenAnswer(raw []byte, wantDPoP bool, now time.Time) (*oauth2.Token, error) {
	var a tokenAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedToken, describeJSONError(err))
	}
	var extra map[string]any
	if err := json.Unmarshal(raw, &extra); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedToken, describeJSONError(err))
	}
	if a.AccessToken == "" {
		if code, ok := extra["error"].(string); ok {
			return nil, fmt.Errorf("%w: no access_token, error %q", ErrMalformedToken, truncate(code, 40))
		}
		return nil, fmt.Errorf("%w: no access_token", ErrMalformedToken)
	}
	typ, err := tokenType(a.TokenType, wantDPoP)
	if err != nil {
		return nil, err
	}
	secs, err := expiresIn(a.ExpiresIn)
	if err != nil {
		return nil, err
	}
	t := &oauth2.Token{
		AccessToken:  a.AccessToken,
		TokenType:    typ,
		RefreshToken: a.RefreshToken,
		ExpiresIn:    secs,
	}
	if secs > 0 {
		t.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	return t.WithExtra(extra), nil
}

// tokenType checks and normalises a token_type.
func tokenType(typ string, wantDPoP bool) (string, error) {
	switch {
	case typ == "" || strings.EqualFold(typ, "Bearer"):
		if wantDPoP {
			return "", fmt.Errorf("%w: asked for a DPoP-bound token, got a bearer token", ErrTokenType)
		}
		return "Bearer", nil
	case strings.EqualFold(typ, "DPoP"):
		if !wantDPoP {
			return "", fmt.Errorf("%w: got a DPoP-bound token without asking for one", ErrTokenType)
		}
		return "DPoP", nil
	}
	return "", fmt.Errorf("%w: %q", ErrTokenType, truncate(typ, 40))
}

// expiresIn reads expires_in: absent or null is 0, else a non-negative
// integer, as a JSON number or (as some servers send it) a string.
func expiresIn(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	s := string(raw)
	if s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%w: expires_in", ErrMalformedToken)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: expires_in is not a non-negative number", ErrMalformedToken)
	}
	if f > maxExpiresIn {
		return maxExpiresIn, nil
	}
	return int64(f), nil
}

// describeJSONError says what was wrong with a JSON document without
// quoting it (a token answer holds secrets).
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "member " + strconv.Quote(te.Field) + " has the wrong JSON type"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not JSON (at offset " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	return "not a JSON object"
}
