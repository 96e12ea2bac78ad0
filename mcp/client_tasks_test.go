package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// The client side of tasks against a scripted server: a raw JSON-RPC
// peer that answers tools/call with a task and tasks/get with the states
// of a script, recording every request it gets.

// seen is one request the scripted server got.
type seen struct {
	method string
	params json.RawMessage
}

// taskScript is what the scripted server answers.
type taskScript struct {
	modern bool
	caps   string // the server's capabilities; "" means tools, and in 2025-11-25 task-augmented tools/call and tasks.cancel
	tools  string // the tools/list result; "" means one tool "t" whose task support is required
	// call answers tools/call; for a call carrying the task param
	// (2025-11-25), callTask does when set.
	call, callTask string
	// gets answer tasks/get in turn, the last one again once they run
	// out.
	gets []string
	// result answers tasks/result (2025-11-25), unless resultErr is set;
	// before it, the server asks for elicitations on the task's behalf.
	result    string
	resultErr *jsonrpc.Error
	elicit    int
	// listErr fails tools/list.
	listErr bool
	// block is how many tasks/result the server answers only when the
	// client gives up on them.
	block int
}

// scripted is the scripted server of one test.
type scripted struct {
	script taskScript
	peer   *jsonrpc.Conn

	mu   sync.Mutex
	got  []seen
	next int // the next answer of gets
}

func (s *scripted) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s.mu.Lock()
	s.got = append(s.got, seen{req.Method, append(json.RawMessage(nil), req.Params...)})
	s.mu.Unlock()
	sc := &s.script
	caps := sc.caps
	if caps == "" {
		caps = `{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}`
		if sc.modern {
			caps = `{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
		}
	}
	switch req.Method {
	case MethodServerDiscover:
		if !sc.modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no"}
		}
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":` + caps + `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`), nil
	case MethodInitialize:
		return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"fake","version":"1"}}`), nil
	case NotificationInitialized:
		return nil, nil
	case MethodPing:
		return json.RawMessage(`{}`), nil
	case MethodToolsList:
		s.mu.Lock()
		fail := sc.listErr
		s.mu.Unlock()
		if fail {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no list today"}
		}
		tools := sc.tools
		if tools == "" {
			tools = `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
		}
		return json.RawMessage(tools), nil
	case MethodToolsCall:
		if sc.callTask != "" && strings.Contains(string(req.Params), `"task":`) {
			return json.RawMessage(sc.callTask), nil
		}
		return json.RawMessage(sc.call), nil
	case MethodTasksGet:
		s.mu.Lock()
		i := min(s.next, len(sc.gets)-1)
		s.next++
		s.mu.Unlock()
		return json.RawMessage(sc.gets[i]), nil
	case MethodTasksUpdate:
		return json.RawMessage(`{"resultType":"complete"}`), nil
	case MethodTasksCancel:
		if sc.modern {
			return json.RawMessage(`{"resultType":"complete"}`), nil
		}
		return json.RawMessage(legacyTask("cancelled", "")), nil
	case MethodTasksResult:
		s.mu.Lock()
		block := sc.block > 0
		sc.block--
		s.mu.Unlock()
		if block {
			<-ctx.Done() // the client's notifications/cancelled
			return nil, ctx.Err()
		}
		for i := range sc.elicit {
			p := fmt.Sprintf(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}},"message":"name %d?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}`, i)
			if _, err := s.peer.Call(ctx, MethodElicitationCreate, json.RawMessage(p)); err != nil {
				return nil, err
			}
		}
		if sc.resultErr != nil {
			return nil, sc.resultErr
		}
		return json.RawMessage(sc.result), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method}
}

// methods returns the methods the server got, in order, without those of
// the connection's start.
func (s *scripted) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, g := range s.got {
		switch g.method {
		case MethodServerDiscover, MethodInitialize, NotificationInitialized:
			continue
		}
		out = append(out, g.method)
	}
	return out
}

// requests returns the params of the requests of method the server got.
func (s *scripted) requests(method string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []json.RawMessage
	for _, g := range s.got {
		if g.method == method {
			out = append(out, g.params)
		}
	}
	return out
}

// sleeps records the poll intervals a task asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
	// hook, when set, runs at each sleep (cancelling the caller's
	// context, say).
	hook func()
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ds)
}

// taskPair connects a client with opts (Tasks' sleep replaced by sl's
// when Tasks is set) to a scripted server.
func taskPair(t *testing.T, script taskScript, opts *ClientOptions, sl *sleeps) (*ClientSession, *scripted) {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	sconn, err := st.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{script: script}
	s.peer = jsonrpc.NewConn(sconn, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(s.handle)})
	s.peer.Start()
	t.Cleanup(func() { s.peer.Close(); s.peer.Wait() })
	if opts == nil {
		opts = &ClientOptions{}
	}
	o := *opts
	if script.modern {
		o.Era = EraModern
	} else {
		o.Era = EraHandshake
	}
	if o.Tasks != nil && sl != nil {
		to := *o.Tasks
		to.sleep = sl.sleep
		o.Tasks = &to
	}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &o).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, s
}

// modernTask is a 2026-07-28 task t1 with resultType rt (empty for
// none), status and the members in extra (",..." or "").
func modernTask(rt, status, extra string) string {
	r := ""
	if rt != "" {
		r = `"resultType":"` + rt + `",`
	}
	return `{` + r + `"taskId":"t1","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":60000` + extra + `}`
}

// legacyTask is a 2025-11-25 task t1 with status and the members in
// extra.
func legacyTask(status, extra string) string {
	return `{"taskId":"t1","status":"` + status + `","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:01Z","ttl":60000` + extra + `}`
}

