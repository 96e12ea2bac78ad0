package mcp

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// The task runtime of a server. A tools/call may run as a task: the
// server answers it at once with a handle (a flat result of resultType
// "task" on 2026-07-28, a nested {task} on 2025-11-25), the handler runs
// on, detached from the request, and the client reads the outcome with
// tasks/get (and on 2025-11-25 tasks/result). One runtime serves both
// forms: a task's record, in the server's [TaskStore], holds what either
// form shows, and the request that reads it picks the form.
//
// Which calls become tasks: a tool marks its support in
// Tool.Execution.TaskSupport ([TaskOptional] or [TaskRequired]). On
// 2026-07-28 a request becomes a task only when its own _meta declares
// the extension ([TasksExtensionID]); an undeclared request of a required
// tool is refused (-32021), of an optional one runs synchronously. On
// 2025-11-25 the client asks with the task param, as the tool's support
// allows (-32601 otherwise). Required tools are tasks from the start;
// optional ones after [TaskOptions.SyncWindow]; a tool added with
// [Server.AddAsyncTool] runs synchronously until its handler calls
// [ServerRequest.GoAsync].
//
// A handler is written once: in a task, its Elicit, CreateMessage and
// ListRoots become input requests of the task (2026-07-28: surfaced by
// tasks/get, answered by tasks/update) or requests to the client tagged
// with the task (2025-11-25), and ReportProgress sets the task's status
// message.

// TaskOptions configures the task runtime of a server
// ([ServerOptions.Tasks]). The zero value of each field means its
// default.
type TaskOptions struct {
	// Store keeps the tasks. Nil means a [NewMemoryTaskStore] with its
	// default bounds, owned by the server ([Server.Close] closes it).
	// Replicas that serve the same clients share a durable store.
	Store TaskStore
	// SyncWindow is how long a call of an optional tool (from a client
	// that declared tasks) runs before it becomes a task: one that ends
	// within it is answered with its result. Zero means none: the call
	// is a task from the start. (Where no receiving middleware is
	// installed and the transport can answer a request before its handler
	// returns, stdio and in memory among them, the handler then runs on
	// the request's own goroutine: a call answered within the window
	// costs little more than a plain one, and the window is kept to
	// within 10 ms, or two windows when it is shorter than 5 ms.)
	SyncWindow time.Duration
	// MaxDuration bounds a task's run, from its creation: past it the
	// handler's context is cancelled and the task fails. Zero means 24
	// hours.
	MaxDuration time.Duration
	// TTL is how long a task is kept after it ended; the runtime writes it
	// into each record. Zero means the store's default where the store
	// has a method DefaultTTL() time.Duration (this package's stores:
	// TaskStoreOptions.DefaultTTL, an hour unless set), else
	// DefaultTaskTTL (an hour). A task does not expire
	// while it runs: the ttl a client sees grows with it.
	TTL time.Duration
	// MaxTTL bounds the ttl a 2025-11-25 client asks for in its task
	// param (larger ones are clamped). Zero means 24 hours.
	MaxTTL time.Duration
	// PollInterval is the polling interval suggested to clients. Zero
	// means 1 second.
	PollInterval time.Duration
	// OwnerKey is the HMAC-SHA256 key of the owner keys stored with each
	// task (a keyed hash of the caller's principal, or of the session on
	// a handshake-era connection without one). Replicas sharing a store
	// must share it. Nil means a random key made by NewServer, valid in
	// this process only. A secret: never log it.
	OwnerKey []byte
	// Lease is how long a runner's claim on a task lasts unless renewed
	// (it renews it every third of it): a task whose runner died reads
	// as failed ("server restarted") once its lease has passed, and so
	// does one whose runner could not renew it for as long (the store
	// unreachable), whose handler's context is then cancelled: a task
	// runs at most once. Zero means 30 seconds.
	Lease time.Duration
	// ReplicaID names this process as the holder of the leases of the
	// tasks it runs. Empty means a random ID.
	ReplicaID string
	// StorePollInterval is how often a runner reads a store that does
	// not implement [TaskWatcher] while it waits for input or watches
	// for a cancel made on another replica, and how often it tries again
	// to write a task's outcome that the store failed to take (for the
	// Lease, 30 s at least). Zero means 250 ms.
	StorePollInterval time.Duration
}

// Defaults of [TaskOptions].
const (
	DefaultTaskMaxDuration       = 24 * time.Hour
	DefaultTaskMaxTTL            = 24 * time.Hour
	DefaultTaskPollInterval      = time.Second
	DefaultTaskLease             = 30 * time.Second
	DefaultTaskStorePollInterval = 250 * time.Millisecond
)

// Task status messages the runtime writes.
const (
	taskMessageCancelled   = "cancelled by the client"
	taskMessageMaxDuration = "the task ran longer than the server allows (TaskOptions.MaxDuration)"
	taskMessageClosed      = "the server closed"
)

// maxTaskIDLength bounds a taskId the server reads: longer ones are
// refused before any store lookup.
const maxTaskIDLength = 256

// maxTaskUpdateRetries bounds the compare-and-swap retries of one write
// to a task record.
const maxTaskUpdateRetries = 64

// taskRuntime runs the tasks of a server.
type taskRuntime struct {
	s         *Server // nil for the runtime of a client's own tasks
	logger    *slog.Logger
	opts      TaskOptions
	store     TaskStore
	ownsStore bool
	watcher   TaskWatcher // store's, or nil
	anonymous string      // the owner key of callers without a principal (2026-07-28)
	macs      sync.Pool   // of HMAC-SHA256 under OwnerKey

	mu     sync.Mutex
	runs   map[string]*taskRun // running in this process, by ID
	closed bool
	wg     sync.WaitGroup // the runs' goroutines
	// waiting holds the 2025-11-25 tasks/result requests waiting here,
	// by task ID: a task's question to the client goes on the stream of
	// one of them when it can (the client calls tasks/result when it
	// sees input_required). waitingAdded is closed, and replaced, when
	// one is added.
	waiting      map[string][]resultWaiter
	waitingAdded chan struct{}
	// inline lists the runs in their sync window on the request's own
	// goroutine (see inline), through taskRun.prev and next; mu. One
	// goroutine, watchWindows, watches them all while any run (watching;
	// it counts ticks), so a call pays for no timer of its own.
	inline   *taskRun
	ticks    uint64        // watchWindows's ticks so far; mu
	watching bool          // watchWindows runs; mu
	quit     chan struct{} // closed by close: watchWindows ends
	// abandoned is closed when a bounded close gives up waiting for the
	// handlers: outcome writes retry no more (see finish).
	abandoned chan struct{}
}

// resultWaiter is a tasks/result request waiting for its task's end.
type resultWaiter struct {
	ss  *ServerSession
	ctx context.Context // its handler's: it names the request
}

func newTaskRuntime(s *Server, logger *slog.Logger, o *TaskOptions) *taskRuntime {
	rt := &taskRuntime{s: s, logger: logger, opts: *o, runs: map[string]*taskRun{}, waitingAdded: make(chan struct{}), quit: make(chan struct{}), abandoned: make(chan struct{})}
	if rt.opts.Store == nil {
		rt.opts.Store = NewMemoryTaskStore(nil)
		rt.ownsStore = true
	}
	rt.store = rt.opts.Store
	rt.watcher, _ = rt.store.(TaskWatcher)
	if rt.opts.TTL <= 0 {
		// Resolved once, and written into every record: the TTL clients
		// are told is the one the store applies, whatever the store.
		rt.opts.TTL = storeDefaultTTL(rt.store)
	}
	if rt.opts.MaxDuration <= 0 {
		rt.opts.MaxDuration = DefaultTaskMaxDuration
	}
	if rt.opts.MaxTTL <= 0 {
		rt.opts.MaxTTL = DefaultTaskMaxTTL
	}
	if rt.opts.PollInterval <= 0 {
		rt.opts.PollInterval = DefaultTaskPollInterval
	}
	if rt.opts.Lease <= 0 {
		rt.opts.Lease = DefaultTaskLease
	}
	if rt.opts.StorePollInterval <= 0 {
		rt.opts.StorePollInterval = DefaultTaskStorePollInterval
	}
	if len(rt.opts.OwnerKey) == 0 {
		k := make([]byte, 32)
		rand.Read(k) // never fails
		rt.opts.OwnerKey = k
	} else {
		rt.opts.OwnerKey = slices.Clone(rt.opts.OwnerKey)
	}
	rt.anonymous = rt.ownerKey("a\x00")
	if rt.opts.ReplicaID == "" {
		b := make([]byte, 12)
		rand.Read(b)
		rt.opts.ReplicaID = base64.RawURLEncoding.EncodeToString(b)
	}
	return rt
}

