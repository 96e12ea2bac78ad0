package redisstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// benchStore returns a store on the private redis-server, with bounds
// that b.N tasks do not reach, or skips b when none runs.
func benchStore(b *testing.B) *TaskStore {
	b.Helper()
	if serverAddr == "" {
		b.Skip("redisstore: no redis-server on PATH")
	}
	c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	s, err := NewTaskStore(c, &TaskStoreOptions{Prefix: testPrefix(), MaxTasks: 1 << 30, MaxUnfinishedPerOwner: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkTaskStore measures Create, Get and Update (a status message
// change, as progress is written) on a local redis-server.
func BenchmarkTaskStore(b *testing.B) {
	ctx := context.Background()
	b.Run("Create", func(b *testing.B) {
		s := benchStore(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec := &mcp.TaskRecord{Owner: fmt.Sprint("owner", i%64), Method: mcp.MethodToolsCall, Status: mcp.TaskCompleted, Result: []byte(`{"content":[]}`)}
			if err := s.Create(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Get", func(b *testing.B) {
		s := benchStore(b)
		rec := &mcp.TaskRecord{Owner: "alice", Method: mcp.MethodToolsCall, Status: mcp.TaskWorking}
		if err := s.Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(ctx, "alice", rec.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Update", func(b *testing.B) {
		s := benchStore(b)
		rec := &mcp.TaskRecord{Owner: "alice", Method: mcp.MethodToolsCall, Status: mcp.TaskWorking}
		if err := s.Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec.StatusMessage = fmt.Sprint("step ", i)
			if err := s.Update(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}
