package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// writeDownStore is a task store that refuses writes (Create, Update)
// while down is set, as a store out of memory does, and tells failed each
// refused Update. It hides the memory store's Watch: the runtime polls.
type writeDownStore struct {
	TaskStore
	down   atomic.Bool
	failed chan struct{}
}

var errWritesDown = errors.New("test store: writes refused")

func (s *writeDownStore) Create(ctx context.Context, rec *TaskRecord) error {
	if s.down.Load() {
		return errWritesDown
	}
	return s.TaskStore.Create(ctx, rec)
}

func (s *writeDownStore) Update(ctx context.Context, rec *TaskRecord) error {
	if s.down.Load() {
		select {
		case s.failed <- struct{}{}:
		default:
		}
		return errWritesDown
	}
	return s.TaskStore.Update(ctx, rec)
}

// TestTaskOutcomeStoreDown checks a task whose handler returns while its
// store refuses writes: its outcome is written once the store takes writes
// again, not lost; meanwhile a task creation is refused with -32603 "the
// task store failed" (the store's own error stays in the log).
func TestTaskOutcomeStoreDown(t *testing.T) {
	checkGoroutines(t)
	store := &writeDownStore{TaskStore: NewMemoryTaskStore(nil), failed: make(chan struct{}, 1)}
	defer store.TaskStore.(io.Closer).Close()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{Store: store, StorePollInterval: time.Millisecond}})
	defer s.Close()
	release := make(chan struct{})
	tool := &Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &ToolExecution{TaskSupport: TaskRequired}}
	must(t, s.AddTool(tool, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		<-release
		return &CallToolResult{Content: []Content{&TextContent{Text: "kept"}}}, nil
	}))
	p := newTaskPeer(t, s, modernTasksMeta)
	id := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"wait","arguments":{}}`)).TaskID
	store.down.Store(true)
	if _, err := p.call(MethodToolsCall, `{"name":"wait","arguments":{}}`); err == nil || err.Code != jsonrpc.CodeInternalError || strings.Contains(err.Message, errWritesDown.Error()) {
		t.Errorf("a task created with the store down: %v; want -32603 without the store's error", err)
	}
	close(release)
	<-store.failed // the outcome's first write, refused
	if d := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`)); d.Status != TaskWorking {
		t.Fatalf("task %s with its outcome unwritten: %s", id, d.Status)
	}
	store.down.Store(false)
	for deadline := time.Now().Add(10 * time.Second); ; {
		d := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`))
		if d.Status == TaskCompleted && strings.Contains(string(d.Result), "kept") {
			break
		}
		if d.Status.Ended() || time.Now().After(deadline) {
			t.Fatalf("task %s once the store took writes again: %s %s; want completed with its result", id, d.Status, d.Result)
		}
		time.Sleep(2 * time.Millisecond) // polling, as a client does
	}
}
