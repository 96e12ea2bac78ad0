package redisstore

import (
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
	o := &TaskStoreOptions{Prefix: testPrefix(), Timeout: testTimeout}
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

func TestTaskStoreSuite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			mcptest.TaskStoreSuite(t, func(t *testing.T, opts *mcp.TaskStoreOptions) mcp.TaskStore {
				return newTestStore(t, b, opts)
			})
		})
	}
}