// ownerOf returns the owner key of the caller of a request on ss: a keyed
// hash of its principal, or of its handshake session when it has none, or
// (a 2026-07-28 request without a principal) of nobody in particular, so
// that anonymous callers share their tasks, whose 128-bit IDs are then
// their only protection.
func (rt *taskRuntime) ownerOf(ctx context.Context, ss *ServerSession, modern bool) string {
	var who string
	switch p := transport.PrincipalFromContext(ctx); {
	case p != "":
		who = "p\x00" + p
	case !modern:
		who = "s\x00" + ss.taskOwnerID()
	default:
		who = "a\x00"
	}
	if who == "a\x00" {
		return rt.anonymous
	}
	return rt.ownerKey(who)
}

// ownerKey returns the keyed hash of who.
func (rt *taskRuntime) ownerKey(who string) string {
	m, _ := rt.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, rt.opts.OwnerKey)
	}
	m.Reset()
	m.Write([]byte(who))
	var sum [sha256.Size]byte
	key := base64.RawURLEncoding.EncodeToString(m.Sum(sum[:0])[:18])
	rt.macs.Put(m)
	return key
}

// taskOwnerID returns an identifier of ss for task ownership: its ID, or
// a random one made once when the transport gives none (stdio).
func (ss *ServerSession) taskOwnerID() string {
	if id := ss.ID(); id != "" {
		return id
	}
	ss.ownerOnce.Do(func() {
		b := make([]byte, 16)
		rand.Read(b)
		ss.ownerID = base64.RawURLEncoding.EncodeToString(b)
	})
	return ss.ownerID
}

// close ends the tasks running here (they fail: "the server closed"),
// waits for their handlers to return, and closes the store if the runtime
// made it. When ctx ends first, the tasks whose handlers are still running
// are written failed at once, the store is left open (they may still write
// to it), and close returns ctx's error.
func (rt *taskRuntime) close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	close(rt.quit)
	runs := slices.Collect(maps.Values(rt.runs))
	rt.mu.Unlock()
	for _, r := range runs {
		r.cancel(errTaskServerClosed)
	}
	returned := make(chan struct{})
	go func() {
		rt.wg.Wait()
		close(returned)
	}()
	select {
	case <-returned:
	case <-ctx.Done():
		close(rt.abandoned)
		rt.mu.Lock()
		runs = slices.Collect(maps.Values(rt.runs))
		rt.mu.Unlock()
		for _, r := range runs {
			r.finish(nil, errTaskServerClosed) // a handler that returns later changes nothing
		}
		return fmt.Errorf("mcp: task handlers still running at shutdown: %w", context.Cause(ctx))
	}
	if c, ok := rt.store.(io.Closer); ok && rt.ownsStore {
		return c.Close()
	}
	return nil
}

// Causes of the end of a task's context.
var (
	errTaskCancelled      = errors.New("mcp: the task was cancelled")
	errTaskMaxDuration    = errors.New("mcp: the task ran longer than TaskOptions.MaxDuration")
	errTaskServerClosed   = errors.New("mcp: the server closed")
	errTaskEndedElsewhere = errors.New("mcp: the task ended while its handler ran (its lease expired)")
)

// ErrNotTask is returned by [ServerRequest.GoAsync] when the request
// cannot become a task after it asked the client for input it has not
// given yet: the handler must return [ErrInputRequired] first.
var ErrNotTask = errors.New("mcp: the request asked for input it has not received; it cannot become a task before the client answers")

// Phases of a run.
const (
	phaseSync = iota // the request waits for the handler
	phaseTask        // the task exists; the handler runs detached
	phaseDone        // the handler returned
)

// taskRun is one handler run of a tools/call that may become a task.
type taskRun struct {
	rt      *taskRuntime
	ss      *ServerSession // the session of the creating request
	req     *CallToolRequest
	owner   string
	version string // the protocol revision of the creating request
	modern  bool
	ttl     time.Duration // kept after the end

	ctx     context.Context // the handler's, detached from the request: &handler
	handler runCancelCtx    // cancelled by cancel
	reqCtx  context.Context // the creating request's
	base    runContext      // ctx's parent
	// out carries the handler's outcome to the request while the run is
	// synchronous, or the news that GoAsync made it a task (created).
	out chan runOutcome

	mu        sync.Mutex
	phase     int
	id        string      // once phaseTask
	created   *TaskRecord // the record as created
	createErr error       // why the task could not be created, if so
	progress  string      // the last status message written

	// An inline run in its sync window is in taskRuntime.inline (rt.mu):
	prev, next *taskRun
	listed     bool        // in the list
	since      uint64      // taskRuntime.ticks when listed
	stopWatch  func() bool // stops the watch of the request's end, once started
}

// taskRunKey is the context key of a handler's *taskRun.
type taskRunKey struct{}

func taskRunFrom(ctx context.Context) *taskRun {
	r, _ := ctx.Value(taskRunKey{}).(*taskRun)
	return r
}

// taskSupport returns a tool's declared task support.
func taskSupport(t *Tool) string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return TaskForbidden
	}
	return t.Execution.TaskSupport
}

// declaresTasks reports whether a 2026-07-28 request's capabilities
// declare the tasks extension.
func declaresTasks(caps *ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtensionID]
	return ok
}

// errTasksUndeclared is the -32021 error of a 2026-07-28 request that
// needs the tasks extension without declaring it.
func errTasksUndeclared(method string) error {
	return (&MissingClientCapabilityError{Err: &CapabilityError{Method: method, Capability: "extensions." + TasksExtensionID, Peer: "client"}}).WireError()
}

// callToolTask serves a tools/call of t, a tool that supports tasks, on a
// server with a task runtime. It returns ok false when the call is to
// run as an ordinary call.
func (ss *ServerSession) callToolTask(ctx context.Context, req *CallToolRequest, t *serverTool) (Result, bool, error) {
	rt := ss.server.tasks
	support := taskSupport(t.tool)
	modern := req.Params.Meta.ProtocolVersion != ""
	if modern {
		if support == TaskForbidden {
			return nil, false, nil
		}
		if !declaresTasks(req.Params.Meta.ClientCapabilities) {
			if support == TaskRequired {
				return nil, true, errTasksUndeclared(MethodToolsCall)
			}
			return nil, false, nil
		}
	} else {
		asked := req.Params.Task != nil
		switch {
		case !ss.tasksNegotiated():
			return nil, false, nil // a revision without tasks: the param means nothing
		case asked && support == TaskForbidden:
			return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: tool " + strconv.Quote(req.Params.Name) + " does not run as a task (execution.taskSupport is forbidden)"}
		case !asked && support == TaskRequired:
			return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: tool " + strconv.Quote(req.Params.Name) + " runs only as a task (execution.taskSupport is required); send the task param"}
		case !asked:
			return nil, false, nil
		}
	}
	run := rt.newRun(ctx, ss, req, modern)
	if !modern {
		run.ttl = rt.opts.TTL
		if ttl := req.Params.Task.TTL; ttl != nil {
			d := time.Duration(*ttl) * time.Millisecond
			if *ttl < 0 || d > rt.opts.MaxTTL || *ttl > int64(rt.opts.MaxTTL/time.Millisecond) {
				d = rt.opts.MaxTTL
			}
			if d > 0 {
				run.ttl = d
			}
		}
	}
	// From the start: a required tool, an optional one without a sync
	// window, and every 2025-11-25 task (its client asked for one). A
	// tool added with AddAsyncTool decides in its handler.
	immediate := !t.tool.async && (!modern || support == TaskRequired || rt.opts.SyncWindow <= 0)
	if immediate {
		run.out = make(chan runOutcome, 1) // start's
		res, err := run.startTask(ctx)
		if err != nil {
			run.cancel(err)
			if support == TaskOptional && isTaskLimit(run.createErr) {
				return nil, false, nil // full: run it as an ordinary call
			}
			return nil, true, err
		}
		rt.start(run, t)
		return run.announce(res, true, nil)
	}
	if !t.tool.async && len(ss.server.opts.Middleware) == 0 && rpclink.CanAnswer(ctx) {
		return run.inline(ctx, t)
	}
	run.out = make(chan runOutcome, 1) // the hand-off's (start)
	// Synchronous until the handler returns, calls GoAsync, or the sync
	// window passes.
	done := rt.start(run, t)
	var window <-chan time.Time
	if !t.tool.async {
		timer := time.NewTimer(rt.opts.SyncWindow)
		defer timer.Stop()
		window = timer.C
	}
	for {
		select {
		case out := <-done:
			if out.created {
				return run.announce(run.answerCreated())
			}
			return out.res, true, out.err
		case <-window:
			window = nil
			res, err := run.startTask(ctx)
			switch {
			case err == nil:
				return run.announce(res, true, nil)
			case errors.Is(err, errRunNotSync):
				// The handler returned or went async meanwhile: the
				// other cases answer.
			default:
				// The store refused (full): the call stays synchronous.
				ss.server.logger.Warn("mcp: task not created; the call runs on synchronously", "tool", req.Params.Name, "err", err)
			}
		case <-ctx.Done():
			run.mu.Lock()
			sync := run.phase == phaseSync
			if sync {
				// The request ended before the run became a task: so
				// does the run (GoAsync now fails).
				run.cancel(context.Cause(ctx))
			}
			run.mu.Unlock()
			if !sync {
				return run.announce(run.answerCreated())
			}
			out := <-done // the handler's return: the run never became a task
			return out.res, true, out.err
		}
	}
}