const (
	doneResult  = `{"content":[{"type":"text","text":"done"}]}`
	toolFailure = `{"content":[{"type":"text","text":"bad"}],"isError":true}`
)

func taskText(res *CallToolResult) string {
	if res == nil || len(res.Content) != 1 {
		return fmt.Sprint(res)
	}
	if tc, ok := res.Content[0].(*TextContent); ok {
		return tc.Text
	}
	return fmt.Sprint(res.Content)
}

// TestCallToolTask checks every way a task ends, in both of its wire
// forms: CallTool returns the result of a completed task (a tool's
// failure as a result with IsError), the JSON-RPC error of a failed one,
// ErrTaskCancelled for a cancelled one; and the requests it sent for it.
func TestCallToolTask(t *testing.T) {
	checkGoroutines(t)
	boom := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "boom"}
	for _, tc := range []struct {
		name    string
		script  taskScript
		text    string // of the result
		isError bool
		errCode int64 // of the *jsonrpc.Error
		cancel  bool  // ErrTaskCancelled
		methods []string
	}{
		{
			name: "modern/completed",
			script: taskScript{modern: true, call: modernTask("task", "working", ""),
				gets: []string{modernTask("complete", "working", ""), modernTask("complete", "completed", `,"result":`+doneResult)}},
			text:    "done",
			methods: []string{MethodToolsCall, MethodTasksGet, MethodTasksGet},
		},
		{
			name:    "modern/completed-at-once",
			script:  taskScript{modern: true, call: modernTask("task", "completed", `,"result":`+doneResult)},
			text:    "done",
			methods: []string{MethodToolsCall},
		},
		{
			name: "modern/tool-failure",
			script: taskScript{modern: true, call: modernTask("task", "working", ""),
				gets: []string{modernTask("complete", "completed", `,"result":`+toolFailure)}},
			text: "bad", isError: true,
			methods: []string{MethodToolsCall, MethodTasksGet},
		},
		{
			name: "modern/failed",
			script: taskScript{modern: true, call: modernTask("task", "working", ""),
				gets: []string{modernTask("complete", "failed", `,"error":{"code":-32603,"message":"boom"}`)}},
			errCode: jsonrpc.CodeInternalError,
			methods: []string{MethodToolsCall, MethodTasksGet},
		},
		{
			name: "modern/cancelled",
			script: taskScript{modern: true, call: modernTask("task", "working", ""),
				gets: []string{modernTask("complete", "cancelled", `,"statusMessage":"stopped"`)}},
			cancel:  true,
			methods: []string{MethodToolsCall, MethodTasksGet},
		},
		{
			name:    "modern/synchronous",
			script:  taskScript{modern: true, call: `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`},
			text:    "done",
			methods: []string{MethodToolsCall},
		},
		{
			name: "legacy/completed",
			script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{legacyTask("working", ""), legacyTask("completed", "")}, result: doneResult},
			text:    "done",
			methods: []string{MethodToolsList, MethodToolsCall, MethodTasksGet, MethodTasksGet, MethodTasksResult},
		},
		{
			name: "legacy/tool-failure",
			script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{legacyTask("failed", "")}, result: toolFailure},
			text: "bad", isError: true,
			methods: []string{MethodToolsList, MethodToolsCall, MethodTasksGet, MethodTasksResult},
		},
		{
			name: "legacy/failed",
			script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{legacyTask("failed", "")}, resultErr: boom},
			errCode: jsonrpc.CodeInternalError,
			methods: []string{MethodToolsList, MethodToolsCall, MethodTasksGet, MethodTasksResult},
		},
		{
			name: "legacy/cancelled",
			script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{legacyTask("cancelled", "")}},
			cancel:  true,
			methods: []string{MethodToolsList, MethodToolsCall, MethodTasksGet},
		},
		{
			name: "legacy/input-required",
			script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{legacyTask("input_required", "")}, result: doneResult, elicit: 2},
			text:    "done",
			methods: []string{MethodToolsList, MethodToolsCall, MethodTasksGet, MethodTasksResult},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var elicited []string
			var mu sync.Mutex
			opts := &ClientOptions{Tasks: &ClientTaskOptions{}, ElicitationHandler: func(_ context.Context, req *ElicitRequest) (*ElicitResult, error) {
				mu.Lock()
				elicited = append(elicited, req.Params.Message)
				mu.Unlock()
				return &ElicitResult{Action: "accept", Content: map[string]any{"n": "x"}}, nil
			}}
			cs, s := taskPair(t, tc.script, opts, &sleeps{})
			res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
			var je *jsonrpc.Error
			switch {
			case tc.cancel:
				if !errors.Is(err, ErrTaskCancelled) || res != nil {
					t.Fatalf("got %v, %v; want ErrTaskCancelled", res, err)
				}
			case tc.errCode != 0:
				if !errors.As(err, &je) || je.Code != tc.errCode || res != nil {
					t.Fatalf("got %v, %v; want a *jsonrpc.Error %d", res, err, tc.errCode)
				}
			case err != nil:
				t.Fatal(err)
			case taskText(res) != tc.text || res.IsError != tc.isError:
				t.Fatalf("result %q isError=%v, want %q isError=%v", taskText(res), res.IsError, tc.text, tc.isError)
			}
			if got := s.methods(); !slices.Equal(got, tc.methods) {
				t.Errorf("server got %v, want %v", got, tc.methods)
			}
			for _, p := range append(s.requests(MethodTasksGet), s.requests(MethodTasksResult)...) {
				if !strings.Contains(string(p), `"taskId":"t1"`) {
					t.Errorf("params %s do not name the task", p)
				}
			}
			if tc.script.elicit > 0 && len(elicited) != tc.script.elicit {
				t.Errorf("elicited %v, want %d", elicited, tc.script.elicit)
			}
		})
	}
}

