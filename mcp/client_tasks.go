package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The client side of tasks. A server may answer tools/call with a task
// instead of a result: in 2026-07-28 (the tasks extension) a flat
// DetailedTask with resultType "task", when the client declared the
// extension; in 2025-11-25 a nested {task} (CreateTaskResult), when the
// client asked for one with the task param. CallTool drives such a task
// to its end and returns its result; StartTool hands it out as a
// [ToolTask]. Both are off until ClientOptions.Tasks is set.

// Default bounds of the polling of a task (see [ClientTaskOptions]).
const (
	defaultMinPollInterval     = 100 * time.Millisecond
	defaultMaxPollInterval     = 30 * time.Second
	defaultDefaultPollInterval = time.Second
	// pollBackoff multiplies the interval of each poll the server gave
	// no interval for.
	pollBackoff = 1.5
	// cancelTimeout bounds the tasks/cancel sent when a caller's context
	// ended, with a context of its own.
	cancelTimeout = 5 * time.Second
	// maxAnsweredKeys bounds the input request keys a task remembers
	// having answered; past it, those the server no longer asks for are
	// forgotten.
	maxAnsweredKeys = 4096
	// maxTaskTools bounds the tools whose task support a session
	// remembers (2025-11-25).
	maxTaskTools = 4096
	// maxToolPages bounds the pages of tools/list read to learn a tool's
	// task support (2025-11-25).
	maxToolPages = 64
)

// ClientTaskOptions configures a client's support of tasks (see
// [ClientOptions.Tasks]). Zero fields take their defaults.
type ClientTaskOptions struct {
	// MinPollInterval is the shortest interval between two polls of a
	// task (tasks/get), whatever the server suggests. Zero means 100 ms.
	MinPollInterval time.Duration
	// MaxPollInterval is the longest interval between two polls of a
	// task, whatever the server suggests. Zero means 30 s.
	MaxPollInterval time.Duration
	// DefaultPollInterval is the interval of a poll the server suggested
	// none for; each further poll without a suggestion waits 1.5 times
	// longer, up to MaxPollInterval. Zero means 1 s.
	DefaultPollInterval time.Duration
	// Host, when set, lets servers run sampling/createMessage and
	// elicitation/create as tasks of this client (2025-11-25): the client
	// declares it in initialize, for the handlers it has, and serves the
	// server's tasks/get, tasks/result, tasks/list and tasks/cancel. Its
	// fields are those of a server's runtime (SyncWindow does not apply);
	// [Client.Close] ends the tasks still running.
	Host *TaskOptions

	// sleep waits for d or until ctx ends; nil means a timer. Tests
	// replace it to see the intervals without waiting.
	sleep func(ctx context.Context, d time.Duration) error
}

// pollPolicy is a ClientTaskOptions with its defaults applied.
type pollPolicy struct {
	min, max, def time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
}

// policy returns o's polling policy, defaults applied.
func (o *ClientTaskOptions) policy() pollPolicy {
	p := pollPolicy{min: defaultMinPollInterval, max: defaultMaxPollInterval, def: defaultDefaultPollInterval, sleep: pollSleep}
	if o == nil {
		return p
	}
	if o.MinPollInterval > 0 {
		p.min = o.MinPollInterval
	}
	if o.MaxPollInterval > 0 {
		p.max = o.MaxPollInterval
	}
	if p.max < p.min {
		p.max = p.min
	}
	if o.DefaultPollInterval > 0 {
		p.def = o.DefaultPollInterval
	}
	p.def = min(max(p.def, p.min), p.max)
	if o.sleep != nil {
		p.sleep = o.sleep
	}
	return p
}

// clamp returns the interval of ms milliseconds, which the server
// suggested, within the policy's bounds.
func (p pollPolicy) clamp(ms int64) time.Duration {
	switch {
	case ms <= p.min.Milliseconds():
		return p.min
	case ms >= p.max.Milliseconds():
		return p.max // also where ms would overflow a Duration
	}
	return min(max(time.Duration(ms)*time.Millisecond, p.min), p.max)
}