// errAnsweredEarly is what a handler run inline returns once its request
// was answered with the task it became (see inline); it goes nowhere.
var errAnsweredEarly = errors.New("mcp: the request was answered with a task")

// inline runs the handler of a call that becomes a task if it outlasts
// the sync window on the request's own goroutine, which saves the hand-off
// to a goroutine of the runtime when the handler returns in time (the
// common case). When the window passes first, the runtime's window watcher (watchWindows) makes the run a
// task and answers the request with it at once (rpclink.Answer), while
// the handler goes on here, detached from the request. Only where the
// request can be answered so (not on a goroutine an HTTP POST lent) and
// no receiving middleware waits for the answer (it would see the tool's
// result, not the task).
func (r *taskRun) inline(ctx context.Context, t *serverTool) (Result, bool, error) {
	rt := r.rt
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the server is closing"}
	}
	rt.wg.Add(1)
	rt.listInline(r)
	rt.mu.Unlock()
	defer rt.wg.Done()
	res, err := r.invoke(t)
	rt.mu.Lock()
	rt.unlistInline(r)
	stop := r.stopWatch
	r.stopWatch = nil
	rt.mu.Unlock()
	if stop != nil {
		stop()
	}
	if r.done() {
		r.finish(res, err)
		r.cancel(nil)
		return nil, true, errAnsweredEarly
	}
	r.cancel(nil)
	return res, true, err
}

// inlineWatchAfter is how long an inline run goes, at least, before it
// watches its request's end (see watchWindows): a handler that returns
// sooner, the common case, never pays for the watch. It is also the
// watcher's tick, unless SyncWindow is shorter.
const inlineWatchAfter = 5 * time.Millisecond

// listInline puts r, an inline run, in the watched list, starting the
// watcher if it is not running. rt.mu is held.
func (rt *taskRuntime) listInline(r *taskRun) {
	r.since, r.listed = rt.ticks, true
	r.prev, r.next = nil, rt.inline
	if rt.inline != nil {
		rt.inline.prev = r
	}
	rt.inline = r
	if !rt.watching {
		rt.watching = true
		go rt.watchWindows()
	}
}

// unlistInline takes r out of the watched list if it is there. rt.mu is
// held.
func (rt *taskRuntime) unlistInline(r *taskRun) {
	if !r.listed {
		return
	}
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		rt.inline = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	}
	r.prev, r.next, r.listed = nil, nil, false
}

// watchWindows watches the sync windows of the inline runs, ticking every
// inlineWatchAfter (or SyncWindow, if shorter). A run listed for two ticks
// (so running at least one tick) starts watching its request's end, which
// while the run is synchronous ends the run (as the request's end ends a
// synchronous call); a run listed for more ticks than SyncWindow spans is
// made a task, so a window lasts SyncWindow and at most two ticks more.
// The watcher ends after two ticks without a run, or when the runtime
// closes.
func (rt *taskRuntime) watchWindows() {
	tick := min(inlineWatchAfter, rt.opts.SyncWindow)
	span := uint64((rt.opts.SyncWindow + tick - 1) / tick) // ticks in a window
	t := time.NewTicker(tick)
	defer t.Stop()
	idle := 0
	var due []*taskRun
	for {
		select {
		case <-t.C:
		case <-rt.quit:
			rt.mu.Lock()
			rt.watching = false
			rt.mu.Unlock()
			return
		}
		rt.mu.Lock()
		rt.ticks++
		if rt.inline == nil {
			if idle++; idle >= 2 {
				rt.watching = false
				rt.mu.Unlock()
				return
			}
			rt.mu.Unlock()
			continue
		}
		idle = 0
		for r := rt.inline; r != nil; {
			next := r.next
			age := rt.ticks - r.since
			if age >= 2 && r.stopWatch == nil {
				r.stopWatch = context.AfterFunc(r.reqCtx, r.requestEnded)
			}
			if age > span {
				rt.unlistInline(r)
				due = append(due, r)
			}
			r = next
		}
		rt.mu.Unlock()
		for i, r := range due {
			go r.windowPassed(r.reqCtx) // it writes to the store: never in the watcher's way
			due[i] = nil
		}
		due = due[:0]
	}
}

// requestEnded ends a run whose request ended while it is synchronous.
func (r *taskRun) requestEnded() {
	r.mu.Lock()
	if r.phase == phaseSync {
		r.cancel(context.Cause(r.reqCtx))
	}
	r.mu.Unlock()
}

// windowPassed makes an inline run a task, unless it returned or is asking
// for input meanwhile, and answers its request with the task.
func (r *taskRun) windowPassed(ctx context.Context) {
	res, err := r.startTask(ctx)
	switch {
	case errors.Is(err, errRunNotSync):
		return
	case err != nil:
		r.rt.logger.Warn("mcp: task not created; the call runs on synchronously", "tool", r.req.Params.Name, "err", err)
		return
	}
	res, _, err = r.announce(res, true, nil)
	if err != nil {
		return // the request ended first: the task is cancelled
	}
	r.rt.s.completeModern(res)
	raw, err := marshalStd(res)
	if err == nil && rpclink.Answer(ctx, raw) {
		return
	}
	// Not answered (it cannot fail where CanAnswer said yes, but should it):
	// nobody will learn the task's ID.
	r.rt.logger.Error("mcp: a task's request could not be answered early; the task is cancelled", "tool", r.req.Params.Name, "err", err)
	r.rt.cancelTask(context.WithoutCancel(ctx), r.owner, r.id)
}

// announce returns the answer naming the run's task (res, err: as
// answerCreated returns them), unless the 2026-07-28 request ended before
// it: the client, gone, never learns the task's ID, so the task is
// cancelled rather than left to run to MaxDuration unseen. (A 2025-11-25
// client cancels tasks with tasks/cancel only, never by cancelling the
// request: its own answer tells it the ID.)
func (r *taskRun) announce(res Result, _ bool, err error) (Result, bool, error) {
	ctx := r.reqCtx
	if err == nil && r.modern && ctx.Err() != nil {
		if _, _, cerr := r.rt.cancelTask(context.WithoutCancel(ctx), r.owner, r.id); cerr != nil {
			r.rt.logger.Warn("mcp: cancelling a task whose request ended before it was announced", "task", r.id, "err", cerr)
		}
		return nil, true, context.Cause(ctx)
	}
	return res, true, err
}

// tasksNegotiated reports whether the handshake session negotiated a
// revision with tasks (2025-11-25 or later).
func (ss *ServerSession) tasksNegotiated() bool {
	v := ss.ProtocolVersion()
	return v >= Version20251125
}

// isTaskLimit reports whether err is a store's refusal at a bound.
func isTaskLimit(err error) bool {
	var le *TaskLimitError
	return errors.As(err, &le)
}

// newRun prepares the run of a call.
func (rt *taskRuntime) newRun(ctx context.Context, ss *ServerSession, req *CallToolRequest, modern bool) *taskRun {
	r := &taskRun{
		rt:     rt,
		ss:     ss,
		req:    req,
		modern: modern,
		ttl:    rt.opts.TTL,
	}
	if modern {
		r.version = req.Params.Meta.ProtocolVersion
	} else {
		r.version = ss.ProtocolVersion()
	}
	// Detached from the request, but for its values; cancelled by a
	// cancel, MaxDuration (see monitor), Close, or the request's end
	// while the run is still synchronous.
	r.base = runContext{req: ctx, r: r}
	r.handler.parent = &r.base
	r.ctx = &r.handler
	r.reqCtx = ctx
	return r
}

// cancel ends the handler's context with cause (nil: context.Canceled);
// the first cause stays.
func (r *taskRun) cancel(cause error) { r.handler.cancel(cause) }

// runCancelCtx is the context of a run's handler: a child of the run's
// runContext that the run cancels, as context.WithCancelCause would make
// it, but a field of the run whose cancelCtx is made only when something
// needs one: a call of Done (which deriving a context or an AfterFunc
// makes too), or Err, Value or Done after the end. Most handlers of calls
// answered within SyncWindow never ask, and their call makes neither the
// cancelCtx nor its cancel function. Err, Value and context.Cause give
// what the cancelCtx would.
type runCancelCtx struct {
	parent context.Context
	made   atomic.Pointer[madeCancelCtx]
	mu     sync.Mutex // making made; ended and cause
	ended  bool       // cancelled before made was
	cause  error
}

