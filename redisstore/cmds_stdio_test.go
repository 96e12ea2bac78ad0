package redisstore

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestCmdStdioServerSharesTasks runs cmd/stdio-server twice over stdio,
// with one -redis and one -keys file. At 2026-07-28 a task the report
// tool started in the first process is read, waited for and its result
// got through the second, as replicas serving one client would. In the
// handshake era a task of a session with no principal belongs to that
// session, and each process is a session of its own: the second process
// must not find it, though both share the store.
func TestCmdStdioServerSharesTasks(t *testing.T) {
	needRedisServer(t)
	p := startRedis(t)
	bin := goBuild(t, "./cmd/stdio-server")
	keys := keyFile(t)
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			connect := func() *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
					Era:   era,
					Tasks: &mcp.ClientTaskOptions{MinPollInterval: 10 * time.Millisecond, MaxPollInterval: 50 * time.Millisecond},
				})
				cs, err := c.Connect(ctx, &transport.CommandTransport{Command: exec.Command(bin, "-redis", p.addr(), "-keys", keys)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			a, b := connect(), connect()
			res, task, err := a.StartTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: []byte(`{"topic":"replicas","steps":2,"pauseMs":50}`)})
			if err != nil {
				t.Fatal(err)
			}
			if task == nil {
				t.Fatalf("report ran at once (%v), want a task", res)
			}
			other := b.Task(task.ID())
			if era == mcp.EraHandshake {
				if _, err := other.Status(ctx); err == nil {
					t.Fatalf("another session read task %s of a session with no principal", task.ID())
				}
				if _, err := task.Wait(ctx); err != nil { // its own session still can
					t.Fatal(err)
				}
				return
			}
			if _, err := other.Status(ctx); err != nil {
				t.Fatalf("the second process cannot read the first's task %s: %v", task.ID(), err)
			}
			got, err := other.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Content) != 1 {
				t.Fatalf("result %+v", got)
			}
			if text, ok := got.Content[0].(*mcp.TextContent); !ok || text.Text != "a report on replicas in 2 sections" {
				t.Fatalf("result %+v", got.Content[0])
			}
		})
	}
}
