package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// relatedTaskOf returns the taskId of m's related-task metadata.
func relatedTaskOf(m *mcp.Meta) string {
	var rt struct {
		TaskID string `json:"taskId"`
	}
	if raw, ok := m.Other[mcp.MetaRelatedTask]; ok {
		json.Unmarshal(raw, &rt)
	}
	return rt.TaskID
}

// TestTypeScriptTasksServer drives the task tools of the official
// TypeScript SDK 1.x server (ts_tasks_server.mjs: McpServer with
// registerToolTask, the SDK's in-memory task store and message queue)
// with mcpkit's client on 2025-11-25, over stdio and Streamable HTTP:
// CallTool drives a required tool's task to its result; an optional
// tool runs plain under CallTool and as a task under StartTool; a tool
// error comes back as the result with isError; an elicitation the server
// queues for its task, delivered on the tasks/result stream, is answered
// (tagged with the task); a running task is read, cancelled and waited
// for (ErrTaskCancelled); a task is resumed by its ID; a client without
// ClientOptions.Tasks is refused a required tool (-32601), and an
// unknown task ID is -32602.
//
// The SDK's in-memory store hands out the task it keeps, not a copy, so
// the CreateTaskResult of a task that ends at once already shows its
// end (the spec: tasks MUST begin working); the client takes it as it
// comes, which this test checks by the results alone.
func TestTypeScriptTasksServer(t *testing.T) {
	modules := nodeModules(t)
	for _, tr := range []string{"stdio", "streamable HTTP"} {
		t.Run(tr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			var stderr syncBuffer
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("stderr of ts_tasks_server.mjs:\n%s", tail(stderr.String(), 4000))
				}
			})
			work, script := stageScript(t, modules, "ts_tasks_server.mjs")
			connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
				t.Helper()
				var ct transport.Transport
				if tr == "stdio" {
					cmd := exec.Command("node", script, "stdio")
					cmd.Dir = work
					cmd.Stderr = &stderr
					ct = &transport.CommandTransport{Command: cmd}
				} else {
					ct = &transport.StreamableClientTransport{URL: tsTasksURL(ctx, t, work, script, &stderr)}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-tasks-interop", Version: "1"}, opts).Connect(ctx, ct)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			var elicits events[*mcp.ElicitParams]
			cs := connect(&mcp.ClientOptions{
				Tasks: &mcp.ClientTaskOptions{},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicits.add(req.Params)
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"confirm": true}}, nil
				},
			})
			if v := cs.ProtocolVersion(); v != mcp.Version20251125 {
				t.Fatalf("negotiated %s, want %s", v, mcp.Version20251125)
			}
			call := func(name string, args map[string]any) *mcp.CallToolParams {
				return &mcp.CallToolParams{Name: name, Arguments: mustJSON(args)}
			}

			// Results, through CallTool (which drives a task to its end)
			// and StartTool then Wait.
			for _, c := range []struct {
				name    string
				params  *mcp.CallToolParams
				start   bool
				text    string
				isError bool
			}{
				{"required, CallTool", call("compute", map[string]any{"n": 3}), false, "computed 3", false},
				{"optional, CallTool (no task)", call("compute_optional", map[string]any{"n": 5}), false, "computed 5", false},
				{"optional, StartTool", call("compute_optional", map[string]any{"n": 7}), true, "computed 7", false},
				{"tool error", call("fail", map[string]any{}), false, "it broke", true},
				{"elicitation in the task", call("confirm", map[string]any{"filename": "notes.txt"}), false, "Deleted notes.txt", false},
			} {
				var (
					res  *mcp.CallToolResult
					task *mcp.ToolTask
					err  error
				)
				if c.start {
					res, task, err = cs.StartTool(ctx, c.params)
					if err == nil && task == nil {
						err = errors.New("StartTool ran the tool without a task")
					}
					if task != nil {
						res, err = task.Wait(ctx)
					}
				} else {
					res, err = cs.CallTool(ctx, c.params)
				}
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if got := texts(res.Content); got != c.text || res.IsError != c.isError {
					t.Errorf("%s: %q (isError %v), want %q (isError %v)", c.name, got, res.IsError, c.text, c.isError)
				}
			}
			if got := elicits.all(); len(got) != 1 || got[0].Message != "Delete notes.txt?" || relatedTaskOf(&got[0].Meta) == "" {
				t.Errorf("elicitations %+v, want one, Delete notes.txt?, tagged with its task", got)
			}

			// A running task: read, cancelled, waited for, resumed by ID.
			_, task, err := cs.StartTool(ctx, call("wait", map[string]any{}))
			if err != nil || task == nil {
				t.Fatalf("StartTool wait: %v, %v", task, err)
			}
			if st, err := task.Status(ctx); err != nil || st.Status != mcp.TaskWorking || st.TaskID != task.ID() {
				t.Errorf("status of a running task: %+v, %v", st, err)
			}
			if err := task.Cancel(ctx); err != nil {
				t.Errorf("cancel: %v", err)
			}
			if st, err := cs.Task(task.ID()).Status(ctx); err != nil || st.Status != mcp.TaskCancelled {
				t.Errorf("status after the cancel, resumed by ID: %+v, %v", st, err)
			}
			if _, err := task.Wait(ctx); !errors.Is(err, mcp.ErrTaskCancelled) {
				t.Errorf("Wait of the cancelled task: %v, want ErrTaskCancelled", err)
			}

			// Refusals.
			var je *jsonrpc.Error
			if _, err := cs.Task("no-such-task").Status(ctx); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("status of an unknown task: %v, want -32602", err)
			}
			// The spec: a server MUST answer -32601 to a call of a required
			// tool without the task param. The SDK's McpServer throws that
			// error inside tools/call, which turns it into a tool error
			// result (isError, its text naming -32601): pinned here.
			plain := connect(nil)
			res, err := plain.CallTool(ctx, call("compute", map[string]any{"n": 1}))
			if err != nil || !res.IsError || !strings.Contains(texts(res.Content), "-32601") {
				t.Errorf("a required tool from a client without tasks: %+v, %v; want the SDK's isError result naming -32601", res, err)
			}
		})
	}
}

// tsTasksURL runs ts_tasks_server.mjs over Streamable HTTP until the
// test ends and returns its URL.
func tsTasksURL(ctx context.Context, t *testing.T, work, script string, stderr *syncBuffer) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", script, "http")
	cmd.Dir = work
	cmd.Stderr = stderr
	return startListening(t, cmd)
}