// madeCancelCtx is a runCancelCtx's cancelCtx, once made.
type madeCancelCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// real returns the cancelCtx, making it (cancelled, if the context ended
// before) the first time.
func (c *runCancelCtx) real() *madeCancelCtx {
	if m := c.made.Load(); m != nil {
		return m
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.made.Load(); m != nil {
		return m
	}
	ctx, cancel := context.WithCancelCause(c.parent)
	if c.ended {
		cancel(c.cause)
	}
	m := &madeCancelCtx{ctx, cancel}
	c.made.Store(m)
	return m
}

// isEnded reports whether the context was cancelled before its cancelCtx
// was made.
func (c *runCancelCtx) isEnded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

func (c *runCancelCtx) cancel(cause error) {
	if m := c.made.Load(); m != nil {
		m.cancel(cause)
		return
	}
	c.mu.Lock()
	if m := c.made.Load(); m != nil {
		c.mu.Unlock()
		m.cancel(cause)
		return
	}
	if !c.ended {
		c.ended, c.cause = true, cause
	}
	c.mu.Unlock()
}

// Deadline: none (the parent's).
func (c *runCancelCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done makes the cancelCtx and returns its channel.
func (c *runCancelCtx) Done() <-chan struct{} { return c.real().ctx.Done() }

// Err is nil until the context is cancelled, then the cancelCtx's.
func (c *runCancelCtx) Err() error {
	if m := c.made.Load(); m != nil {
		return m.ctx.Err()
	}
	if c.isEnded() {
		return c.real().ctx.Err()
	}
	return nil
}

// Value is the cancelCtx's once made or the context ended (context.Cause
// finds the cause there), else the parent's.
func (c *runCancelCtx) Value(key any) any {
	if m := c.made.Load(); m != nil {
		return m.ctx.Value(key)
	}
	if c.isEnded() {
		return c.real().ctx.Value(key)
	}
	return c.parent.Value(key)
}

// String names the context for debugging.
func (c *runCancelCtx) String() string { return "mcp.taskRun.ctx" }

// inputRound returns the MRTR round of the run's creating request
// (2026-07-28), or nil. It is looked up when needed, not at every call.
func (r *taskRun) inputRound() *inputRound { return inputRoundFrom(r.reqCtx) }

// runContext is the parent of a run's handler context: the values of the
// creating request and the run itself (under taskRunKey), without the
// request's deadline or cancellation. It is a field of the run rather
// than context.WithoutCancel plus context.WithValue: two allocations
// fewer on every call that may become a task.
type runContext struct {
	req context.Context
	r   *taskRun
}

// Deadline, Done and Err: none, whatever the request's (the run is
// detached from it). Value: the run under taskRunKey, else the request's.
func (*runContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*runContext) Done() <-chan struct{}       { return nil }
func (*runContext) Err() error                  { return nil }
func (c *runContext) Value(key any) any {
	if _, ok := key.(taskRunKey); ok {
		return c.r
	}
	return c.req.Value(key)
}
func (c *runContext) String() string { return "mcp task run context" }

// errRunNotSync: the run left the synchronous phase before the task was
// created by the window.
var errRunNotSync = errors.New("mcp: run no longer synchronous")

// startTask creates the task of a run still synchronous, durably, and
// returns the answer that announces it.
func (r *taskRun) startTask(ctx context.Context) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseSync {
		return nil, errRunNotSync
	}
	if round := r.inputRound(); round != nil && round.hasPending() {
		// The handler asked the client for input: it is about to end
		// the round with an InputRequiredResult.
		return nil, errRunNotSync
	}
	if err := r.createLocked(ctx); err != nil {
		return nil, err
	}
	return r.createdResult(), nil
}

// createLocked stores the task and moves the run to phaseTask. r.mu is
// held.
func (r *taskRun) createLocked(ctx context.Context) error {
	rt := r.rt
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the server is closing"}
	}
	if err := context.Cause(r.ctx); err != nil {
		return err // the request ended, or the server closes
	}
	if r.owner == "" {
		r.owner = rt.ownerOf(r.reqCtx, r.ss, r.modern)
	}
	now := time.Now()
	rec := &TaskRecord{
		Owner:           r.owner,
		Method:          MethodToolsCall,
		ProtocolVersion: r.version,
		Status:          TaskWorking,
		CreatedAt:       now,
		UpdatedAt:       now,
		TTL:             r.ttl,
		PollInterval:    rt.opts.PollInterval,
		Lease:           &TaskLease{Holder: rt.opts.ReplicaID, Expires: now.Add(rt.opts.Lease)},
	}
	// The store's own context: the request may end meanwhile, and a
	// task created must be announced or stay findable.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := rt.store.Create(sctx, rec); err != nil {
		r.createErr = err
		var le *TaskLimitError
		if errors.As(err, &le) {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Internal error: the server holds too many tasks (%s, %d); try again later", le.Limit, le.Max)}
		}
		// The client is told the store failed, as tasks/* tell it, not
		// the store's error (its internals, which the log gets).
		rt.logger.Error("mcp: task store", "method", MethodToolsCall, "err", err)
		return errTaskStoreFailed()
	}
	r.id = rec.ID
	r.created = rec.Clone()
	r.phase = phaseTask
	select {
	case r.out <- runOutcome{created: true}: // for a request waiting in callToolTask (GoAsync)
	default:
	}
	rt.mu.Lock()
	rt.runs[r.id] = r
	if !rt.closed {
		rt.wg.Add(1)
		go func() { defer rt.wg.Done(); r.monitor() }()
	}
	rt.mu.Unlock()
	return nil
}

// answerCreated answers the creating request once the run is a task.
func (r *taskRun) answerCreated() (Result, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id == "" {
		if r.createErr != nil {
			return nil, true, r.createErr
		}
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task was not created"}
	}
	return r.createdResult(), true, nil
}

// createdResult is the answer announcing the task: a flat DetailedTask of
// resultType "task" on 2026-07-28, a CreateTaskResult on 2025-11-25. r.mu
// is held and the task exists.
func (r *taskRun) createdResult() Result {
	rec := r.created
	// As at creation: its ttl is then exactly the time it is kept.
	if r.modern {
		v := r.rt.detailed(rec, rec.CreatedAt, false)
		v.ResultType = ResultTypeTask
		return v
	}
	return &CreateTaskResult{Task: *r.rt.task2025(rec, rec.CreatedAt)}
}

// runOutcome is a handler's return, for a request still waiting, or the
// news that the run became a task (created).
type runOutcome struct {
	res     Result
	err     error
	created bool
}

// start runs the handler of r in a goroutine of the runtime and returns a
// channel that carries its outcome while the request waits (until the
// run becomes a task); nil when the server is closing.
func (rt *taskRuntime) start(r *taskRun, t *serverTool) <-chan runOutcome {
	done := r.out
	if !rt.track() {
		err := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the server is closing"}
		if r.done() {
			r.cancel(errTaskServerClosed)
			r.finish(nil, err) // created as the server closed: it fails at once
		}
		select {
		case done <- runOutcome{err: err}:
		default: // the news of the task fills it: nobody waits
		}
		return done
	}
	go func() {
		rpclink.GrowStack() // a handler's goroutine, as jsonrpc's are (growing on demand costs more)
		defer rt.wg.Done()
		defer r.cancel(nil)
		res, err := r.invoke(t)
		if !r.done() {
			done <- runOutcome{res: res, err: err}
			return
		}
		r.finish(res, err)
	}()
	return done
}

// done moves the run to phaseDone, its handler having returned (or never
// to run), and reports whether it was a task by then: the handler's
// outcome then goes to the task, not to the request.
func (r *taskRun) done() (wasTask bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	wasTask = r.phase == phaseTask
	r.phase = phaseDone
	return wasTask
}

// track counts a goroutine of the runtime, unless it is closing.
func (rt *taskRuntime) track() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return false
	}
	rt.wg.Add(1)
	return true
}

// invoke runs the tool's handler, turning a panic into an internal error.
func (r *taskRun) invoke(t *serverTool) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.rt.logger.Error("mcp: tool handler panicked", "tool", r.req.Params.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Internal error: tool %q failed", r.req.Params.Name)}
		}
	}()
	out, err := r.ss.runToolHandler(r.ctx, r.req, t)
	if out == nil {
		return nil, err
	}
	return out, err
}

