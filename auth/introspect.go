package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// IntrospectionOptions configure an [IntrospectionVerifier]. Endpoint (or
// Issuer, to discover it) and the client credentials are required; the
// zero value of every other field is the documented default.
type IntrospectionOptions struct {
	// Endpoint is the URL of the introspection endpoint (RFC 7662). When
	// "", it is the introspection_endpoint of Issuer's metadata,
	// discovered at the first verification.
	Endpoint string
	// Issuer, when set, is the authorization server trusted: an answer's
	// "iss", when present, must equal it. It is also where Endpoint is
	// discovered when Endpoint is "".
	Issuer string
	// ClientID and ClientSecret authenticate this resource server at the
	// endpoint (HTTP Basic, RFC 6749 section 2.3.1).
	ClientID, ClientSecret string
	// Audience, when set, is this resource's identifier: an answer's
	// "aud" must name it (RFC 8707). Set it unless the authorization
	// server checks the audience itself.
	Audience string
	// ClockSkew is the clock difference tolerated for "exp" and "nbf";
	// zero means [DefaultClockSkew], negative means none.
	ClockSkew time.Duration
	// HTTPClient sends the requests. Nil means a client that follows
	// redirects only to HTTPS (or loopback) URLs.
	HTTPClient *http.Client
	// FetchTimeout bounds one introspection request; zero means
	// [DefaultFetchTimeout]. Answers are bounded by [MaxDocumentSize].
	FetchTimeout time.Duration
	// CacheSize bounds the active tokens remembered, so that a token
	// presented again is not introspected again until it expires or
	// CacheTTL passes; zero means [DefaultTokenCacheSize], negative
	// disables the cache.
	CacheSize int
	// CacheTTL bounds how long an answer is remembered (a revoked token
	// stays accepted this long); zero means [DefaultTokenCacheTTL].
	CacheTTL time.Duration
	// Now overrides the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// An IntrospectionVerifier is a [TokenVerifier] that asks the
// authorization server about each token (OAuth 2.0 Token Introspection,
// RFC 7662): it posts the token with this resource server's client
// credentials, refuses it unless the answer says "active": true, and
// checks the answer's issuer, audience and times as configured. Active
// answers are cached, bounded in count and time; inactive ones are not,
// so every unknown token costs one request to the endpoint (rate-limit
// unauthenticated clients in front of the middleware). It is safe for
// concurrent use.
type IntrospectionVerifier struct {
	opts     IntrospectionOptions
	client   *http.Client
	timeout  time.Duration
	skew     time.Duration
	now      func() time.Time
	cache    *tokenCache
	endpoint *discovered
}

// discovered is a URL found once, on first use.
type discovered struct {
	ch  chan struct{} // a one-slot lock: held while discovering
	url string
}

// NewIntrospectionVerifier returns a verifier that introspects tokens at
// opts.Endpoint (or the endpoint opts.Issuer's metadata names).
func NewIntrospectionVerifier(opts *IntrospectionOptions) (*IntrospectionVerifier, error) {
	if opts == nil {
		return nil, errors.New("auth: NewIntrospectionVerifier: options are required")
	}
	if opts.Endpoint == "" && opts.Issuer == "" {
		return nil, errors.New("auth: introspection needs an endpoint or an issuer")
	}
	for _, u := range []string{opts.Endpoint, opts.Issuer} {
		if u == "" {
			continue
		}
		if err := CheckURL(u); err != nil {
			return nil, fmt.Errorf("auth: introspection: %w", err)
		}
	}
	if opts.ClientID == "" {
		return nil, errors.New("auth: introspection needs the resource server's client ID")
	}
	v := &IntrospectionVerifier{
		opts:     *opts,
		client:   defaultClient(opts.HTTPClient),
		timeout:  orDefault(opts.FetchTimeout, DefaultFetchTimeout),
		now:      opts.Now,
		cache:    newTokenCache(opts.CacheSize, opts.CacheTTL),
		endpoint: &discovered{ch: make(chan struct{}, 1), url: opts.Endpoint},
	}
	if v.now == nil {
		v.now = time.Now
	}
	switch {
	case opts.ClockSkew == 0:
		v.skew = DefaultClockSkew
	case opts.ClockSkew > 0:
		v.skew = opts.ClockSkew
	}
	return v, nil
}

// introspection is an introspection answer (RFC 7662 section 2.2).
type introspection struct {
	Active    bool             `json:"active"`
	Scope     string           `json:"scope"`
	ClientID  string           `json:"client_id"`
	Username  string           `json:"username"`
	TokenType string           `json:"token_type"`
	Expiry    *jwt.NumericDate `json:"exp"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Issuer    string           `json:"iss"`
	ID        string           `json:"jti"`
	CNF       *struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

// VerifyToken implements [TokenVerifier]. Errors wrap [ErrInvalidToken]
// ([ErrInactiveToken] for an inactive token) or, when the endpoint did not
// answer usably, [ErrVerifierUnavailable]. A token without "sub" gets its
// client ID as Subject (a client acting on its own behalf).
func (v *IntrospectionVerifier) VerifyToken(ctx context.Context, token string) (*TokenInfo, error) {
	if len(token) > MaxTokenSize {
		return nil, invalid(ErrInvalidToken, "larger than %d bytes", MaxTokenSize)
	}
	now := v.now()
	key := tokenKey(token)
	if info := v.cache.get(key, now); info != nil {
		if !info.Expiry.IsZero() && !now.Before(info.Expiry.Add(v.skew)) {
			return nil, ErrExpiredToken
		}
		return info, nil
	}
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	endpoint, err := v.endpointURL(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerifierUnavailable, err)
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerifierUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(v.opts.ClientID), url.QueryEscape(v.opts.ClientSecret))
	var (
		a   introspection
		raw map[string]json.RawMessage
	)
	var body json.RawMessage
	if _, err := doJSON(v.client, req, &body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerifierUnavailable, err)
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%w: malformed introspection answer: %w", ErrVerifierUnavailable, err)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: malformed introspection answer: %w", ErrVerifierUnavailable, err)
	}
	if !a.Active {
		return nil, ErrInactiveToken
	}
	info, err := v.check(&a, raw, now)
	if err != nil {
		return nil, err
	}
	info.withPrincipal()
	v.cache.put(key, info, info.Expiry, now)
	return info, nil
}

// check checks an active answer and makes the TokenInfo.
func (v *IntrospectionVerifier) check(a *introspection, raw map[string]json.RawMessage, now time.Time) (*TokenInfo, error) {
	if v.opts.Issuer != "" && a.Issuer != "" && a.Issuer != v.opts.Issuer {
		return nil, invalid(ErrWrongIssuer, "iss %q", truncate(a.Issuer, 100))
	}
	if v.opts.Audience != "" && !a.Audience.Contains(v.opts.Audience) {
		return nil, ErrWrongAudience
	}
	if a.TokenType != "" && !strings.EqualFold(a.TokenType, "Bearer") && !strings.EqualFold(a.TokenType, "DPoP") && !strings.EqualFold(a.TokenType, "access_token") {
		return nil, invalid(ErrInvalidToken, "token_type %q", truncate(a.TokenType, 40))
	}
	info := &TokenInfo{
		Issuer:   a.Issuer,
		Subject:  a.Subject,
		ClientID: a.ClientID,
		Audience: []string(a.Audience),
		Scopes:   strings.Fields(a.Scope),
		ID:       a.ID,
		Claims:   raw,
	}
	if info.Issuer == "" {
		info.Issuer = v.opts.Issuer
	}
	if info.Subject == "" {
		info.Subject = a.ClientID
	}
	if info.Subject == "" {
		return nil, invalid(ErrInvalidToken, "neither sub nor client_id")
	}
	if a.Expiry != nil {
		info.Expiry = a.Expiry.Time()
		if !now.Before(info.Expiry.Add(v.skew)) {
			return nil, ErrExpiredToken
		}
	}
	if a.NotBefore != nil && a.NotBefore.Time().After(now.Add(v.skew)) {
		return nil, invalid(ErrTokenNotYetValid, "nbf in the future")
	}
	if a.IssuedAt != nil {
		info.IssuedAt = a.IssuedAt.Time()
	}
	if a.CNF != nil {
		info.ConfirmationThumbprint = a.CNF.JKT
	}
	return info, nil
}

// endpointURL returns the introspection endpoint, discovering it from the
// issuer's metadata once.
func (v *IntrospectionVerifier) endpointURL(ctx context.Context) (string, error) {
	d := v.endpoint
	select {
	case d.ch <- struct{}{}:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	defer func() { <-d.ch }()
	if d.url != "" {
		return d.url, nil
	}
	md, err := discoverMetadata(ctx, v.client, v.opts.Issuer)
	if err != nil {
		return "", err
	}
	if md.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("auth: metadata of %q has no introspection_endpoint", v.opts.Issuer)
	}
	if err := CheckURL(md.IntrospectionEndpoint); err != nil {
		return "", fmt.Errorf("auth: introspection_endpoint: %w", err)
	}
	d.url = md.IntrospectionEndpoint
	return d.url, nil
}