// pollSleep waits for d, or until ctx ends.
func pollSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrTaskCancelled reports a task that ended cancelled: CallTool and
// [ToolTask.Wait] return an error wrapping it.
var ErrTaskCancelled = errors.New("mcp: task cancelled")

// TaskProtocolError reports a server's task answer the client cannot
// use: a task it did not ask for (a tools/call answered with a task
// while ClientOptions.Tasks is nil), a task without a taskId, a status
// it does not know, an outcome missing from a completed or failed task,
// or an input request of a method it cannot fulfil (the client then
// cancels the task before it returns the error). Err, when set, says
// more: the [*InputRequestError] of an input request; for a task not
// asked for, the error the answer was before tasks (a [*ResultTypeError]
// in 2026-07-28, a [*ResultError] in 2025-11-25).
type TaskProtocolError struct {
	Method string // the request whose answer was wrong: tools/call or a tasks/ method
	TaskID string // the task's ID, when known
	Reason string // what was wrong
	Err    error  // the underlying error, if any
}

// Error implements error.
func (e *TaskProtocolError) Error() string {
	s := "mcp: " + e.Method + ": "
	if e.TaskID != "" {
		s += fmt.Sprintf("task %q: ", e.TaskID)
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Err.
func (e *TaskProtocolError) Unwrap() error { return e.Err }

// ToolTask is a tools/call that runs as a task on the server: StartTool
// returns it, and [ClientSession.Task] resumes one by its ID. Its
// methods are safe for concurrent use.
type ToolTask struct {
	cs     *ClientSession
	id     string
	modern bool // 2026-07-28: tasks/get inlines the outcome, tasks/update answers inputs

	mu       sync.Mutex
	last     *DetailedTask   // the latest state seen; nil before any
	ended    *DetailedTask   // the first terminal state seen: it wins
	answered map[string]bool // input request keys answered (2026-07-28)
	waitMu   sync.Mutex      // one Wait drives the task at a time
}

// ID returns the task's ID, which [ClientSession.Task] takes to resume
// it (after a restart, say).
func (t *ToolTask) ID() string { return t.id }

// Task returns the task of the session's server with the given ID, to
// wait for, read or cancel: a task StartTool started, perhaps in an
// earlier session. It sends nothing.
func (cs *ClientSession) Task(id string) *ToolTask {
	return &ToolTask{cs: cs, id: id, modern: cs.modern != nil}
}

// taskSlot is where the answer to a tools/call that is a task goes: CallTool and
// StartTool put one in the call's context, and captureTask fills it.
type taskSlot struct {
	enabled bool // the client supports tasks (ClientOptions.Tasks)
	asked   bool // 2025-11-25: the call carried the task param
	task    *DetailedTask
}

type taskSlotKey struct{}

// captureTask reads raw, the answer to a request o sent with ctx, as a
// task when it is one and ctx carries a taskSlot for o: it fills the
// slot, or returns a *TaskProtocolError for a task the call did not ask
// for, and reports true. The endpoint's wire and modernCall call it
// before they decode raw into o's result.
func captureTask(ctx context.Context, o *outgoing, raw []byte, modern bool) (bool, error) {
	if o.method != MethodToolsCall {
		return false, nil
	}
	if !bytes.Contains(raw, []byte(`"task"`)) { // a "task" key (2025-11-25) or value (resultType, 2026-07-28)
		return false, nil
	}
	slot, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	if slot == nil {
		slot = &taskSlot{} // a client without ClientOptions.Tasks: no task is expected
	} else if slot.task != nil {
		return false, nil
	}
	var probe struct {
		ResultType ResultType      `json:"resultType"`
		Task       json.RawMessage `json:"task"`
		Content    json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false, nil // the result's own decoding reports it
	}
	var dt *DetailedTask
	switch {
	case modern && probe.ResultType == ResultTypeTask:
		if !slot.enabled {
			return true, &TaskProtocolError{Method: o.method, Reason: "the server answered with a task, which this client did not declare support for (ClientOptions.Tasks)",
				Err: &ResultTypeError{Method: o.method, ResultType: ResultTypeTask}}
		}
		dt = &DetailedTask{}
		if err := unmarshalReceived(raw, dt); err != nil {
			return true, fmt.Errorf("mcp: decoding %s task: %w", o.method, err)
		}
	case !modern && len(probe.Task) > 0 && probe.Content == nil && !bytes.Equal(probe.Task, []byte("null")):
		if !slot.asked {
			return true, &TaskProtocolError{Method: o.method, Reason: "the server answered with a task, which the call did not ask for",
				Err: &ResultError{Method: o.method, Member: "content"}}
		}
		var ct CreateTaskResult
		if err := unmarshalReceived(raw, &ct); err != nil {
			return true, fmt.Errorf("mcp: decoding %s task: %w", o.method, err)
		}
		dt = detailedFromLegacy(&ct.Task)
		dt.Meta = ct.Meta
	default:
		return false, nil
	}
	if res, ok := o.result.(*CallToolResult); ok {
		res.ResultType = ResultTypeTask // what middleware sees: a task, no content
	}
	slot.task = dt
	return true, nil
}

// detailedFromLegacy converts a task of 2025-11-25 to the DetailedTask
// shape.
func detailedFromLegacy(t *Task) *DetailedTask {
	return &DetailedTask{
		Meta:           t.Meta,
		TaskID:         t.TaskID,
		Status:         t.Status,
		StatusMessage:  t.StatusMessage,
		CreatedAt:      t.CreatedAt,
		LastUpdatedAt:  t.LastUpdatedAt,
		TTLMs:          t.TTL,
		PollIntervalMs: t.PollInterval,
	}
}

// taskSupport returns the 2025-11-25 task support of the tool name,
// learning it from tools/list once per session (or once more after the
// tool list changed) when the tool is not known yet. It is "" (forbidden)
// when the server does not take task-augmented tools/call at all, and
// for a tool tools/list did not show.
func (cs *ClientSession) taskSupport(ctx context.Context, name string) (string, error) {
	caps := cs.serverCaps()
	if caps.Tasks == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		return "", nil
	}
	cs.mu.Lock()
	ts, known := cs.taskTools[name]
	listed := cs.taskToolsListed
	cs.mu.Unlock()
	if known || listed {
		return ts, nil
	}
	cursor := ""
	for range maxToolPages {
		res, err := cs.ListTools(ctx, &ListToolsParams{Cursor: cursor})
		if err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			// The call goes on without a task: a server that cannot list
			// its tools must not cost the call.
			cs.logger.Debug("mcp: cannot list tools to learn their task support", "tool", name, "err", err)
			break
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	cs.mu.Lock()
	cs.taskToolsListed = true
	ts = cs.taskTools[name]
	cs.mu.Unlock()
	return ts, nil
}

// noteToolTasks remembers the task support of the tools of a tools/list
// page (2025-11-25): that of those that may run as tasks, within a bound.
func (cs *ClientSession) noteToolTasks(list *ListToolsResult) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, t := range list.Tools {
		ts := ""
		if t.Execution != nil && (t.Execution.TaskSupport == TaskOptional || t.Execution.TaskSupport == TaskRequired) {
			ts = t.Execution.TaskSupport
		}
		if ts == "" {
			delete(cs.taskTools, t.Name)
			continue
		}
		if cs.taskTools == nil || len(cs.taskTools) >= maxTaskTools {
			cs.taskTools = make(map[string]string)
		}
		cs.taskTools[t.Name] = ts
	}
}

// forgetToolTasks forgets what the session learnt of its tools' task
// support, when the server says its tools changed.
func (cs *ClientSession) forgetToolTasks() {
	cs.mu.Lock()
	cs.taskTools, cs.taskToolsListed = nil, false
	cs.mu.Unlock()
}

// callTool sends tools/call, with the task param where the tool's task
// support allows it (2025-11-25: required always, optional when start),
// and returns the result or the task the server answered with.
func (cs *ClientSession) callTool(ctx context.Context, params *CallToolParams, start bool) (*CallToolResult, *ToolTask, error) {
	if err := cs.checkServer(MethodToolsCall, "tools", cs.serverCaps().Tools != nil); err != nil {
		return nil, nil, err
	}
	opts := cs.client.opts.Tasks
	var slot *taskSlot // none without ClientOptions.Tasks: captureTask then refuses every task
	if opts != nil {
		slot = &taskSlot{enabled: true}
		ctx = context.WithValue(ctx, taskSlotKey{}, slot)
	}
	if cs.modern == nil && params != nil {
		want := false
		if opts != nil {
			ts, err := cs.taskSupport(ctx, params.Name)
			if err != nil {
				return nil, nil, err
			}
			want = ts == TaskRequired || ts == TaskOptional && start
		}
		if want != (params.Task != nil) {
			p := *params // the caller's params stay as they are
			p.Task = nil
			if want {
				p.Task = &TaskMetadata{}
				if params.Task != nil {
					p.Task = params.Task
				}
			}
			params = &p
		}
		if slot != nil {
			slot.asked = want
		}
	}
	res := &CallToolResult{}
	var err error
	if slot != nil && slot.asked {
		err = cs.requestTask(ctx, params, res, slot)
	} else {
		err = cs.request(ctx, MethodToolsCall, params, res)
	}
	if err != nil {
		return nil, nil, err
	}
	if slot == nil || slot.task == nil {
		return res, nil, nil
	}
	t := &ToolTask{cs: cs, modern: cs.modern != nil}
	if err := t.observe(MethodToolsCall, slot.task); err != nil {
		return nil, nil, err
	}
	t.id = slot.task.TaskID
	return nil, t, nil
}

// taskAnnounceTimeout bounds how long a task-augmented tools/call
// (2025-11-25) abandoned by its caller is still waited for, to cancel the
// task it creates.
const taskAnnounceTimeout = 30 * time.Second

// requestTask sends a task-augmented tools/call (2025-11-25). Such a
// request is never cancelled (the spec: a task is cancelled with
// tasks/cancel, not notifications/cancelled), so when ctx ends first its
// answer is still awaited in the background, for at most
// taskAnnounceTimeout, and the task it names cancelled: the caller, gone,
// would never learn its ID.
func (cs *ClientSession) requestTask(ctx context.Context, params *CallToolParams, res *CallToolResult, slot *taskSlot) error {
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), taskAnnounceTimeout)
	done := make(chan error, 1)
	go func() { done <- cs.request(rctx, MethodToolsCall, params, res) }()
	select {
	case err := <-done:
		stop()
		return err
	case <-ctx.Done():
		go func() {
			defer stop()
			if err := <-done; err != nil || slot.task == nil || slot.task.TaskID == "" {
				return
			}
			t := &ToolTask{cs: cs, id: slot.task.TaskID}
			t.cancelDetached(ctx)
		}()
		return context.Cause(ctx)
	}
}

