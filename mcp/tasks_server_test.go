package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// taskPeer drives a server with raw JSON-RPC, as a client of either era
// would, to check the wire of tasks.
type taskPeer struct {
	*rawPeer
	next atomic.Int64
	meta string // the _meta member of 2026-07-28 requests; "" for the handshake era
	// asked collects the requests the server sends (2025-11-25 task
	// questions), answered by answer.
	asked  []*jsonrpc.Request
	answer func(*jsonrpc.Request) json.RawMessage
	// notes collects the notifications the server sends.
	notes []*jsonrpc.Request
}

// readAny returns the next message, notifications included.
func (p *taskPeer) readAny() jsonrpc.Message {
	p.t.Helper()
	m, err := p.c.Read(p.t.Context())
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// awaitNote reads until a notification of method whose params contain
// want has come, and returns its params.
func (p *taskPeer) awaitNote(method, want string) json.RawMessage {
	p.t.Helper()
	for i := 0; ; {
		for ; i < len(p.notes); i++ {
			if n := p.notes[i]; n.Method == method && strings.Contains(string(n.Params), want) {
				return n.Params
			}
		}
		if m, ok := p.readAny().(*jsonrpc.Request); ok && m.IsNotification() {
			p.notes = append(p.notes, m)
		}
	}
}

const (
	modernTasksMeta  = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	modernPlainMeta  = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	principalMetaKey = "test/principal"
)

// newTaskPeer connects a peer of the 2026-07-28 era (meta non-empty) or
// of the handshake era at 2025-11-25.
func newTaskPeer(t *testing.T, s *Server, meta string) *taskPeer {
	t.Helper()
	p := &taskPeer{rawPeer: newRawPeer(t, s), meta: meta}
	if meta == "" {
		res, rpcErr := p.call(MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`)
		if rpcErr != nil {
			t.Fatal(rpcErr)
		}
		var ir InitializeResult
		must(t, json.Unmarshal(res, &ir))
		if ir.Capabilities.Tasks == nil || ir.Capabilities.Tasks.Requests == nil || ir.Capabilities.Tasks.Requests.Tools == nil {
			t.Fatalf("initialize declares no tasks capability: %s", res)
		}
		p.write(&jsonrpc.Request{Method: NotificationInitialized, Params: json.RawMessage(`{}`)})
	}
	return p
}

// call sends a request (params an object, without _meta, which call adds
// on 2026-07-28) and returns its answer, answering the server's own
// requests meanwhile.
func (p *taskPeer) call(method, params string) (json.RawMessage, *jsonrpc.Error) {
	p.t.Helper()
	return p.callMeta(method, params, p.meta)
}

func (p *taskPeer) callMeta(method, params, meta string) (json.RawMessage, *jsonrpc.Error) {
	p.t.Helper()
	if meta != "" {
		if params == "{}" {
			params = `{"_meta":` + meta + `}`
		} else {
			params = `{"_meta":` + meta + `,` + params[1:]
		}
	}
	id := jsonrpc.Int64ID(p.next.Add(1))
	p.write(&jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)})
	for {
		switch m := p.readAny().(type) {
		case *jsonrpc.Response:
			if m.ID != id {
				p.t.Fatalf("answer to %v, want %v", m.ID, id)
			}
			return m.Result, m.Error
		case *jsonrpc.Request:
			if m.IsNotification() {
				p.notes = append(p.notes, m)
				continue
			}
			p.asked = append(p.asked, m)
			res := json.RawMessage(`{}`)
			if p.answer != nil {
				res = p.answer(m)
			}
			p.write(&jsonrpc.Response{ID: m.ID, Result: res})
		}
	}
}

// mustCall is call that fails the test on an error answer.
func (p *taskPeer) mustCall(method, params string) json.RawMessage {
	p.t.Helper()
	res, err := p.call(method, params)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, params, err)
	}
	return res
}

// detailed decodes a 2026-07-28 task.
func detailedOf(t *testing.T, raw json.RawMessage) *DetailedTask {
	t.Helper()
	var d DetailedTask
	must(t, json.Unmarshal(raw, &d))
	return &d
}

// waitTask polls tasks/get until the task's status is one of want.
func (p *taskPeer) waitTask(id string, want ...TaskStatus) *DetailedTask {
	p.t.Helper()
	for {
		d := detailedOf(p.t, p.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`))
		for _, w := range want {
			if d.Status == w {
				return d
			}
		}
		if d.Status.Ended() {
			p.t.Fatalf("task %s ended %s, want %v: %+v", id, d.Status, want, d)
		}
		time.Sleep(2 * time.Millisecond) // polling, as a client does
	}
}

// taskTestServer is a server with tasks and the tools the tests call.
// release lets "block" return.
func taskTestServer(t *testing.T, opts *ServerOptions, release <-chan struct{}) *Server {
	t.Helper()
	if opts == nil {
		opts = &ServerOptions{}
	}
	if opts.Tasks == nil {
		opts.Tasks = &TaskOptions{}
	}
	opts.Middleware = append(opts.Middleware, func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req Request) (Result, error) {
			if v, ok := req.Parameters().meta().Other[principalMetaKey]; ok {
				var who string
				json.Unmarshal(v, &who)
				ctx = transport.WithPrincipal(ctx, who)
			}
			return next(ctx, req)
		}
	})
	s := NewServer(&Implementation{Name: "tasks", Version: "1"}, opts)
	t.Cleanup(func() { s.Close() })
	tool := func(name, support string) *Tool {
		return &Tool{Name: name, Execution: &ToolExecution{TaskSupport: support}}
	}
	must(t, s.AddTool(&Tool{Name: "sync"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "sync"}}}, nil
	}))
	for _, support := range []string{TaskOptional, TaskRequired} {
		must(t, s.AddTool(tool("echo-"+support, support), func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{&TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
		}))
	}
	must(t, s.AddTool(tool("block", TaskOptional), func(ctx context.Context, _ *CallToolRequest) (*CallToolResult, error) {
		select {
		case <-release:
			return &CallToolResult{Content: []Content{&TextContent{Text: "released"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	must(t, s.AddTool(tool("tool-error", TaskRequired), func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return nil, errors.New("it broke")
	}))
	must(t, s.AddTool(tool("rpc-error", TaskRequired), func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32050, Message: "backend refused"}
	}))
	must(t, s.AddTool(tool("panic", TaskRequired), func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		panic("boom")
	}))
	must(t, s.AddTool(tool("ask-twice", TaskRequired), func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var names []string
		for i := range 2 {
			res, err := req.Elicit(ctx, &ElicitParams{Message: fmt.Sprintf("name %d?", i), RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			n, _ := res.Content["name"].(string)
			names = append(names, n)
		}
		return &CallToolResult{Content: []Content{&TextContent{Text: strings.Join(names, "+")}}}, nil
	}))
	must(t, s.AddTool(tool("progress", TaskRequired), func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		req.ReportProgress(ctx, 1, 2, "")
		<-release
		return &CallToolResult{Content: []Content{}}, nil
	}))
	return s
}

// TestTasksModernWire walks the 2026-07-28 surface: creation, the
// outcomes, cancel, and the refusals.
func TestTasksModernWire(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	s := taskTestServer(t, nil, release)
	p := newTaskPeer(t, s, modernTasksMeta)

	// Discover advertises the extension, not the 2025 slot.
	var disc DiscoverResult
	must(t, json.Unmarshal(p.mustCall(MethodServerDiscover, `{}`), &disc))
	if _, ok := disc.Capabilities.Extensions[TasksExtensionID]; !ok || disc.Capabilities.Tasks != nil {
		t.Fatalf("discover capabilities: %+v", disc.Capabilities)
	}

	outcomes := []struct {
		tool    string
		status  TaskStatus
		text    string // in the result
		errCode int64  // of the inlined error
	}{
		{"echo-required", TaskCompleted, "echo", 0},
		{"echo-optional", TaskCompleted, "echo", 0},
		{"tool-error", TaskCompleted, "it broke", 0},
		{"rpc-error", TaskFailed, "", -32050},
		{"panic", TaskFailed, "", jsonrpc.CodeInternalError},
	}
	for _, o := range outcomes {
		t.Run(o.tool, func(t *testing.T) {
			raw := p.mustCall(MethodToolsCall, `{"name":"`+o.tool+`","arguments":{}}`)
			for _, absent := range []string{`"result"`, `"error"`, `"inputRequests"`, `"requestState"`, `"task"`, `"ttl"`, `"pollInterval"`} {
				if strings.Contains(string(raw), absent+":") {
					t.Errorf("CreateTaskResult carries %s: %s", absent, raw)
				}
			}
			created := detailedOf(t, raw)
			if created.ResultType != ResultTypeTask || created.TaskID == "" || created.TTLMs == nil || *created.TTLMs <= 0 {
				t.Fatalf("not a CreateTaskResult: %s", raw)
			}
			d := p.waitTask(created.TaskID, TaskCompleted, TaskFailed)
			if d.Status != o.status || d.ResultType != ResultTypeComplete {
				t.Fatalf("status %s (resultType %q), want %s", d.Status, d.ResultType, o.status)
			}
			switch {
			case o.errCode != 0:
				if d.Error == nil || d.Error.Code != o.errCode || d.Result != nil {
					t.Fatalf("failed task: error %+v, result %s", d.Error, d.Result)
				}
			default:
				if d.Error != nil || !strings.Contains(string(d.Result), o.text) || strings.Contains(string(d.Result), MetaRelatedTask) {
					t.Fatalf("completed task: error %+v, result %s", d.Error, d.Result)
				}
				if o.tool == "tool-error" && !strings.Contains(string(d.Result), `"isError":true`) {
					t.Fatalf("a tool error is not isError: %s", d.Result)
				}
			}
			// Cancelling an ended task is acknowledged, and changes nothing.
			if ack := p.mustCall(MethodTasksCancel, `{"taskId":"`+d.TaskID+`"}`); string(ack) != tasksAck {
				t.Fatalf("cancel ack %s", ack)
			}
			if again := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+d.TaskID+`"}`)); again.Status != o.status {
				t.Fatalf("cancel changed an ended task to %s", again.Status)
			}
		})
	}

	t.Run("cancel", func(t *testing.T) {
		created := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`))
		if ack := p.mustCall(MethodTasksCancel, `{"taskId":"`+created.TaskID+`"}`); string(ack) != tasksAck {
			t.Fatalf("cancel ack %s", ack)
		}
		if d := p.waitTask(created.TaskID, TaskCancelled); d.Result != nil || d.Error != nil {
			t.Fatalf("cancelled task with an outcome: %+v", d)
		}
	})

	t.Run("progress", func(t *testing.T) {
		created := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"progress","arguments":{}}`))
		for {
			d := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+created.TaskID+`"}`))
			if d.StatusMessage == "1/2" {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		p.mustCall(MethodTasksCancel, `{"taskId":"`+created.TaskID+`"}`)
	})

	refusals := []struct {
		name, method, params, meta string
		code                       int64
	}{
		{"get unknown", MethodTasksGet, `{"taskId":"no-such-task"}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"update unknown", MethodTasksUpdate, `{"taskId":"no-such-task","inputResponses":{}}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"cancel unknown", MethodTasksCancel, `{"taskId":"no-such-task"}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"get empty id", MethodTasksGet, `{"taskId":""}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"get long id", MethodTasksGet, `{"taskId":"` + strings.Repeat("a", 257) + `"}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"get numeric id", MethodTasksGet, `{"taskId":7}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"get no id", MethodTasksGet, `{}`, modernTasksMeta, jsonrpc.CodeInvalidParams},
		{"result removed", MethodTasksResult, `{"taskId":"x"}`, modernTasksMeta, jsonrpc.CodeMethodNotFound},
		{"list removed", MethodTasksList, `{}`, modernTasksMeta, jsonrpc.CodeMethodNotFound},
		{"get undeclared", MethodTasksGet, `{"taskId":"x"}`, modernPlainMeta, CodeMissingRequiredClientCapability},
		{"update undeclared", MethodTasksUpdate, `{"taskId":"x","inputResponses":{}}`, modernPlainMeta, CodeMissingRequiredClientCapability},
		{"cancel undeclared", MethodTasksCancel, `{"taskId":"x"}`, modernPlainMeta, CodeMissingRequiredClientCapability},
		{"required tool undeclared", MethodToolsCall, `{"name":"echo-required","arguments":{}}`, modernPlainMeta, CodeMissingRequiredClientCapability},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, err := p.callMeta(r.method, r.params, r.meta)
			if err == nil || err.Code != r.code {
				t.Fatalf("answer %v, want code %d", err, r.code)
			}
			if r.code == CodeMissingRequiredClientCapability && !strings.Contains(string(err.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
				t.Fatalf("-32021 without the extension in its data: %s", err.Data)
			}
		})
	}

	t.Run("optional undeclared runs synchronously", func(t *testing.T) {
		res, err := p.callMeta(MethodToolsCall, `{"name":"echo-optional","arguments":{}}`, modernPlainMeta)
		if err != nil || !strings.Contains(string(res), `"resultType":"complete"`) || strings.Contains(string(res), "taskId") {
			t.Fatalf("answer %s %v", res, err)
		}
	})
	t.Run("legacy task param ignored", func(t *testing.T) {
		res := p.mustCall(MethodToolsCall, `{"name":"sync","arguments":{},"task":{"ttl":1000}}`)
		if strings.Contains(string(res), "taskId") {
			t.Fatalf("a forbidden tool became a task: %s", res)
		}
	})
	close(release)
}