// TestTaskInputRequests checks that the input requests of a 2026-07-28
// task are answered through the client's handlers once per key, however
// many polls repeat them, each answer sent once with tasks/update; and
// that a key the server adds while an earlier one is still outstanding
// (a partial answer accepted) is answered on its own.
func TestTaskInputRequests(t *testing.T) {
	checkGoroutines(t)
	elicit := `{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}`
	sample := `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}`
	roots := `{"method":"roots/list"}`
	script := taskScript{modern: true, call: modernTask("task", "working", ""), gets: []string{
		modernTask("complete", "input_required", `,"inputRequests":{"a":`+elicit+`}`),
		modernTask("complete", "input_required", `,"inputRequests":{"a":`+elicit+`}`),
		modernTask("complete", "input_required", `,"inputRequests":{"a":`+elicit+`,"b":`+sample+`,"c":`+roots+`}`),
		modernTask("complete", "input_required", `,"inputRequests":{"b":`+sample+`}`),
		modernTask("complete", "working", ""),
		modernTask("complete", "completed", `,"result":`+doneResult),
	}}
	var mu sync.Mutex
	asked := map[string]int{}
	opts := &ClientOptions{
		Tasks: &ClientTaskOptions{},
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			mu.Lock()
			asked["elicit"]++
			mu.Unlock()
			return &ElicitResult{Action: "accept", Content: map[string]any{"n": "x"}}, nil
		},
		CreateMessageHandler: func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error) {
			mu.Lock()
			asked["sample"]++
			mu.Unlock()
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "yo"}}}, nil
		},
	}
	cs, s := taskPair(t, script, opts, &sleeps{})
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
	if err != nil || taskText(res) != "done" {
		t.Fatalf("got %v, %v", res, err)
	}
	if asked["elicit"] != 1 || asked["sample"] != 1 {
		t.Errorf("handlers ran %v, want each once", asked)
	}
	updates := s.requests(MethodTasksUpdate)
	if len(updates) != 2 {
		t.Fatalf("%d tasks/update, want 2: %s", len(updates), updates)
	}
	var keys [][]string
	for _, u := range updates {
		var p UpdateTaskParams
		if err := json.Unmarshal(u, &p); err != nil {
			t.Fatal(err)
		}
		if p.TaskID != "t1" {
			t.Errorf("tasks/update of %q", p.TaskID)
		}
		var ks []string
		for k := range p.InputResponses {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		keys = append(keys, ks)
	}
	if fmt.Sprint(keys) != "[[a] [b c]]" {
		t.Errorf("tasks/update answered %v, want [[a] [b c]]", keys)
	}
	if !strings.Contains(string(updates[0]), `"action":"accept"`) || !strings.Contains(string(updates[1]), `"model":"m"`) || !strings.Contains(string(updates[1]), `"roots":[]`) {
		t.Errorf("answers %s", updates)
	}
}

// TestTaskPollInterval checks the intervals between polls: the server's
// suggestion clamped to [MinPollInterval, MaxPollInterval], and without
// one DefaultPollInterval growing 1.5 times a poll up to MaxPollInterval,
// in both wire forms.
func TestTaskPollInterval(t *testing.T) {
	checkGoroutines(t)
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		opts   ClientTaskOptions
		modern bool
		create string
		gets   []string
		want   []time.Duration
	}{
		{
			name:   "modern/defaults",
			modern: true,
			create: modernTask("task", "working", `,"pollIntervalMs":10`),
			gets: []string{
				modernTask("complete", "working", `,"pollIntervalMs":100000`),
				modernTask("complete", "working", ""),
				modernTask("complete", "working", ""),
				modernTask("complete", "working", ""),
				modernTask("complete", "working", `,"pollIntervalMs":500`),
				modernTask("complete", "working", ""),
				modernTask("complete", "completed", `,"result":`+doneResult),
			},
			want: []time.Duration{100 * ms, 30 * time.Second, time.Second, 1500 * ms, 2250 * ms, 500 * ms, time.Second},
		},
		{
			name:   "modern/bounds",
			opts:   ClientTaskOptions{MinPollInterval: 200 * ms, MaxPollInterval: 400 * ms, DefaultPollInterval: 300 * ms},
			modern: true,
			create: modernTask("task", "working", ""),
			gets: []string{
				modernTask("complete", "working", ""),
				modernTask("complete", "working", `,"pollIntervalMs":1`),
				modernTask("complete", "working", `,"pollIntervalMs":5000`),
				modernTask("complete", "working", `,"pollIntervalMs":9223372036854775807`),
				modernTask("complete", "working", `,"pollIntervalMs":-5`),
				modernTask("complete", "completed", `,"result":`+doneResult),
			},
			want: []time.Duration{300 * ms, 400 * ms, 200 * ms, 400 * ms, 400 * ms, 200 * ms},
		},
		{
			name:   "legacy",
			create: `{"task":` + legacyTask("working", `,"pollInterval":50`) + `}`,
			gets: []string{
				legacyTask("working", `,"pollInterval":250`),
				legacyTask("working", `,"pollInterval":99999999`),
				legacyTask("working", ""),
				legacyTask("completed", ""),
			},
			want: []time.Duration{100 * ms, 250 * ms, 30 * time.Second, time.Second},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := taskScript{modern: tc.modern, call: tc.create, callTask: tc.create, gets: tc.gets, result: doneResult}
			sl := &sleeps{}
			cs, s := taskPair(t, script, &ClientOptions{Tasks: &tc.opts}, sl)
			if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"}); err != nil {
				t.Fatal(err)
			}
			if got := sl.all(); !slices.Equal(got, tc.want) {
				t.Errorf("intervals %v, want %v", got, tc.want)
			}
			if n := len(s.requests(MethodTasksGet)); n != len(tc.gets) {
				t.Errorf("%d tasks/get, want %d", n, len(tc.gets))
			}
		})
	}
}

