package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// taskTTL is how long the task fleet keeps an ended task (TaskOptions.TTL):
// with a lease on top, within maxKeyTTL, so that checkTTLs bounds the
// tasks' keys as it bounds the others.
const taskTTL = 5 * time.Minute

// taskFleet is a fleet whose replicas also run tasks, on one TaskStore of
// the fleet's client and breaker, with one owner key (a task of either era
// is its owner's on every replica). Its tool "job" (task support optional)
// is driven by the test through the job of its argument "name".
type taskFleet struct {
	*fleet
	store *TaskStore
	lease time.Duration

	mu   sync.Mutex
	jobs map[string]*job
}

// job is what a test holds of the runs of "job" with one name: each
// reports the progress steps carries until steps is closed, then returns
// "done <name>", or returns its context's error when it ends first.
type job struct {
	steps   chan int
	started chan int   // the replica of each run
	ended   chan error // each run's return: nil, or its context's error
	runs    atomic.Int32
}

// newTaskFleet starts a task fleet on p; lease is the runners' lease (0:
// the default, 30 s).
func newTaskFleet(t *testing.T, p *redisProc, lease time.Duration) *taskFleet {
	t.Helper()
	f := fleetOn(t, p)
	tf := &taskFleet{fleet: f, lease: lease, jobs: map[string]*job{}}
	var err error
	tf.store, err = NewTaskStore(f.client, &TaskStoreOptions{Prefix: f.prefix, Breaker: f.breaker})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tf.store.Close() }) // after the servers (cleanups run last first)
	ownerKey := []byte("the owner key of the fleet's tasks, 32+ bytes")
	f.start(func(i int, o *mcp.ServerOptions) {
		o.Tasks = &mcp.TaskOptions{Store: tf.store, OwnerKey: ownerKey, ReplicaID: fmt.Sprint("replica-", i),
			TTL: taskTTL, Lease: lease}
	}, func(i int, s *mcp.Server) { tf.addJob(s, i) })
	return tf
}

// job returns the job of name, made on first use.
func (f *taskFleet) job(name string) *job {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[name]
	if j == nil {
		j = &job{steps: make(chan int), started: make(chan int, 8), ended: make(chan error, 8)}
		f.jobs[name] = j
	}
	return j
}

// addJob adds the tool "job" to s, replica i.
func (f *taskFleet) addJob(s *mcp.Server, i int) {
	tool := &mcp.Tool{Name: "job", InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}}
	err := s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Name string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		j := f.job(args.Name)
		j.runs.Add(1)
		j.started <- i
		for {
			select {
			case <-ctx.Done():
				j.ended <- ctx.Err()
				return nil, ctx.Err()
			case k, ok := <-j.steps:
				if !ok {
					j.ended <- nil
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + args.Name}}}, nil
				}
				req.ReportProgress(ctx, float64(k), 0, "") // the task's status message; a store failure is no failure of the job
			}
		}
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// started waits for a run of name to start and returns its replica.
func (f *taskFleet) started(name string) int {
	f.t.Helper()
	select {
	case i := <-f.job(name).started:
		return i
	case <-time.After(10 * time.Second):
		f.t.Fatalf("job %s did not start", name)
		return -1
	}
}