// TestTasksModernInput checks input requests: surfaced by tasks/get,
// answered by tasks/update (partly, wrongly, or with keys not asked),
// with keys never reused.
func TestTasksModernInput(t *testing.T) {
	checkGoroutines(t)
	s := taskTestServer(t, nil, nil)
	p := newTaskPeer(t, s, modernTasksMeta)
	created := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"ask-twice","arguments":{}}`))
	id := created.TaskID
	first := p.waitTask(id, TaskInputRequired)
	if len(first.InputRequests) != 1 {
		t.Fatalf("input requests %v", first.InputRequests)
	}
	var key1 string
	for k, r := range first.InputRequests {
		key1 = k
		if r.Method != MethodElicitationCreate {
			t.Fatalf("input request %+v", r)
		}
	}
	// A wrong shape is refused, naming the key; the task still waits.
	_, err := p.call(MethodTasksUpdate, `{"taskId":"`+id+`","inputResponses":{"`+key1+`":{"content":{"name":"x"}}}}`)
	if err == nil || err.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Message, key1) {
		t.Fatalf("wrong-shaped answer: %v", err)
	}
	if d := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`)); d.Status != TaskInputRequired || d.InputRequests[key1] == nil {
		t.Fatalf("after a refused answer: %+v", d)
	}
	// Unknown keys are ignored; the right answer is taken.
	if ack := p.mustCall(MethodTasksUpdate, `{"taskId":"`+id+`","inputResponses":{"never-issued":{"x":1},"`+key1+`":{"action":"accept","content":{"name":"Ada"}}}}`); string(ack) != tasksAck {
		t.Fatalf("update ack %s", ack)
	}
	second := p.waitTask(id, TaskInputRequired)
	var key2 string
	for k := range second.InputRequests {
		key2 = k
	}
	if key2 == "" || key2 == key1 || len(second.InputRequests) != 1 {
		t.Fatalf("second round keys %v (first %q)", second.InputRequests, key1)
	}
	// Answering the old key again is ignored.
	p.mustCall(MethodTasksUpdate, `{"taskId":"`+id+`","inputResponses":{"`+key1+`":{"action":"accept","content":{"name":"Eve"}}}}`)
	p.mustCall(MethodTasksUpdate, `{"taskId":"`+id+`","inputResponses":{"`+key2+`":{"action":"accept","content":{"name":"Grace"}}}}`)
	done := p.waitTask(id, TaskCompleted)
	if !strings.Contains(string(done.Result), "Ada+Grace") {
		t.Fatalf("result %s", done.Result)
	}
}