// TestCallToolCancelsTask checks that CallTool, when its context ends
// while it waits for a task, sends tasks/cancel for it and returns the
// context's error, in both forms; and that ToolTask.Wait leaves the task
// running instead.
func TestCallToolCancelsTask(t *testing.T) {
	checkGoroutines(t)
	for _, tc := range []struct {
		name   string
		modern bool
		wait   bool // ToolTask.Wait rather than CallTool
	}{
		{"modern", true, false},
		{"legacy", false, false},
		{"modern/Wait", true, true},
		{"legacy/Wait", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := taskScript{modern: tc.modern, call: modernTask("task", "working", ""), callTask: `{"task":` + legacyTask("working", "") + `}`,
				gets: []string{modernTask("complete", "working", "")}}
			if !tc.modern {
				script.gets = []string{legacyTask("working", "")}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			sl := &sleeps{}
			cs, s := taskPair(t, script, &ClientOptions{Tasks: &ClientTaskOptions{}}, sl)
			polls := 0
			sl.hook = func() {
				if polls++; polls == 2 {
					cancel() // during the second wait between polls
				}
			}
			var err error
			if tc.wait {
				_, task, serr := cs.StartTool(ctx, &CallToolParams{Name: "t"})
				if serr != nil || task == nil {
					t.Fatalf("StartTool: %v, %v", task, serr)
				}
				_, err = task.Wait(ctx)
			} else {
				_, err = cs.CallTool(ctx, &CallToolParams{Name: "t"})
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			cancels := s.requests(MethodTasksCancel)
			switch {
			case tc.wait && len(cancels) != 0:
				t.Errorf("Wait sent tasks/cancel: %s", cancels)
			case !tc.wait && (len(cancels) != 1 || !strings.Contains(string(cancels[0]), `"taskId":"t1"`)):
				t.Errorf("tasks/cancel sent: %s, want one for t1", cancels)
			}
		})
	}
}

// TestTaskProtocolErrors checks the answers about tasks the client
// cannot use, each a *TaskProtocolError: a task it did not ask for (both
// forms), one without a taskId, an unknown status, a completed task
// without its result, and an input request of a method it cannot fulfil,
// which it cancels the task for first.
func TestTaskProtocolErrors(t *testing.T) {
	checkGoroutines(t)
	for _, tc := range []struct {
		name    string
		script  taskScript
		noTasks bool // ClientOptions.Tasks nil
		cancel  bool // the client cancels the task
	}{
		{name: "modern/unasked", noTasks: true, script: taskScript{modern: true, call: modernTask("task", "working", "")}},
		{name: "legacy/unasked", noTasks: true, script: taskScript{call: `{"task":` + legacyTask("working", "") + `}`}},
		{name: "modern/no-id", script: taskScript{modern: true, call: `{"resultType":"task","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null}`}},
		{name: "legacy/no-id", script: taskScript{callTask: `{"task":{"status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}}`}},
		{name: "modern/unknown-status", script: taskScript{modern: true, call: modernTask("task", "working", ""), gets: []string{modernTask("complete", "sleeping", "")}}},
		{name: "legacy/unknown-status", script: taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`, gets: []string{legacyTask("paused", "")}}},
		{name: "modern/completed-without-result", script: taskScript{modern: true, call: modernTask("task", "working", ""), gets: []string{modernTask("complete", "completed", "")}}},
		{
			name:   "modern/unknown-input",
			script: taskScript{modern: true, call: modernTask("task", "working", ""), gets: []string{modernTask("complete", "input_required", `,"inputRequests":{"x":{"method":"tools/call","params":{"name":"y"}}}`)}},
			cancel: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &ClientOptions{Tasks: &ClientTaskOptions{}}
			if tc.noTasks {
				opts.Tasks = nil
			}
			cs, s := taskPair(t, tc.script, opts, &sleeps{})
			res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
			var pe *TaskProtocolError
			if !errors.As(err, &pe) || res != nil {
				t.Fatalf("got %v, %v; want a *TaskProtocolError", res, err)
			}
			methods := s.methods()
			sentCancel := slices.Contains(methods, MethodTasksCancel)
			if sentCancel != tc.cancel {
				t.Errorf("server got %v; tasks/cancel wanted: %v", methods, tc.cancel)
			}
			if tc.cancel && methods[len(methods)-1] != MethodTasksCancel {
				t.Errorf("server got %v; want tasks/cancel last", methods)
			}
			var rte *ResultTypeError
			var re *ResultError
			switch tc.name {
			case "modern/unasked":
				if !errors.As(err, &rte) || rte.ResultType != ResultTypeTask {
					t.Errorf("err %v, want a *ResultTypeError for task too", err)
				}
			case "legacy/unasked":
				if !errors.As(err, &re) {
					t.Errorf("err %v, want a *ResultError too", err)
				}
			}
			if tc.cancel {
				var ie *InputRequestError
				if !errors.As(err, &ie) || ie.Key != "x" || ie.Input != MethodToolsCall {
					t.Errorf("err %v, want an *InputRequestError for x", err)
				}
			}
		})
	}
}

// TestTaskRevivalIgnored checks that the first terminal state of a task
// wins: a later tasks/get that shows it working again changes neither
// Status nor Wait, which returns the first outcome without asking again.
func TestTaskRevivalIgnored(t *testing.T) {
	checkGoroutines(t)
	script := taskScript{modern: true, call: modernTask("task", "working", ""), gets: []string{
		modernTask("complete", "completed", `,"result":`+doneResult),
		modernTask("complete", "working", ""),
		modernTask("complete", "failed", `,"error":{"code":-32603,"message":"late"}`),
	}}
	cs, s := taskPair(t, script, &ClientOptions{Tasks: &ClientTaskOptions{}}, &sleeps{})
	res, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "t"})
	if err != nil || res != nil || task == nil || task.ID() != "t1" {
		t.Fatalf("StartTool: %v, %v, %v", res, task, err)
	}
	for i := range 2 {
		st, err := task.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != TaskCompleted {
			t.Errorf("Status %d: %s, want completed", i, st.Status)
		}
	}
	res, err = task.Wait(t.Context())
	if err != nil || taskText(res) != "done" {
		t.Fatalf("Wait: %v, %v", res, err)
	}
	if n := len(s.requests(MethodTasksGet)); n != 1 {
		t.Errorf("%d tasks/get, want 1", n)
	}
	// A resumed handle has seen nothing: it meets the revived state,
	// then a second terminal one, which wins for it from then on.
	again := cs.Task("t1")
	st, err := again.Status(t.Context()) // working (revived): nothing terminal seen yet by this handle
	if err != nil || st.Status != TaskWorking {
		t.Fatalf("resumed Status: %v, %v", st, err)
	}
	if _, err := again.Wait(t.Context()); err == nil {
		t.Fatal("resumed Wait: no error for the failed state")
	}
	st, err = again.Status(t.Context())
	if err != nil || st.Status != TaskFailed {
		t.Fatalf("resumed Status after the end: %v, %v", st, err)
	}
}

// TestTaskStatusLegacy checks Status and Cancel on a 2025-11-25 task:
// its answer comes in the DetailedTask shape (ttl as TTLMs, pollInterval
// as PollIntervalMs); the cancelled task tasks/cancel answers with ends
// it.
func TestTaskStatusLegacy(t *testing.T) {
	checkGoroutines(t)
	script := taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`, gets: []string{legacyTask("working", `,"pollInterval":700,"statusMessage":"half"`)}}
	cs, _ := taskPair(t, script, &ClientOptions{Tasks: &ClientTaskOptions{}}, &sleeps{})
	_, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "t"})
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v, %v", task, err)
	}
	st, err := task.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.TaskID != "t1" || st.Status != TaskWorking || st.TTLMs == nil || *st.TTLMs != 60000 || st.PollIntervalMs == nil || *st.PollIntervalMs != 700 || st.StatusMessage != "half" {
		t.Errorf("Status: %+v", st)
	}
	if err := task.Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Wait(t.Context()); !errors.Is(err, ErrTaskCancelled) {
		t.Errorf("Wait after Cancel: %v, want ErrTaskCancelled", err)
	}
}

