package redisstore

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxKeyTTL bounds the TTL of every key the fleet's stores write, with
// the defaults: a session record lives SessionIdleTimeout (10 minutes)
// after its last touch, events MaxAge (5 minutes) after their session's
// last write, a claim the state's RequestStateTTL (10 minutes) and a
// minute more; a few seconds of clock reading on top.
const maxKeyTTL = 11*time.Minute + 10*time.Second

// checkTTLs checks that every key under prefix has a TTL, of at most max
// (SCAN, a test's tool only), and returns the keys.
func checkTTLs(t *testing.T, c redis.UniversalClient, prefix string, max time.Duration) map[string]time.Duration {
	t.Helper()
	keys := keysUnder(t, c, prefix)
	for k, ttl := range keys {
		if ttl <= 0 || ttl > max {
			t.Errorf("key %s: TTL %v, want within (0, %v]", k, ttl, max)
		}
	}
	return keys
}

// isClaim reports whether key is a StateClaimer's: it outlives sessions,
// for its state's TTL.
func isClaim(prefix, key string) bool {
	return strings.HasPrefix(key, prefix+"{r") && strings.HasSuffix(key, "}:used")
}

// leftover tells the keys that may outlive the sessions of a test, each
// until its TTL, beside the claims of single-use states.
type leftover func(key string, ttl time.Duration) bool

// eventsOf allows the events of sessions whose record Redis lost while a
// replica still wrote their events: kept for the event store's MaxAge.
func (f *fleet) eventsOf(sids ...string) leftover {
	return func(key string, ttl time.Duration) bool {
		for _, sid := range sids {
			if strings.HasPrefix(key, f.prefix+"ev:{"+sid+"}:") && ttl <= DefaultEventMaxAge {
				return true
			}
		}
		return false
	}
}

// lostReplies allows what writes whose reply was lost (Redis paused past
// their deadline, then running them) may leave: an admission slot, or the
// record of a session whose initialize got 503, until the session's
// expiry (SessionIdleTimeout, 10 minutes).
func (f *fleet) lostReplies(key string, ttl time.Duration) bool {
	return ttl <= 10*time.Minute+10*time.Second &&
		(strings.HasPrefix(key, f.prefix+"{sessions}:") || strings.HasSuffix(key, "}:sess"))
}

// checkKeys checks the fleet's keys after a test: each has a bounded TTL;
// then, once the sessions sids are deleted (DELETE on replica 0), no key
// is left but the claims of single-use states (which expire on their own)
// and what left allows (nil: nothing).
func (f *fleet) checkKeys(t *testing.T, left leftover, sids ...string) {
	t.Helper()
	checkTTLs(t, f.client, f.prefix, maxKeyTTL)
	for _, sid := range sids {
		r := f.send(t.Context(), 0, http.MethodDelete, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
		if r.status != http.StatusNoContent && r.status != http.StatusOK {
			t.Errorf("DELETE %s: %d %s", sid, r.status, r.body)
		}
	}
	for k, ttl := range checkTTLs(t, f.client, f.prefix, maxKeyTTL) {
		if !isClaim(f.prefix, k) && (left == nil || !left(k, ttl)) {
			t.Errorf("key %s left once the sessions ended", k)
		}
	}
}