// TestTasksHandshakeWire walks the 2025-11-25 form: nested
// CreateTaskResult, tasks/get, blocking tasks/result with related-task,
// tasks/list, tasks/cancel, questions as related-task requests, and the
// -32601 of a task param the tool's support contradicts.
func TestTasksHandshakeWire(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	s := taskTestServer(t, nil, release)
	p := newTaskPeer(t, s, "")
	p.answer = func(r *jsonrpc.Request) json.RawMessage {
		return json.RawMessage(`{"action":"accept","content":{"name":"Lin"}}`)
	}

	var created CreateTaskResult
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"echo-optional","arguments":{"a":1},"task":{"ttl":60000}}`), &created))
	if created.Task.TaskID == "" || created.Task.Status != TaskWorking || created.Task.TTL == nil || *created.Task.TTL != 60000 {
		t.Fatalf("CreateTaskResult %+v", created)
	}
	res := p.mustCall(MethodTasksResult, `{"taskId":"`+created.Task.TaskID+`"}`)
	if !strings.Contains(string(res), `"echo {\"a\":1}"`) || !strings.Contains(string(res), `"`+MetaRelatedTask+`":{"taskId":"`+created.Task.TaskID+`"}`) {
		t.Fatalf("tasks/result %s", res)
	}
	var got Task
	must(t, json.Unmarshal(p.mustCall(MethodTasksGet, `{"taskId":"`+created.Task.TaskID+`"}`), &got))
	if got.Status != TaskCompleted {
		t.Fatalf("tasks/get %+v", got)
	}
	// The session that made the task hears of its end
	// (notifications/tasks/status, which the spec allows).
	if note := p.awaitNote(NotificationTasksStatus, `"taskId":"`+created.Task.TaskID+`"`); !strings.Contains(string(note), `"status":"completed"`) {
		t.Fatalf("notifications/tasks/status %s", note)
	}

	// A tool error fails the task on this revision; tasks/result still
	// gives the result.
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"tool-error","arguments":{},"task":{}}`), &created))
	if res := p.mustCall(MethodTasksResult, `{"taskId":"`+created.Task.TaskID+`"}`); !strings.Contains(string(res), `"isError":true`) {
		t.Fatalf("tasks/result of a tool error %s", res)
	}
	must(t, json.Unmarshal(p.mustCall(MethodTasksGet, `{"taskId":"`+created.Task.TaskID+`"}`), &got))
	if got.Status != TaskFailed || got.StatusMessage == "" {
		// The spec: a failed task's tasks/get SHOULD say why in its
		// statusMessage.
		t.Fatalf("a tool error's task is %s with statusMessage %q", got.Status, got.StatusMessage)
	}
	// A JSON-RPC error: tasks/result answers with it.
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"rpc-error","arguments":{},"task":{}}`), &created))
	if _, err := p.call(MethodTasksResult, `{"taskId":"`+created.Task.TaskID+`"}`); err == nil || err.Code != -32050 {
		t.Fatalf("tasks/result of a failed task: %v", err)
	}

	// Questions go to the client as requests tagged with the task.
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"ask-twice","arguments":{},"task":{}}`), &created))
	if res := p.mustCall(MethodTasksResult, `{"taskId":"`+created.Task.TaskID+`"}`); !strings.Contains(string(res), "Lin+Lin") {
		t.Fatalf("tasks/result %s", res)
	}
	if len(p.asked) != 2 {
		t.Fatalf("%d requests to the client, want 2", len(p.asked))
	}
	for _, r := range p.asked {
		if r.Method != MethodElicitationCreate || !strings.Contains(string(r.Params), `"`+MetaRelatedTask+`":{"taskId":"`+created.Task.TaskID+`"}`) {
			t.Fatalf("question %s %s", r.Method, r.Params)
		}
	}

	// Cancel: the task is cancelled for good; a second cancel is refused.
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"block","arguments":{},"task":{}}`), &created))
	var cancelled Task
	must(t, json.Unmarshal(p.mustCall(MethodTasksCancel, `{"taskId":"`+created.Task.TaskID+`"}`), &cancelled))
	if cancelled.Status != TaskCancelled {
		t.Fatalf("tasks/cancel %+v", cancelled)
	}
	if _, err := p.call(MethodTasksCancel, `{"taskId":"`+created.Task.TaskID+`"}`); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("second cancel: %v", err)
	}

	// tasks/list: the session's tasks.
	var list ListTasksResult
	must(t, json.Unmarshal(p.mustCall(MethodTasksList, `{}`), &list))
	if len(list.Tasks) != 5 {
		t.Fatalf("tasks/list has %d tasks, want 5", len(list.Tasks))
	}
	if _, err := p.call(MethodTasksList, `{"cursor":"bogus"}`); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("bad cursor: %v", err)
	}

	for _, c := range []struct{ name, params string }{
		{"forbidden tool with task", `{"name":"sync","arguments":{},"task":{}}`},
		{"required tool without task", `{"name":"echo-required","arguments":{}}`},
	} {
		if _, err := p.call(MethodToolsCall, c.params); err == nil || err.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v, want -32601", c.name, err)
		}
	}
	if _, err := p.call(MethodTasksUpdate, `{"taskId":"x","inputResponses":{}}`); err == nil || err.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("tasks/update on 2025-11-25: %v", err)
	}
	// A ttl that is not a number is refused; one over MaxTTL is clamped.
	if _, err := p.call(MethodToolsCall, `{"name":"echo-optional","arguments":{},"task":{"ttl":"soon"}}`); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a string ttl: %v, want -32602", err)
	}
	must(t, json.Unmarshal(p.mustCall(MethodToolsCall, `{"name":"echo-optional","arguments":{},"task":{"ttl":1000000000000000}}`), &created))
	if ttl := created.Task.TTL; ttl == nil || *ttl != DefaultTaskMaxTTL.Milliseconds() {
		t.Errorf("ttl over MaxTTL: %v, want %d", ttl, DefaultTaskMaxTTL.Milliseconds())
	}
	// Another session does not see these tasks.
	other := newTaskPeer(t, s, "")
	if _, err := other.call(MethodTasksGet, `{"taskId":"`+created.Task.TaskID+`"}`); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("another session read the task: %v", err)
	}
	must(t, json.Unmarshal(other.mustCall(MethodTasksList, `{}`), &list))
	if len(list.Tasks) != 0 {
		t.Fatalf("another session lists %d tasks", len(list.Tasks))
	}
	close(release)
}

// TestTasksOwners checks that a task of one principal is unknown to
// another, on every method.
func TestTasksOwners(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	defer close(release)
	s := taskTestServer(t, nil, release)
	as := func(who string) string {
		return strings.Replace(modernTasksMeta, `{`, `{"`+principalMetaKey+`":"`+who+`",`, 1)
	}
	p := newTaskPeer(t, s, as("alice"))
	id := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`)).TaskID
	for _, m := range []string{MethodTasksGet, MethodTasksCancel} {
		if _, err := p.callMeta(m, `{"taskId":"`+id+`"}`, as("mallory")); err == nil || err.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("%s by another principal: %v", m, err)
		}
	}
	if d := detailedOf(t, p.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`)); d.Status != TaskWorking {
		t.Fatalf("the owner sees %s", d.Status)
	}
	p.mustCall(MethodTasksCancel, `{"taskId":"`+id+`"}`)
}

// TestTasksSyncWindow checks that an optional tool answered within the
// window is a plain result, and one that is not becomes a task.
func TestTasksSyncWindow(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	s := taskTestServer(t, &ServerOptions{Tasks: &TaskOptions{SyncWindow: time.Hour}}, release)
	p := newTaskPeer(t, s, modernTasksMeta)
	if res := p.mustCall(MethodToolsCall, `{"name":"echo-optional","arguments":{}}`); strings.Contains(string(res), "taskId") {
		t.Fatalf("a quick call became a task: %s", res)
	}
	if res := p.mustCall(MethodToolsCall, `{"name":"echo-required","arguments":{}}`); !strings.Contains(string(res), `"resultType":"task"`) {
		t.Fatalf("a required tool did not start as a task: %s", res)
	}
	close(release)

	release2 := make(chan struct{})
	s2 := taskTestServer(t, &ServerOptions{Tasks: &TaskOptions{SyncWindow: time.Millisecond}}, release2)
	p2 := newTaskPeer(t, s2, modernTasksMeta)
	created := detailedOf(t, p2.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`))
	if created.ResultType != ResultTypeTask {
		t.Fatalf("a slow optional call did not become a task: %+v", created)
	}
	close(release2)
	if d := p2.waitTask(created.TaskID, TaskCompleted); !strings.Contains(string(d.Result), "released") {
		t.Fatalf("result %s", d.Result)
	}
}