// monitor keeps the lease of a running task and watches its record for a
// cancel made elsewhere (another replica), until the handler's context
// ends (the handler returned, or the task was cancelled).
func (r *taskRun) monitor() {
	rt := r.rt
	ctx := r.ctx
	renewEvery := rt.opts.Lease / 3
	nextRenew := time.Now().Add(renewEvery)
	deadline := time.AfterFunc(rt.opts.MaxDuration, func() { r.cancel(errTaskMaxDuration) })
	defer deadline.Stop()
	for {
		rec, err := rt.store.Get(ctx, r.owner, r.id)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && (rec.Cancel || rec.Status == TaskCancelled):
			r.cancel(errTaskCancelled)
			return
		case err == nil && rec.Status.Ended():
			// Ended by another writer while the handler runs (its own
			// outcome is written after it returns): a reader settled it
			// failed, its lease having expired while the store could not
			// be reached to renew it. The task is never run twice, and the
			// handler's outcome can no longer be recorded: it stops.
			r.cancel(errTaskEndedElsewhere)
			return
		case errors.Is(err, ErrTaskNotFound):
			r.cancel(errTaskCancelled) // deleted
			return
		}
		if !time.Now().Before(nextRenew) {
			r.renewLease(ctx)
			nextRenew = time.Now().Add(renewEvery)
		}
		wait := time.Until(nextRenew)
		if rt.watcher != nil && err == nil {
			wctx, wcancel := context.WithTimeout(ctx, wait)
			werr := rt.watcher.Watch(wctx, r.owner, r.id, rec.Version)
			wcancel()
			if werr == nil || errors.Is(werr, context.DeadlineExceeded) || errors.Is(werr, ErrTaskNotFound) {
				continue
			}
			// The store failed: read again after a while.
		}
		if !sleepCtx(ctx, min(wait, rt.opts.StorePollInterval)) {
			return
		}
	}
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// renewLease extends the runner's lease on the task.
func (r *taskRun) renewLease(ctx context.Context) {
	r.rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status.Ended() {
			return false
		}
		rec.Lease = &TaskLease{Holder: r.rt.opts.ReplicaID, Expires: time.Now().Add(r.rt.opts.Lease)}
		return true
	})
}

// finish records the outcome of a task's handler.
func (r *taskRun) finish(res Result, err error) {
	rt := r.rt
	defer func() {
		rt.mu.Lock()
		delete(rt.runs, r.id)
		rt.mu.Unlock()
	}()
	var (
		status  TaskStatus
		message string
		result  json.RawMessage
		rpcErr  *jsonrpc.Error
	)
	cause := context.Cause(r.ctx)
	if cr, ok := res.(*CallToolResult); ok && cr.IsError && cause != nil {
		// The handler's failure is the end of its context: say that.
		err = cause
	}
	switch {
	case errors.Is(cause, errTaskCancelled):
		status, message = TaskCancelled, taskMessageCancelled
	case err != nil && errors.Is(cause, errTaskMaxDuration):
		status, message = TaskFailed, taskMessageMaxDuration
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + taskMessageMaxDuration}
	case err != nil && errors.Is(cause, errTaskServerClosed):
		status, message = TaskFailed, taskMessageClosed
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + taskMessageClosed}
	case err != nil:
		status = TaskFailed
		rpcErr = wireErrorOf(err)
		message = rpcErr.Message
	default:
		data, merr := marshalStd(res)
		if merr != nil {
			status = TaskFailed
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: encoding the result: " + merr.Error()}
			message = rpcErr.Message
			break
		}
		result = data
		status = TaskCompleted
		if cr, ok := res.(*CallToolResult); ok && cr.IsError && !r.modern {
			// 2025-11-25: a tool error fails the task; tasks/result
			// still answers with the result, and tasks/get says why
			// (the spec: a failed task SHOULD have a statusMessage).
			status = TaskFailed
			message = toolErrorMessage(cr)
		}
	}
	var rawErr json.RawMessage
	if rpcErr != nil {
		rawErr, _ = json.Marshal(rpcErr)
	}
	// Written again while the store fails, as long as the lease would
	// keep the task this runner's (30 s at least).
	ctx, cancel := context.WithTimeout(context.Background(), max(30*time.Second, rt.opts.Lease))
	defer cancel()
	rec, err := rt.writeOutcome(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status.Ended() {
			return false // cancelled meanwhile: that stands
		}
		rec.Status, rec.StatusMessage = status, message
		rec.Result, rec.Error = result, rawErr
		rec.Inputs, rec.Answers = nil, nil
		rec.Lease = nil
		return true
	})
	if err != nil && !errors.Is(err, ErrTaskNotFound) {
		var le *TaskLimitError
		if errors.As(err, &le) && len(result) > 0 {
			// The result does not fit: the task fails, saying why.
			e, _ := json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Internal error: the result does not fit in the task store (%s)", le.Limit)})
			rec, err = rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
				if rec.Status.Ended() {
					return false
				}
				rec.Status, rec.StatusMessage, rec.Result, rec.Error = TaskFailed, "the result is too large to keep", nil, e
				rec.Inputs, rec.Answers, rec.Lease = nil, nil, nil
				return true
			})
		}
		if err != nil {
			rt.logger.Error("mcp: recording a task's outcome failed", "task", r.id, "err", err)
			return
		}
	}
	if rec != nil {
		rt.published(rec)
	}
}

// writeOutcome is modify for the outcome of a task's handler, which
// exists nowhere else: when the store fails (unreachable, out of memory),
// it tries again every StorePollInterval until the write is done or
// answered (not found, a bound), ctx ends, or a bounded close gives up on
// the handlers. Meanwhile the runner's monitor renews the lease, so the
// task stays the runner's if the store comes back within the lease.
func (rt *taskRuntime) writeOutcome(ctx context.Context, owner, id string, change func(*TaskRecord) bool) (*TaskRecord, error) {
	for {
		rec, err := rt.modify(ctx, owner, id, change)
		if err == nil || errors.Is(err, ErrTaskNotFound) || errors.Is(err, ErrTaskStoreClosed) || isTaskLimit(err) {
			return rec, err
		}
		t := time.NewTimer(rt.opts.StorePollInterval)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-rt.abandoned:
		}
		t.Stop()
		if ctx.Err() != nil || isClosed(rt.abandoned) {
			return rec, err
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wireErrorOf returns the JSON-RPC error a handler's error answers with.
func wireErrorOf(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	var pe ProtocolError
	if errors.As(err, &pe) {
		return pe.WireError()
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// modify reads task id of owner, applies change and writes it back,
// retrying on concurrent writes. change returns false to write nothing.
// It returns the record written (nil when change declined).
func (rt *taskRuntime) modify(ctx context.Context, owner, id string, change func(*TaskRecord) bool) (*TaskRecord, error) {
	for range maxTaskUpdateRetries {
		rec, err := rt.store.Get(ctx, owner, id)
		if err != nil {
			return nil, err
		}
		if !change(rec) {
			return nil, nil
		}
		err = rt.store.Update(ctx, rec)
		if errors.Is(err, ErrTaskConflict) {
			continue
		}
		if errors.Is(err, ErrTaskEnded) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return rec, nil
	}
	return nil, fmt.Errorf("mcp: task %s: %w (%d retries)", id, ErrTaskConflict, maxTaskUpdateRetries)
}

// GoAsync makes the tools/call this handler serves a task, from here on,
// when it can be one, and returns the context the handler goes on with.
// It is for tools added with [Server.AddAsyncTool], which run
// synchronously until they call it (the multi round-trip input of a
// 2026-07-28 request included), but is harmless elsewhere: a call that
// is a task already, or cannot become one (the client did not declare
// tasks, or it is not a task-augmented request), just continues, and ctx
// is returned as it is.
//
// The task is stored before GoAsync returns; the client is answered with
// its handle, and the handler's context is no longer the request's: it
// ends when the task is cancelled, runs longer than
// [TaskOptions.MaxDuration], or the server closes. A handler that has
// asked the client for input it has not received yet cannot go async
// ([ErrNotTask]): it must return [ErrInputRequired] first.
func (r *ServerRequest[P]) GoAsync(ctx context.Context) (context.Context, error) {
	run := taskRunFrom(ctx)
	if run == nil {
		return ctx, nil
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.phase != phaseSync {
		return ctx, nil
	}
	if round := run.inputRound(); round != nil && round.hasPending() {
		return ctx, ErrNotTask
	}
	if err := run.createLocked(ctx); err != nil {
		var le *TaskLimitError
		if errors.As(run.createErr, &le) {
			// Full: the call runs on synchronously.
			run.createErr = nil
			return ctx, nil
		}
		return ctx, err
	}
	return ctx, nil
}

// AddAsyncTool registers a tool as [Server.AddTool] does, for a handler
// that decides where its task starts: it runs synchronously (asking the
// client for input by multi round-trip requests on 2026-07-28, if it
// needs to) until it calls [ServerRequest.GoAsync], and the call becomes
// a task there. t.Execution.TaskSupport says whether a client must
// declare tasks ([TaskRequired]) or may ([TaskOptional]); empty means
// optional.
func (s *Server) AddAsyncTool(t *Tool, h ToolHandler) error {
	if t == nil {
		return s.AddTool(t, h)
	}
	return s.AddTool(asyncTool(t), h)
}

// AddAsyncTool registers a typed tool as [AddTool] does, with the
// behaviour of [Server.AddAsyncTool].
func AddAsyncTool[In, Out any](s *Server, t *Tool, h TypedToolHandler[In, Out]) error {
	if t == nil {
		return AddTool(s, t, h)
	}
	return AddTool(s, asyncTool(t), h)
}

// asyncTool returns a copy of t marked as deciding its own task start.
func asyncTool(t *Tool) *Tool {
	c := *t
	c.async = true
	if c.Execution == nil || c.Execution.TaskSupport == "" || c.Execution.TaskSupport == TaskForbidden {
		e := ToolExecution{TaskSupport: TaskOptional}
		if c.Execution != nil && c.Execution.TaskSupport == TaskForbidden {
			e.TaskSupport = TaskForbidden
		}
		c.Execution = &e
	}
	return &c
}

// ask serves an Elicit, CreateMessage or ListRoots of a handler in a run.
// It returns handled false when the ask goes the ordinary way (a
// synchronous 2025-11-25 call, which sends the request to the client).
func (r *taskRun) ask(ctx context.Context, method string, params Params, result Result) (bool, error) {
	r.mu.Lock()
	phase := r.phase
	if phase == phaseSync {
		defer r.mu.Unlock()
		if round := r.inputRound(); round != nil {
			// Synchronous 2026-07-28: a multi round-trip ask, under
			// r.mu so that the sync window does not make the run a task
			// between the ask and the handler's return.
			return true, round.ask(ctx, method, withoutTask(params), result)
		}
		return false, nil
	}
	r.mu.Unlock()
	if !r.modern {
		return true, r.askRelated(ctx, method, params, result)
	}
	return true, r.askInput(ctx, method, withoutTask(params), result)
}

// askRelated sends a 2025-11-25 task's question to the client as a
// request tagged with the task, the task input_required meanwhile.
func (r *taskRun) askRelated(ctx context.Context, method string, params Params, result Result) error {
	rt := r.rt
	tag, _ := json.Marshal(&RelatedTaskMetadata{TaskID: r.id})
	p := withMetaMembers(params, map[string]json.RawMessage{MetaRelatedTask: tag})
	if rec, _ := rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status.Ended() {
			return false
		}
		rec.Status = TaskInputRequired
		return true
	}); rec != nil {
		rt.published(rec)
	}
	err := r.sendRelated(ctx, method, p, result)
	if rec, _ := rt.modify(context.WithoutCancel(ctx), r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status != TaskInputRequired {
			return false
		}
		rec.Status = TaskWorking
		return true
	}); rec != nil {
		rt.published(rec)
	}
	return err
}

// sendRelated sends a task's question to the client (2025-11-25): on the
// stream of a tasks/result of the task waiting here if there is one (the
// client calls it when it sees input_required), else on the session's GET
// stream; with neither, it waits for a tasks/result until ctx ends. Never
// on the stream of the tools/call that started the task (its context
// still names it): that stream ends with the CreateTaskResult, and a
// question sent there would race it, about a task the client does not
// know yet.
func (r *taskRun) sendRelated(ctx context.Context, method string, params Params, result Result) error {
	rt := r.rt
	for {
		ss, sctx, added := rt.resultStream(ctx, r.id, r.ss)
		err := ss.requestMaybeTask(sctx, method, params, result)
		if !errors.Is(err, mcplink.ErrNoStream) {
			return err
		}
		select {
		case <-added:
		case <-ctx.Done():
			return fmt.Errorf("mcp: no stream to send the task's %s on: the client has no GET stream and called no tasks/result: %w", method, context.Cause(ctx))
		}
	}
}

// resultStream returns the session and context to send a question of
// task id with, the task's context being ctx and its creating session ss:
// those of the newest tasks/result of the task waiting here, or ss and
// ctx without a related request. added is closed when another tasks/result
// starts waiting.
func (rt *taskRuntime) resultStream(ctx context.Context, id string, ss *ServerSession) (*ServerSession, context.Context, <-chan struct{}) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if ws := rt.waiting[id]; len(ws) > 0 {
		w := ws[len(ws)-1]
		return w.ss, rpclink.Relate(ctx, w.ctx), rt.waitingAdded
	}
	return ss, jsonrpc.WithoutRelatedRequest(ctx), rt.waitingAdded
}

// holdResult records a tasks/result of task id waiting on ss with ctx,
// until the returned function is called.
func (rt *taskRuntime) holdResult(ctx context.Context, ss *ServerSession, id string) func() {
	w := resultWaiter{ss: ss, ctx: ctx}
	rt.mu.Lock()
	if rt.waiting == nil {
		rt.waiting = map[string][]resultWaiter{}
	}
	rt.waiting[id] = append(rt.waiting[id], w)
	close(rt.waitingAdded)
	rt.waitingAdded = make(chan struct{})
	rt.mu.Unlock()
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		ws := slices.DeleteFunc(rt.waiting[id], func(o resultWaiter) bool { return o.ctx == ctx })
		if len(ws) == 0 {
			delete(rt.waiting, id)
		} else {
			rt.waiting[id] = ws
		}
	}
}

