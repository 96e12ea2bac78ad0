package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/redis/go-redis/v9"
)

// keysUnder returns the keys under prefix with their TTLs (-1: none).
// Tests may scan; the store never does.
func keysUnder(t *testing.T, c redis.UniversalClient, prefix string) map[string]time.Duration {
	t.Helper()
	ctx := t.Context()
	keys := map[string]time.Duration{}
	scan := func(ctx context.Context, n redis.UniversalClient) error {
		iter := n.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			ttl, err := n.PTTL(ctx, iter.Val()).Result()
			if err != nil {
				return err
			}
			keys[iter.Val()] = ttl
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, n)
		})
	} else {
		err = scan(ctx, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestKeys checks the key layout: the owner is encoded, never raw, in
// the hash tag; every key has a TTL once no task runs without a lease;
// none remains once the tasks are gone; input that is no ID or owner
// key builds no key.
func TestKeys(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			prefix := testPrefix()
			clock := new(mcptest.Clock)
			s, err := NewTaskStore(c, &TaskStoreOptions{Prefix: prefix, Timeout: testTimeout, Now: clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := t.Context()
			const owner = "evil}:{owner"
			create := func(rec *mcp.TaskRecord) *mcp.TaskRecord {
				t.Helper()
				rec.Owner = owner
				if err := s.Create(ctx, rec); err != nil {
					t.Fatal(err)
				}
				return rec
			}
			running := create(&mcp.TaskRecord{Status: mcp.TaskWorking})
			leased := create(&mcp.TaskRecord{Status: mcp.TaskWorking, Lease: &mcp.TaskLease{Holder: "r", Expires: clock.Now().Add(time.Minute)}})
			ended := create(&mcp.TaskRecord{Status: mcp.TaskCompleted, TTL: time.Minute})

			keys := keysUnder(t, c, prefix)
			if len(keys) != 3+3+3 { // three tasks, three owner indexes, three global keys
				t.Fatalf("keys: %v", keys)
			}
			for k, ttl := range keys {
				if strings.Contains(k, owner) || strings.Count(k, "{") != 1 || strings.Count(k, "}") != 1 {
					t.Errorf("key %q holds the raw owner or more than one hash tag", k)
				}
				// While a task runs without a lease, its key and the
				// indexes that hold it (the owner's and the global ones)
				// have no TTL; the other tasks' keys do.
				wantTTL := strings.HasSuffix(k, leased.ID) || strings.HasSuffix(k, ended.ID)
				if (ttl > 0) != wantTTL {
					t.Errorf("key %q has TTL %v; want one: %v", k, ttl, wantTTL)
				}
			}

			running.Status = mcp.TaskCompleted
			if err := s.Update(ctx, running); err != nil {
				t.Fatal(err)
			}
			for k, ttl := range keysUnder(t, c, prefix) {
				if ttl <= 0 || ttl > mcp.DefaultTaskTTL+time.Minute {
					t.Errorf("after the end of the last task running without a lease, key %q has TTL %v", k, ttl)
				}
			}

			for _, rec := range []*mcp.TaskRecord{running, leased, ended} {
				if err := s.Delete(ctx, owner, rec.ID); err != nil {
					t.Fatal(err)
				}
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("keys left after every task was deleted: %v", keys)
			}

			// Input that is no task ID or owner key builds no key.
			long := strings.Repeat("x", MaxOwnerBytes+1)
			for _, id := range []string{"a}b", "{x}", "a:b", "a b", "(", "é", strings.Repeat("a", 257)} {
				if err := s.Create(ctx, &mcp.TaskRecord{ID: id, Owner: "alice"}); err == nil || errors.Is(err, mcp.ErrTaskConflict) {
					t.Errorf("Create with ID %q: %v; want an invalid-ID error", id, err)
				}
				if _, err := s.Get(ctx, "alice", id); !errors.Is(err, mcp.ErrTaskNotFound) {
					t.Errorf("Get of ID %q: %v; want ErrTaskNotFound", id, err)
				}
			}
			if err := s.Create(ctx, &mcp.TaskRecord{Owner: long}); err == nil {
				t.Error("Create with an owner key too long succeeded")
			}
			if _, err := s.Get(ctx, long, "x"); !errors.Is(err, mcp.ErrTaskNotFound) {
				t.Errorf("Get with an owner key too long: %v; want ErrTaskNotFound", err)
			}
			if recs, next, err := s.List(ctx, long, ""); err != nil || len(recs) != 0 || next != "" {
				t.Errorf("List with an owner key too long: %v, %q, %v", recs, next, err)
			}
			if keys := keysUnder(t, c, prefix); len(keys) != 0 {
				t.Fatalf("keys made by invalid input: %v", keys)
			}
		})
	}
}

// TestOptions checks the options NewTaskStore refuses, and that a closed
// store refuses work.
func TestOptions(t *testing.T) {
	c := backends()[0].client(t)
	if _, err := NewTaskStore(c, &TaskStoreOptions{Prefix: "a{b}:"}); err == nil {
		t.Error("a prefix with braces was accepted")
	}
	if _, err := NewTaskStore(nil, nil); err == nil {
		t.Error("a nil client was accepted")
	}
	s, err := NewTaskStore(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultTTL() != mcp.DefaultTaskTTL {
		t.Errorf("DefaultTTL = %v; want %v", s.DefaultTTL(), mcp.DefaultTaskTTL)
	}
	s.Close()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ctx := context.Background()
	if err := s.Create(ctx, &mcp.TaskRecord{Owner: "alice"}); !errors.Is(err, mcp.ErrTaskStoreClosed) {
		t.Errorf("Create after Close: %v", err)
	}
	if err := s.Watch(ctx, "alice", "x", 1); !errors.Is(err, mcp.ErrTaskStoreClosed) {
		t.Errorf("Watch after Close: %v", err)
	}
}

// TestCorruptRecord checks that a stored record that does not decode is
// an error, never a panic nor "not found" (which would tell a client its
// task is gone).
func TestCorruptRecord(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			s, err := NewTaskStore(c, &TaskStoreOptions{Prefix: testPrefix(), Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := t.Context()
			rec := &mcp.TaskRecord{Owner: "alice"}
			if err := s.Create(ctx, rec); err != nil {
				t.Fatal(err)
			}
			keys, _ := s.keysOf("alice")
			if err := c.HSet(ctx, keys.taskPrefix()+rec.ID, "rec", "{not json").Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "alice", rec.ID); err == nil || errors.Is(err, mcp.ErrTaskNotFound) {
				t.Errorf("Get of a corrupt record: %v; want an error other than ErrTaskNotFound", err)
			}
			if _, _, err := s.List(ctx, "alice", ""); err == nil {
				t.Error("List over a corrupt record: no error")
			}
		})
	}
}