// ended waits up to d for a run of name to return and returns its error.
func (f *taskFleet) ended(name string, d time.Duration) (error, bool) {
	select {
	case err := <-f.job(name).ended:
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// taskKeys allows the keys of tasks: they outlive sessions, until their
// expiry (TTL after their end, or after their lease for a running one).
func (f *taskFleet) taskKeys(key string, ttl time.Duration) bool {
	return (strings.HasPrefix(key, f.prefix+"{o") || strings.HasPrefix(key, f.prefix+"{tasks}:")) &&
		ttl <= taskTTL+max(f.lease, mcp.DefaultTaskLease)+10*time.Second
}

// or allows what either allows.
func or(a, b leftover) leftover {
	return func(key string, ttl time.Duration) bool {
		return a != nil && a(key, ttl) || b != nil && b(key, ttl)
	}
}

// taskEra is a client of the fleet's tasks in one era: a session of the
// handshake era (sid), or 2026-07-28 without a principal (sid "", every
// such caller one owner).
type taskEra struct {
	f   *taskFleet
	sid string
	ids atomic.Int64
}

func (e *taskEra) String() string {
	if e.sid == "" {
		return "2026-07-28"
	}
	return "2025-11-25"
}

// modernTaskMeta is the _meta of a 2026-07-28 request that declares tasks.
const modernTaskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.TasksExtensionID + `":{}}}}`

// request sends method with the members params to replica i; name is the
// Mcp-Name of a 2026-07-28 request.
func (e *taskEra) request(ctx context.Context, i int, method, params, name string) reply {
	id := e.ids.Add(1)
	if e.sid != "" {
		return e.f.call(ctx, i, e.sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params))
	}
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, modernTaskMeta)
	return e.f.send(ctx, i, http.MethodPost, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name)
}

// create calls job name as a task on replica i.
func (e *taskEra) create(ctx context.Context, i int, name string) reply {
	p := fmt.Sprintf(`"name":"job","arguments":{"name":%q}`, name)
	if e.sid != "" {
		p += `,"task":{"ttl":60000}`
	}
	return e.request(ctx, i, "tools/call", p, "job")
}

// start creates the task of job name on replica i and waits for its run.
func (e *taskEra) start(i int, name string) string {
	e.f.t.Helper()
	r := e.create(e.f.t.Context(), i, name)
	id := e.taskID(r)
	if id == "" {
		e.f.t.Fatalf("%s: job %s on %d: %d %s; want a task", e, name, i, r.status, r.body)
	}
	e.f.started(name)
	return id
}

// taskID returns the ID of the task a tools/call answer names, or "".
func (e *taskEra) taskID(r reply) string {
	res, _ := r.rpc()["result"].(map[string]any)
	if e.sid != "" {
		res, _ = res["task"].(map[string]any)
	}
	id, _ := res["taskId"].(string)
	return id
}

// get sends tasks/get of id to replica i.
func (e *taskEra) get(ctx context.Context, i int, id string) reply {
	return e.request(ctx, i, "tasks/get", fmt.Sprintf(`"taskId":%q`, id), id)
}

// cancel sends tasks/cancel of id to replica i.
func (e *taskEra) cancel(ctx context.Context, i int, id string) reply {
	return e.request(ctx, i, "tasks/cancel", fmt.Sprintf(`"taskId":%q`, id), id)
}

// status returns the status, status message and result text of the task
// a tasks/get answer holds (for 2025-11-25 the text is tasks/result's,
// asked of replica i when the task completed).
func (e *taskEra) status(ctx context.Context, i int, r reply) (status, message, text string) {
	res, _ := r.rpc()["result"].(map[string]any)
	status, _ = res["status"].(string)
	message, _ = res["statusMessage"].(string)
	if status != string(mcp.TaskCompleted) {
		return status, message, ""
	}
	if e.sid != "" {
		id, _ := res["taskId"].(string)
		res, _ = e.request(ctx, i, "tasks/result", fmt.Sprintf(`"taskId":%q`, id), "").rpc()["result"].(map[string]any)
	} else {
		res, _ = res["result"].(map[string]any)
	}
	content, _ := res["content"].([]any)
	if len(content) > 0 {
		c, _ := content[0].(map[string]any)
		text, _ = c["text"].(string)
	}
	return status, message, text
}

// message returns the JSON-RPC message of r, as one line.
func (r reply) message() string {
	b, _ := json.Marshal(r.rpc())
	return string(b)
}

// The JSON-RPC error codes of the tasks methods (both eras): an unknown
// task, and a failure of the server (the store's).
const (
	codeTaskNotFound = -32602
	codeInternal     = -32603
)

// unavailable reports whether r is an answer that tells a client to try
// again later, never to drop the task: a JSON-RPC internal error (the
// task store failed), or 503 with Retry-After (a handshake session's
// record could not be read).
func unavailable(r reply) bool {
	if r.status == http.StatusServiceUnavailable {
		return r.header.Get("Retry-After") != ""
	}
	return r.status == http.StatusOK && r.errorCode() == codeInternal
}

