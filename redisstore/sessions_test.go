package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// sessionIDs returns n session IDs a random key ring mints.
func sessionIDs(n int) []string {
	r := mcp.NewRandomKeyRing()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = r.MintSessionID()
	}
	return ids
}

// TestSessionStoreSuite runs the transport session store suite on each
// backend.
func TestSessionStoreSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.SessionStoreSuite(t, func(t *testing.T, clock *mcptest.SessionStoreClock) transport.SessionStore {
				s, err := NewSessionStore(b.client(t), &SessionStoreOptions{Prefix: testPrefix(), Timeout: testTimeout, Now: clock.Now})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}, sessionIDs)
		})
	}
}

// TestSessionStoreKeys checks the key layout: the record under the
// session's hash tag, the admission sets in the {sessions} slot, every key
// with a TTL no longer than the session's, none left once the sessions
// are deleted, and no key built from an invalid ID or peer.
func TestSessionStoreKeys(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c, prefix := b.client(t), testPrefix()
			s, err := NewSessionStore(c, &SessionStoreOptions{Prefix: prefix, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ids := sessionIDs(2)
			peer := strings.Repeat("P", 43)
			for i, id := range ids {
				rec := &transport.SessionRecord{ID: id, Peer: []string{peer, ""}[i], Expires: time.Now().Add(time.Minute)}
				if err := s.Create(ctx, rec, transport.SessionLimits{MaxSessions: 10, MaxSessionsPerPeer: 1}); err != nil {
					t.Fatal(err)
				}
			}
			for _, bad := range []string{"a{b}", "x-(1", strings.Repeat("a", 200), "a b"} {
				rec := &transport.SessionRecord{ID: bad, Expires: time.Now().Add(time.Minute)}
				if err := s.Create(ctx, rec, transport.SessionLimits{}); err == nil {
					t.Errorf("Create(%q) succeeded", bad)
				}
				rec = &transport.SessionRecord{ID: sessionIDs(1)[0], Peer: bad, Expires: time.Now().Add(time.Minute)}
				if err := s.Create(ctx, rec, transport.SessionLimits{}); err == nil {
					t.Errorf("Create with peer %q succeeded", bad)
				}
			}
			keys := keysUnder(t, c, prefix)
			want := map[string]bool{
				prefix + "{" + ids[0] + "}:sess":   true,
				prefix + "{" + ids[1] + "}:sess":   true,
				prefix + "{sessions}:all":          true,
				prefix + "{sessions}:peer:" + peer: true,
			}
			if len(keys) != len(want) {
				t.Fatalf("keys: %v", keys)
			}
			for k, ttl := range keys {
				if !want[k] {
					t.Errorf("unexpected key %q", k)
				}
				if ttl <= 0 || ttl > time.Minute {
					t.Errorf("key %q has TTL %v, want (0, 1m]", k, ttl)
				}
			}
			for _, id := range ids {
				if err := s.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("keys left after Delete: %v", keys)
			}
		})
	}
}

// TestSessionStoreReplicas runs the replica scenarios (three handlers
// behind a round-robin proxy) on each backend.
func TestSessionStoreReplicas(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.SessionStoreReplicas(t, func(t *testing.T) transport.SessionStore {
				c := b.client(t)
				// The client's own goroutines (a Cluster client's) start
				// with its first command, before the goroutine check.
				if err := c.Ping(t.Context()).Err(); err != nil {
					t.Fatal(err)
				}
				s, err := NewSessionStore(c, &SessionStoreOptions{Prefix: testPrefix(), Timeout: testTimeout})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

// TestSessionStoreScriptFlushed: the scripts sent in a shared round trip
// (Create and Delete on one server) run again alone with EVAL when Redis
// has lost them (SCRIPT FLUSH, or a restart).
func TestSessionStoreScriptFlushed(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c, prefix := b.client(t), testPrefix()
			s, err := NewSessionStore(c, &SessionStoreOptions{Prefix: prefix, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			flush := func() {
				t.Helper()
				var err error
				if cc, ok := c.(*redis.ClusterClient); ok {
					err = cc.ForEachShard(ctx, func(ctx context.Context, sh *redis.Client) error { return sh.ScriptFlush(ctx).Err() })
				} else {
					err = c.ScriptFlush(ctx).Err()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range sessionIDs(2) {
				flush()
				if err := s.Create(ctx, &transport.SessionRecord{ID: id, Expires: time.Now().Add(time.Minute)}, transport.SessionLimits{MaxSessions: 10}); err != nil {
					t.Fatalf("Create after SCRIPT FLUSH: %v", err)
				}
				flush()
				if err := s.Delete(ctx, id); err != nil {
					t.Fatalf("Delete after SCRIPT FLUSH: %v", err)
				}
				if _, err := s.Get(ctx, id); !errors.Is(err, transport.ErrSessionNotFound) {
					t.Fatalf("Get after Delete: %v", err)
				}
			}
		})
	}
}

// TestSessionHoldersOOM checks that a replica restoring a session
// records itself as a holder when Redis refuses writes (maxmemory,
// noeviction), where restores keep working: the deletion on the
// creating replica still counts it, and so tells it.
func TestSessionHoldersOOM(t *testing.T) {
	p := startRedis(t, "--maxmemory-policy", "noeviction")
	c := p.client()
	s, err := NewSessionStore(c, &SessionStoreOptions{Prefix: testPrefix(), Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ids := sessionIDs(3)
	for _, id := range ids {
		if err := s.CreateHeld(ctx, &transport.SessionRecord{ID: id, Expires: time.Now().Add(time.Minute)}, transport.SessionLimits{}, "r-a"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	defer c.ConfigSet(context.WithoutCancel(ctx), "maxmemory", "0")
	if err := s.CreateHeld(ctx, &transport.SessionRecord{ID: sessionIDs(1)[0], Expires: time.Now().Add(time.Minute)}, transport.SessionLimits{}, "r-a"); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("CreateHeld out of memory: %v; want Redis' OOM refusal", err)
	}
	for i, tc := range []struct {
		reader string
		want   bool
	}{{"r-b", true}, {"r-a", false}, {"", false}} {
		if tc.reader != "" {
			if _, err := s.GetHeld(ctx, ids[i], tc.reader); err != nil {
				t.Fatalf("GetHeld out of memory: %v", err)
			}
		}
		elsewhere, err := s.DeleteHeld(ctx, ids[i], "r-a")
		if err != nil || elsewhere != tc.want {
			t.Errorf("DeleteHeld out of memory, read by %q: %v, %v; want %v", tc.reader, elsewhere, err, tc.want)
		}
	}
}
