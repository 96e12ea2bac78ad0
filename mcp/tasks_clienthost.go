package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Tasks a client runs for a server (2025-11-25). With
// ClientTaskOptions.Host set, a client declares in initialize that it
// runs sampling/createMessage and elicitation/create as tasks (for the
// handlers it has), and a server may send those requests with a task
// param: the client stores a task, answers with it at once, runs the
// handler detached from the request, and serves the server's tasks/get,
// tasks/result, tasks/list and tasks/cancel from its store, one runtime
// as a server's (see TaskOptions). The server of a session sees only the
// tasks it made on that session. 2026-07-28 has no requests from server
// to client, so no such tasks.

// errSessionEnded ends the hosted tasks of a session that closed: no one
// is left to read them.
var errSessionEnded = errors.New("mcp: the session ended")

// hostCapabilities returns the tasks capability of a client that hosts
// tasks, for initialize; nil when it does not.
func (c *Client) hostCapabilities() *TasksCapabilities {
	if c.host == nil {
		return nil
	}
	caps := &TasksCapabilities{List: &struct{}{}, Cancel: &struct{}{}, Requests: &TaskRequestsCapabilities{}}
	if c.opts.CreateMessageHandler != nil {
		caps.Requests.Sampling = &SamplingTaskCapabilities{CreateMessage: &struct{}{}}
	}
	if c.opts.ElicitationHandler != nil {
		caps.Requests.Elicitation = &ElicitationTaskCapabilities{Create: &struct{}{}}
	}
	return caps
}

// hostOwnerKey is the owner key of the tasks the session's server makes.
func (cs *ClientSession) hostOwnerKey() string {
	cs.hostOnce.Do(func() {
		b := make([]byte, 16)
		rand.Read(b)
		cs.hostOwner = cs.client.host.ownerKey("s\x00" + base64.RawURLEncoding.EncodeToString(b))
	})
	return cs.hostOwner
}

// hostedCreateMessage serves sampling/createMessage: as a task when the
// server asked for one and the client hosts tasks.
func (cs *ClientSession) hostedCreateMessage(ctx context.Context, req *CreateMessageRequest) (Result, error) {
	if t := req.Params.Task; t != nil && cs.client.host != nil && cs.client.opts.CreateMessageHandler != nil {
		return cs.startHosted(ctx, MethodSamplingCreateMessage, t, func(ctx context.Context) (Result, error) {
			return nilResult(cs.createMessage(ctx, req))
		})
	}
	return nilResult(cs.createMessage(ctx, req))
}

// hostedElicit serves elicitation/create: as a task when the server asked
// for one and the client hosts tasks.
func (cs *ClientSession) hostedElicit(ctx context.Context, req *ElicitRequest) (Result, error) {
	if t := req.Params.Task; t != nil && cs.client.host != nil && cs.client.opts.ElicitationHandler != nil {
		return cs.startHosted(ctx, MethodElicitationCreate, t, func(ctx context.Context) (Result, error) {
			return nilResult(cs.elicit(ctx, req))
		})
	}
	return nilResult(cs.elicit(ctx, req))
}

// nilResult returns res as a Result, nil when res is a nil pointer.
func nilResult[R interface {
	*P
	Result
}, P any](res R, err error) (Result, error) {
	if res == nil {
		return nil, err
	}
	return res, err
}