// answerOrUnavailable checks a reply to a request about an existing task
// during an outage: within requestBound, and either unavailable or, when
// the store is readable (OOM), a result; never "task not found".
func answerOrUnavailable(t *testing.T, what string, r reply, readable bool) {
	t.Helper()
	within(t, what, r)
	switch {
	case r.errorCode() == codeTaskNotFound:
		t.Errorf("%s: %d %s: the task is live, but the answer says unknown (a client drops it)", what, r.status, r.body)
	case unavailable(r):
	case readable && r.status == http.StatusOK && r.rpc()["result"] != nil:
	default:
		t.Errorf("%s: %d %s; want -32603 or 503 with Retry-After", what, r.status, r.body)
	}
}

// outageTasks are the tasks of one era a test holds across a fault.
type outageTasks struct {
	era        *taskEra
	before     string // ended (completed) before the fault
	live       string // running across the fault
	finishing  string // its handler returns during the fault
	beforeName string
	liveName   string
	finishName string
}

// startTasks starts the tasks of era on replica 0: before, which it
// completes, live and finishing, which run.
func (f *taskFleet) startTasks(era *taskEra) *outageTasks {
	f.t.Helper()
	ot := &outageTasks{era: era, beforeName: era.String() + "-before", liveName: era.String() + "-live", finishName: era.String() + "-finishing"}
	ot.before = era.start(0, ot.beforeName)
	close(f.job(ot.beforeName).steps)
	f.waitStatus(era, ot.before, mcp.TaskCompleted, "done "+ot.beforeName, 10*time.Second)
	ot.live = era.start(0, ot.liveName)
	ot.finishing = era.start(0, ot.finishName)
	f.job(ot.liveName).steps <- 1 // a status message written before the fault
	return ot
}

// waitStatus polls tasks/get of id on every replica until each shows
// status (and text, for a completed task), and fails the test past d. It
// returns how long that took.
func (f *taskFleet) waitStatus(era *taskEra, id string, status mcp.TaskStatus, text string, d time.Duration) time.Duration {
	f.t.Helper()
	start := time.Now()
	for i := range f.urls {
		for {
			st, msg, got := era.status(f.t.Context(), i, era.get(f.t.Context(), i, id))
			if st == string(status) && (status != mcp.TaskCompleted || got == text) {
				break
			}
			if time.Since(start) > d {
				f.t.Fatalf("%s: task %s on %d after %v: %q (%q) %q; want %s %q", era, id, i, time.Since(start), st, msg, got, status, text)
			}
			time.Sleep(20 * time.Millisecond) // polling what a client polls, bounded by d
		}
	}
	return time.Since(start)
}