// askInput makes a 2026-07-28 task's question an input request of the
// task, and waits for the client's answer (tasks/update).
func (r *taskRun) askInput(ctx context.Context, method string, params Params, result Result) error {
	rt := r.rt
	data, err := marshalStd(params)
	if err != nil {
		return fmt.Errorf("mcp: encoding %s params: %w", method, err)
	}
	req, err := json.Marshal(&InputRequest{Method: method, Params: data})
	if err != nil {
		return err
	}
	var key string
	rec, err := rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status.Ended() {
			return false
		}
		if len(rec.Inputs) >= maxInputRequests {
			return false
		}
		rec.InputKeys++
		key = "input-" + strconv.FormatInt(rec.InputKeys, 10)
		if rec.Inputs == nil {
			rec.Inputs = map[string]json.RawMessage{}
		}
		rec.Inputs[key] = req
		rec.Status = TaskInputRequired
		return true
	})
	if err != nil {
		return err
	}
	if rec == nil {
		if err := context.Cause(r.ctx); err != nil {
			return err
		}
		return fmt.Errorf("mcp: %s: the task has ended or has %d input requests outstanding", method, maxInputRequests)
	}
	rt.published(rec)
	for {
		rec, err := rt.store.Get(ctx, r.owner, r.id)
		if err != nil {
			return err
		}
		if rec.Status.Ended() {
			return context.Cause(r.ctx)
		}
		if answer, ok := rec.Answers[key]; ok {
			if err := unmarshalStd(answer, result); err != nil {
				return fmt.Errorf("mcp: the answer to %s %q: %w", method, key, err)
			}
			// Consume it: the key is never used again.
			rec, err := rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
				if _, ok := rec.Answers[key]; !ok {
					return false
				}
				delete(rec.Answers, key)
				delete(rec.Inputs, key)
				if len(rec.Inputs) == 0 && rec.Status == TaskInputRequired {
					rec.Status = TaskWorking
				}
				return true
			})
			if err != nil {
				return err
			}
			if rec != nil {
				rt.published(rec)
			}
			return nil
		}
		if err := rt.waitChange(ctx, r.owner, r.id, rec.Version); err != nil {
			return err
		}
	}
}

// waitChange waits until task id changes from version (or a poll
// interval passes, for a store that cannot tell), or ctx ends.
func (rt *taskRuntime) waitChange(ctx context.Context, owner, id string, version int64) error {
	if rt.watcher != nil {
		err := rt.watcher.Watch(ctx, owner, id, version)
		if errors.Is(err, ErrTaskNotFound) {
			return nil // the next Get says so
		}
		if err != nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return nil
	}
	if !sleepCtx(ctx, rt.opts.StorePollInterval) {
		return context.Cause(ctx)
	}
	return nil
}

// reportProgress sets the status message of the run's task.
func (r *taskRun) reportProgress(ctx context.Context, progress, total float64, message string) bool {
	r.mu.Lock()
	if r.phase != phaseTask {
		r.mu.Unlock()
		return false
	}
	msg := message
	if msg == "" {
		msg = strconv.FormatFloat(progress, 'f', -1, 64)
		if total > 0 {
			msg += "/" + strconv.FormatFloat(total, 'f', -1, 64)
		}
	}
	if msg == r.progress {
		r.mu.Unlock()
		return true
	}
	r.progress = msg
	r.mu.Unlock()
	if rec, _ := r.rt.modify(ctx, r.owner, r.id, func(rec *TaskRecord) bool {
		if rec.Status.Ended() {
			return false
		}
		rec.StatusMessage = msg
		return true
	}); rec != nil {
		r.rt.published(rec)
	}
	return true
}

// published tells the subscriptions/listen streams that asked for the
// task, and (2025-11-25) nothing else: clients poll.
func (rt *taskRuntime) published(rec *TaskRecord) {
	s := rt.s
	if s == nil {
		return // a client's runtime: nobody listens
	}
	if rec.ProtocolVersion < Version20260728 {
		rt.notifyStatus(rec)
		return
	}
	s.mu.RLock()
	n := len(s.listeners)
	s.mu.RUnlock()
	if n == 0 {
		return
	}
	now := time.Now()
	s.notifyListeners(NotificationTasks, func(id jsonrpc.ID) Params {
		v := rt.detailed(rec, now, true)
		v.Meta.SubscriptionID = id
		return v
	}, func(l *listener) bool {
		return l.taskOwner == rec.Owner && slices.Contains(l.filter.TaskIDs, rec.ID)
	})
}

