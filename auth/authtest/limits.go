package authtest

import (
	"errors"
	"sync"
	"time"
)

// Bounds on what a Server reads and holds. When a table is full, the
// entries that expired are dropped; if it is still full, the request is
// refused (temporarily_unavailable), never served by forgetting state
// that protects against replay.
const (
	// MaxRequestBody bounds the body of a token, registration,
	// introspection or revocation request: 64 KiB.
	MaxRequestBody = 64 << 10
	// MaxClientDocument bounds a fetched client metadata document or
	// client key set: 64 KiB.
	MaxClientDocument = 64 << 10
	// DefaultMaxClients is the default bound on registered clients
	// (Options.MaxClients).
	DefaultMaxClients = 1000
	// MaxCodes bounds the authorization codes not yet redeemed.
	MaxCodes = 1000
	// MaxRefreshTokens bounds the live refresh tokens.
	MaxRefreshTokens = 10000
	// MaxSeenIDs bounds each set of used identifiers: client assertion
	// and grant assertion "jti"s, DPoP proof "jti"s, and revoked access
	// token "jti"s. An identifier is kept until the token or proof it
	// names could no longer be accepted.
	MaxSeenIDs = 10000
	// MaxCachedMetadataClients bounds the client metadata documents held
	// (each for MetadataClientTTL).
	MaxCachedMetadataClients = 100
	// MaxSigningKeys bounds the signing keys published; RotateKeys drops
	// the oldest past it.
	MaxSigningKeys = 10
	// FetchTimeout bounds one fetch of a client metadata document or key
	// set.
	FetchTimeout = 10 * time.Second
)

// Default lifetimes.
const (
	// DefaultAccessTokenTTL is the default Options.AccessTokenTTL.
	DefaultAccessTokenTTL = time.Hour
	// DefaultCodeTTL is the default Options.CodeTTL.
	DefaultCodeTTL = 60 * time.Second
	// DefaultRefreshTokenTTL is the default Options.RefreshTokenTTL.
	DefaultRefreshTokenTTL = 24 * time.Hour
	// IDJAGTTL is the lifetime of an ID-JAG the server issues.
	IDJAGTTL = 5 * time.Minute
	// MetadataClientTTL is how long a fetched client metadata document is
	// used before it is fetched again.
	MetadataClientTTL = 5 * time.Minute
	// ProofWindow bounds how far a DPoP proof's "iat" may be from now.
	ProofWindow = 5 * time.Minute
	// NonceTTL is how long a DPoP nonce the server gave stays valid (the
	// one before it is accepted for as long again).
	NonceTTL = 5 * time.Minute
	// MaxAssertionLifetime bounds how far in the future a client
	// assertion's or grant assertion's "exp" may be.
	MaxAssertionLifetime = time.Hour
)

// errFull reports a bounded table that is full.
var errFull = errors.New("authtest: too many entries")

// errSeen reports an identifier used before.
var errSeen = errors.New("authtest: identifier already used")

// idSet is a bounded set of identifiers, each kept until it expires.
type idSet struct {
	mu  sync.Mutex
	max int
	ids map[string]time.Time
}

func newIDSet(max int) *idSet { return &idSet{max: max, ids: map[string]time.Time{}} }

// add records id until exp. It fails with errSeen when id is held, and
// with errFull when the set is full of unexpired identifiers.
func (s *idSet) add(id string, exp, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.ids[id]; ok && now.Before(e) {
		return errSeen
	}
	if len(s.ids) >= s.max {
		for k, e := range s.ids {
			if !now.Before(e) {
				delete(s.ids, k)
			}
		}
		if len(s.ids) >= s.max {
			return errFull
		}
	}
	s.ids[id] = exp
	return nil
}

// has reports whether id is held and unexpired.
func (s *idSet) has(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ids[id]
	return ok && now.Before(e)
}