// checkTaskOutage checks what clients of each era get about tasks while
// Redis fails (readable: Redis still serves reads, as under OOM):
// creating a task is refused with an error within requestBound and runs
// nothing; tasks/get, tasks/list, tasks/result and tasks/cancel of an
// existing task are answered within requestBound, unavailable or (reads
// served) with the task, never "not found". Meanwhile each era's
// finishing task's handler returns.
func (f *taskFleet) checkTaskOutage(t *testing.T, tasks []*outageTasks, readable bool) {
	t.Helper()
	ctx := t.Context()
	for _, ot := range tasks {
		e := ot.era
		close(f.job(ot.finishName).steps)
		if err, ok := f.ended(ot.finishName, 5*time.Second); !ok || err != nil {
			t.Fatalf("%s: job %s did not return its result: %v", e, ot.finishName, err)
		}
		for i := range f.urls {
			name := fmt.Sprintf("%s-outage-%d", e, i)
			r := e.create(ctx, i, name)
			within(t, e.String()+" task creation", r)
			if !unavailable(r) {
				t.Errorf("%s: task creation on %d with Redis failing: %d %s; want -32603 or 503", e, i, r.status, r.body)
			}
			if strings.Contains(r.body, "redis") {
				t.Errorf("%s: task creation on %d: the answer tells the store's internals: %s", e, i, r.body)
			}
			if i == 0 {
				t.Logf("%s: task creation with Redis failing: %d %s", e, r.status, r.message())
			}
			if n := f.job(name).runs.Load(); n != 0 {
				t.Errorf("%s: a task refused at creation ran %d times", e, n)
			}
			for _, id := range []string{ot.live, ot.before} {
				r := e.get(ctx, i, id)
				if i < 2 && id == ot.live {
					t.Logf("%s: tasks/get on %d with Redis failing: %d %s", e, i, r.status, r.message())
				}
				answerOrUnavailable(t, fmt.Sprintf("%s tasks/get on %d", e, i), r, readable)
			}
			if e.sid != "" {
				answerOrUnavailable(t, fmt.Sprintf("%s tasks/list on %d", e, i), e.request(ctx, i, "tasks/list", "", ""), readable)
				answerOrUnavailable(t, fmt.Sprintf("%s tasks/result of an ended task on %d", e, i),
					e.request(ctx, i, "tasks/result", fmt.Sprintf(`"taskId":%q`, ot.before), ""), readable)
				if !readable { // readable, it waits for the task's end, as it should
					answerOrUnavailable(t, fmt.Sprintf("%s tasks/result of a running task on %d", e, i),
						e.request(ctx, i, "tasks/result", fmt.Sprintf(`"taskId":%q`, ot.live), ""), readable)
				}
			}
		}
		// Cancelling writes: refused while Redis fails, whatever reads do.
		r := e.cancel(ctx, 0, ot.live)
		within(t, e.String()+" tasks/cancel", r)
		if !unavailable(r) {
			t.Errorf("%s: tasks/cancel on 0 with Redis failing: %d %s; want -32603", e, r.status, r.body)
		}
	}
}

// checkTasksBack checks the tasks of each era once Redis is back (not
// restarted) at back: each finishing task's result was stored, and is
// read on every replica within recoveryBound; the live task is cancelled
// everywhere (its handler's context ends) or, should the cancel sent
// during the outage have been run by Redis when it came back, already
// was; each job ran once; a new task runs to its end.
func (f *taskFleet) checkTasksBack(t *testing.T, tasks []*outageTasks, back time.Time) {
	t.Helper()
	ctx := t.Context()
	for _, ot := range tasks {
		e := ot.era
		f.waitStatus(e, ot.finishing, mcp.TaskCompleted, "done "+ot.finishName, time.Until(back.Add(recoveryBound)))
		t.Logf("%s: the result of the task ended during the outage read on every replica %v after Redis came back", e, time.Since(back))
		r := e.cancel(ctx, 1, ot.live)
		if r.rpc()["result"] == nil && r.errorCode() != codeTaskNotFound { // -32602: cancelled already (2025-11-25)
			t.Errorf("%s: tasks/cancel of the live task after recovery: %d %s", e, r.status, r.body)
		}
		f.waitStatus(e, ot.live, mcp.TaskCancelled, "", 5*time.Second)
		if err, ok := f.ended(ot.liveName, 5*time.Second); !ok || err == nil {
			t.Errorf("%s: the cancelled task's handler: returned %v (%v), want its context's end", e, ok, err)
		}
		for _, name := range []string{ot.beforeName, ot.liveName, ot.finishName} {
			if n := f.job(name).runs.Load(); n != 1 {
				t.Errorf("%s: job %s ran %d times, want once", e, name, n)
			}
		}
		name := e.String() + "-after"
		id := e.start(2, name)
		close(f.job(name).steps)
		f.waitStatus(e, id, mcp.TaskCompleted, "done "+name, 5*time.Second)
	}
}

