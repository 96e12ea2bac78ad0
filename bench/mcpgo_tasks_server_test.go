package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/mcpkit/mcpkit/jsonrpc"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// mcpgoTasksServer returns an mcp-go server with tools that run as tasks
// (tools with execution.taskSupport, which mcp-go runs as tasks when
// called with the task param): compute and compute_optional ("computed
// <n>"), fail (a tool error), crash (a Go error), wait (until cancelled,
// then closes stopped), confirm (asks the client, then "Deleted <file>").
func mcpgoTasksServer(t *testing.T, stopped chan<- struct{}) *mcpgoserver.MCPServer {
	t.Helper()
	s := mcpgoserver.NewMCPServer("mcpgo-tasks", "1",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithTaskCapabilities(true, true, true),
		mcpgoserver.WithElicitation())
	computed := func(_ context.Context, req mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
		return mcpgomcp.NewToolResultText("computed " + strconv.Itoa(req.GetInt("n", 0))), nil
	}
	var once sync.Once
	for _, tool := range []struct {
		name    string
		support mcpgomcp.TaskSupport
		h       mcpgoserver.ToolHandlerFunc
	}{
		{"compute", mcpgomcp.TaskSupportRequired, computed},
		{"compute_optional", mcpgomcp.TaskSupportOptional, computed},
		{"fail", mcpgomcp.TaskSupportRequired, func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			return mcpgomcp.NewToolResultError("it broke"), nil
		}},
		{"crash", mcpgomcp.TaskSupportRequired, func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			return nil, errors.New("backend down")
		}},
		{"wait", mcpgomcp.TaskSupportRequired, func(ctx context.Context, _ mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			<-ctx.Done()
			once.Do(func() { close(stopped) })
			return nil, ctx.Err()
		}},
		{"confirm", mcpgomcp.TaskSupportRequired, func(ctx context.Context, req mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			file := req.GetString("filename", "")
			res, err := s.RequestElicitation(ctx, mcpgomcp.ElicitationRequest{Params: mcpgomcp.ElicitationParams{
				Message:         "Delete " + file + "?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}},
			}})
			if err != nil {
				return nil, err
			}
			if content, _ := res.Content.(map[string]any); res.Action == mcpgomcp.ElicitationResponseActionAccept && content["confirm"] == true {
				return mcpgomcp.NewToolResultText("Deleted " + file), nil
			}
			return mcpgomcp.NewToolResultText("Kept " + file), nil
		}},
	} {
		s.AddTool(mcpgomcp.NewTool(tool.name, mcpgomcp.WithTaskSupport(tool.support)), tool.h)
	}
	return s
}

// mcpgoServerTransports serve an mcp-go server to mcpkit's client over
// io.Pipe pairs (the stdio framing) or Streamable HTTP on 127.0.0.1.
var mcpgoServerTransports = []struct {
	name  string
	serve func(t *testing.T, s *mcpgoserver.MCPServer) transport.Transport
}{
	{"stdio", func(t *testing.T, s *mcpgoserver.MCPServer) transport.Transport {
		c2sR, c2sW, s2cR, s2cW := pipes()
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() {
			defer close(served)
			err := mcpgoserver.NewStdioServer(s).Listen(ctx, c2sR, s2cW)
			s2cW.CloseWithError(err)
		}()
		t.Cleanup(func() {
			c2sW.Close()
			cancel()
			<-served
		})
		return &transport.IOTransport{Reader: s2cR, Writer: c2sW}
	}},
	{"streamable HTTP", func(t *testing.T, s *mcpgoserver.MCPServer) transport.Transport {
		srv := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(s))
		t.Cleanup(srv.Close)
		return &transport.StreamableClientTransport{URL: srv.URL + "/mcp"}
	}},
}