// notifyStatus sends notifications/tasks/status about a 2025-11-25 task
// running here to the session that created it (the spec: a receiver MAY
// send it; the requestor polls either way). The note is queued and
// droppable: it never holds up the task, nor the session's other
// notifications.
func (rt *taskRuntime) notifyStatus(rec *TaskRecord) {
	rt.mu.Lock()
	r := rt.runs[rec.ID]
	rt.mu.Unlock()
	if r == nil || r.ss == nil || r.modern {
		return
	}
	r.ss.queueNote(queuedNote{method: NotificationTasksStatus, params: rt.task2025(rec, time.Now()), droppable: true})
}

// ttlOf returns the ttl of rec as clients see it: from creation to
// expiry, growing while the task runs.
func (rt *taskRuntime) ttlOf(rec *TaskRecord, now time.Time) *int64 {
	keep := rec.TTL
	if keep <= 0 {
		keep = rt.opts.TTL // a record written by other code
	}
	end := now
	if rec.Status.Ended() && !rec.EndedAt.IsZero() {
		end = rec.EndedAt
	}
	ms := (end.Sub(rec.CreatedAt) + keep).Milliseconds()
	return &ms
}

// storeDefaultTTL returns how long store keeps an ended task whose record
// has no TTL: what its DefaultTTL method says (the stores of this package
// have one, and so may others), else DefaultTaskTTL.
func storeDefaultTTL(store TaskStore) time.Duration {
	if d, ok := store.(interface{ DefaultTTL() time.Duration }); ok {
		if ttl := d.DefaultTTL(); ttl > 0 {
			return ttl
		}
	}
	return DefaultTaskTTL
}

// detailed returns the 2026-07-28 view of rec; inline false leaves the
// outcome and input requests out (a CreateTaskResult).
func (rt *taskRuntime) detailed(rec *TaskRecord, now time.Time, inline bool) *DetailedTask {
	v := &DetailedTask{
		TaskID:        rec.ID,
		Status:        rec.Status,
		StatusMessage: rec.StatusMessage,
		CreatedAt:     rec.CreatedAt.UTC(),
		LastUpdatedAt: rec.UpdatedAt.UTC(),
		TTLMs:         rt.ttlOf(rec, now),
	}
	if rec.PollInterval > 0 {
		ms := rec.PollInterval.Milliseconds()
		v.PollIntervalMs = &ms
	}
	if !inline {
		return v
	}
	switch rec.Status {
	case TaskCompleted:
		v.Result = rec.Result
	case TaskFailed:
		if len(rec.Error) == 0 && len(rec.Result) > 0 {
			// A 2025-11-25 tool error: on this revision it is a
			// completed task whose result says isError.
			v.Status = TaskCompleted
			v.Result = rec.Result
			break
		}
		var e jsonrpc.Error
		if len(rec.Error) > 0 && json.Unmarshal(rec.Error, &e) == nil {
			v.Error = &e
		} else {
			v.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cmp.Or(rec.StatusMessage, "Internal error")}
		}
	case TaskInputRequired:
		for k, raw := range rec.Inputs {
			if _, answered := rec.Answers[k]; answered {
				continue
			}
			var ir InputRequest
			if unmarshalStd(raw, &ir) != nil {
				continue
			}
			if v.InputRequests == nil {
				v.InputRequests = map[string]*InputRequest{}
			}
			v.InputRequests[k] = &ir
		}
		if v.InputRequests == nil {
			v.Status = TaskWorking // every question answered; the runner goes on
		}
	}
	return v
}

// maxToolErrorMessage bounds the part of a tool error's text that
// becomes its task's status message.
const maxToolErrorMessage = 256

// toolErrorMessage is the status message of a 2025-11-25 task that a
// tool error failed: the result's first text, bounded, or a generic one.
func toolErrorMessage(res *CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*TextContent); ok && tc.Text != "" {
			text := tc.Text
			if len(text) > maxToolErrorMessage {
				text = strings.ToValidUTF8(text[:maxToolErrorMessage], "") + "..."
			}
			return "tool error: " + text
		}
	}
	return "tool error: the tool returned a result with isError"
}

// task2025 returns the 2025-11-25 view of rec.
func (rt *taskRuntime) task2025(rec *TaskRecord, now time.Time) *Task {
	t := &Task{
		TaskID:        rec.ID,
		Status:        rec.Status,
		StatusMessage: rec.StatusMessage,
		CreatedAt:     rec.CreatedAt.UTC(),
		LastUpdatedAt: rec.UpdatedAt.UTC(),
		TTL:           rt.ttlOf(rec, now),
	}
	if rec.PollInterval > 0 {
		ms := rec.PollInterval.Milliseconds()
		t.PollInterval = &ms
	}
	if rec.Status == TaskInputRequired && len(rec.Inputs) > 0 && len(rec.Answers) >= len(rec.Inputs) {
		t.Status = TaskWorking
	}
	return t
}

// checkTaskID refuses a taskId the server never issues, before any store
// lookup.
func checkTaskID(id string) error {
	if id == "" || len(id) > maxTaskIDLength {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: taskId must be 1 to %d bytes", maxTaskIDLength)}
	}
	return nil
}

// errTaskNotFound is the answer about a task the caller cannot see.
func errTaskNotFound(method string) error {
	verb := "retrieve"
	switch method {
	case MethodTasksCancel:
		verb = "cancel"
	case MethodTasksUpdate:
		verb = "update"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to " + verb + " task: Task not found"}
}

// taskRequest checks what every tasks/* request needs and returns the
// runtime, the caller's owner key and whether the request is of
// 2026-07-28.
func (ss *ServerSession) taskRequest(ctx context.Context, method, id string, meta *Meta) (*taskRuntime, string, bool, error) {
	rt := ss.server.tasks
	modern := meta.ProtocolVersion != ""
	if rt == nil {
		return nil, "", false, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " (the server runs no tasks)"}
	}
	if modern {
		if method == MethodTasksResult || method == MethodTasksList {
			return nil, "", false, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " is not part of " + meta.ProtocolVersion}
		}
		if !declaresTasks(meta.ClientCapabilities) {
			return nil, "", false, errTasksUndeclared(method)
		}
	} else if method == MethodTasksUpdate || !ss.tasksNegotiated() {
		return nil, "", false, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method}
	}
	if method != MethodTasksList {
		if err := checkTaskID(id); err != nil {
			return nil, "", false, err
		}
	}
	return rt, rt.ownerOf(ctx, ss, modern), modern, nil
}

// taskResult is the answer of tasks/get: a DetailedTask (2026-07-28) or
// a Task (2025-11-25).
func (ss *ServerSession) getTask(ctx context.Context, req *ServerRequest[*GetTaskParams]) (Result, error) {
	rt, owner, modern, err := ss.taskRequest(ctx, MethodTasksGet, req.Params.TaskID, &req.Params.Meta)
	if err != nil {
		return nil, err
	}
	rec, err := rt.store.Get(ctx, owner, req.Params.TaskID)
	if err != nil {
		return nil, rt.storeError(MethodTasksGet, err)
	}
	if modern {
		return rt.detailed(rec, time.Now(), true), nil
	}
	return rt.task2025(rec, time.Now()), nil
}

// errTaskStoreFailed returns the answer of a request the task store
// failed.
func errTaskStoreFailed() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task store failed"}
}

// storeError maps a store error to the answer of a tasks/* request.
func (rt *taskRuntime) storeError(method string, err error) error {
	if errors.Is(err, ErrTaskNotFound) {
		return errTaskNotFound(method)
	}
	rt.logger.Error("mcp: task store", "method", method, "err", err)
	return errTaskStoreFailed()
}