// TestTasksGoAsync checks a tool added with AddAsyncTool: synchronous
// (multi round-trip input included) until GoAsync, a task after.
func TestTasksGoAsync(t *testing.T) {
	checkGoroutines(t)
	s := taskTestServer(t, nil, nil)
	var sideEffects atomic.Int32
	must(t, s.AddAsyncTool(&Tool{Name: "async", Execution: &ToolExecution{TaskSupport: TaskRequired}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		res, err := req.Elicit(WithInputKey(ctx, "who"), &ElicitParams{Message: "who?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		ctx, err = req.GoAsync(ctx)
		if err != nil {
			return nil, err
		}
		sideEffects.Add(1)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &CallToolResult{Content: []Content{&TextContent{Text: "hi " + res.Content["name"].(string)}}}, nil
	}))
	p := newTaskPeer(t, s, modernTasksMeta)
	round1 := p.mustCall(MethodToolsCall, `{"name":"async","arguments":{}}`)
	var ir InputRequiredResult
	must(t, json.Unmarshal(round1, &ir))
	if ir.ResultType != ResultTypeInputRequired || ir.InputRequests["who"] == nil || strings.Contains(string(round1), "taskId") {
		t.Fatalf("round 1 %s", round1)
	}
	round2 := p.mustCall(MethodToolsCall, `{"name":"async","arguments":{},"inputResponses":{"who":{"action":"accept","content":{"name":"Bo"}}},"requestState":"`+ir.RequestState+`"}`)
	created := detailedOf(t, round2)
	if created.ResultType != ResultTypeTask || strings.Contains(string(round2), "requestState") {
		t.Fatalf("round 2 %s", round2)
	}
	if d := p.waitTask(created.TaskID, TaskCompleted); !strings.Contains(string(d.Result), "hi Bo") {
		t.Fatalf("result %s", d.Result)
	}
	if n := sideEffects.Load(); n != 1 {
		t.Fatalf("the work after GoAsync ran %d times", n)
	}
}

// TestTasksListen checks notifications/tasks on subscriptions/listen:
// acknowledged for the caller's own tasks only, sent on each change.
func TestTasksListen(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	s := taskTestServer(t, nil, release)
	p := newTaskPeer(t, s, modernTasksMeta)
	id := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`)).TaskID

	// Undeclared: -32021.
	if _, err := p.callMeta(MethodSubscriptionsListen, `{"notifications":{"taskIds":["`+id+`"]}}`, modernPlainMeta); err == nil || err.Code != CodeMissingRequiredClientCapability {
		t.Fatalf("listen without the extension: %v", err)
	}
	listenID := jsonrpc.Int64ID(1000)
	p.write(&jsonrpc.Request{ID: listenID, Method: MethodSubscriptionsListen,
		Params: json.RawMessage(`{"_meta":` + modernTasksMeta + `,"notifications":{"taskIds":["` + id + `","not-mine"]}}`)})
	ack := readNotification(t, p.rawPeer, NotificationSubscriptionsAcknowledged)
	if !strings.Contains(string(ack.Params), `"taskIds":["`+id+`"]`) {
		t.Fatalf("acknowledged %s", ack.Params)
	}
	close(release)
	for {
		n := readNotification(t, p.rawPeer, NotificationTasks)
		d := detailedOf(t, n.Params)
		if d.TaskID != id || d.Meta.SubscriptionID.String() != listenID.String() {
			t.Fatalf("notification %s", n.Params)
		}
		if d.Status == TaskCompleted {
			if !strings.Contains(string(d.Result), "released") {
				t.Fatalf("notification without the result: %s", n.Params)
			}
			break
		}
	}
	p.write(&jsonrpc.Request{Method: NotificationCancelled, Params: json.RawMessage(`{"requestId":1000}`)})
}

// readNotification returns the next notification of method on p.
func readNotification(t *testing.T, p *rawPeer, method string) *jsonrpc.Request {
	t.Helper()
	for {
		m, err := p.c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == method {
			return r
		}
	}
}

// TestTasksBounds checks the store's limits, MaxDuration and Close: at a
// limit an optional tool runs synchronously and a required one is
// refused naming it; a task past MaxDuration fails; Close fails the
// tasks still running.
func TestTasksBounds(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	defer close(release)
	store := NewMemoryTaskStore(&TaskStoreOptions{MaxUnfinishedPerOwner: 1})
	defer store.(interface{ Close() error }).Close()
	s := taskTestServer(t, &ServerOptions{Tasks: &TaskOptions{Store: store}}, release)
	p := newTaskPeer(t, s, modernTasksMeta)
	first := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`))
	if first.ResultType != ResultTypeTask {
		t.Fatalf("first call %+v", first)
	}
	if res := p.mustCall(MethodToolsCall, `{"name":"echo-optional","arguments":{}}`); strings.Contains(string(res), "taskId") {
		t.Fatalf("an optional call at the limit became a task: %s", res)
	}
	if _, err := p.call(MethodToolsCall, `{"name":"echo-required","arguments":{}}`); err == nil || err.Code != jsonrpc.CodeInternalError || !strings.Contains(err.Message, "MaxUnfinishedPerOwner") {
		t.Fatalf("a required call at the limit: %v", err)
	}

	s2 := taskTestServer(t, &ServerOptions{Tasks: &TaskOptions{MaxDuration: 20 * time.Millisecond}}, release)
	p2 := newTaskPeer(t, s2, modernTasksMeta)
	id := detailedOf(t, p2.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`)).TaskID
	if d := p2.waitTask(id, TaskFailed); d.Error == nil || !strings.Contains(d.StatusMessage, "MaxDuration") {
		t.Fatalf("past MaxDuration: %+v", d)
	}

	store3 := NewMemoryTaskStore(nil) // not the server's: Close leaves it open
	defer store3.(interface{ Close() error }).Close()
	s3 := taskTestServer(t, &ServerOptions{Tasks: &TaskOptions{Store: store3}}, release)
	p3 := newTaskPeer(t, s3, modernTasksMeta)
	id = detailedOf(t, p3.mustCall(MethodToolsCall, `{"name":"block","arguments":{}}`)).TaskID
	must(t, s3.Close())
	if d := detailedOf(t, p3.mustCall(MethodTasksGet, `{"taskId":"`+id+`"}`)); d.Status != TaskFailed || !strings.Contains(d.StatusMessage, "closed") {
		t.Fatalf("after Close: %+v", d)
	}
	if _, err := p3.call(MethodToolsCall, `{"name":"echo-required","arguments":{}}`); err == nil {
		t.Fatal("a closed server started a task")
	}
}

// TestTasksConcurrentUpdates has many goroutines answer and cancel at
// once: every request is answered and the task ends once.
func TestTasksConcurrentUpdates(t *testing.T) {
	checkGoroutines(t)
	s := taskTestServer(t, nil, nil)
	p := newTaskPeer(t, s, modernTasksMeta)
	id := detailedOf(t, p.mustCall(MethodToolsCall, `{"name":"ask-twice","arguments":{}}`)).TaskID
	d := p.waitTask(id, TaskInputRequired)
	var key string
	for k := range d.InputRequests {
		key = k
	}
	ss := s.Sessions()[0]
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			params := &UpdateTaskParams{Meta: Meta{ProtocolVersion: Version20260728, ClientCapabilities: &ClientCapabilities{Extensions: map[string]json.RawMessage{TasksExtensionID: json.RawMessage(`{}`)}}},
				TaskID: id, InputResponses: map[string]json.RawMessage{key: json.RawMessage(fmt.Sprintf(`{"action":"accept","content":{"name":"n%d"}}`, i))}}
			if _, err := ss.updateTask(context.Background(), &ServerRequest[*UpdateTaskParams]{Session: ss, Params: params, method: MethodTasksUpdate}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	p.mustCall(MethodTasksCancel, `{"taskId":"`+id+`"}`)
	if d := p.waitTask(id, TaskCancelled); d.Status != TaskCancelled {
		t.Fatalf("status %s", d.Status)
	}
}

// TestClientHostedTasks checks sampling run as a task of the client's
// (2025-11-25): the server sends the task-augmented request, polls the
// client's tasks/get, and hands the handler the result of tasks/result;
// to a client that did not declare such tasks it sends a plain request.
func TestClientHostedTasks(t *testing.T) {
	checkGoroutines(t)
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprint("declared=", declared), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			must(t, s.AddTool(&Tool{Name: "sample"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
				res, err := req.CreateMessage(ctx, &CreateMessageParams{Task: &TaskMetadata{}, MaxTokens: 5,
					Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}})
				if err != nil {
					return nil, err
				}
				return &CallToolResult{Content: []Content{res.Content[0]}}, nil
			}))
			p := &taskPeer{rawPeer: newRawPeer(t, s)}
			caps := `{"sampling":{}}`
			if declared {
				caps = `{"sampling":{},"tasks":{"cancel":{},"requests":{"sampling":{"createMessage":{}}}}}`
			}
			p.mustCall(MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}`)
			p.write(&jsonrpc.Request{Method: NotificationInitialized, Params: json.RawMessage(`{}`)})
			polls := 0
			p.answer = func(r *jsonrpc.Request) json.RawMessage {
				switch r.Method {
				case MethodSamplingCreateMessage:
					if declared != strings.Contains(string(r.Params), `"task":{}`) {
						t.Errorf("sampling params %s (declared %v)", r.Params, declared)
					}
					if declared {
						return json.RawMessage(`{"task":{"taskId":"c1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null,"pollInterval":1}}`)
					}
				case MethodTasksGet:
					polls++
					status := "working"
					if polls > 1 {
						status = "completed"
					}
					return json.RawMessage(`{"taskId":"c1","status":"` + status + `","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}`)
				case MethodTasksResult:
					return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"from a task"},"model":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"c1"}}}`)
				}
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"plain"},"model":"m"}`)
			}
			res := p.mustCall(MethodToolsCall, `{"name":"sample","arguments":{}}`)
			want := "plain"
			if declared {
				want = "from a task"
			}
			if !strings.Contains(string(res), want) {
				t.Fatalf("result %s, want %q", res, want)
			}
			var methods []string
			for _, r := range p.asked {
				methods = append(methods, r.Method)
			}
			wantMethods := "sampling/createMessage"
			if declared {
				wantMethods = "sampling/createMessage tasks/get tasks/get tasks/result"
			}
			if got := strings.Join(methods, " "); got != wantMethods {
				t.Fatalf("the server sent %s, want %s", got, wantMethods)
			}
		})
	}
}