// TestMCPGoTasksServer drives the task tools of an mcp-go v1.2.1 server
// with mcpkit's client on 2025-11-25, over stdio framing and Streamable
// HTTP: CallTool drives a required tool's task to its result; an optional
// tool runs plain under CallTool and as a task under StartTool; a Go
// error fails the task and comes back as the JSON-RPC error of
// tasks/result; a task is read by its ID (ClientSession.Task); tasks/cancel
// of an ended task and an unknown task ID are -32602; a client without
// ClientOptions.Tasks is refused a required tool (-32601).
//
// Where mcp-go v1.2.1 departs from the spec it is pinned, so that a
// change shows: a tool error (isError) completes its task, where the
// spec says the task fails; a task's handler runs under the context of
// the tools/call that created it, so a task that outlives that request
// ends cancelled at once ("context canceled"), and the client's cancel
// of a running task cannot be tried; an elicitation inside a task
// carries no related-task metadata.
func TestMCPGoTasksServer(t *testing.T) {
	for _, tr := range mcpgoServerTransports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			stopped := make(chan struct{})
			s := mcpgoTasksServer(t, stopped)
			var (
				mu      sync.Mutex
				elicits []*mcpkit.ElicitParams
			)
			connect := func(opts *mcpkit.ClientOptions) *mcpkit.ClientSession {
				t.Helper()
				cs, err := mcpkit.NewClient(&mcpkit.Implementation{Name: "mcpkit-tasks", Version: "1"}, opts).Connect(ctx, tr.serve(t, s))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			cs := connect(&mcpkit.ClientOptions{
				Era:   mcpkit.EraHandshake,
				Tasks: &mcpkit.ClientTaskOptions{MinPollInterval: 5 * time.Millisecond, DefaultPollInterval: 10 * time.Millisecond},
				ElicitationHandler: func(_ context.Context, req *mcpkit.ElicitRequest) (*mcpkit.ElicitResult, error) {
					mu.Lock()
					elicits = append(elicits, req.Params)
					mu.Unlock()
					return &mcpkit.ElicitResult{Action: mcpkit.ElicitActionAccept, Content: map[string]any{"confirm": true}}, nil
				},
			})
			if v := cs.ProtocolVersion(); v != mcpkit.Version20251125 {
				t.Fatalf("negotiated %s, want %s", v, mcpkit.Version20251125)
			}
			call := func(name string, args string) *mcpkit.CallToolParams {
				return &mcpkit.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
			}

			for _, c := range []struct {
				name    string
				params  *mcpkit.CallToolParams
				start   bool
				text    string
				isError bool
				status  mcpkit.TaskStatus // after a StartTool
				errCode int64             // of the JSON-RPC error
			}{
				{name: "required, CallTool", params: call("compute", `{"n":3}`), text: "computed 3"},
				{name: "optional, CallTool (no task)", params: call("compute_optional", `{"n":5}`), text: "computed 5"},
				{name: "optional, StartTool", params: call("compute_optional", `{"n":7}`), start: true, text: "computed 7", status: mcpkit.TaskCompleted},
				// The spec: a tool error fails the task. mcp-go completes it.
				{name: "tool error", params: call("fail", `{}`), start: true, text: "it broke", isError: true, status: mcpkit.TaskCompleted},
				{name: "Go error", params: call("crash", `{}`), errCode: jsonrpc.CodeInternalError},
			} {
				var (
					res  *mcpkit.CallToolResult
					task *mcpkit.ToolTask
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
				if c.errCode != 0 {
					var je *jsonrpc.Error
					if !errors.As(err, &je) || je.Code != c.errCode {
						t.Errorf("%s: %+v, %v; want the error %d", c.name, res, err, c.errCode)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				if got := mcpkitText(res); got != c.text || res.IsError != c.isError {
					t.Errorf("%s: %q (isError %v), want %q (isError %v)", c.name, got, res.IsError, c.text, c.isError)
				}
				if task != nil {
					if st, err := task.Status(ctx); err != nil || st.Status != c.status {
						t.Errorf("%s: status %+v, %v; want %s", c.name, st, err, c.status)
					}
				}
			}
			// A task that outlives its tools/call: mcp-go v1.2.1 runs the
			// handler under the context of the tools/call, which ends once
			// the CreateTaskResult is sent, so the task ends cancelled
			// ("context canceled") before anyone cancels it. The spec: a
			// task runs on after the CreateTaskResult, until it ends or
			// the requestor cancels it. Pinned here; so the client's cancel
			// of a running task cannot be tried on this server.
			_, task, err := cs.StartTool(ctx, call("wait", `{}`))
			if err != nil || task == nil {
				t.Fatalf("StartTool wait: %v, %v", task, err)
			}
			if _, err := task.Wait(ctx); !errors.Is(err, mcpkit.ErrTaskCancelled) {
				t.Errorf("wait: Wait: %v, want ErrTaskCancelled (mcp-go cancelled the task itself)", err)
			}
			<-stopped // the handler saw its context end
			st, err := cs.Task(task.ID()).Status(ctx)
			if err != nil || st.Status != mcpkit.TaskCancelled || !strings.Contains(st.StatusMessage, "context canceled") {
				t.Errorf("wait: status, resumed by ID: %+v, %v; want cancelled by context canceled", st, err)
			}
			// tasks/cancel of an ended task: -32602, as the spec says.
			var je *jsonrpc.Error
			if err := task.Cancel(ctx); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("tasks/cancel of the ended task: %v, want -32602", err)
			}

			// An elicitation inside a task races the end of its tools/call
			// (above): either it is answered in time and the task
			// completes, or the task ends cancelled. When asked, it
			// carries no related-task metadata, which the spec requires of
			// every request of a task: pinned.
			res, err := cs.CallTool(ctx, call("confirm", `{"filename":"notes.txt"}`))
			mu.Lock()
			asked := slices.Clone(elicits)
			mu.Unlock()
			switch {
			case errors.Is(err, mcpkit.ErrTaskCancelled):
				t.Logf("confirm: the task was cancelled with its tools/call, before the answer came (%d elicitations)", len(asked))
			case err != nil:
				t.Errorf("confirm: %v", err)
			case mcpkitText(res) != "Deleted notes.txt" || len(asked) != 1:
				t.Errorf("confirm: %q after %d elicitations, want Deleted notes.txt after one", mcpkitText(res), len(asked))
			}
			for _, e := range asked {
				if e.Message != "Delete notes.txt?" {
					t.Errorf("elicitation %q", e.Message)
				}
				if raw, tagged := e.Meta.Other[mcpkit.MetaRelatedTask]; tagged {
					t.Errorf("mcp-go's elicitation inside a task is tagged with it now (%s)", raw)
				}
			}

			// Refusals.
			if _, err := cs.Task("no-such-task").Status(ctx); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("status of an unknown task: %v, want -32602", err)
			}
			s = mcpgoTasksServer(t, make(chan struct{})) // mcp-go's stdio server serves one session
			plain := connect(&mcpkit.ClientOptions{Era: mcpkit.EraHandshake})
			if res, err := plain.CallTool(ctx, call("compute", `{"n":1}`)); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("a required tool from a client without tasks: %+v, %v; want -32601", res, err)
			}
		})
	}
}

// mcpkitText joins the text blocks of res.
func mcpkitText(res *mcpkit.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpkit.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
