package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// replica returns a server whose tasks live in store, as one of several
// replicas sharing it (the same owner key), with a tool "block" that runs
// as a task until its context ends: it tells started when it runs and
// cancelled when its context ended.
func replica(t *testing.T, id string, store mcp.TaskStore, ownerKey []byte, started, cancelled chan<- string) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "replicated", Version: "1"}, &mcp.ServerOptions{
		Tasks: &mcp.TaskOptions{Store: store, OwnerKey: ownerKey, ReplicaID: id},
		// Every caller is the same principal, so that its tasks are its
		// own on each replica and in both eras.
		Middleware: []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
				return next(transport.WithPrincipal(ctx, "alice"), req)
			}
		}},
	})
	tool := &mcp.Tool{Name: "block", InputSchema: []byte(`{"type":"object"}`), Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskRequired}}
	err := s.AddTool(tool, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- id
		<-ctx.Done()
		cancelled <- id
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplicasShareTasks runs two servers on one Redis task store: a task
// started through replica A is read and cancelled through replica B, and
// the cancel reaches the handler on A (its runner watches the store: with
// no periodic recheck, only the store's Pub/Sub announcement wakes it), in
// each era. Connect checks that no goroutine of either side, the store's
// subscription included, outlives the test.
func TestReplicasShareTasks(t *testing.T) {
	for _, b := range backends() {
		for _, era := range mcptest.Eras() {
			t.Run(b.name+"/"+era, func(t *testing.T) {
				c := b.client(t)
				store, err := NewTaskStore(c, &TaskStoreOptions{Prefix: testPrefix(), Timeout: testTimeout, WatchRecheck: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				key := []byte("a key the replicas share, 32 bytes+")
				started, cancelled := make(chan string, 2), make(chan string, 2)
				a := replica(t, "a", store, key, started, cancelled)
				bb := replica(t, "b", store, key, started, cancelled)
				copts := &mcp.ClientOptions{Tasks: &mcp.ClientTaskOptions{}}
				csA := mcptest.Connect(t, a, &mcptest.Options{ProtocolVersion: era, Client: copts, CloseServer: true})
				csB := mcptest.Connect(t, bb, &mcptest.Options{ProtocolVersion: era, Client: copts, CloseServer: true})
				// Closed before the goroutine checks of Connect, which run
				// after the cleanups registered later.
				// The client too: a Cluster client starts goroutines as it
				// is used.
				t.Cleanup(func() { store.Close(); c.Close() })
				ctx := t.Context()

				_, task, err := csA.StartTool(ctx, &mcp.CallToolParams{Name: "block"})
				if err != nil || task == nil {
					t.Fatalf("StartTool on A: task %v, %v", task, err)
				}
				if on := <-started; on != "a" {
					t.Fatalf("the task runs on %s; want a", on)
				}
				onB := csB.Task(task.ID())
				st, err := onB.Status(ctx)
				if err != nil || st.Status != mcp.TaskWorking {
					t.Fatalf("tasks/get on B: %+v, %v; want working", st, err)
				}
				if err := onB.Cancel(ctx); err != nil {
					t.Fatalf("tasks/cancel on B: %v", err)
				}
				if on := <-cancelled; on != "a" {
					t.Fatalf("the cancel reached the handler on %s; want a", on)
				}
				if _, err := task.Wait(ctx); err == nil {
					t.Fatal("Wait on A after the cancel: no error")
				}
				for name, cs := range map[string]*mcp.ClientSession{"A": csA, "B": csB} {
					st, err := cs.Task(task.ID()).Status(ctx)
					if err != nil || st.Status != mcp.TaskCancelled {
						t.Fatalf("tasks/get on %s after the cancel: %+v, %v; want cancelled", name, st, err)
					}
				}
			})
		}
	}
}