// TestTaskParamBySupport checks when a 2025-11-25 client sends the task
// param of tools/call: as the tool's task support allows (required:
// always; optional: only from StartTool; forbidden or absent: never),
// only to a server that takes task-augmented tools/call and with
// ClientOptions.Tasks set; tools/list is asked once to learn it.
func TestTaskParamBySupport(t *testing.T) {
	checkGoroutines(t)
	tools := `{"tools":[
		{"name":"req","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
		{"name":"opt","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
		{"name":"forb","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},
		{"name":"none","inputSchema":{"type":"object"}}]}`
	type call struct {
		tool  string
		start bool
		task  bool // the task param sent
	}
	for _, tc := range []struct {
		name    string
		caps    string
		noTasks bool
		calls   []call
	}{
		{name: "support", calls: []call{
			{"req", false, true}, {"opt", false, false}, {"opt", true, true}, {"forb", true, false},
			{"none", true, false}, {"unknown", true, false}, {"req", true, true},
		}},
		{name: "server-without-task-calls", caps: `{"tools":{},"tasks":{"cancel":{}}}`, calls: []call{{"req", false, false}, {"opt", true, false}}},
		{name: "client-without-tasks", noTasks: true, calls: []call{{"req", false, false}, {"opt", true, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := taskScript{caps: tc.caps, tools: tools, call: doneResult,
				callTask: `{"task":` + legacyTask("completed", "") + `}`, gets: []string{legacyTask("completed", "")}, result: doneResult}
			opts := &ClientOptions{Tasks: &ClientTaskOptions{}}
			if tc.noTasks {
				opts.Tasks = nil
			}
			cs, s := taskPair(t, script, opts, &sleeps{})
			for _, c := range tc.calls {
				p := &CallToolParams{Name: c.tool, Task: &TaskMetadata{}} // the client decides, whatever the caller set
				var err error
				if c.start {
					var task *ToolTask
					_, task, err = cs.StartTool(t.Context(), p)
					if err == nil && (task != nil) != c.task {
						t.Errorf("%s: task %v", c.tool, task)
					}
				} else {
					_, err = cs.CallTool(t.Context(), p)
				}
				if err != nil {
					t.Fatalf("%s: %v", c.tool, err)
				}
				if p.Task == nil {
					t.Errorf("%s: the caller's params were changed", c.tool)
				}
				calls := s.requests(MethodToolsCall)
				sent := strings.Contains(string(calls[len(calls)-1]), `"task":`)
				if sent != c.task {
					t.Errorf("%s (start %v): task param sent %v, want %v: %s", c.tool, c.start, sent, c.task, calls[len(calls)-1])
				}
			}
			want := 1 // to learn the tools' task support, once
			if tc.caps != "" || tc.noTasks {
				want = 0
			}
			if lists := len(s.requests(MethodToolsList)); lists != want {
				t.Errorf("%d tools/list, want %d", lists, want)
			}
		})
	}
}

// TestTasksExtensionDeclared checks that a 2026-07-28 client with
// ClientOptions.Tasks declares the tasks extension in the capabilities
// of its requests (tools/call and the tasks/ methods among them), and one
// without does not; a 2025-11-25 client declares no tasks capability.
func TestTasksExtensionDeclared(t *testing.T) {
	checkGoroutines(t)
	for _, tasks := range []bool{true, false} {
		t.Run(fmt.Sprint("tasks=", tasks), func(t *testing.T) {
			opts := &ClientOptions{}
			if tasks {
				opts.Tasks = &ClientTaskOptions{}
			}
			script := taskScript{modern: true, call: doneResult}
			cs, s := taskPair(t, script, opts, &sleeps{})
			if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"}); err != nil {
				t.Fatal(err)
			}
			task := cs.Task("t9")
			task.Cancel(t.Context())
			for _, m := range []string{MethodToolsCall, MethodTasksCancel} {
				for _, p := range s.requests(m) {
					if got := strings.Contains(string(p), `"extensions":{"io.modelcontextprotocol/tasks":{}}`); got != tasks {
						t.Errorf("%s declares the extension: %v, want %v: %s", m, got, tasks, p)
					}
				}
			}
		})
	}
	_, s := taskPair(t, taskScript{call: doneResult}, &ClientOptions{Tasks: &ClientTaskOptions{}}, &sleeps{})
	for _, p := range s.requests(MethodInitialize) {
		var ip InitializeParams
		if err := json.Unmarshal(p, &ip); err != nil {
			t.Fatal(err)
		}
		if ip.Capabilities.Tasks != nil || ip.Capabilities.Extensions != nil {
			t.Errorf("initialize declares %s", p)
		}
	}
}

