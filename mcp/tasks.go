package mcp

import (
	"encoding/json"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file holds the wire types of tasks in both of their forms: the
// 2025-11-25 utility (a nested {task} in the answer to a task-augmented
// request, ttl and pollInterval, tasks/result and tasks/list) and the
// 2026-07-28 extension [TasksExtensionID] (a flat result with resultType
// "task", ttlMs and pollIntervalMs, a tasks/get that inlines the outcome,
// tasks/update). Where the two forms disagree on a type, the 2025 one
// carries the schema's name ([Task], [CreateTaskResult]) and the 2026 one
// is [DetailedTask].

// TasksExtensionID is the identifier of the tasks extension of 2026-07-28,
// the key under which servers advertise it and requests declare it.
const TasksExtensionID = "io.modelcontextprotocol/tasks"

// ResultTypeTask marks a 2026-07-28 result that is a task handle, a
// [DetailedTask] with no outcome: the request runs on, and the client
// polls tasks/get (or listens) for its end.
const ResultTypeTask ResultType = "task"

// Method and notification names of tasks.
const (
	// MethodTasksGet reads a task's state (both forms); on 2026-07-28 the
	// answer inlines its result, error or input requests.
	MethodTasksGet = "tasks/get"
	// MethodTasksUpdate answers a task's input requests (2026-07-28).
	MethodTasksUpdate = "tasks/update"
	// MethodTasksCancel asks for a task's cancellation (both forms).
	MethodTasksCancel = "tasks/cancel"
	// MethodTasksResult waits for a task's end and answers with its
	// result (2025-11-25 only).
	MethodTasksResult = "tasks/result"
	// MethodTasksList lists the caller's tasks (2025-11-25 only).
	MethodTasksList = "tasks/list"
	// NotificationTasks carries a [DetailedTask] whose status changed, to
	// a client that listens for its ID (2026-07-28).
	NotificationTasks = "notifications/tasks"
	// NotificationTasksStatus carries a [Task] whose status changed
	// (2025-11-25).
	NotificationTasksStatus = "notifications/tasks/status"
)

// MetaRelatedTask is the _meta key of [RelatedTaskMetadata] (2025-11-25):
// it ties a message (a tasks/result answer, a server request asked on a
// task's behalf) to a task.
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// Task support of a tool, the values of ToolExecution.TaskSupport.
const (
	// TaskForbidden: the tool never runs as a task (the default, as an
	// empty TaskSupport).
	TaskForbidden = "forbidden"
	// TaskOptional: the tool runs as a task when the client asks for one,
	// synchronously otherwise.
	TaskOptional = "optional"
	// TaskRequired: the tool runs only as a task.
	TaskRequired = "required"
)

// TaskStatus is the state of a task.
type TaskStatus string

// Task statuses. A task starts working, may move between working and
// input_required, and ends completed, failed or cancelled, for good.
const (
	// TaskWorking: the request is being processed.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the task waits for input from the client
	// (elicitation, sampling, roots).
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the request ended with a result. On 2026-07-28 a
	// tool result with isError set ends a task completed; on 2025-11-25
	// it ends it failed.
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the request ended with a JSON-RPC error (or, on
	// 2025-11-25, a tool result with isError set).
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the task was cancelled before it ended.
	TaskCancelled TaskStatus = "cancelled"
)

// Ended reports whether s is a final status: completed, failed or
// cancelled.
func (s TaskStatus) Ended() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Valid reports whether s is one of the five statuses.
func (s TaskStatus) Valid() bool {
	return s == TaskWorking || s == TaskInputRequired || s.Ended()
}

// TaskMetadata is the task member of a task-augmented request's params
// (2025-11-25): the client asks for the request to run as a task.
type TaskMetadata struct {
	// TTL is how long, in milliseconds from creation, the client wants the
	// task kept. Optional; the server may clamp it.
	TTL *int64 `json:"ttl,omitzero"`
}

// RelatedTaskMetadata is the value of the [MetaRelatedTask] _meta key
// (2025-11-25).
type RelatedTaskMetadata struct {
	// TaskID is the task the message belongs to. Required.
	TaskID string `json:"taskId"`
}

// Task is a task in the 2025-11-25 form. It is also, with its Meta, the
// result of tasks/get and tasks/cancel and the params of
// notifications/tasks/status of that revision.
type Task struct {
	// Meta is the _meta member of the result or notification the task is
	// sent as. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// TaskID identifies the task. Required.
	TaskID string `json:"taskId"`
	// Status is the task's current status. Required.
	Status TaskStatus `json:"status"`
	// StatusMessage describes the current state for people. Optional.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt is when the task was created. Required.
	CreatedAt time.Time `json:"createdAt"`
	// LastUpdatedAt is when the task last changed. Required.
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	// TTL is how long, in milliseconds from creation, the task is kept;
	// nil (sent as null) means without limit. Required.
	TTL *int64 `json:"ttl"`
	// PollInterval suggests, in milliseconds, how often to poll.
	// Optional.
	PollInterval *int64 `json:"pollInterval,omitzero"`
}

// CreateTaskResult is the answer to a task-augmented request
// (2025-11-25): the request runs on as Task.
type CreateTaskResult struct {
	// Meta is the result's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Task is the task created. Required.
	Task Task `json:"task"`
}

// GetTaskParams are the params of tasks/get (both forms).
type GetTaskParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// TaskID is the task to read. Required.
	TaskID string `json:"taskId"`
}

// CancelTaskParams are the params of tasks/cancel (both forms). Its
// answer is a [Task] on 2025-11-25 and an [EmptyResult] with resultType
// "complete" on 2026-07-28.
type CancelTaskParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// TaskID is the task to cancel. Required.
	TaskID string `json:"taskId"`
}