// updateTask serves tasks/update (2026-07-28): it records the answers to
// the task's outstanding input requests, and ignores the others.
func (ss *ServerSession) updateTask(ctx context.Context, req *ServerRequest[*UpdateTaskParams]) (*EmptyResult, error) {
	rt, owner, _, err := ss.taskRequest(ctx, MethodTasksUpdate, req.Params.TaskID, &req.Params.Meta)
	if err != nil {
		return nil, err
	}
	var bad error
	rec, err := rt.modify(ctx, owner, req.Params.TaskID, func(rec *TaskRecord) bool {
		bad = nil
		if rec.Status.Ended() {
			return false
		}
		changed := false
		for _, key := range slices.Sorted(maps.Keys(req.Params.InputResponses)) {
			raw, pending := rec.Inputs[key]
			if !pending {
				continue // never issued, answered, or consumed: ignored
			}
			if _, answered := rec.Answers[key]; answered {
				continue
			}
			answer := req.Params.InputResponses[key]
			if err := checkInputAnswer(key, raw, answer); err != nil {
				bad = err
				return false
			}
			if rec.Answers == nil {
				rec.Answers = map[string]json.RawMessage{}
			}
			rec.Answers[key] = answer
			changed = true
		}
		if !changed {
			return false
		}
		if len(rec.Answers) >= len(rec.Inputs) {
			rec.Status = TaskWorking // the runner consumes them
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		var le *TaskLimitError
		if errors.As(err, &le) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Internal error: the task store is full (%s)", le.Limit)}
		}
		return nil, rt.storeError(MethodTasksUpdate, err)
	}
	if rec != nil {
		rt.published(rec)
	}
	return &EmptyResult{}, nil
}

// checkInputAnswer checks that answer has the shape of the result of the
// input request raw (an InputRequest) asked for.
func checkInputAnswer(key string, raw, answer json.RawMessage) error {
	var ir InputRequest
	if err := unmarshalStd(raw, &ir); err != nil {
		return nil // not ours to judge
	}
	var res Result
	switch ir.Method {
	case MethodElicitationCreate:
		res = &ElicitResult{}
	case MethodSamplingCreateMessage:
		res = &CreateMessageResult{}
	case MethodRootsList:
		res = &ListRootsResult{}
	default:
		return nil
	}
	bad := func(why string) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: inputResponses[%q] is not a %s result: %s", key, ir.Method, why)}
	}
	if len(answer) == 0 || answer[0] != '{' {
		return bad("not an object")
	}
	if err := unmarshalStd(answer, res); err != nil {
		return bad(err.Error())
	}
	if m := lackingMember(res); m != "" {
		return bad("missing " + m)
	}
	return nil
}

// cancelTask serves tasks/cancel: a task that has not ended is cancelled
// for good, and its handler's context ends. 2026-07-28 answers with an
// empty result even for an ended task; 2025-11-25 with the task, and
// refuses an ended one.
func (ss *ServerSession) cancelTask(ctx context.Context, req *ServerRequest[*CancelTaskParams]) (Result, error) {
	rt, owner, modern, err := ss.taskRequest(ctx, MethodTasksCancel, req.Params.TaskID, &req.Params.Meta)
	if err != nil {
		return nil, err
	}
	rec, ended, err := rt.cancelTask(ctx, owner, req.Params.TaskID)
	if err != nil {
		return nil, rt.storeError(MethodTasksCancel, err)
	}
	if modern {
		return &EmptyResult{}, nil
	}
	if ended {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: the task has already ended"}
	}
	return rt.task2025(rec, time.Now()), nil
}

// taskPayload serves tasks/result (2025-11-25): it waits for the task's
// end and answers as the task's request would have, tagged with the
// task.
func (ss *ServerSession) taskPayload(ctx context.Context, req *ServerRequest[*TaskPayloadParams]) (Result, error) {
	rt, owner, _, err := ss.taskRequest(ctx, MethodTasksResult, req.Params.TaskID, &req.Params.Meta)
	if err != nil {
		return nil, err
	}
	defer rt.holdResult(ctx, ss, req.Params.TaskID)()
	return rt.awaitPayload(ctx, owner, req.Params.TaskID)
}

// cancelTask cancels task id of owner for good, unless it has ended
// (ended true, rec nil), and ends its handler's context if it runs here.
func (rt *taskRuntime) cancelTask(ctx context.Context, owner, id string) (rec *TaskRecord, ended bool, err error) {
	rec, err = rt.modify(ctx, owner, id, func(rec *TaskRecord) bool {
		ended = rec.Status.Ended()
		if ended {
			return false
		}
		rec.Cancel = true
		rec.Status, rec.StatusMessage = TaskCancelled, taskMessageCancelled
		rec.Inputs, rec.Answers, rec.Lease = nil, nil, nil
		return true
	})
	if err != nil {
		return nil, false, err
	}
	rt.mu.Lock()
	run := rt.runs[id]
	rt.mu.Unlock()
	if run != nil && run.owner == owner {
		run.cancel(errTaskCancelled)
	}
	if rec != nil {
		rt.published(rec)
	}
	return rec, ended, nil
}

// awaitPayload waits for the end of task id of owner and returns the
// answer of tasks/result.
func (rt *taskRuntime) awaitPayload(ctx context.Context, owner, id string) (Result, error) {
	for {
		rec, err := rt.store.Get(ctx, owner, id)
		if err != nil {
			return nil, rt.storeError(MethodTasksResult, err)
		}
		if rec.Status.Ended() {
			return taskPayloadOf(rec)
		}
		if err := rt.waitChange(ctx, owner, id, rec.Version); err != nil {
			return nil, err
		}
	}
}

// list returns a page of owner's tasks in the 2025-11-25 form.
func (rt *taskRuntime) list(ctx context.Context, owner, cursor string) (*ListTasksResult, error) {
	recs, next, err := rt.store.List(ctx, owner, cursor)
	if errors.Is(err, ErrTaskCursor) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: invalid cursor"}
	}
	if err != nil {
		return nil, rt.storeError(MethodTasksList, err)
	}
	now := time.Now()
	res := &ListTasksResult{Tasks: make([]*Task, 0, len(recs)), NextCursor: next}
	for _, rec := range recs {
		res.Tasks = append(res.Tasks, rt.task2025(rec, now))
	}
	return res, nil
}

// resultFor returns a new result of the type method answers with, for
// the methods that run as tasks.
func resultFor(method string) Result {
	switch method {
	case MethodSamplingCreateMessage:
		return &CreateMessageResult{}
	case MethodElicitationCreate:
		return &ElicitResult{}
	}
	return &CallToolResult{}
}

// taskPayloadOf is the answer of tasks/result for an ended task: what its
// request would have answered, tagged with the task.
func taskPayloadOf(rec *TaskRecord) (Result, error) {
	tag, _ := json.Marshal(&RelatedTaskMetadata{TaskID: rec.ID})
	if len(rec.Result) > 0 {
		res := resultFor(rec.Method)
		if err := unmarshalStd(rec.Result, res); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the stored result does not decode"}
		}
		m := res.resultMeta()
		m.Other = maps.Clone(m.Other)
		if m.Other == nil {
			m.Other = map[string]json.RawMessage{}
		}
		m.Other[MetaRelatedTask] = tag
		return res, nil
	}
	if rec.Status == TaskCancelled {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task was cancelled", Data: relatedData(tag)}
	}
	var e jsonrpc.Error
	if len(rec.Error) > 0 && json.Unmarshal(rec.Error, &e) == nil {
		return nil, &e
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cmp.Or(rec.StatusMessage, "Internal error")}
}

// relatedData is the data of an error about a task.
func relatedData(tag json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]json.RawMessage{"_meta": mustObject(MetaRelatedTask, tag)})
	return b
}

func mustObject(k string, v json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]json.RawMessage{k: v})
	return b
}

// listTasks serves tasks/list (2025-11-25): the caller's tasks, a page at
// a time.
func (ss *ServerSession) listTasks(ctx context.Context, req *ServerRequest[*ListTasksParams]) (*ListTasksResult, error) {
	rt, owner, _, err := ss.taskRequest(ctx, MethodTasksList, "", &req.Params.Meta)
	if err != nil {
		return nil, err
	}
	return rt.list(ctx, owner, req.Params.Cursor)
}

// acknowledgeTasks returns the task IDs of a subscriptions/listen filter
// the server agrees to send notifications/tasks for: the caller's own.
func (ss *ServerSession) acknowledgeTasks(ctx context.Context, meta *Meta, ids []string) ([]string, string, error) {
	if len(ids) == 0 {
		return nil, "", nil
	}
	rt := ss.server.tasks
	if rt == nil {
		return nil, "", nil
	}
	if !declaresTasks(meta.ClientCapabilities) {
		return nil, "", errTasksUndeclared(MethodSubscriptionsListen)
	}
	if len(ids) > ss.server.opts.MaxSubscriptions {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: more task IDs than the server's limit of %d (ServerOptions.MaxSubscriptions)", ss.server.opts.MaxSubscriptions)}
	}
	owner := rt.ownerOf(ctx, ss, true)
	var ack []string
	for _, id := range ids {
		if checkTaskID(id) != nil || slices.Contains(ack, id) {
			continue
		}
		if _, err := rt.store.Get(ctx, owner, id); err == nil {
			ack = append(ack, id)
		}
	}
	return ack, owner, nil
}

// Close ends the server's subscription to its [ServerOptions.Bus], if
// any, and its tasks: their handlers' contexts are cancelled,
// and those still running fail ("the server closed"); it waits for them
// to return, and closes the task store the server made. Sessions are not
// closed: close them, or stop serving the transports, first. A handler
// that ignores its context keeps Close waiting: [Server.Shutdown] bounds
// the wait.
func (s *Server) Close() error {
	return s.Shutdown(context.Background())
}

// Shutdown is Close with a bound: when ctx ends before the handlers of the
// server's tasks have returned, the tasks still running are written failed
// ("the server closed") at once, the task store is left open for the
// handlers that return later, and Shutdown returns an error wrapping ctx's.
// Calls after the first do nothing and return nil.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.bus != nil {
		s.bus.close()
	}
	if s.tasks == nil {
		return nil
	}
	return s.tasks.close(ctx)
}
