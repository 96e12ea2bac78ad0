package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpkit/mcpkit/jsonrpc"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The interop of mcp-go's client with mcpkit's server task runtime, on
// protocol revision 2025-11-25 (the task utility: a task param on
// tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel).

// tasksServer returns an mcpkit server with the task runtime and these
// tools: echo and confirm (optional: confirm asks the client, then
// answers "Deleted <filename>"), fail and crash (required: a tool error;
// a JSON-RPC error), block (optional: runs until its context ends, then
// closes stopped) and greet (no tasks).
func tasksServer(t *testing.T, stopped chan<- struct{}) *mcpkit.Server {
	t.Helper()
	s := mcpkit.NewServer(&mcpkit.Implementation{Name: "mcpkit-tasks", Version: "1"}, &mcpkit.ServerOptions{
		Tasks: &mcpkit.TaskOptions{PollInterval: 20 * time.Millisecond},
	})
	t.Cleanup(func() { s.Close() })
	tool := func(name, support string) *mcpkit.Tool {
		return &mcpkit.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &mcpkit.ToolExecution{TaskSupport: support}}
	}
	text := func(s string) *mcpkit.CallToolResult {
		return &mcpkit.CallToolResult{Content: []mcpkit.Content{&mcpkit.TextContent{Text: s}}}
	}
	var once sync.Once
	add := []struct {
		tool *mcpkit.Tool
		h    mcpkit.ToolHandler
	}{
		{tool("echo", mcpkit.TaskOptional), func(_ context.Context, req *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			return text("echo " + string(req.Params.Arguments)), nil
		}},
		{tool("confirm", mcpkit.TaskOptional), func(ctx context.Context, req *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			var in struct{ Filename string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			res, err := req.Elicit(ctx, &mcpkit.ElicitParams{
				Message:         "Delete " + in.Filename + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
			})
			if err != nil {
				return nil, err
			}
			if res.Action != mcpkit.ElicitActionAccept || res.Content["confirm"] != true {
				return text("Kept " + in.Filename), nil
			}
			return text("Deleted " + in.Filename), nil
		}},
		{tool("fail", mcpkit.TaskRequired), func(context.Context, *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			return nil, errors.New("it broke")
		}},
		{tool("crash", mcpkit.TaskRequired), func(context.Context, *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32050, Message: "backend refused"}
		}},
		{tool("block", mcpkit.TaskOptional), func(ctx context.Context, _ *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			<-ctx.Done()
			once.Do(func() { close(stopped) })
			return nil, ctx.Err()
		}},
		{&mcpkit.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcpkit.CallToolRequest) (*mcpkit.CallToolResult, error) {
			return text("hello"), nil
		}},
	}
	for _, a := range add {
		if err := s.AddTool(a.tool, a.h); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// elicitRecorder is an mcp-go elicitation handler that accepts with
// confirm true and records the related task of each request.
type elicitRecorder struct {
	mu      sync.Mutex
	related []string // the taskId of each request's related-task metadata
}

func (e *elicitRecorder) Elicit(_ context.Context, req mcpgomcp.ElicitationRequest) (*mcpgomcp.ElicitationResult, error) {
	id := ""
	if m := req.Params.Meta; m != nil {
		if rt, ok := m.AdditionalFields[mcpgomcp.RelatedTaskMetaKey].(map[string]any); ok {
			id, _ = rt["taskId"].(string)
		}
	}
	e.mu.Lock()
	e.related = append(e.related, id)
	e.mu.Unlock()
	return &mcpgomcp.ElicitationResult{ElicitationResponse: mcpgomcp.ElicitationResponse{
		Action:  mcpgomcp.ElicitationResponseActionAccept,
		Content: map[string]any{"confirm": true},
	}}, nil
}

func (e *elicitRecorder) asked() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.related)
}