// TaskPayloadParams are the params of tasks/result (2025-11-25), whose
// answer is the result of the task's request, tagged with
// [MetaRelatedTask].
type TaskPayloadParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// TaskID is the task whose result to wait for. Required.
	TaskID string `json:"taskId"`
}

// ListTasksParams are the params of tasks/list (2025-11-25).
type ListTasksParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the NextCursor of the previous page. Optional; empty asks
	// for the first page.
	Cursor string `json:"cursor,omitempty"`
}

// ListTasksResult is the answer to tasks/list (2025-11-25).
type ListTasksResult struct {
	// Meta is the result's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// Tasks are the caller's tasks on this page. Required.
	Tasks []*Task `json:"tasks"`
	// NextCursor, when not empty, asks for the next page. Optional.
	NextCursor string `json:"nextCursor,omitempty"`
}

// DetailedTask is a task in the 2026-07-28 form. With ResultType
// [ResultTypeTask] and no outcome it is the flat CreateTaskResult a
// server answers a request it runs as a task with; with ResultType
// [ResultTypeComplete] it is the result of tasks/get; without ResultType
// it is the params of notifications/tasks. Which of Result, Error and
// InputRequests is present follows Status: Result when completed, Error
// when failed, InputRequests when input_required.
type DetailedTask struct {
	// Meta is the _meta member of the result or notification. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// ResultType is [ResultTypeTask] in a CreateTaskResult and
	// [ResultTypeComplete] in the result of tasks/get; empty in a
	// notification.
	ResultType ResultType `json:"resultType,omitempty"`
	// TaskID identifies the task. Required.
	TaskID string `json:"taskId"`
	// Status is the task's current status. Required.
	Status TaskStatus `json:"status"`
	// StatusMessage describes the current state for people (a server
	// puts progress here). Optional.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt is when the task was created. Required.
	CreatedAt time.Time `json:"createdAt"`
	// LastUpdatedAt is when the task last changed. Required.
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	// TTLMs is how long, in milliseconds from creation, the task is
	// kept; nil (sent as null) means without limit. It may change over
	// the task's life. Required.
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs suggests, in milliseconds, how often to poll.
	// Optional.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitzero"`
	// Result is the result of the task's request, when completed (for
	// tools/call, a CallToolResult).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error the request failed with, when failed.
	Error *jsonrpc.Error `json:"error,omitempty"`
	// InputRequests are the requests the client must fulfil, by key,
	// when input_required; the client answers them with tasks/update.
	// Keys are never reused within a task.
	InputRequests map[string]*InputRequest `json:"inputRequests,omitempty"`
}

