package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Defaults of a [JWTVerifier]'s key set.
const (
	// DefaultKeySetTTL is how long a fetched key set is used before it is
	// fetched again: 1 hour. A token signed with a key the set lacks
	// makes it fetched sooner (see DefaultKeySetRefetchInterval).
	DefaultKeySetTTL = time.Hour
	// DefaultKeySetRefetchInterval is the least time between two fetches
	// of the key set: 30 seconds. A flood of tokens naming made-up keys
	// costs at most one fetch per interval.
	DefaultKeySetRefetchInterval = 30 * time.Second
	// DefaultFetchTimeout bounds one fetch of metadata or of a key set:
	// 10 seconds.
	DefaultFetchTimeout = 10 * time.Second
	// maxKeys bounds the keys of a key set tried for a token without a
	// "kid" (or naming a kid several keys share), so that a forged token
	// costs at most this many signature checks.
	maxKeys = 10
)

// keySource fetches and caches the key set of an issuer. Callers that
// need a fetch at the same time share one; fetches are at least
// minInterval apart, whatever the tokens ask; a failed fetch keeps the
// previous keys.
type keySource struct {
	issuer      string // for discovery, when jwksURL is ""
	client      *http.Client
	timeout     time.Duration
	ttl         time.Duration
	minInterval time.Duration
	now         func() time.Time

	mu        sync.Mutex
	jwksURL   string
	keys      *jose.JSONWebKeySet
	fetched   time.Time // when keys were fetched
	attempted time.Time // when the last fetch started
	lastErr   error     // of the last fetch, nil when it succeeded
	inflight  *keyFetch
}

// keyFetch is a fetch in progress; done closes when err is set.
type keyFetch struct {
	done chan struct{}
	err  error
}

// lookup returns the keys of the set that may verify a token with key ID
// kid (every key, up to maxKeys, when kid is ""). When the set has such
// keys but is older than ttl, it is fetched again in the background and
// the keys at hand are used meanwhile. When it has none (no set yet, or
// an unknown kid), the caller waits for a fetch, shared with any other
// caller, unless a fetch started less than minInterval ago.
func (s *keySource) lookup(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	now := s.now()
	var found []jose.JSONWebKey
	if s.keys != nil {
		found = matching(s.keys, kid)
	}
	if len(found) > 0 {
		if now.Sub(s.fetched) >= s.ttl && s.inflight == nil && s.mayFetch(now) {
			s.start(ctx, now)
		}
		s.mu.Unlock()
		return found, nil
	}
	f := s.inflight
	if f == nil {
		if !s.mayFetch(now) {
			err, haveKeys := s.lastErr, s.keys != nil
			s.mu.Unlock()
			if !haveKeys && err != nil {
				return nil, err
			}
			return s.result(nil)
		}
		f = s.start(ctx, now)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the key set: %w", ErrVerifierUnavailable, context.Cause(ctx))
	}
	s.mu.Lock()
	if s.keys != nil {
		found = matching(s.keys, kid)
	}
	haveKeys := s.keys != nil
	s.mu.Unlock()
	if f.err != nil && !haveKeys {
		return nil, f.err
	}
	return s.result(found)
}

// mayFetch reports whether a fetch may start at now: none started in the
// last minInterval. s.mu is held.
func (s *keySource) mayFetch(now time.Time) bool {
	return s.attempted.IsZero() || now.Sub(s.attempted) >= s.minInterval
}

// start starts a fetch, bounded by the fetch timeout and not by ctx's
// cancellation (its callers share it). s.mu is held and no fetch is in
// flight.
func (s *keySource) start(ctx context.Context, now time.Time) *keyFetch {
	f := &keyFetch{done: make(chan struct{})}
	s.inflight = f
	s.attempted = now
	go s.fetch(context.WithoutCancel(ctx), f)
	return f
}

// result is what lookup returns for the keys it found.
func (s *keySource) result(found []jose.JSONWebKey) ([]jose.JSONWebKey, error) {
	if len(found) == 0 {
		return nil, invalid(ErrBadSignature, "no key of the issuer's key set matches")
	}
	return found, nil
}

// matching returns the signature keys of set with ID kid, or all of them
// (up to maxKeys) when kid is "". Private and symmetric keys never
// verify tokens.
func matching(set *jose.JSONWebKeySet, kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range set.Keys {
		if (kid != "" && k.KeyID != kid) || (k.Use != "" && k.Use != "sig") || !k.Valid() || !k.IsPublic() {
			continue
		}
		if _, symmetric := k.Key.([]byte); symmetric {
			continue
		}
		out = append(out, k)
		if len(out) == maxKeys {
			break
		}
	}
	return out
}

// fetch fetches the key set (discovering its URL first if need be) and
// publishes the result to f's waiters and to s.
func (s *keySource) fetch(ctx context.Context, f *keyFetch) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.mu.Lock()
	jwksURL := s.jwksURL
	s.mu.Unlock()
	var err error
	if jwksURL == "" {
		jwksURL, err = discoverJWKSURL(ctx, s.client, s.issuer)
	}
	var set jose.JSONWebKeySet
	if err == nil {
		set, err = fetchKeySet(ctx, s.client, jwksURL)
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrVerifierUnavailable, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight = nil
	s.lastErr = err
	if err == nil {
		s.jwksURL = jwksURL
		s.keys = &set
		s.fetched = s.now()
	}
	f.err = err
	close(f.done)
}

// fetchKeySet fetches a key set. Keys that do not parse (of a type
// go-jose does not know, say) are skipped; a set without a key that
// parses is an error.
func fetchKeySet(ctx context.Context, client *http.Client, jwksURL string) (jose.JSONWebKeySet, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	var set jose.JSONWebKeySet
	if err := getJSON(ctx, client, jwksURL, &raw); err != nil {
		return set, err
	}
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(r) == nil {
			set.Keys = append(set.Keys, k)
		}
	}
	if len(set.Keys) == 0 {
		return set, fmt.Errorf("auth: the key set at %s holds no usable key", redactURL(jwksURL))
	}
	return set, nil
}

// discoverJWKSURL finds the jwks_uri of issuer in its metadata.
func discoverJWKSURL(ctx context.Context, client *http.Client, issuer string) (string, error) {
	md, err := discoverMetadata(ctx, client, issuer)
	if err != nil {
		return "", err
	}
	if md.JWKSURI == "" {
		return "", fmt.Errorf("auth: metadata of %q has no jwks_uri", issuer)
	}
	if err := CheckURL(md.JWKSURI); err != nil {
		return "", fmt.Errorf("auth: jwks_uri: %w", err)
	}
	return md.JWKSURI, nil
}

// discoverMetadata fetches the metadata of issuer, trying the well-known
// URLs in the order of [ServerMetadataURLs]; the first that answers is
// used, and must name issuer as its issuer.
func discoverMetadata(ctx context.Context, client *http.Client, issuer string) (*ServerMetadata, error) {
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, u := range urls {
		var md ServerMetadata
		if err := getJSON(ctx, client, u, &md); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("auth: metadata at %s names issuer %q, not %q", u, truncate(md.Issuer, 100), issuer)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("auth: no metadata for issuer %q: %w", issuer, errors.Join(errs...))
}