// StartTool calls a tool, asking for it to run as a task where it may:
// in 2025-11-25 with the task param when the tool's task support is
// optional or required (and the server takes task-augmented tools/call),
// in 2026-07-28 by declaring the tasks extension, the server deciding.
// On success exactly one of the result and the task is non-nil: the
// result when the tool ran at once, the task to wait for otherwise.
// ClientOptions.Tasks must be set for a task to be asked for.
//
// Errors are those of [ClientSession.CallTool].
func (cs *ClientSession) StartTool(ctx context.Context, params *CallToolParams) (*CallToolResult, *ToolTask, error) {
	return cs.callTool(ctx, params, true)
}

// observe records st, a state of the task seen in the answer to method,
// after checking it: it must have the task's ID (or be the first) and a
// known status. A state after a terminal one is ignored: the first
// terminal state wins.
func (t *ToolTask) observe(method string, st *DetailedTask) error {
	if st.TaskID == "" {
		return &TaskProtocolError{Method: method, TaskID: t.id, Reason: "the task has no taskId"}
	}
	if t.id != "" && st.TaskID != t.id {
		return &TaskProtocolError{Method: method, TaskID: t.id, Reason: fmt.Sprintf("the answer is about another task, %q", st.TaskID)}
	}
	if !st.Status.Valid() {
		return &TaskProtocolError{Method: method, TaskID: st.TaskID, Reason: fmt.Sprintf("unknown task status %q", st.Status)}
	}
	if t.modern {
		switch {
		case st.Status == TaskCompleted && len(st.Result) == 0:
			return &TaskProtocolError{Method: method, TaskID: st.TaskID, Reason: "a completed task without its result"}
		case st.Status == TaskFailed && st.Error == nil:
			return &TaskProtocolError{Method: method, TaskID: st.TaskID, Reason: "a failed task without its error"}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended == nil {
		t.last = st
		if st.Status.Ended() {
			t.ended = st
		}
	}
	return nil
}

// state returns the latest state seen, the first terminal one once there
// is one.
func (t *ToolTask) state() *DetailedTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended != nil {
		return t.ended
	}
	return t.last
}

// Status reads the task's state with one tasks/get. A 2025-11-25 answer
// comes in the DetailedTask shape (ttl as TTLMs, pollInterval as
// PollIntervalMs), without an outcome (see Wait). Once a terminal state
// was seen, that state is returned whatever the server says later.
func (t *ToolTask) Status(ctx context.Context) (*DetailedTask, error) {
	t.mu.Lock()
	st := t.ended
	t.mu.Unlock()
	if st == nil {
		var err error
		if st, err = t.get(ctx); err != nil {
			return nil, err
		}
	}
	c := *st // the caller's to change
	return &c, nil
}

// get sends tasks/get and records its answer, returning the state that
// holds (the first terminal state seen, once there is one).
func (t *ToolTask) get(ctx context.Context) (*DetailedTask, error) {
	var st *DetailedTask
	if t.modern {
		st = &DetailedTask{}
		if err := t.cs.request(ctx, MethodTasksGet, &GetTaskParams{TaskID: t.id}, st); err != nil {
			return nil, err
		}
	} else {
		res := &Task{}
		if err := t.cs.request(ctx, MethodTasksGet, &GetTaskParams{TaskID: t.id}, res); err != nil {
			return nil, err
		}
		st = detailedFromLegacy(res)
	}
	if err := t.observe(MethodTasksGet, st); err != nil {
		return nil, err
	}
	return t.state(), nil
}

// Cancel asks the server to cancel the task (tasks/cancel). Cancellation
// is cooperative: the task may still end otherwise; Wait tells how it
// ended. In 2025-11-25 the server must declare tasks.cancel, and its
// answer, the cancelled task, is recorded.
func (t *ToolTask) Cancel(ctx context.Context) error {
	p := &CancelTaskParams{TaskID: t.id}
	if t.modern {
		return t.cs.request(ctx, MethodTasksCancel, p, &EmptyResult{})
	}
	caps := t.cs.serverCaps()
	if err := t.cs.checkServer(MethodTasksCancel, "tasks.cancel", caps.Tasks != nil && caps.Tasks.Cancel != nil); err != nil {
		return err
	}
	res := &Task{}
	if err := t.cs.request(ctx, MethodTasksCancel, p, res); err != nil {
		return err
	}
	if res.TaskID != "" {
		t.observe(MethodTasksCancel, detailedFromLegacy(res)) // a wrong answer is not the cancellation's failure
	}
	return nil
}

// cancelDetached cancels the task after the caller's context ended, with
// a context of its own bounded by cancelTimeout (keeping ctx's values).
func (t *ToolTask) cancelDetached(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if err := t.Cancel(cctx); err != nil {
		t.cs.logger.Debug("mcp: cannot cancel task", "task", t.id, "err", err)
	}
}

// Wait drives the task to its end and returns its result, as CallTool
// does: it polls tasks/get at the interval the server suggests (within
// ClientTaskOptions' bounds); in 2026-07-28 it fulfils the task's input
// requests with the client's handlers (sampling, elicitation, roots),
// each key once, and sends the answers with tasks/update; in 2025-11-25
// it asks tasks/result for the outcome once the task ended or needs
// input (the server's requests for input then reach the handlers as
// requests of their own). A completed task gives its result (a tool's
// own failure is a result with IsError set); a failed one its JSON-RPC
// error, a [*jsonrpc.Error] through errors.As; a cancelled one an error
// wrapping [ErrTaskCancelled].
//
// When ctx ends, Wait returns ctx's error and leaves the task running:
// call Cancel to stop it, or Wait again. (CallTool, whose caller holds
// no ToolTask, cancels it instead.)
func (t *ToolTask) Wait(ctx context.Context) (*CallToolResult, error) {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	return t.drive(ctx)
}

// drive is Wait without its lock.
func (t *ToolTask) drive(ctx context.Context) (*CallToolResult, error) {
	pol := t.cs.client.opts.Tasks.policy()
	backoff := pol.def
	st := t.state()
	for {
		if st != nil {
			switch {
			case st.Status.Ended():
				return t.outcome(ctx, st)
			case st.Status == TaskInputRequired && t.modern:
				if err := t.answer(ctx, st); err != nil {
					return nil, err
				}
			case st.Status == TaskInputRequired:
				// The server asks for input as requests of its own, and
				// answers tasks/result once the task ended; should that
				// outlast ClientOptions.RequestTimeout, polling goes on.
				res, err := t.legacyResult(ctx)
				timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) // with ctx alive: the request's timeout
				if err == nil || !timedOut || ctx.Err() != nil {
					return res, err
				}
			}
		}
		var d time.Duration
		if st != nil && st.PollIntervalMs != nil {
			d = pol.clamp(*st.PollIntervalMs)
			backoff = pol.def
		} else if st != nil {
			d = backoff
			backoff = min(time.Duration(float64(backoff)*pollBackoff), pol.max)
		}
		if d > 0 {
			if err := pol.sleep(ctx, d); err != nil {
				return nil, ctxErr(ctx, err)
			}
		}
		var err error
		if st, err = t.get(ctx); err != nil {
			return nil, ctxErr(ctx, err)
		}
	}
}

