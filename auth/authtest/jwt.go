package authtest

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mcpkit/mcpkit/auth"
)

// A TrustedIssuer is an identity provider or workload issuer whose
// signed tokens the server accepts: ID tokens (in token exchange),
// ID-JAGs and workload identity tokens (in the JWT bearer grant).
type TrustedIssuer struct {
	// Issuer is the "iss" the tokens carry.
	Issuer string
	// Keys verify the tokens: *ecdsa.PublicKey, *rsa.PublicKey or
	// ed25519.PublicKey values, or jose.JSONWebKey values (whose key IDs
	// are matched against the token's "kid").
	Keys []crypto.PublicKey
	// JWKSURI, when set, is the issuer's key set, fetched (bounded by
	// MaxClientDocument and FetchTimeout) for a token none of Keys
	// verifies.
	JWKSURI string
}

// TrustedIssuer returns the server as a TrustedIssuer, for another
// Server's Options: its issuer, its current public keys and its jwks_uri
// (fetched with the other server's Options.HTTPClient).
func (s *Server) TrustedIssuer() TrustedIssuer {
	ti := TrustedIssuer{Issuer: s.URL, JWKSURI: s.URL + pathJWKS}
	for _, k := range s.ownKeys() {
		ti.Keys = append(ti.Keys, k)
	}
	return ti
}

// claims are the JWT claims the server reads.
type claims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ID        string           `json:"jti"`
	ClientID  string           `json:"client_id"`
	Scope     string           `json:"scope"`
	Resource  jwt.Audience     `json:"resource"`
	Email     string           `json:"email"`
	Cnf       *struct {
		JKT string `json:"jkt"`
	} `json:"cnf"`
}

// maxJWTSize bounds a token or assertion the server parses.
const maxJWTSize = 16 << 10

// clockSkew is the leeway on "exp", "nbf" and "iat".
const clockSkew = 30 * time.Second

// A parsedJWT is a JWS whose claims were read but whose signature is not
// yet verified.
type parsedJWT struct {
	jws    *jose.JSONWebSignature
	typ    string
	kid    string
	claims claims
}