// TestTasksAcrossEras checks that a task a principal created in the
// 2025-11-25 form can be read and cancelled in the 2026-07-28 form, in
// the form of the request that reads it.
func TestTasksAcrossEras(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	defer close(release)
	s := taskTestServer(t, nil, release)
	old := newTaskPeer(t, s, "")
	var created CreateTaskResult
	must(t, json.Unmarshal(old.mustCall(MethodToolsCall, `{"_meta":{"`+principalMetaKey+`":"alice"},"name":"tool-error","arguments":{},"task":{}}`), &created))
	blocked := CreateTaskResult{}
	must(t, json.Unmarshal(old.mustCall(MethodToolsCall, `{"_meta":{"`+principalMetaKey+`":"alice"},"name":"block","arguments":{},"task":{}}`), &blocked))

	modern := newTaskPeer(t, s, strings.Replace(modernTasksMeta, `{`, `{"`+principalMetaKey+`":"alice",`, 1))
	// A 2025 tool error (failed there) reads as completed with isError.
	d := modern.waitTask(created.Task.TaskID, TaskCompleted)
	if !strings.Contains(string(d.Result), `"isError":true`) || d.Error != nil {
		t.Fatalf("a 2025 tool error seen from 2026: %+v", d)
	}
	modern.mustCall(MethodTasksCancel, `{"taskId":"`+blocked.Task.TaskID+`"}`)
	var got Task
	must(t, json.Unmarshal(old.mustCall(MethodTasksGet, `{"_meta":{"`+principalMetaKey+`":"alice"},"taskId":"`+blocked.Task.TaskID+`"}`), &got))
	if got.Status != TaskCancelled {
		t.Fatalf("cancelled from 2026, read from 2025: %s", got.Status)
	}
	// Without the principal the handshake session is another owner.
	if _, err := old.call(MethodTasksGet, `{"taskId":"`+blocked.Task.TaskID+`"}`); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("the session without the principal read the task: %v", err)
	}
}