// mcpgoTasksTransports connect an mcp-go client to an mcpkit server, over
// io.Pipe pairs (the stdio framing) or Streamable HTTP on 127.0.0.1 (with
// the standalone GET stream, where the server's requests of a task go).
// connect returns the client's transport and a channel closed once the
// server can send the client requests outside any exchange: at once on
// stdio; on HTTP when the server has accepted the client's GET stream,
// which mcp-go opens in the background after initialize.
var mcpgoTasksTransports = []struct {
	name    string
	connect func(t *testing.T, s *mcpkit.Server) (mcpgotransport.Interface, <-chan struct{})
}{
	{"stdio", func(t *testing.T, s *mcpkit.Server) (mcpgotransport.Interface, <-chan struct{}) {
		c2sR, c2sW, s2cR, s2cW := pipes()
		ss, err := s.Connect(t.Context(), &transport.IOTransport{Reader: c2sR, Writer: s2cW})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		ready := make(chan struct{})
		close(ready)
		return mcpgotransport.NewIO(s2cR, c2sW, nil), ready
	}},
	{"streamable HTTP", func(t *testing.T, s *mcpkit.Server) (mcpgotransport.Interface, <-chan struct{}) {
		h := mcpkit.NewStreamableHTTPHandler(s, nil)
		watch := &getWatch{h: h, open: make(chan struct{})}
		srv := httptest.NewServer(watch)
		t.Cleanup(func() {
			srv.Close()
			h.Close()
		})
		//lint:ignore SA1019 the GET stream is 2025-11-25's, the revision under test
		tr, err := mcpgotransport.NewStreamableHTTP(srv.URL, mcpgotransport.WithContinuousListening())
		if err != nil {
			t.Fatal(err)
		}
		return tr, watch.open
	}},
}

// getWatch serves h and closes open when h first accepts a GET stream
// (writes its 200 status, which mcpkit's handler does once the stream is
// the session's standalone one).
type getWatch struct {
	h    http.Handler
	once sync.Once
	open chan struct{}
}

func (g *getWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w = &statusSignal{ResponseWriter: w, signal: func(code int) {
			if code == http.StatusOK {
				g.once.Do(func() { close(g.open) })
			}
		}}
	}
	g.h.ServeHTTP(w, r)
}

// statusSignal is a ResponseWriter that reports the status written.
type statusSignal struct {
	http.ResponseWriter
	signal func(code int)
	done   bool
}