// parseJWT parses a compact JWS signed with an asymmetric algorithm and
// reads its claims without verifying them.
func parseJWT(token string) (*parsedJWT, error) {
	if len(token) > maxJWTSize {
		return nil, fmt.Errorf("larger than %d bytes", maxJWTSize)
	}
	algs := make([]jose.SignatureAlgorithm, 0, 10)
	for _, a := range auth.DefaultAlgorithms() {
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	jws, err := jose.ParseSignedCompact(token, algs)
	if err != nil {
		return nil, errors.New("not a JWS compact serialization with an accepted algorithm")
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	p := &parsedJWT{jws: jws, kid: jws.Signatures[0].Protected.KeyID}
	p.typ, _ = jws.Signatures[0].Protected.ExtraHeaders[jose.HeaderType].(string)
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &p.claims); err != nil {
		return nil, errors.New("claims are not a JSON object of the expected types")
	}
	return p, nil
}

// verify checks the signature with one of keys (those whose key ID
// matches the token's, when both have one).
func (p *parsedJWT) verify(keys []jose.JSONWebKey) error {
	for _, k := range keys {
		if p.kid != "" && k.KeyID != "" && k.KeyID != p.kid {
			continue
		}
		if _, err := p.jws.Verify(k.Key); err == nil {
			return nil
		}
	}
	return errNoKey
}

// checkTimes checks "exp" (required), "nbf" and "iat" at now; maxLife,
// when positive, bounds how far in the future "exp" may be.
func (c *claims) checkTimes(now time.Time, maxLife time.Duration) error {
	if c.Expiry == nil {
		return errors.New("no exp")
	}
	if now.Add(-clockSkew).After(c.Expiry.Time()) {
		return errors.New("expired")
	}
	if maxLife > 0 && c.Expiry.Time().After(now.Add(maxLife+clockSkew)) {
		return fmt.Errorf("exp more than %v ahead", maxLife)
	}
	if c.NotBefore != nil && now.Add(clockSkew).Before(c.NotBefore.Time()) {
		return errors.New("not valid yet (nbf)")
	}
	if c.IssuedAt != nil && now.Add(clockSkew).Before(c.IssuedAt.Time()) {
		return errors.New("issued in the future (iat)")
	}
	return nil
}

// hasAudience reports whether the claims' "aud" holds one of want.
func (c *claims) hasAudience(want ...string) bool {
	return slices.ContainsFunc(want, c.Audience.Contains)
}

// toJWKs turns TrustedIssuer.Keys or Client.PublicKeys into JWKs.
func toJWKs(keys []crypto.PublicKey) []jose.JSONWebKey {
	out := make([]jose.JSONWebKey, 0, len(keys))
	for _, k := range keys {
		switch k := k.(type) {
		case jose.JSONWebKey:
			out = append(out, k)
		case *jose.JSONWebKey:
			out = append(out, *k)
		case crypto.PublicKey:
			out = append(out, jose.JSONWebKey{Key: k})
		}
	}
	return out
}

// checkKeys reports keys that cannot verify a signature: private,
// symmetric or of an unknown type.
func checkKeys(keys []jose.JSONWebKey) error {
	for _, k := range keys {
		if !k.Valid() || !k.IsPublic() {
			return errors.New("keys must be valid public keys")
		}
	}
	return nil
}

// issuerKeys returns the keys that verify tokens of issuer iss: the
// server's own when iss is the server, a trusted issuer's (fetching its
// key set when none of its Keys verifies p), or ok false for an untrusted issuer.
func (s *Server) issuerKeys(ctx context.Context, iss string, p *parsedJWT) (keys []jose.JSONWebKey, ok bool) {
	if iss == s.URL {
		return s.ownKeys(), true
	}
	for _, ti := range s.opts.TrustedIssuers {
		if ti.Issuer != iss || iss == "" {
			continue
		}
		keys := toJWKs(ti.Keys)
		if p.verify(keys) == nil || ti.JWKSURI == "" {
			return keys, true
		}
		set, err := s.fetchKeySet(ctx, ti.JWKSURI)
		if err != nil {
			return keys, true
		}
		return set.Keys, true
	}
	return nil, false
}

// verifyTrusted parses token, checks that a trusted issuer (or the
// server itself) signed it, and checks its times.
func (s *Server) verifyTrusted(ctx context.Context, token string) (*parsedJWT, error) {
	p, err := parseJWT(token)
	if err != nil {
		return nil, err
	}
	keys, ok := s.issuerKeys(ctx, p.claims.Issuer, p)
	if !ok {
		return nil, errors.New("issuer is not trusted")
	}
	if err := p.verify(keys); err != nil {
		return nil, err
	}
	if err := p.claims.checkTimes(s.now(), 0); err != nil {
		return nil, err
	}
	return p, nil
}

// fetchKeySet fetches a JSON Web Key Set, bounded in size and time, and
// keeps only its valid public keys.
func (s *Server) fetchKeySet(ctx context.Context, uri string) (*jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := s.fetchJSON(ctx, uri, &set); err != nil {
		return nil, err
	}
	keys := set.Keys[:0]
	for _, k := range set.Keys {
		if k.Valid() && k.IsPublic() {
			keys = append(keys, k)
		}
	}
	set.Keys = keys
	return &set, nil
}

// errFetch reports a document that could not be fetched.
var errFetch = errors.New("fetch failed")

// fetchJSON GETs uri (HTTPS, or HTTP on loopback), following no
// redirects, and decodes a JSON answer of at most MaxClientDocument
// bytes into v.
func (s *Server) fetchJSON(ctx context.Context, uri string, v any) error {
	if err := auth.CheckURL(uri); err != nil {
		return fmt.Errorf("%w: %w", errFetch, err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", errFetch, err)
	}
	req.Header.Set("Accept", "application/json")
	client := s.opts.HTTPClient
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s did not answer", errFetch, redact(uri))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered HTTP %d", errFetch, redact(uri), resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxClientDocument+1))
	if err != nil {
		return fmt.Errorf("%w: reading %s", errFetch, redact(uri))
	}
	if len(b) > MaxClientDocument {
		return fmt.Errorf("%w: %s is larger than %d bytes", errFetch, redact(uri), MaxClientDocument)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s is not the expected JSON", errFetch, redact(uri))
	}
	return nil
}

// redact drops the query and fragment of a URL, for messages.
func redact(uri string) string {
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		return uri[:i]
	}
	return uri
}
