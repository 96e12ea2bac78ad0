package redisstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// counter is a go-redis hook that counts the commands a client sends
// (a script is one: its EVALSHA, or EVALSHA then EVAL).
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// benchStore returns a store on the private redis-server, with bounds
// that b.N tasks do not reach, or skips b when none runs.
func benchStore(b *testing.B) (*TaskStore, *counter) {
	b.Helper()
	if serverAddr == "" {
		b.Skip("redisstore: no redis-server on PATH")
	}
	c := redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	n := new(counter)
	c.AddHook(n)
	s, err := NewTaskStore(c, &TaskStoreOptions{Prefix: testPrefix(), MaxTasks: 1 << 30, MaxUnfinishedPerOwner: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, n
}

// reportCommands reports the commands sent per operation since start.
func reportCommands(b *testing.B, n *counter, start int64) {
	b.ReportMetric(float64(n.n.Load()-start)/float64(b.N), "cmds/op")
}

// BenchmarkTaskStore measures Create, Get and Update (a status message
// change, as progress is written) on a local redis-server, with the Redis
// commands each sends.
func BenchmarkTaskStore(b *testing.B) {
	ctx := context.Background()
	b.Run("Create", func(b *testing.B) {
		s, n := benchStore(b)
		start := n.n.Load()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec := &mcp.TaskRecord{Owner: fmt.Sprint("owner", i%64), Method: mcp.MethodToolsCall, Status: mcp.TaskCompleted, Result: []byte(`{"content":[]}`)}
			if err := s.Create(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		reportCommands(b, n, start)
	})
	b.Run("Get", func(b *testing.B) {
		s, n := benchStore(b)
		rec := &mcp.TaskRecord{Owner: "alice", Method: mcp.MethodToolsCall, Status: mcp.TaskWorking}
		if err := s.Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		start := n.n.Load()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(ctx, "alice", rec.ID); err != nil {
				b.Fatal(err)
			}
		}
		reportCommands(b, n, start)
	})
	b.Run("Update", func(b *testing.B) {
		s, n := benchStore(b)
		rec := &mcp.TaskRecord{Owner: "alice", Method: mcp.MethodToolsCall, Status: mcp.TaskWorking}
		if err := s.Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		start := n.n.Load()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec.StatusMessage = fmt.Sprint("step ", i)
			if err := s.Update(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		reportCommands(b, n, start)
	})
}