// startHosted stores a task of method for the session's server, runs
// handle detached from the request, and answers with the task.
func (cs *ClientSession) startHosted(ctx context.Context, method string, meta *TaskMetadata, handle func(context.Context) (Result, error)) (Result, error) {
	rt := cs.client.host
	ttl := rt.opts.TTL
	if meta.TTL != nil {
		if ms := *meta.TTL; ms < 0 || ms > int64(rt.opts.MaxTTL/time.Millisecond) {
			ttl = rt.opts.MaxTTL
		} else if ms > 0 {
			ttl = time.Duration(ms) * time.Millisecond
		}
	}
	if !rt.track() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the client is closing"}
	}
	now := time.Now()
	rec := &TaskRecord{
		Owner:           cs.hostOwnerKey(),
		Method:          method,
		ProtocolVersion: cs.ProtocolVersion(),
		Status:          TaskWorking,
		CreatedAt:       now,
		UpdatedAt:       now,
		TTL:             ttl,
		PollInterval:    rt.opts.PollInterval,
		Lease:           &TaskLease{Holder: rt.opts.ReplicaID, Expires: now.Add(rt.opts.Lease)},
	}
	if err := rt.store.Create(context.WithoutCancel(ctx), rec); err != nil {
		rt.wg.Done()
		var le *TaskLimitError
		if errors.As(err, &le) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Internal error: the client holds too many tasks (%s, %d)", le.Limit, le.Max)}
		}
		return nil, rt.storeError(method, err)
	}
	r := &taskRun{rt: rt, owner: rec.Owner, version: rec.ProtocolVersion, id: rec.ID, phase: phaseTask}
	r.handler.parent = context.WithoutCancel(ctx)
	r.ctx = &r.handler
	hctx, cancel := r.ctx, r.cancel
	rt.mu.Lock()
	rt.runs[r.id] = r
	rt.wg.Add(1)
	rt.mu.Unlock()
	go func() { defer rt.wg.Done(); r.monitor() }()
	go func() {
		rpclink.GrowStack()
		defer rt.wg.Done()
		defer cancel(nil)
		ended := make(chan struct{})
		defer close(ended)
		go func() {
			select {
			case <-cs.Done():
				cancel(errSessionEnded)
			case <-ended:
			}
		}()
		res, err := runHosted(rt, method, hctx, handle)
		r.finish(res, err)
	}()
	return &CreateTaskResult{Task: *rt.task2025(rec, rec.CreatedAt)}, nil
}

// runHosted runs a hosted task's handler, turning a panic into an
// internal error.
func runHosted(rt *taskRuntime, method string, ctx context.Context, handle func(context.Context) (Result, error)) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			rt.logger.Error("mcp: handler of a hosted task panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the handler failed"}
		}
	}()
	return handle(ctx)
}

// hostRequest checks a tasks/* request of the session's server and
// returns the client's runtime and the server's owner key.
func (cs *ClientSession) hostRequest(method, id string) (*taskRuntime, string, error) {
	rt := cs.client.host
	if rt == nil {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " (the client runs no tasks)"}
	}
	if method != MethodTasksList {
		if err := checkTaskID(id); err != nil {
			return nil, "", err
		}
	}
	return rt, cs.hostOwnerKey(), nil
}

func (cs *ClientSession) hostGetTask(ctx context.Context, req *ClientRequest[*GetTaskParams]) (*Task, error) {
	rt, owner, err := cs.hostRequest(MethodTasksGet, req.Params.TaskID)
	if err != nil {
		return nil, err
	}
	rec, err := rt.store.Get(ctx, owner, req.Params.TaskID)
	if err != nil {
		return nil, rt.storeError(MethodTasksGet, err)
	}
	return rt.task2025(rec, time.Now()), nil
}

func (cs *ClientSession) hostTaskResult(ctx context.Context, req *ClientRequest[*TaskPayloadParams]) (Result, error) {
	rt, owner, err := cs.hostRequest(MethodTasksResult, req.Params.TaskID)
	if err != nil {
		return nil, err
	}
	return rt.awaitPayload(ctx, owner, req.Params.TaskID)
}

func (cs *ClientSession) hostListTasks(ctx context.Context, req *ClientRequest[*ListTasksParams]) (*ListTasksResult, error) {
	rt, owner, err := cs.hostRequest(MethodTasksList, "")
	if err != nil {
		return nil, err
	}
	return rt.list(ctx, owner, req.Params.Cursor)
}

func (cs *ClientSession) hostCancelTask(ctx context.Context, req *ClientRequest[*CancelTaskParams]) (*Task, error) {
	rt, owner, err := cs.hostRequest(MethodTasksCancel, req.Params.TaskID)
	if err != nil {
		return nil, err
	}
	rec, ended, err := rt.cancelTask(ctx, owner, req.Params.TaskID)
	if err != nil {
		return nil, rt.storeError(MethodTasksCancel, err)
	}
	if ended {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: the task has already ended"}
	}
	return rt.task2025(rec, time.Now()), nil
}

// Close ends the tasks the client runs for servers (see
// ClientTaskOptions.Host): their handlers' contexts are cancelled, and
// those still running fail; it waits for them, and closes the task store
// the client made. Sessions are not closed. Without Host it does nothing.
func (c *Client) Close() error {
	if c.host == nil {
		return nil
	}
	return c.host.close(context.Background())
}