// TestTaskMcpNameHTTP checks, over 2026-07-28 Streamable HTTP, that
// tasks/get, tasks/update and tasks/cancel carry the Mcp-Name header
// equal to the taskId, as tools/call carries the tool's name.
func TestTaskMcpNameHTTP(t *testing.T) {
	checkGoroutines(t)
	elicit := `{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}`
	gets := []string{
		modernTask("complete", "input_required", `,"inputRequests":{"a":`+elicit+`}`),
		modernTask("complete", "completed", `,"result":`+doneResult),
	}
	var mu sync.Mutex
	names := map[string][]string{} // Mcp-Name by method
	next := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		names[req.Method] = append(names[req.Method], r.Header.Get("Mcp-Name"))
		var result string
		switch req.Method {
		case MethodServerDiscover:
			result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`
		case MethodToolsCall:
			result = modernTask("task", "working", "")
		case MethodTasksGet:
			result = gets[min(next, len(gets)-1)]
			next++
		default:
			result = `{"resultType":"complete"}`
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	defer srv.Close()
	o := ClientOptions{Era: EraModern, Tasks: &ClientTaskOptions{sleep: (&sleeps{}).sleep},
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			return &ElicitResult{Action: "accept", Content: map[string]any{"n": "x"}}, nil
		}}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &o).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "slow"})
	if err != nil || taskText(res) != "done" {
		t.Fatalf("CallTool: %v, %v", res, err)
	}
	if err := cs.Task("t1").Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{MethodToolsCall: "slow", MethodTasksGet: "t1", MethodTasksUpdate: "t1", MethodTasksCancel: "t1"}
	for m, v := range want {
		if len(names[m]) == 0 {
			t.Errorf("no %s", m)
		}
		for _, got := range names[m] {
			if got != v {
				t.Errorf("%s: Mcp-Name %q, want %q", m, got, v)
			}
		}
	}
}

// TestTaskResultTimeout checks that a 2025-11-25 task whose tasks/result
// outlasts ClientOptions.RequestTimeout while it needs input is polled
// on, and its result asked for again: the timeout bounds each request,
// not the task.
func TestTaskResultTimeout(t *testing.T) {
	checkGoroutines(t)
	script := taskScript{callTask: `{"task":` + legacyTask("working", "") + `}`,
		gets: []string{legacyTask("input_required", ""), legacyTask("completed", "")}, result: doneResult, block: 1}
	cs, s := taskPair(t, script, &ClientOptions{RequestTimeout: 50 * time.Millisecond, Tasks: &ClientTaskOptions{}}, &sleeps{})
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
	if err != nil || taskText(res) != "done" {
		t.Fatalf("got %v, %v", res, err)
	}
	want := []string{MethodToolsList, MethodToolsCall, MethodTasksGet, MethodTasksResult, MethodTasksGet, MethodTasksResult}
	got := slices.DeleteFunc(s.methods(), func(m string) bool { return m == NotificationCancelled }) // the abandoned tasks/result's
	if !slices.Equal(got, want) {
		t.Errorf("server got %v, want %v", got, want)
	}
}

// TestTaskSupportRelisted checks that a 2025-11-25 client lists the tools
// again to learn a tool's task support after the server said its tools
// changed (and not before), and that a tools/list that fails costs the
// call nothing: it goes without a task.
func TestTaskSupportRelisted(t *testing.T) {
	checkGoroutines(t)
	script := taskScript{call: doneResult, callTask: `{"task":` + legacyTask("completed", "") + `}`, result: doneResult}
	cs, s := taskPair(t, script, &ClientOptions{Tasks: &ClientTaskOptions{}}, &sleeps{})
	lists := func() int { return len(s.requests(MethodToolsList)) }
	for i, tool := range []string{"t", "other", "other"} {
		if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: tool}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := lists(); n != 1 {
		t.Fatalf("%d tools/list, want 1", n)
	}
	if err := s.peer.Notify(t.Context(), NotificationToolListChanged, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(t.Context()); err != nil { // answered after the notification was handled
		t.Fatal(err)
	}
	s.mu.Lock()
	s.script.listErr = true
	s.mu.Unlock()
	for range 2 {
		res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
		if err != nil || taskText(res) != "done" {
			t.Fatalf("after the change: %v, %v", res, err)
		}
	}
	if n := lists(); n != 2 {
		t.Errorf("%d tools/list, want 2", n)
	}
	calls := s.requests(MethodToolsCall)
	if last := calls[len(calls)-1]; strings.Contains(string(last), `"task":`) {
		t.Errorf("task param sent without a listing: %s", last)
	}
}

// TestTaskInputFailureCancels checks that a 2026-07-28 task whose input
// requests the client cannot meet is cancelled before CallTool returns
// why: a handler that fails (an *InputRequestError), more requests than
// ClientOptions.MaxInputRequests (an *InputRequestsError), none of them
// run.
func TestTaskInputFailureCancels(t *testing.T) {
	checkGoroutines(t)
	elicit := `{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}`
	for _, tc := range []struct {
		name   string
		inputs string
		max    int
		check  func(error) bool
		ran    int // handler runs
	}{
		{"handler-fails", `{"a":` + elicit + `}`, 0, func(err error) bool {
			var ie *InputRequestError
			return errors.As(err, &ie) && ie.Key == "a"
		}, 1},
		{"too-many", `{"a":` + elicit + `,"b":` + elicit + `}`, 1, func(err error) bool {
			var pe *TaskProtocolError
			var ie *InputRequestsError
			return errors.As(err, &pe) && errors.As(err, &ie) && ie.Requests == 2 && ie.Max == 1
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := taskScript{modern: true, call: modernTask("task", "working", ""),
				gets: []string{modernTask("complete", "input_required", `,"inputRequests":`+tc.inputs)}}
			var mu sync.Mutex
			ran := 0
			opts := &ClientOptions{Tasks: &ClientTaskOptions{}, MaxInputRequests: tc.max,
				ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
					mu.Lock()
					ran++
					mu.Unlock()
					return nil, errors.New("the user went away")
				}}
			cs, s := taskPair(t, script, opts, &sleeps{})
			res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
			if res != nil || !tc.check(err) {
				t.Fatalf("got %v, %v", res, err)
			}
			if ran != tc.ran {
				t.Errorf("handler ran %d times, want %d", ran, tc.ran)
			}
			want := []string{MethodToolsCall, MethodTasksGet, MethodTasksCancel}
			if got := s.methods(); !slices.Equal(got, want) {
				t.Errorf("server got %v, want %v", got, want)
			}
		})
	}
}

// realTaskServer is a server with the task runtime and tools that run as
// tasks: slow (required; ends when release closes), ask (required; asks
// for a name), fail (required; fails with a JSON-RPC error), opt
// (optional), block (required; waits for its context, saying when it
// starts and when it ends).
type realTaskServer struct {
	*Server
	release          chan struct{}
	started, stopped chan struct{}
}

func newRealTaskServer(t *testing.T) *realTaskServer {
	t.Helper()
	s := &realTaskServer{
		Server:  NewServer(&Implementation{Name: "tasks", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{PollInterval: time.Millisecond}}),
		release: make(chan struct{}), started: make(chan struct{}), stopped: make(chan struct{}),
	}
	required := &ToolExecution{TaskSupport: TaskRequired}
	text := func(s string) *CallToolResult { return &CallToolResult{Content: Contents{&TextContent{Text: s}}} }
	s.AddTool(&Tool{Name: "slow", InputSchema: objectSchema, Execution: required}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		select {
		case <-s.release:
			return text("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(&Tool{Name: "ask", InputSchema: objectSchema, Execution: required}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		res, err := req.Elicit(ctx, &ElicitParams{Message: "Who?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprint("hello ", res.Content["name"])), nil
	})
	s.AddTool(&Tool{Name: "fail", InputSchema: objectSchema, Execution: required}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no way"}
	})
	s.AddTool(&Tool{Name: "opt", InputSchema: objectSchema, Execution: &ToolExecution{TaskSupport: TaskOptional}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return text("quick"), nil
	})
	s.AddTool(&Tool{Name: "block", InputSchema: objectSchema, Execution: required}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		close(s.started)
		<-ctx.Done()
		close(s.stopped)
		return nil, ctx.Err()
	})
	t.Cleanup(func() { s.Close() })
	return s
}

type blockKey struct{}

var objectSchema = []byte(`{"type":"object"}`)

// realTaskPair connects a client with tasks to s over in-memory
// transports, in 2026-07-28 (modern) or 2025-11-25.
func realTaskPair(t *testing.T, s *Server, modern bool, opts ClientOptions) *ClientSession {
	t.Helper()
	opts.ProtocolVersion = Version20251125
	if modern {
		opts.ProtocolVersion = Version20260728
	}
	if opts.Tasks == nil {
		opts.Tasks = &ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond}
	}
	return pairWith(t, s, &opts)
}

// TestToolTaskRealServer checks the client's tasks against the server's
// task runtime, in both eras: a task's result, its input asked for and
// answered once, its failure, a call that runs as a task only from
// StartTool, a task resumed by its ID, and a task cancelled when the
// caller's context ends.
func TestToolTaskRealServer(t *testing.T) {
	checkGoroutines(t)
	for _, modern := range []bool{true, false} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			s := newRealTaskServer(t)
			var asked atomic.Int32
			polled := make(chan struct{}) // closed at the first tasks/get of block's task
			var once sync.Once
			cs := realTaskPair(t, s.Server, modern, ClientOptions{
				SendingMiddleware: []Middleware{func(next MethodHandler) MethodHandler {
					return func(ctx context.Context, req Request) (Result, error) {
						if req.Method() == MethodTasksGet && ctx.Value(blockKey{}) != nil {
							once.Do(func() { close(polled) })
						}
						return next(ctx, req)
					}
				}},
				ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
					asked.Add(1)
					return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			ctx := t.Context()

			// A task resumed by its ID: it is still working, then ends.
			_, task, err := cs.StartTool(ctx, &CallToolParams{Name: "slow"})
			if err != nil || task == nil {
				t.Fatalf("StartTool(slow): %v, %v", task, err)
			}
			again := cs.Task(task.ID())
			if st, err := again.Status(ctx); err != nil || st.Status != TaskWorking || st.TaskID != task.ID() {
				t.Fatalf("Status: %+v, %v", st, err)
			}
			close(s.release)
			if res, err := again.Wait(ctx); err != nil || taskText(res) != "done" {
				t.Fatalf("Wait: %v, %v", res, err)
			}
			if res, err := cs.CallTool(ctx, &CallToolParams{Name: "slow"}); err != nil || taskText(res) != "done" {
				t.Fatalf("CallTool(slow): %v, %v", res, err)
			}

			res, err := cs.CallTool(ctx, &CallToolParams{Name: "ask"})
			if err != nil || taskText(res) != "hello Ada" {
				t.Fatalf("CallTool(ask): %v, %v", res, err)
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("asked %d times, want 1", n)
			}

			var je *jsonrpc.Error
			if res, err := cs.CallTool(ctx, &CallToolParams{Name: "fail"}); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || res != nil {
				t.Errorf("CallTool(fail): %v, %v; want a *jsonrpc.Error -32602", res, err)
			}

			res, task, err = cs.StartTool(ctx, &CallToolParams{Name: "opt"})
			if err != nil || task == nil || res != nil {
				t.Fatalf("StartTool(opt): %v, %v, %v; want a task", res, task, err)
			}
			if res, err := task.Wait(ctx); err != nil || taskText(res) != "quick" {
				t.Fatalf("Wait(opt): %v, %v", res, err)
			}

			// The caller's context ends once the client holds the task (its
			// first poll): before that, it has no task to cancel.
			cctx, cancel := context.WithCancel(context.WithValue(ctx, blockKey{}, true))
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &CallToolParams{Name: "block"})
				done <- err
			}()
			<-s.started
			<-polled
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool(block): %v, want context.Canceled", err)
			}
			<-s.stopped // tasks/cancel reached the task
		})
	}
}

// TestToolTaskRealServerHTTP checks a 2026-07-28 client's task against
// the server's runtime over Streamable HTTP, where tasks/get, tasks/update
// and tasks/cancel carry Mcp-Name (which the server checks): input asked
// for and answered, the result returned.
func TestToolTaskRealServerHTTP(t *testing.T) {
	checkGoroutines(t)
	s := newRealTaskServer(t)
	srv := httptest.NewServer(NewStreamableHTTPHandler(s.Server, nil))
	defer srv.Close()
	var names sync.Map // Mcp-Name by method, as sent
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if m := r.Header.Get("Mcp-Method"); strings.HasPrefix(m, "tasks/") {
			names.Store(m, r.Header.Get("Mcp-Name"))
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	o := ClientOptions{Era: EraModern, Tasks: &ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond},
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		}}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &o).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "ask"})
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v, %v, %v", res, task, err)
	}
	askID := task.ID()
	if res, err = task.Wait(t.Context()); err != nil || taskText(res) != "hello Ada" {
		t.Fatalf("Wait: %v, %v", res, err)
	}
	_, task, err = cs.StartTool(t.Context(), &CallToolParams{Name: "slow"})
	if err != nil || task == nil {
		t.Fatalf("StartTool(slow): %v, %v", task, err)
	}
	if err := task.Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Wait(t.Context()); !errors.Is(err, ErrTaskCancelled) {
		t.Errorf("Wait after Cancel: %v, want ErrTaskCancelled", err)
	}
	for m, id := range map[string]string{MethodTasksUpdate: askID, MethodTasksGet: task.ID(), MethodTasksCancel: task.ID()} {
		if v, _ := names.Load(m); v != id {
			t.Errorf("%s: Mcp-Name %v, want %q", m, v, id)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTaskQuestionsOnResultStream checks where a 2025-11-25 task's
// question to the client travels over Streamable HTTP: with the client's
// GET stream, and without one on the stream of the tasks/result the client
// calls when it sees input_required (it used to fail the task).
func TestTaskQuestionsOnResultStream(t *testing.T) {
	for _, noGET := range []bool{false, true} {
		t.Run(fmt.Sprintf("noGET=%v", noGET), func(t *testing.T) {
			checkGoroutines(t)
			s := newRealTaskServer(t)
			srv := httptest.NewServer(NewStreamableHTTPHandler(s.Server, nil))
			defer srv.Close()
			o := ClientOptions{Era: EraHandshake, Tasks: &ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond},
				ElicitationHandler: func(_ context.Context, req *ElicitRequest) (*ElicitResult, error) {
					return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
				}}
			cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &o).Connect(t.Context(),
				&transport.StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: noGET})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for range 3 {
				res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "ask"})
				if err != nil || taskText(res) != "hello Ada" {
					t.Fatalf("CallTool(ask): %v, %v", res, err)
				}
			}
		})
	}
}