// ctxErr returns ctx's error once it ended (the error of the request it
// ended wraps it, or names it otherwise), err otherwise.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// outcome returns the outcome of the task in its terminal state st.
func (t *ToolTask) outcome(ctx context.Context, st *DetailedTask) (*CallToolResult, error) {
	switch st.Status {
	case TaskCancelled:
		if st.StatusMessage != "" {
			return nil, fmt.Errorf("mcp: task %q: %w: %s", t.id, ErrTaskCancelled, st.StatusMessage)
		}
		return nil, fmt.Errorf("mcp: task %q: %w", t.id, ErrTaskCancelled)
	case TaskFailed:
		if t.modern {
			return nil, fmt.Errorf("mcp: tools/call task %q failed: %w", t.id, fromWire(st.Error))
		}
	}
	if !t.modern {
		return t.legacyResult(ctx)
	}
	res := &CallToolResult{}
	if err := unmarshalReceived(st.Result, res); err != nil {
		return nil, &TaskProtocolError{Method: MethodTasksGet, TaskID: t.id, Reason: "the task's result is not a tools/call result", Err: err}
	}
	if m := lackingMember(res); m != "" {
		return nil, &TaskProtocolError{Method: MethodTasksGet, TaskID: t.id, Reason: "the task's result lacks " + m}
	}
	return res, nil
}