// TestServerShutdown checks that Shutdown bounds the wait for a task
// handler that ignores its context: the task reads failed ("the server
// closed") at once.
func TestServerShutdown(t *testing.T) {
	store := NewMemoryTaskStore(nil)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{Store: store}})
	release, started := make(chan struct{}), make(chan struct{})
	s.AddTool(&Tool{Name: "stubborn", InputSchema: objectSchema, Execution: &ToolExecution{TaskSupport: TaskRequired}},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			close(started)
			<-release // ignores ctx
			return &CallToolResult{Content: Contents{&TextContent{Text: "late"}}}, nil
		})
	cs := realTaskPair(t, s, true, ClientOptions{Tasks: &ClientTaskOptions{}})
	_, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "stubborn"})
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v, %v", task, err)
	}
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with an ended context: %v, want context.Canceled", err)
	}
	st, err := task.Status(t.Context())
	if err != nil || st.Status != TaskFailed || st.StatusMessage != taskMessageClosed {
		t.Fatalf("after Shutdown: %+v, %v; want failed (%q)", st, err, taskMessageClosed)
	}
	close(release)
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Shutdown: %v", err)
	}
}

// createRecorder is a TaskStore that records the tasks created.
type createRecorder struct {
	TaskStore
	mu      sync.Mutex
	created []TaskRecord
}