// awaitResult sends tasks/result of task id of session sid to replica 0,
// and once its stream is open (the priming event read), returns a channel
// that gets its answer and when it came.
func (f *taskFleet) awaitResult(sid, id string) <-chan timedEvent {
	f.t.Helper()
	resp, events, _ := f.postStream(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"tasks/result","params":{"taskId":%q}}`, id))
	if prime := events.next(); prime == nil || prime["data"] != "" {
		f.t.Fatalf("tasks/result: %d, first event %q; want the priming event", resp.StatusCode, prime)
	}
	ch := make(chan timedEvent, 1)
	go func() {
		for {
			ev := events.next()
			if ev == nil || ev["data"] != "" {
				ch <- timedEvent{ev, time.Now()}
				return
			}
		}
	}()
	return ch
}

// timedEvent is an SSE event and when it was read.
type timedEvent struct {
	ev map[string]string
	at time.Time
}

// TestFaultTaskPause stops Redis (SIGSTOP) under tasks of both eras, then
// continues it: during the outage task creation is refused and every
// tasks method answered within requestBound, never "not found"; a task
// whose handler returned during the outage has its result stored once
// Redis is back, read on every replica within recoveryBound.
func TestFaultTaskPause(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newTaskFleet(t, startRedis(t), 0)
		sid := f.session(0)
		tasks := []*outageTasks{f.startTasks(&taskEra{f: f, sid: sid}), f.startTasks(&taskEra{f: f})}
		waiting := f.awaitResult(sid, tasks[0].live)
		f.redis.pause()
		paused := time.Now()
		f.checkTaskOutage(t, tasks, false)
		// A tasks/result that waited for the task's end before Redis
		// stopped learns of the outage at its next read (the store's
		// WatchRecheck at most), and says so.
		select {
		case got := <-waiting:
			r := reply{status: http.StatusOK, body: "data: " + got.ev["data"], took: got.at.Sub(paused)}
			t.Logf("a waiting tasks/result: %s, %v after Redis stopped", got.ev["data"], r.took)
			if !unavailable(r) || r.took > DefaultWatchRecheck+requestBound {
				t.Errorf("a tasks/result waiting as Redis stopped: %s %v after; want -32603 within %v", got.ev["data"], r.took, DefaultWatchRecheck+requestBound)
			}
		case <-time.After(10 * time.Second):
			t.Error("a tasks/result waiting as Redis stopped got no answer")
		}
		f.redis.resume()
		back := time.Now()
		opened := f.checkRecovery(t, back)
		f.checkTasksBack(t, tasks, back)
		f.checkKeys(t, or(f.lostReplies, f.taskKeys), append(opened, sid)...)
	})
}

// TestFaultTaskOOM refuses Redis' writes (maxmemory, noeviction) under
// tasks of both eras: reads are served, so tasks/get, tasks/list and
// tasks/result answer with the tasks; creation and cancellation are
// refused; the result of a task that ended meanwhile is stored once
// memory is freed.
func TestFaultTaskOOM(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newTaskFleet(t, startRedis(t, "--maxmemory-policy", "noeviction"), 0)
		sid := f.session(0)
		tasks := []*outageTasks{f.startTasks(&taskEra{f: f, sid: sid}), f.startTasks(&taskEra{f: f})}
		ctx := t.Context()
		if err := f.client.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			t.Fatal(err)
		}
		f.checkTaskOutage(t, tasks, true)
		if f.breaker.Open() {
			t.Error("the breaker opened for OOM refusals")
		}
		if err := f.client.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		opened := f.checkRecovery(t, back)
		f.checkTasksBack(t, tasks, back)
		f.checkKeys(t, f.taskKeys, append(opened, sid)...)
	})
}

// TestFaultTaskKillRestart kills Redis (SIGKILL) under tasks of both eras
// and starts it again, empty. During the outage the tasks methods answer
// as in TestFaultTaskPause. After: the runs of the tasks Redis lost end
// (their records are gone); their IDs are unknown on every replica
// (-32602, as the spec answers an unknown task; a 2025-11-25 session is
// unknown itself: 404, the client initializes again); new tasks work.
func TestFaultTaskKillRestart(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newTaskFleet(t, startRedis(t), 0)
		sid := f.session(0)
		old := &taskEra{f: f, sid: sid}
		tasks := []*outageTasks{f.startTasks(old), f.startTasks(&taskEra{f: f})}
		f.redis.kill()
		f.checkTaskOutage(t, tasks, false)
		f.redis.restart()
		opened := f.checkRecovery(t, time.Now())
		ctx := t.Context()
		again := f.session(1) // the handshake client initializes again
		modern := tasks[1].era
		for _, ot := range tasks {
			if err, ok := f.ended(ot.liveName, 5*time.Second); !ok || err == nil {
				t.Errorf("%s: the run of a task Redis lost: returned %v (%v), want its context's end", ot.era, ok, err)
			}
			for i := range f.urls {
				for _, id := range []string{ot.before, ot.live, ot.finishing} {
					if ot.era == old {
						if r := old.get(ctx, i, id); r.status != http.StatusNotFound {
							t.Errorf("tasks/get in the session Redis lost, on %d: %d %s; want 404", i, r.status, r.body)
						}
						if r := (&taskEra{f: f, sid: again}).get(ctx, i, id); r.errorCode() != codeTaskNotFound {
							t.Errorf("tasks/get of an old task in a new session, on %d: %d %s; want -32602", i, r.status, r.body)
						}
						continue
					}
					if r := modern.get(ctx, i, id); r.errorCode() != codeTaskNotFound {
						t.Errorf("2026-07-28 tasks/get of a task Redis lost, on %d: %d %s; want -32602", i, r.status, r.body)
					}
				}
			}
		}
		for _, e := range []*taskEra{{f: f, sid: again}, modern} {
			name := e.String() + "-after"
			id := e.start(2, name)
			close(f.job(name).steps)
			f.waitStatus(e, id, mcp.TaskCompleted, "done "+name, 5*time.Second)
		}
		f.checkKeys(t, or(f.eventsOf(sid), f.taskKeys), append(opened, again)...)
	})
}

// TestFaultTaskLease stops Redis (SIGSTOP) for longer than the runners'
// lease while a task of each era runs on replica 0. What the runtime
// guarantees: a task runs at most once. Its runner could not renew the
// lease, so once Redis is back the task reads as failed ("server
// restarted") on every replica, its handler's context ends, no replica
// runs it again, and the handler's late result changes nothing.
func TestFaultTaskLease(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		const lease = time.Second
		f := newTaskFleet(t, startRedis(t), lease)
		sid := f.session(0)
		eras := []*taskEra{{f: f, sid: sid}, {f: f}}
		ids := make([]string, len(eras))
		for k, e := range eras {
			ids[k] = e.start(0, e.String()+"-leased")
		}
		f.redis.pause()
		// The outage is the fault under test: it outlasts every lease
		// (renewed a third of a lease before it began, at worst).
		time.Sleep(lease + lease/2)
		f.redis.resume()
		for k, e := range eras {
			name := e.String() + "-leased"
			took := f.waitStatus(e, ids[k], mcp.TaskFailed, "", recoveryBound)
			t.Logf("%s: failed on every replica %v after Redis came back", e, took)
			st, msg, _ := e.status(t.Context(), 1, e.get(t.Context(), 1, ids[k]))
			if msg != mcp.TaskMessageServerRestarted {
				t.Errorf("%s: task %s %s, status message %q; want %q", e, ids[k], st, msg, mcp.TaskMessageServerRestarted)
			}
			if err, ok := f.ended(name, 5*time.Second); !ok || err == nil {
				t.Errorf("%s: the run of a task that failed for its lease: returned %v (%v), want its context's end", e, ok, err)
			}
			select {
			case f.job(name).steps <- 1:
				t.Errorf("%s: the run of a task that failed for its lease still runs", e)
			default:
			}
			close(f.job(name).steps)
			if n := f.job(name).runs.Load(); n != 1 {
				t.Errorf("%s: the task ran %d times, want once", e, n)
			}
			if st, _, _ := e.status(t.Context(), 2, e.get(t.Context(), 2, ids[k])); st != string(mcp.TaskFailed) {
				t.Errorf("%s: task %s %s after its run ended; want it failed still", e, ids[k], st)
			}
		}
		f.checkKeys(t, or(f.lostReplies, f.taskKeys), sid)
	})
}
