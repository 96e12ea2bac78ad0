package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Defaults of the verified-token caches of [JWTVerifier] and
// [IntrospectionVerifier].
const (
	// DefaultTokenCacheSize bounds the tokens a verifier remembers as
	// verified: 10,000 entries (each about 200 bytes plus its claims).
	DefaultTokenCacheSize = 10000
	// DefaultTokenCacheTTL bounds how long a verified token is
	// remembered: 5 minutes, or until the token expires if sooner.
	DefaultTokenCacheTTL = 5 * time.Minute
)

// tokenCache remembers verified tokens, keyed by the SHA-256 of their
// text (the text itself is never held), until min(expiry, TTL). It holds
// at most size entries: when full, it drops expired entries, then
// arbitrary ones (a tenth of them), which are verified again when next
// presented. The zero size disables it.
type tokenCache struct {
	size int
	ttl  time.Duration

	mu sync.Mutex
	m  map[[sha256.Size]byte]tokenEntry
}

type tokenEntry struct {
	info  *TokenInfo
	until time.Time
}

// tokenKey returns the cache key of token: its SHA-256, computed without
// copying a token of usual size to the heap.
func tokenKey(token string) [sha256.Size]byte {
	var buf [2 << 10]byte
	if len(token) <= len(buf) {
		n := copy(buf[:], token)
		return sha256.Sum256(buf[:n])
	}
	return sha256.Sum256([]byte(token))
}

// newTokenCache returns a cache of size entries (0: the default;
// negative: none) and ttl (0: the default).
func newTokenCache(size int, ttl time.Duration) *tokenCache {
	if size == 0 {
		size = DefaultTokenCacheSize
	}
	if size < 0 {
		size = 0
	}
	if ttl <= 0 {
		ttl = DefaultTokenCacheTTL
	}
	return &tokenCache{size: size, ttl: ttl, m: make(map[[sha256.Size]byte]tokenEntry)}
}

// get returns the info of a token remembered and still fresh at now.
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) *TokenInfo {
	if c.size == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(c.m, key)
		return nil
	}
	return e.info
}

// put remembers info until min(until, now+ttl).
func (c *tokenCache) put(key [sha256.Size]byte, info *TokenInfo, until, now time.Time) {
	if c.size == 0 {
		return
	}
	if limit := now.Add(c.ttl); until.IsZero() || until.After(limit) {
		until = limit
	}
	if !now.Before(until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.size {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		// Still full: drop a tenth, arbitrary entries, so that the
		// sweep above runs once per many insertions, not per insertion.
		for k := range c.m {
			if len(c.m) <= c.size-c.size/10-1 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[key] = tokenEntry{info: info, until: until}
}

// len returns the number of entries, for tests.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