func (s *createRecorder) Create(ctx context.Context, rec *TaskRecord) error {
	err := s.TaskStore.Create(ctx, rec)
	if err == nil {
		s.mu.Lock()
		s.created = append(s.created, *rec.Clone())
		s.mu.Unlock()
	}
	return err
}

// TestTaskUnannouncedCancelled checks that a 2026-07-28 task whose
// request ended before the answer naming it was sent is cancelled: its
// client never learns its ID.
func TestTaskUnannouncedCancelled(t *testing.T) {
	store := &createRecorder{TaskStore: NewMemoryTaskStore(nil)}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Tasks: &TaskOptions{Store: store},
		Middleware: []Middleware{func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				if req.Method() != MethodToolsCall {
					return next(ctx, req)
				}
				ctx, cancel := context.WithCancel(ctx)
				cancel() // the client goes away as the call starts
				return next(ctx, req)
			}
		}},
	})
	stopped := make(chan struct{})
	s.AddTool(&Tool{Name: "long", InputSchema: objectSchema, Execution: &ToolExecution{TaskSupport: TaskRequired}},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})
	defer s.Close()
	cs := realTaskPair(t, s, true, ClientOptions{Tasks: &ClientTaskOptions{}})
	if res, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "long"}); err == nil {
		t.Fatalf("StartTool: %v, %v; want an error", res, task)
	}
	<-stopped // the handler's context ended
	store.mu.Lock()
	created := store.created
	store.mu.Unlock()
	if len(created) != 1 {
		t.Fatalf("%d tasks created, want 1", len(created))
	}
	rec, err := store.Get(t.Context(), created[0].Owner, created[0].ID)
	if err != nil || rec.Status != TaskCancelled {
		t.Fatalf("the task: %+v, %v; want cancelled", rec, err)
	}
}

// TestTaskAbandonedCallCancelled checks that a 2025-11-25 client whose
// caller gives up on a task-augmented tools/call before its answer still
// reads the answer and cancels the task it names.
func TestTaskAbandonedCallCancelled(t *testing.T) {
	checkGoroutines(t)
	store := &createRecorder{TaskStore: NewMemoryTaskStore(nil)}
	defer store.TaskStore.(io.Closer).Close()
	hold := make(chan struct{})
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Tasks: &TaskOptions{Store: store},
		Middleware: []Middleware{func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				res, err := next(ctx, req)
				if req.Method() == MethodToolsCall {
					<-hold // the answer comes after the caller gave up
				}
				return res, err
			}
		}},
	})
	stopped := make(chan struct{})
	s.AddTool(&Tool{Name: "long", InputSchema: objectSchema, Execution: &ToolExecution{TaskSupport: TaskRequired}},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})
	defer s.Close()
	cs := realTaskPair(t, s, false, ClientOptions{Tasks: &ClientTaskOptions{}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		store.mu.Lock() // wait for the task to exist
		for len(store.created) == 0 {
			store.mu.Unlock()
			runtime.Gosched()
			store.mu.Lock()
		}
		store.mu.Unlock()
		cancel()
	}()
	if res, err := cs.CallTool(ctx, &CallToolParams{Name: "long"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CallTool: %v, %v; want context.Canceled", res, err)
	}
	close(hold)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned task was not cancelled")
	}
	store.mu.Lock()
	created := store.created[0]
	store.mu.Unlock()
	if rec, err := store.Get(t.Context(), created.Owner, created.ID); err != nil || rec.Status != TaskCancelled {
		t.Fatalf("the task: %+v, %v; want cancelled", rec, err)
	}
}