// UpdateTaskParams are the params of tasks/update (2026-07-28), whose
// answer is an [EmptyResult] with resultType "complete".
type UpdateTaskParams struct {
	// Meta is the request's _meta member. Optional.
	Meta Meta `json:"_meta,omitzero"`
	// TaskID is the task to update. Required.
	TaskID string `json:"taskId"`
	// InputResponses answer, by key, input requests the task has
	// outstanding; each value is the client's result for that request.
	// Required.
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// TasksCapabilities is the tasks capability of 2025-11-25, which servers
// and clients declare in the handshake (ServerCapabilities.Tasks and
// ClientCapabilities.Tasks). A server fills Tools in
// Requests, a client Sampling and Elicitation.
type TasksCapabilities struct {
	// List, when non-nil, declares that tasks/list is served.
	List *struct{} `json:"list,omitzero"`
	// Cancel, when non-nil, declares that tasks/cancel is served.
	Cancel *struct{} `json:"cancel,omitzero"`
	// Requests says which requests may be task-augmented. Optional.
	Requests *TaskRequestsCapabilities `json:"requests,omitzero"`
}

// TaskRequestsCapabilities lists the requests that may be task-augmented
// (2025-11-25).
type TaskRequestsCapabilities struct {
	// Tools is the server's: tools/call may be task-augmented.
	Tools *ToolTaskCapabilities `json:"tools,omitzero"`
	// Sampling is the client's: sampling/createMessage may be
	// task-augmented.
	Sampling *SamplingTaskCapabilities `json:"sampling,omitzero"`
	// Elicitation is the client's: elicitation/create may be
	// task-augmented.
	Elicitation *ElicitationTaskCapabilities `json:"elicitation,omitzero"`
}

// ToolTaskCapabilities declares which tool requests may be
// task-augmented.
type ToolTaskCapabilities struct {
	// Call, when non-nil: tools/call.
	Call *struct{} `json:"call,omitzero"`
}

// SamplingTaskCapabilities declares which sampling requests may be
// task-augmented.
type SamplingTaskCapabilities struct {
	// CreateMessage, when non-nil: sampling/createMessage.
	CreateMessage *struct{} `json:"createMessage,omitzero"`
}

// ElicitationTaskCapabilities declares which elicitation requests may be
// task-augmented.
type ElicitationTaskCapabilities struct {
	// Create, when non-nil: elicitation/create.
	Create *struct{} `json:"create,omitzero"`
}

func (p *GetTaskParams) meta() *Meta     { return &p.Meta }
func (p *CancelTaskParams) meta() *Meta  { return &p.Meta }
func (p *TaskPayloadParams) meta() *Meta { return &p.Meta }
func (p *ListTasksParams) meta() *Meta   { return &p.Meta }
func (p *UpdateTaskParams) meta() *Meta  { return &p.Meta }
func (p *Task) meta() *Meta              { return &p.Meta } // notifications/tasks/status
func (p *DetailedTask) meta() *Meta      { return &p.Meta } // notifications/tasks

func (r *DetailedTask) resultMeta() *Meta                  { return &r.Meta }
func (r *DetailedTask) resultType() *ResultType            { return &r.ResultType }
func (r *DetailedTask) cacheHints() (**int64, *CacheScope) { return nil, nil }

// The results of 2025-11-25 only have no resultType; theirs is never
// written.
func (r *Task) resultMeta() *Meta                              { return &r.Meta }
func (r *Task) resultType() *ResultType                        { return new(ResultType) }
func (r *Task) cacheHints() (**int64, *CacheScope)             { return nil, nil }
func (r *CreateTaskResult) resultMeta() *Meta                  { return &r.Meta }
func (r *CreateTaskResult) resultType() *ResultType            { return new(ResultType) }
func (r *CreateTaskResult) cacheHints() (**int64, *CacheScope) { return nil, nil }
func (r *ListTasksResult) resultMeta() *Meta                   { return &r.Meta }
func (r *ListTasksResult) resultType() *ResultType             { return new(ResultType) }
func (r *ListTasksResult) cacheHints() (**int64, *CacheScope)  { return nil, nil }
