package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Client-hosted tasks (2025-11-25): a server may ask a client that
// declared it (capabilities.tasks.requests.sampling.createMessage,
// .elicitation.create) to run a sampling or elicitation request as a task
// of its own. A handler asks by setting Task in the params of
// CreateMessage or Elicit; the session sends the task-augmented request,
// polls the client's tasks/get at the interval the client suggests, and
// returns the result of tasks/result, so the handler sees the same result
// as without a task. Where the client did not declare the capability, or
// on 2026-07-28, the request is sent without the task.

// Bounds of the polling of a client-hosted task.
const (
	minClientTaskPoll     = 100 * time.Millisecond
	maxClientTaskPoll     = 30 * time.Second
	defaultClientTaskPoll = time.Second
)

// clientHostsTask reports whether the handshake-era client declared that
// it runs method as a task.
func (ss *ServerSession) clientHostsTask(method string) bool {
	ss.mu.Lock()
	caps := ss.clientCaps
	ss.mu.Unlock()
	if caps == nil || caps.Tasks == nil || caps.Tasks.Requests == nil {
		return false
	}
	r := caps.Tasks.Requests
	switch method {
	case MethodSamplingCreateMessage:
		return r.Sampling != nil && r.Sampling.CreateMessage != nil
	case MethodElicitationCreate:
		return r.Elicitation != nil && r.Elicitation.Create != nil
	}
	return false
}

// requestAsTask sends a task-augmented request to the client and waits
// for the task's result, decoded into result.
func (ss *ServerSession) requestAsTask(ctx context.Context, method string, params Params, result Result) error {
	// The task-augmented request itself is not abandoned with ctx: a
	// client answers it at once, and only its answer names the task to
	// cancel (a task made by a request we gave up on would run on).
	created := &CreateTaskResult{}
	ictx, icancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	err := ss.request(ictx, method, params, created)
	icancel()
	if err != nil {
		return err
	}
	t := &created.Task
	if t.TaskID == "" {
		return fmt.Errorf("mcp: %s: the client's task has no taskId", method)
	}
	if !t.Status.Valid() {
		return fmt.Errorf("mcp: %s: the client's task has an unknown status %q", method, t.Status)
	}
	id := t.TaskID
	ended := false
	defer func() {
		if !ended {
			// Abandoned (ctx ended, or the client misbehaved): tell the
			// client, without waiting long.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			ss.call(ss.withRelayID(cctx), MethodTasksCancel, &CancelTaskParams{TaskID: id}, &Task{})
		}
	}()
	if err := context.Cause(ctx); err != nil {
		return err // abandoned meanwhile: the deferred cancel tells the client
	}
	for !t.Status.Ended() && t.Status != TaskInputRequired {
		interval := defaultClientTaskPoll
		if t.PollInterval != nil {
			interval = min(max(time.Duration(*t.PollInterval)*time.Millisecond, minClientTaskPoll), maxClientTaskPoll)
		}
		if !sleepCtx(ctx, interval) {
			return context.Cause(ctx)
		}
		next := &Task{}
		if err := ss.request(ctx, MethodTasksGet, &GetTaskParams{TaskID: id}, next); err != nil {
			return err
		}
		if !next.Status.Valid() {
			return fmt.Errorf("mcp: %s: the client's task %s has an unknown status %q", method, id, next.Status)
		}
		t = next
	}
	// Terminal, or waiting for input (which tasks/result delivers):
	// tasks/result blocks until the end and answers as the request would
	// have.
	err = ss.request(ctx, MethodTasksResult, &TaskPayloadParams{TaskID: id}, result)
	var we *jsonrpc.Error
	if err == nil || errors.As(err, &we) {
		ended = true
	}
	return err
}

// withoutTask returns params without its Task (a copy, when it had one).
func withoutTask(params Params) Params {
	switch p := params.(type) {
	case *CreateMessageParams:
		if p.Task != nil {
			q := *p
			q.Task = nil
			return &q
		}
	case *ElicitParams:
		if p.Task != nil {
			q := *p
			q.Task = nil
			return &q
		}
	}
	return params
}

// taskOf returns the Task member of the params of a request the server
// sends, or nil.
func taskOf(params Params) *TaskMetadata {
	switch p := params.(type) {
	case *CreateMessageParams:
		return p.Task
	case *ElicitParams:
		return p.Task
	}
	return nil
}

// requestMaybeTask sends a sampling or elicitation request of a
// handshake-era handler: as a client-hosted task when the handler asked
// for one and the client runs such tasks, else as an ordinary request.
func (ss *ServerSession) requestMaybeTask(ctx context.Context, method string, params Params, result Result) error {
	if taskOf(params) != nil {
		if ss.clientHostsTask(method) {
			return ss.requestAsTask(ctx, method, params, result)
		}
		params = withoutTask(params)
	}
	return ss.request(ctx, method, params, result)
}
