package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DefaultClockSkew is the clock difference tolerated when checking the
// times of a token ("exp", "nbf", "iat"): 1 minute.
const DefaultClockSkew = time.Minute

// MaxTokenSize bounds the access tokens a verifier accepts: 8 KiB. Larger
// ones are refused before any parsing.
const MaxTokenSize = 8 << 10

// JWTOptions configure a [JWTVerifier]. Issuer and Audience are required;
// the zero value of every other field is the documented default.
type JWTOptions struct {
	// Issuer is the authorization server trusted to issue tokens: a
	// token's "iss" must equal it. Required.
	Issuer string
	// Audience is this resource's identifier, the canonical URL of the
	// MCP server (RFC 8707): a token's "aud" (a string or an array) must
	// name it exactly. Required.
	Audience string
	// JWKSURL is the URL of the issuer's key set. When "", it is the
	// jwks_uri of the issuer's metadata, discovered at the first
	// verification from the URLs of [ServerMetadataURLs] (the metadata's
	// issuer must equal Issuer).
	JWKSURL string
	// Algorithms lists the JWS algorithms accepted. Nil means
	// [DefaultAlgorithms]. "none" and the HMAC algorithms are dropped:
	// a key set holds public keys, and a public key is no HMAC secret.
	Algorithms []string
	// ClockSkew is the clock difference tolerated; zero means
	// [DefaultClockSkew], negative means none.
	ClockSkew time.Duration
	// RequiredType, when set, is the JWS "typ" header tokens must carry,
	// such as "at+jwt" (RFC 9068); "application/" before it is ignored,
	// as is case.
	RequiredType string
	// HTTPClient fetches metadata and the key set. Nil means a client
	// that follows redirects only to HTTPS (or loopback) URLs.
	HTTPClient *http.Client
	// FetchTimeout bounds one fetch of metadata or of the key set; zero
	// means [DefaultFetchTimeout]. Answers are bounded by
	// [MaxDocumentSize].
	FetchTimeout time.Duration
	// KeySetTTL is how long a fetched key set is used before it is
	// fetched again; zero means [DefaultKeySetTTL]. When a new fetch
	// fails, the old set stays in use.
	KeySetTTL time.Duration
	// RefetchInterval is the least time between two fetches of the key
	// set, however many tokens name unknown keys; zero means
	// [DefaultKeySetRefetchInterval].
	RefetchInterval time.Duration
	// CacheSize bounds the verified tokens remembered, so that a token
	// presented again skips the signature check (its expiry is checked
	// on every use); zero means [DefaultTokenCacheSize], negative
	// disables the cache.
	CacheSize int
	// CacheTTL bounds how long a verified token is remembered; zero means
	// [DefaultTokenCacheTTL].
	CacheTTL time.Duration
	// Now overrides the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// A JWTVerifier is a [TokenVerifier] of JSON Web Token access tokens
// (RFC 9068) signed by one trusted authorization server. It checks the
// signature against the issuer's key set (JWKS), fetched and cached, with
// an algorithm allow-list; the times ("exp", required, "nbf", "iat")
// within a clock skew; the issuer; the audience (this resource, RFC
// 8707); and optionally the "typ" header. Scopes come from "scope" (a
// space-separated string) or "scp" (an array), the DPoP binding from
// "cnf.jkt". It is safe for concurrent use.
//
// Bounds: a token is at most [MaxTokenSize] and costs at most 10
// signature checks (the keys of the set it may name); a metadata document
// or key set is at most [MaxDocumentSize], fetched within FetchTimeout, at
// most once per RefetchInterval (keys of unknown types in a set are
// skipped); at most CacheSize verified tokens are remembered.
type JWTVerifier struct {
	issuer   string
	audience string
	algs     []jose.SignatureAlgorithm
	skew     time.Duration
	typ      string
	now      func() time.Time
	keys     *keySource
	cache    *tokenCache
}

// NewJWTVerifier returns a verifier of tokens issued by opts.Issuer for
// opts.Audience. The issuer's metadata and key set are fetched at the
// first verification.
func NewJWTVerifier(opts *JWTOptions) (*JWTVerifier, error) {
	if opts == nil {
		return nil, errors.New("auth: NewJWTVerifier: options are required")
	}
	if err := CheckURL(opts.Issuer); err != nil {
		return nil, fmt.Errorf("auth: JWT issuer: %w", err)
	}
	if opts.Audience == "" {
		return nil, errors.New("auth: JWT audience (the resource URL) is required")
	}
	if opts.JWKSURL != "" {
		if err := CheckURL(opts.JWKSURL); err != nil {
			return nil, fmt.Errorf("auth: JWKS URL: %w", err)
		}
	}
	algs := allowedAlgorithms(opts.Algorithms)
	if len(algs) == 0 {
		return nil, errors.New("auth: no asymmetric JWS algorithm is allowed")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	skew := opts.ClockSkew
	if skew == 0 {
		skew = DefaultClockSkew
	} else if skew < 0 {
		skew = 0
	}
	v := &JWTVerifier{
		issuer:   opts.Issuer,
		audience: opts.Audience,
		algs:     algs,
		skew:     skew,
		typ:      normalType(opts.RequiredType),
		now:      now,
		cache:    newTokenCache(opts.CacheSize, opts.CacheTTL),
		keys: &keySource{
			issuer:      opts.Issuer,
			jwksURL:     opts.JWKSURL,
			client:      defaultClient(opts.HTTPClient),
			timeout:     orDefault(opts.FetchTimeout, DefaultFetchTimeout),
			ttl:         orDefault(opts.KeySetTTL, DefaultKeySetTTL),
			minInterval: orDefault(opts.RefetchInterval, DefaultKeySetRefetchInterval),
			now:         now,
		},
	}
	return v, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// allowedAlgorithms returns the asymmetric algorithms of algs (nil:
// DefaultAlgorithms), dropping "none" and HMAC.
func allowedAlgorithms(algs []string) []jose.SignatureAlgorithm {
	if algs == nil {
		algs = defaultAsymmetricAlgorithms
	}
	out := make([]jose.SignatureAlgorithm, 0, len(algs))
	for _, a := range algs {
		if a == "" || strings.EqualFold(a, "none") || strings.HasPrefix(strings.ToUpper(a), "HS") {
			continue
		}
		out = append(out, jose.SignatureAlgorithm(a))
	}
	return out
}

// normalType lowers a media type and drops "application/".
func normalType(t string) string {
	t = strings.ToLower(t)
	return strings.TrimPrefix(t, "application/")
}

// jwtClaims are the claims a JWTVerifier reads.
type jwtClaims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ID        string           `json:"jti"`
	Scope     string           `json:"scope"`
	SCP       json.RawMessage  `json:"scp"`
	ClientID  string           `json:"client_id"`
	AZP       string           `json:"azp"`
	CNF       *struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

// VerifyToken implements [TokenVerifier]. Errors wrap [ErrInvalidToken]
// (with [ErrExpiredToken], [ErrTokenNotYetValid], [ErrWrongAudience],
// [ErrWrongIssuer] or [ErrBadSignature] for those causes) or, when the key
// set could not be fetched, [ErrVerifierUnavailable].
func (v *JWTVerifier) VerifyToken(ctx context.Context, token string) (*TokenInfo, error) {
	if len(token) > MaxTokenSize {
		return nil, invalid(ErrInvalidToken, "larger than %d bytes", MaxTokenSize)
	}
	now := v.now()
	key := tokenKey(token)
	if info := v.cache.get(key, now); info != nil {
		if err := v.checkExpiry(info.Expiry, now); err != nil {
			return nil, err
		}
		return info, nil
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, invalid(ErrBadSignature, "%v", err)
	}
	if len(tok.Headers) != 1 {
		return nil, invalid(ErrBadSignature, "want one signature")
	}
	h := tok.Headers[0]
	if v.typ != "" {
		if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); normalType(typ) != v.typ {
			return nil, invalid(ErrInvalidToken, "typ %q is not %q", truncate(typ, 40), v.typ)
		}
	}
	keys, err := v.keys.lookup(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	var (
		c   jwtClaims
		raw map[string]json.RawMessage
	)
	lastErr := errors.New("no key of the issuer's key set is for its algorithm")
	verified := false
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if lastErr = tok.Claims(k.Key, &c, &raw); lastErr == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalid(ErrBadSignature, "%v", lastErr)
	}
	info, err := v.check(&c, raw, now)
	if err != nil {
		return nil, err
	}
	info.withPrincipal()
	v.cache.put(key, info, info.Expiry.Add(v.skew), now)
	return info, nil
}

// check checks verified claims and makes the TokenInfo.
func (v *JWTVerifier) check(c *jwtClaims, raw map[string]json.RawMessage, now time.Time) (*TokenInfo, error) {
	if c.Issuer != v.issuer {
		return nil, invalid(ErrWrongIssuer, "iss %q", truncate(c.Issuer, 100))
	}
	if !c.Audience.Contains(v.audience) {
		return nil, ErrWrongAudience
	}
	if c.Expiry == nil {
		return nil, invalid(ErrInvalidToken, "no exp")
	}
	info := &TokenInfo{
		Issuer:   c.Issuer,
		Subject:  c.Subject,
		ClientID: c.ClientID,
		Audience: []string(c.Audience),
		Expiry:   c.Expiry.Time(),
		ID:       c.ID,
		Claims:   raw,
	}
	if err := v.checkExpiry(info.Expiry, now); err != nil {
		return nil, err
	}
	if c.NotBefore != nil && c.NotBefore.Time().After(now.Add(v.skew)) {
		return nil, invalid(ErrTokenNotYetValid, "nbf in the future")
	}
	if c.IssuedAt != nil {
		info.IssuedAt = c.IssuedAt.Time()
		if info.IssuedAt.After(now.Add(v.skew)) {
			return nil, invalid(ErrTokenNotYetValid, "iat in the future")
		}
	}
	if c.Subject == "" {
		return nil, invalid(ErrInvalidToken, "no sub")
	}
	if info.ClientID == "" {
		info.ClientID = c.AZP
	}
	scopes, err := parseScopes(c.Scope, c.SCP)
	if err != nil {
		return nil, err
	}
	info.Scopes = scopes
	if c.CNF != nil {
		info.ConfirmationThumbprint = c.CNF.JKT
	}
	return info, nil
}

// checkExpiry refuses a token expired at now, beyond the skew.
func (v *JWTVerifier) checkExpiry(exp time.Time, now time.Time) error {
	if !exp.IsZero() && !now.Before(exp.Add(v.skew)) {
		return ErrExpiredToken
	}
	return nil
}

// parseScopes reads the scopes of "scope" (space-separated) or "scp" (an
// array of strings, or a space-separated string).
func parseScopes(scope string, scp json.RawMessage) ([]string, error) {
	if scope != "" {
		return strings.Fields(scope), nil
	}
	if len(scp) == 0 || string(scp) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(scp, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(scp, &s); err != nil {
		return nil, invalid(ErrInvalidToken, "scp is neither a string nor an array of strings")
	}
	return strings.Fields(s), nil
}
