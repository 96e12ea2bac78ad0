package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// testTimeout bounds each Redis round trip in tests: generous, as -race
// and a loaded machine slow the scripts down.
const testTimeout = 5 * time.Second

// newTestStore returns a store on a client of b with opts' mcp bounds.
func newTestStore(t *testing.T, b backend, opts *mcp.TaskStoreOptions) *TaskStore {
	t.Helper()
	// No recheck within a test: only the announcements of changes wake
	// watches, so that the suite's Watch case checks them.
	o := &TaskStoreOptions{Prefix: testPrefix(), Timeout: testTimeout, WatchRecheck: time.Hour}
	if opts != nil {
		o.MaxTasks, o.MaxUnfinishedPerOwner, o.MaxPayloadBytes = opts.MaxTasks, opts.MaxUnfinishedPerOwner, opts.MaxPayloadBytes
		o.DefaultTTL, o.PageSize, o.Now = opts.DefaultTTL, opts.PageSize, opts.Now
	}
	s, err := NewTaskStore(b.client(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTaskStoreSuite runs the mcp package's store suite on each backend.
func TestTaskStoreSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.TaskStoreSuite(t, func(t *testing.T, opts *mcp.TaskStoreOptions) mcp.TaskStore {
				return newTestStore(t, b, opts)
			})
		})
	}
}

// TestWatchGoroutines checks that watches, ended by their context, by a
// change and by Close, leave no goroutine once the store is closed, the
// store's subscription included.
func TestWatchGoroutines(t *testing.T) {
	b := backends()[len(backends())-1]
	c := b.client(t)
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		// Closed after the store and before the goroutine check: a cluster
		// client starts its node clients (and their goroutines) on demand.
		t.Cleanup(func() { c.Close() })
		s, err := NewTaskStore(c, &TaskStoreOptions{Prefix: testPrefix(), Timeout: testTimeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		rec := &mcp.TaskRecord{Owner: "alice"}
		if err := s.Create(ctx, rec); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 2)
		id, v := rec.ID, rec.Version
		go func() { done <- s.Watch(wctx, "alice", id, v) }()
		go func() { done <- s.Watch(ctx, "alice", id, v) }()
		cancel()
		rec.StatusMessage = "changed"
		if err := s.Update(ctx, rec); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
		}
		v = rec.Version
		go func() { done <- s.Watch(ctx, "alice", id, v) }()
		// The watch may not have subscribed yet when Close runs: either way
		// it returns.
		s.Close()
		if err := <-done; err != nil && !errors.Is(err, mcp.ErrTaskStoreClosed) {
			t.Fatalf("Watch across Close: %v; want nil or ErrTaskStoreClosed", err)
		}
	})
}