// TestTasksSyncWindowInline covers the sync window where the handler runs
// on the request's own goroutine (no receiving middleware, a transport
// that can answer early): a handler that returns within the window
// answers the call; one that outlasts it becomes a task, the call
// answered with it while the handler goes on; a call whose request ends
// while it is synchronous ends the handler's context.
func TestTasksSyncWindowInline(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{SyncWindow: 20 * time.Millisecond, PollInterval: time.Millisecond}})
	defer s.Close()
	release, started, stopped := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	optional := &ToolExecution{TaskSupport: TaskOptional}
	text := func(s string) *CallToolResult { return &CallToolResult{Content: Contents{&TextContent{Text: s}}} }
	s.AddTool(&Tool{Name: "quick", InputSchema: objectSchema, Execution: optional}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return text("quick"), nil
	})
	s.AddTool(&Tool{Name: "slow", InputSchema: objectSchema, Execution: optional}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		select {
		case <-release:
			return text("slow"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(&Tool{Name: "hang", InputSchema: objectSchema, Execution: optional}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	cs := realTaskPair(t, s, true, ClientOptions{Tasks: &ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond}})

	res, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: "quick"})
	if err != nil || task != nil || taskText(res) != "quick" {
		t.Fatalf("quick: %v, %v, %v; want its result at once", res, task, err)
	}
	_, task, err = cs.StartTool(t.Context(), &CallToolParams{Name: "slow"})
	if err != nil || task == nil {
		t.Fatalf("slow: %v, %v; want a task once the window passed", task, err)
	}
	if st, err := task.Status(t.Context()); err != nil || st.Status != TaskWorking {
		t.Fatalf("slow's task: %+v, %v; want working", st, err)
	}
	close(release)
	if res, err := task.Wait(t.Context()); err != nil || taskText(res) != "slow" {
		t.Fatalf("slow's task: %v, %v", res, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	if _, err := cs.CallTool(ctx, &CallToolParams{Name: "hang"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("hang: %v; want context.Canceled", err)
	}
	select {
	case err := <-stopped:
		if err == nil {
			t.Fatal("hang's context ended without a cause")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request's end did not end the synchronous handler")
	}
}

// TestTasksSyncWindowInlineMany runs inline calls side by side, so the
// window watcher's list holds several at once and loses runs from its
// middle: every slow call becomes a task, every quick one is answered
// with its result, and the watcher ends with the server (checkGoroutines).
func TestTasksSyncWindowInlineMany(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{SyncWindow: 15 * time.Millisecond, PollInterval: time.Millisecond}})
	defer s.Close()
	release := make(chan struct{})
	optional := &ToolExecution{TaskSupport: TaskOptional}
	text := func(s string) *CallToolResult { return &CallToolResult{Content: Contents{&TextContent{Text: s}}} }
	s.AddTool(&Tool{Name: "quick", InputSchema: objectSchema, Execution: optional}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return text("quick"), nil
	})
	s.AddTool(&Tool{Name: "slow", InputSchema: objectSchema, Execution: optional}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		select {
		case <-release:
			return text("slow"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	cs := realTaskPair(t, s, true, ClientOptions{Tasks: &ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond}})

	const n = 8
	tasks := make(chan *ToolTask, n)
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "quick"
			if i%2 == 0 {
				name = "slow"
			}
			res, task, err := cs.StartTool(t.Context(), &CallToolParams{Name: name})
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: %w", name, err)
			case name == "slow" && task == nil:
				errs <- fmt.Errorf("slow: answered %v, want a task", res)
			case name == "slow":
				tasks <- task
			case task != nil || taskText(res) != "quick":
				errs <- fmt.Errorf("quick: %v, %v; want its result", res, task)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	close(release)
	close(tasks)
	for task := range tasks {
		if res, err := task.Wait(t.Context()); err != nil || taskText(res) != "slow" {
			t.Errorf("slow's task: %v, %v", res, err)
		}
	}
}

// TestRunCancelCtx holds a run's handler context, whose cancelCtx is made
// on demand, to what context.WithCancelCause gives: Err, Done, Cause and
// children, whichever comes first, the cancel or the first use.
func TestRunCancelCtx(t *testing.T) {
	cause := errors.New("the cause")
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	for _, c := range []struct {
		name   string
		before func(ctx context.Context) func() // uses ctx before the cancel; checks after
	}{
		{"unused", func(context.Context) func() { return func() {} }},
		{"done first", func(ctx context.Context) func() {
			done := ctx.Done()
			return func() {
				select {
				case <-done:
				default:
					t.Error("the Done channel taken before the cancel is not closed")
				}
			}
		}},
		{"child first", func(ctx context.Context) func() {
			child, stop := context.WithCancel(ctx)
			return func() {
				<-child.Done()
				if context.Cause(child) != cause {
					t.Errorf("child's cause: %v", context.Cause(child))
				}
				stop()
			}
		}},
		{"after func first", func(ctx context.Context) func() {
			ran := make(chan struct{})
			context.AfterFunc(ctx, func() { close(ran) })
			return func() { <-ran }
		}},
		{"value child first", func(ctx context.Context) func() {
			child := context.WithValue(ctx, key{}, "w")
			return func() {
				if child.Err() != context.Canceled || context.Cause(child) != cause {
					t.Errorf("value child: %v, %v", child.Err(), context.Cause(child))
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h runCancelCtx
			h.parent = parent
			ctx := context.Context(&h)
			if ctx.Err() != nil || context.Cause(ctx) != nil {
				t.Fatalf("before the cancel: %v, %v", ctx.Err(), context.Cause(ctx))
			}
			if ctx.Value(key{}) != "v" {
				t.Fatal("the parent's values are not seen")
			}
			check := c.before(ctx)
			h.cancel(cause)
			h.cancel(errors.New("a later cause"))
			check()
			if ctx.Err() != context.Canceled || context.Cause(ctx) != cause {
				t.Errorf("after the cancel: %v, %v; want context.Canceled, %v", ctx.Err(), context.Cause(ctx), cause)
			}
			select {
			case <-ctx.Done():
			default:
				t.Error("Done is not closed after the cancel")
			}
			if ctx.Value(key{}) != "v" {
				t.Error("the parent's values are not seen after the cancel")
			}
		})
	}
	t.Run("concurrent", func(t *testing.T) {
		var h runCancelCtx
		h.parent = parent
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					<-h.Done()
				} else {
					h.cancel(cause)
				}
			}()
		}
		wg.Wait()
		if context.Cause(&h) != cause {
			t.Errorf("cause: %v", context.Cause(&h))
		}
	})
}

// tasksAck is the answer to tasks/cancel and tasks/update of the tasks
// tests' server: an empty result of the stateless era, with the server's
// identity.
const tasksAck = `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1"}},"resultType":"complete"}`