// legacyResult asks tasks/result (2025-11-25) for the task's outcome,
// which the server sends once the task ended: the tools/call result, or
// the JSON-RPC error it failed with.
func (t *ToolTask) legacyResult(ctx context.Context) (*CallToolResult, error) {
	res := &CallToolResult{}
	if err := t.cs.request(ctx, MethodTasksResult, &TaskPayloadParams{TaskID: t.id}, res); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, fmt.Errorf("mcp: tools/call task %q failed: %w", t.id, err)
		}
		return nil, err
	}
	return res, nil
}

// answer fulfils the input requests of st (2026-07-28) that were not
// answered yet, and sends the answers with tasks/update. An input request
// the client cannot fulfil cancels the task.
func (t *ToolTask) answer(ctx context.Context, st *DetailedTask) error {
	cs := t.cs
	todo := make(map[string]*InputRequest, len(st.InputRequests))
	t.mu.Lock()
	for key, in := range st.InputRequests {
		if in != nil && !t.answered[key] {
			todo[key] = in
		}
	}
	t.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	if len(todo) > cs.modern.asks {
		t.cancelDetached(ctx)
		return &TaskProtocolError{Method: MethodTasksGet, TaskID: t.id, Reason: "too many input requests",
			Err: &InputRequestsError{Method: MethodToolsCall, Requests: len(todo), Max: cs.modern.asks}}
	}
	for key, in := range todo {
		switch in.Method {
		case MethodElicitationCreate, MethodSamplingCreateMessage, MethodRootsList:
		default:
			t.cancelDetached(ctx)
			return &TaskProtocolError{Method: MethodTasksGet, TaskID: t.id, Reason: "an input request the client cannot fulfil",
				Err: &InputRequestError{Method: MethodToolsCall, Key: key, Input: in.Method,
					Err: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not an input request method"}}}
		}
	}
	answers, err := cs.fulfil(ctx, MethodToolsCall, todo)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.cancelDetached(ctx)
		return err
	}
	p := &UpdateTaskParams{TaskID: t.id, InputResponses: answers}
	if err := cs.request(ctx, MethodTasksUpdate, p, &EmptyResult{}); err != nil {
		return ctxErr(ctx, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answered == nil {
		t.answered = make(map[string]bool, len(answers))
	}
	if len(t.answered)+len(answers) > maxAnsweredKeys {
		for key := range t.answered {
			if st.InputRequests[key] == nil {
				delete(t.answered, key) // the server asks for it no more
			}
		}
	}
	for key := range answers {
		t.answered[key] = true
	}
	return nil
}

// modernCapabilities returns the capabilities a client of 2026-07-28
// declares in every request: with ClientOptions.Tasks, the tasks
// extension too.
func (c *Client) modernCapabilities() *ClientCapabilities {
	caps := c.capabilities()
	if c.opts.Tasks != nil {
		ext := make(map[string]json.RawMessage, len(caps.Extensions)+1)
		for k, v := range caps.Extensions {
			ext[k] = v
		}
		if _, ok := ext[TasksExtensionID]; !ok {
			ext[TasksExtensionID] = json.RawMessage("{}")
		}
		caps.Extensions = ext
	}
	return caps
}

// callToolTask is CallTool: a task the server answers with is driven to
// its end, and cancelled when ctx ends first.
func (cs *ClientSession) callToolTask(ctx context.Context, params *CallToolParams) (*CallToolResult, error) {
	res, t, err := cs.callTool(ctx, params, false)
	if err != nil || t == nil {
		return res, err
	}
	res, err = t.Wait(ctx)
	if err != nil && ctx.Err() != nil {
		t.cancelDetached(ctx)
		return nil, ctx.Err()
	}
	return res, err
}