func (s *statusSignal) WriteHeader(code int) {
	if !s.done {
		s.done = true
		s.signal(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusSignal) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath (to flush).
func (s *statusSignal) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// mcpgoTaskStarter creates tasks with tools/call requests sent on the
// client's transport: mcp-go v1.2.1's Client.CallTool sends a task param
// but cannot read the CreateTaskResult it gets back (see
// TestMCPGoTasksClient), and the client has no other way to make one.
type mcpgoTaskStarter struct {
	c *mcpgoclient.Client
	n atomic.Int64
}

func (st *mcpgoTaskStarter) start(ctx context.Context, name string, args map[string]any) (*mcpgomcp.Task, error) {
	res, err := st.c.GetTransport().SendRequest(ctx, mcpgotransport.JSONRPCRequest{
		JSONRPC: mcpgomcp.JSONRPC_VERSION,
		ID:      mcpgomcp.NewRequestId("task-" + strconv.FormatInt(st.n.Add(1), 10)),
		Method:  string(mcpgomcp.MethodToolsCall),
		Params:  map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 60000}},
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error.AsError()
	}
	var created mcpgomcp.CreateTaskResult
	if err := json.Unmarshal(res.Result, &created); err != nil {
		return nil, err
	}
	if created.Task.TaskId == "" {
		return nil, errors.New("no task in the result: " + string(res.Result))
	}
	return &created.Task, nil
}

// mcpgoText joins the text blocks of content.
func mcpgoText(content []mcpgomcp.Content) string {
	var b strings.Builder
	for _, c := range content {
		if tc, ok := c.(mcpgomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// mcpgoRelatedTask returns the taskId of a result's related-task metadata.
func mcpgoRelatedTask(m *mcpgomcp.Meta) string {
	if m == nil {
		return ""
	}
	rt, _ := m.AdditionalFields[mcpgomcp.RelatedTaskMetaKey].(map[string]any)
	id, _ := rt["taskId"].(string)
	return id
}

// TestMCPGoTasksClient drives mcpkit's server task runtime with mcp-go
// v1.2.1's client on 2025-11-25, over stdio framing and Streamable HTTP:
// the task capability and each tool's taskSupport as listed; tasks run to
// each outcome (completed, a tool error, a JSON-RPC error) followed with
// WaitForTask (tasks/get polls) and read with TaskResult (tasks/result);
// an elicitation inside a task (TaskResult blocks meanwhile) answered,
// tagged with the task; a running task listed and cancelled with
// CancelTask, its handler's context ended, a second cancel refused; the
// refusals the spec names (-32601 for task support, -32602 for unknown
// tasks and cursors); ListTasks listing every task the session made.
//
// What mcp-go v1.2.1's client cannot do is pinned, so that a change
// shows: Client.CallTool with a task param fails to read the
// CreateTaskResult ("content is missing"), though the server made the
// task (ListTasks finds it); tasks are created here with requests sent
// on the client's transport.
func TestMCPGoTasksClient(t *testing.T) {
	for _, tr := range mcpgoTasksTransports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			stopped := make(chan struct{})
			s := tasksServer(t, stopped)
			elicit := &elicitRecorder{}
			ct, ready := tr.connect(t, s)
			c := mcpgoclient.NewClient(ct,
				mcpgoclient.WithElicitationHandler(elicit),
				mcpgoclient.WithProtocolVersion(mcpgomcp.ProtocolVersion20251125))
			t.Cleanup(func() { c.Close() })
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			var init mcpgomcp.InitializeRequest
			init.Params.ClientInfo = mcpgomcp.Implementation{Name: "mcpgo-tasks", Version: "1"}
			init.Params.ProtocolVersion = mcpgomcp.ProtocolVersion20251125
			ires, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if ires.ProtocolVersion != mcpgomcp.ProtocolVersion20251125 {
				t.Fatalf("negotiated %s, want %s", ires.ProtocolVersion, mcpgomcp.ProtocolVersion20251125)
			}
			if tc := c.GetServerCapabilities().Tasks; tc == nil || tc.List == nil || tc.Cancel == nil || tc.Requests == nil || tc.Requests.Tools == nil || tc.Requests.Tools.Call == nil {
				t.Fatalf("server capabilities.tasks %+v, want list, cancel and requests.tools.call", tc)
			}
			tools, err := c.ListTools(ctx, mcpgomcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			support := map[string]mcpgomcp.TaskSupport{}
			for _, tool := range tools.Tools {
				if tool.Execution != nil {
					support[tool.Name] = tool.Execution.TaskSupport
				}
			}
			want := map[string]mcpgomcp.TaskSupport{"echo": "optional", "confirm": "optional", "fail": "required", "crash": "required", "block": "optional"}
			for name, w := range want {
				if support[name] != w {
					t.Errorf("tool %s: taskSupport %q, want %q", name, support[name], w)
				}
			}
			if _, ok := support["greet"]; ok {
				t.Errorf("greet has an execution.taskSupport: %q", support["greet"])
			}

			// The server's requests of a task go on the GET stream,
			// which must be open first (mcpkit does not yet wait for a
			// stream, nor use a pending tasks/result's).
			select {
			case <-ready:
			case <-ctx.Done():
				t.Fatal("the client opened no GET stream")
			}
			st := &mcpgoTaskStarter{c: c}
			var created []string

			// mcp-go's own CallTool with a task param.
			_, err = c.CallTool(ctx, mcpgomcp.CallToolRequest{Params: mcpgomcp.CallToolParams{Name: "echo", Arguments: map[string]any{"via": "CallTool"}, Task: &mcpgomcp.TaskParams{}}})
			if err == nil || !strings.Contains(err.Error(), "content is missing") {
				t.Errorf("mcp-go CallTool with a task param: %v, want its \"content is missing\" (it cannot read a CreateTaskResult)", err)
			}

			// The outcomes.
			for _, o := range []struct {
				tool    string
				args    map[string]any
				status  mcpgomcp.TaskStatus
				text    string // of tasks/result
				isError bool
				errIs   error // of tasks/result, with errText its message
				errText string
				asks    bool // asks the client inside the task
			}{
				{tool: "echo", args: map[string]any{"a": 1.0}, status: mcpgomcp.TaskStatusCompleted, text: `echo {"a":1}`},
				{tool: "confirm", args: map[string]any{"filename": "notes.txt"}, status: mcpgomcp.TaskStatusCompleted, text: "Deleted notes.txt", asks: true},
				{tool: "fail", status: mcpgomcp.TaskStatusFailed, text: "it broke", isError: true},
				{tool: "crash", status: mcpgomcp.TaskStatusFailed, errText: "backend refused"},
			} {
				task, err := st.start(ctx, o.tool, o.args)
				if err != nil {
					t.Errorf("%s: creating the task: %v", o.tool, err)
					continue
				}
				created = append(created, task.TaskId)
				if task.Status != mcpgomcp.TaskStatusWorking || task.TTL == nil || *task.TTL < 60000 || task.CreatedAt == "" || task.LastUpdatedAt == "" || task.PollInterval == nil {
					t.Errorf("%s: created task %+v, want working, ttl at least 60000 (it grows while the task runs), createdAt, lastUpdatedAt, pollInterval", o.tool, task)
				}
				// tasks/result first: it blocks until the task ends
				// (confirm's question is answered meanwhile).
				res, err := c.TaskResult(ctx, mcpgomcp.TaskResultRequest{Params: mcpgomcp.TaskResultParams{TaskId: task.TaskId}})
				switch {
				case o.errText != "":
					if err == nil || err.Error() != o.errText {
						t.Errorf("%s: tasks/result %+v, %v; want the error %q", o.tool, res, err, o.errText)
					}
				case err != nil:
					t.Errorf("%s: tasks/result: %v", o.tool, err)
				default:
					if got := mcpgoText(res.Content); got != o.text || res.IsError != o.isError {
						t.Errorf("%s: tasks/result %q (isError %v), want %q (isError %v)", o.tool, got, res.IsError, o.text, o.isError)
					}
					if got := mcpgoRelatedTask(res.Meta); got != task.TaskId {
						t.Errorf("%s: tasks/result's related-task %q, want %q", o.tool, got, task.TaskId)
					}
				}
				got, err := c.WaitForTask(ctx, mcpgomcp.GetTaskRequest{Params: mcpgomcp.GetTaskParams{TaskId: task.TaskId}}, 10*time.Millisecond)
				if err != nil {
					t.Errorf("%s: WaitForTask: %v", o.tool, err)
					continue
				}
				if got.TaskId != task.TaskId || got.Status != o.status || got.CreatedAt != task.CreatedAt {
					t.Errorf("%s: tasks/get %+v, want %s, created at %s", o.tool, got.Task, o.status, task.CreatedAt)
				}
				if o.status == mcpgomcp.TaskStatusFailed && got.StatusMessage == "" {
					t.Errorf("%s: the failed task has no statusMessage", o.tool)
				}
				if o.asks {
					if asked := elicit.asked(); !slices.Contains(asked, task.TaskId) {
						t.Errorf("%s: elicitations tagged with tasks %q, want one with %s", o.tool, asked, task.TaskId)
					}
				}
			}
			if asked := elicit.asked(); len(asked) != 1 {
				t.Errorf("%d elicitations (tagged %q), want 1", len(asked), asked)
			}

			// Cancel a running task.
			if task, err := st.start(ctx, "block", nil); err != nil {
				t.Errorf("block: creating the task: %v", err)
			} else {
				created = append(created, task.TaskId)
				get := mcpgomcp.GetTaskRequest{Params: mcpgomcp.GetTaskParams{TaskId: task.TaskId}}
				if got, err := c.GetTask(ctx, get); err != nil || got.Status != mcpgomcp.TaskStatusWorking {
					t.Errorf("block: tasks/get %+v, %v; want working", got, err)
				}
				list, err := c.ListTasks(ctx, mcpgomcp.ListTasksRequest{})
				if err != nil || !slices.ContainsFunc(list.Tasks, func(l mcpgomcp.Task) bool { return l.TaskId == task.TaskId }) {
					t.Errorf("block: not listed while it runs (%v)", err)
				}
				cancelReq := mcpgomcp.CancelTaskRequest{Params: mcpgomcp.CancelTaskParams{TaskId: task.TaskId}}
				if res, err := c.CancelTask(ctx, cancelReq); err != nil || res.TaskId != task.TaskId || res.Status != mcpgomcp.TaskStatusCancelled {
					t.Errorf("tasks/cancel: %+v, %v; want the task cancelled", res, err)
				}
				<-stopped // the handler's context ended
				if got, err := c.GetTask(ctx, get); err != nil || got.Status != mcpgomcp.TaskStatusCancelled {
					t.Errorf("tasks/get after the cancel: %+v, %v; want cancelled", got, err)
				}
				if _, err := c.CancelTask(ctx, cancelReq); !errors.Is(err, mcpgomcp.ErrInvalidParams) {
					t.Errorf("a second tasks/cancel: %v, want -32602", err)
				}
			}

			// Refusals.
			for _, r := range []struct {
				what string
				call func() error
				want error
			}{
				{"a required tool without a task", func() error {
					_, err := c.CallTool(ctx, mcpgomcp.CallToolRequest{Params: mcpgomcp.CallToolParams{Name: "fail"}})
					return err
				}, mcpgomcp.ErrMethodNotFound},
				{"a tool without task support with a task", func() error {
					_, err := st.start(ctx, "greet", nil)
					return err
				}, mcpgomcp.ErrMethodNotFound},
				{"tasks/get of an unknown task", func() error {
					_, err := c.GetTask(ctx, mcpgomcp.GetTaskRequest{Params: mcpgomcp.GetTaskParams{TaskId: "no-such-task"}})
					return err
				}, mcpgomcp.ErrInvalidParams},
				{"tasks/result of an unknown task", func() error {
					_, err := c.TaskResult(ctx, mcpgomcp.TaskResultRequest{Params: mcpgomcp.TaskResultParams{TaskId: "no-such-task"}})
					return err
				}, mcpgomcp.ErrInvalidParams},
				{"tasks/cancel of an unknown task", func() error {
					_, err := c.CancelTask(ctx, mcpgomcp.CancelTaskRequest{Params: mcpgomcp.CancelTaskParams{TaskId: "no-such-task"}})
					return err
				}, mcpgomcp.ErrInvalidParams},
				{"tasks/list with a cursor the server never gave", func() error {
					var req mcpgomcp.ListTasksRequest
					req.Params.Cursor = "not-a-cursor"
					_, err := c.ListTasksByPage(ctx, req)
					return err
				}, mcpgomcp.ErrInvalidParams},
			} {
				if err := r.call(); !errors.Is(err, r.want) {
					t.Errorf("%s: %v, want %v", r.what, err, r.want)
				}
			}

			// tasks/list: every task made, and the one CallTool made.
			list, err := c.ListTasks(ctx, mcpgomcp.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, l := range list.Tasks {
				listed = append(listed, l.TaskId)
			}
			for _, id := range created {
				if !slices.Contains(listed, id) {
					t.Errorf("task %s not listed (listed %q)", id, listed)
				}
			}
			if len(listed) != len(created)+1 {
				t.Errorf("listed %d tasks, want %d (those made here and CallTool's)", len(listed), len(created)+1)
			}
		})
	}
}
