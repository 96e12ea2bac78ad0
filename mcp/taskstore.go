package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"
)

// TaskStore keeps the records of tasks: what a server needs to answer
// tasks/get, tasks/update, tasks/cancel (and on 2025-11-25 tasks/result
// and tasks/list) for a task, from any replica and after a restart.
//
// Every method takes the owner key of the caller (see TaskRecord.Owner);
// a task of another owner is [ErrTaskNotFound], as is an unknown task and
// an ended task whose TTL has passed. Records returned are the caller's
// to change: a store keeps none of them, and never changes the byte slices
// a record holds (it copies the maps).
//
// Implementations must be safe for concurrent use. [NewMemoryTaskStore]
// is the default; [NewFileTaskStore] keeps tasks in a directory; other
// durable stores show they fit by passing mcptest.TaskStoreSuite.
type TaskStore interface {
	// Create stores a new task. When rec.ID is empty the store picks a
	// random ID of 128 bits; an ID already stored is [ErrTaskConflict].
	// The store sets Version to 1 and fills CreatedAt and UpdatedAt when
	// zero. At one of its limits it stores nothing and returns a
	// [*TaskLimitError]. The record is durable when Create returns.
	Create(ctx context.Context, rec *TaskRecord) error
	// Get returns the task id of owner. A task whose runner's lease
	// expired before it ended (see TaskRecord.Lease) reads as failed with
	// the status message [TaskMessageServerRestarted].
	Get(ctx context.Context, owner, id string) (*TaskRecord, error)
	// Update replaces the stored task rec.ID of rec.Owner with rec if the
	// stored Version equals rec.Version, and else returns
	// [ErrTaskConflict] (compare and swap): the caller reads the record
	// again and retries. The status of an ended task cannot change
	// ([ErrTaskEnded]); its other fields can. On success it increments
	// rec.Version and sets rec.UpdatedAt, and rec.EndedAt when the status
	// ends and EndedAt is zero (CreatedAt and a set EndedAt never change).
	Update(ctx context.Context, rec *TaskRecord) error
	// Delete removes the task id of owner.
	Delete(ctx context.Context, owner, id string) error
	// List returns a page of the unexpired tasks of owner, ordered by
	// CreatedAt then ID, and the cursor of the next page ("" after the
	// last). Pages are stable: no task is listed twice, none that exists
	// through the whole listing is missed, and one created during it with
	// a later CreatedAt comes on a later page. A cursor the store did not
	// make is [ErrTaskCursor]. (Only 2025-11-25 has tasks/list.)
	List(ctx context.Context, owner, cursor string) (recs []*TaskRecord, next string, err error)
}

// TaskWatcher is implemented by a [TaskStore] that can tell a waiter that
// a task changed; a server polls stores that do not implement it.
type TaskWatcher interface {
	// Watch blocks until the task id of owner has a version other than
	// version (it changed or is gone), or ctx ends (then it returns
	// ctx's error). It returns [ErrTaskNotFound] at once for an unknown
	// task.
	Watch(ctx context.Context, owner, id string, version int64) error
}

// Errors of task stores.
var (
	// ErrTaskNotFound: no such task for this owner (unknown, of another
	// owner, deleted, or ended and expired).
	ErrTaskNotFound = errors.New("mcp: task not found")
	// ErrTaskConflict: an Update whose record version is not the stored
	// one, or a Create of an ID in use.
	ErrTaskConflict = errors.New("mcp: task record changed concurrently")
	// ErrTaskEnded: an Update that changes the status of a task that
	// has ended; a task ends once, for good.
	ErrTaskEnded = errors.New("mcp: task already ended")
	// ErrTaskCursor: a List cursor the store did not make.
	ErrTaskCursor = errors.New("mcp: invalid task list cursor")
	// ErrTaskStoreClosed: the store was closed.
	ErrTaskStoreClosed = errors.New("mcp: task store closed")
)

// TaskLimitError is the error of a Create (or an Update that grows a
// task's payload) at one of a store's bounds. The store holds unexpired
// data until it expires and never evicts it to make room.
type TaskLimitError struct {
	// Limit names the bound: "MaxTasks", "MaxUnfinishedPerOwner" or
	// "MaxPayloadBytes" (the option that sets it).
	Limit string
	// Max is the bound's value.
	Max int64
}

// Error implements error.
func (e *TaskLimitError) Error() string {
	return fmt.Sprintf("mcp: task store full: %s (%d) reached", e.Limit, e.Max)
}

// TaskMessageServerRestarted is the status message of a task that a store
// reads as failed because its runner's lease expired before the task
// ended: the process running it died (or lost its store), so the task
// will not end otherwise.
const TaskMessageServerRestarted = "server restarted"

// TaskRecordSchema is the schema version of the records this package
// writes; TaskRecord.Schema holds the version a record was written with.
const TaskRecordSchema = 1

// TaskRecord is the stored state of a task. It is serialised as JSON
// (MarshalJSON and UnmarshalJSON keep members this version does not know
// in Unknown, so that a record written by a newer version survives an
// update by an older one). Durations are stored in milliseconds.
type TaskRecord struct {
	// Schema is the schema version the record was written with; zero is
	// read as [TaskRecordSchema].
	Schema int
	// ID identifies the task; IDs are at most 256 bytes of letters,
	// digits, '-' and '_'.
	ID string
	// Version counts the record's writes; Update compares it.
	Version int64
	// Owner is an opaque key of who may see the task: a server stores a
	// keyed hash of the authenticated principal or the session ID.
	Owner string
	// Method is the method of the request that runs as the task, as
	// "tools/call". Optional.
	Method string
	// ProtocolVersion is the revision of the request that created the
	// task, which decides its wire form. Optional.
	ProtocolVersion string
	// Status is the task's status.
	Status TaskStatus
	// StatusMessage describes the state for people. Optional.
	StatusMessage string
	// CreatedAt, UpdatedAt and EndedAt are when the task was created,
	// last changed and ended (zero while running).
	CreatedAt, UpdatedAt, EndedAt time.Time
	// TTL is how long the task is kept after it ended; zero means the
	// store's default (an hour for the stores of this package). A task
	// that has not ended never expires.
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients. Zero
	// means none.
	PollInterval time.Duration
	// Result is the result of the request (raw JSON) once completed.
	Result json.RawMessage
	// Error is the JSON-RPC error object (raw JSON) once failed.
	Error json.RawMessage
	// Inputs are the outstanding input requests, by key: each a raw
	// InputRequest.
	Inputs map[string]json.RawMessage
	// Answers are the input responses received and not yet consumed by
	// the runner, by key.
	Answers map[string]json.RawMessage
	// InputKeys counts the input keys issued, so that keys are never
	// reused within the task.
	InputKeys int64
	// Cancel is set when cancellation was asked for; the runner ends the
	// task cancelled.
	Cancel bool
	// Lease is held by the runner of an unfinished task. Optional.
	Lease *TaskLease
	// Unknown keeps the members of the stored JSON this version does not
	// know, raw, to write them back unchanged.
	Unknown map[string]json.RawMessage
}

// TaskLease says which process runs a task, until when. The runner renews
// it well before Expires; when it expires on a task that has not ended,
// stores read the task as failed ([TaskMessageServerRestarted]).
type TaskLease struct {
	// Holder identifies the runner (a process or replica ID).
	Holder string `json:"holder"`
	// Expires is when the lease ends unless renewed.
	Expires time.Time `json:"expires"`
}

// Clone returns a copy of r that shares no maps with r (byte slices are
// shared: they are never changed in place).
func (r *TaskRecord) Clone() *TaskRecord {
	c := *r
	c.Inputs = maps.Clone(r.Inputs)
	c.Answers = maps.Clone(r.Answers)
	c.Unknown = maps.Clone(r.Unknown)
	if r.Lease != nil {
		l := *r.Lease
		c.Lease = &l
	}
	return &c
}

// LeaseExpired reports whether, at now, r has not ended and its runner's
// lease has expired.
func (r *TaskRecord) LeaseExpired(now time.Time) bool {
	return !r.Status.Ended() && r.Lease != nil && !now.Before(r.Lease.Expires)
}

// ExpiresAt returns when r expires, after its end plus its TTL (or
// defaultTTL, the store's, when it has none), and false while r has not
// ended. For authors of task stores.
func (r *TaskRecord) ExpiresAt(defaultTTL time.Duration) (time.Time, bool) {
	if !r.Status.Ended() {
		return time.Time{}, false
	}
	ttl := r.TTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	end := r.EndedAt
	if end.IsZero() {
		end = r.UpdatedAt
	}
	return end.Add(ttl), true
}

// PayloadBytes returns the size of r's raw outcome, inputs and answers:
// what [TaskStoreOptions].MaxPayloadBytes bounds. For authors of task
// stores.
func (r *TaskRecord) PayloadBytes() int64 {
	n := int64(len(r.Result) + len(r.Error))
	for k, v := range r.Inputs {
		n += int64(len(k) + len(v))
	}
	for k, v := range r.Answers {
		n += int64(len(k) + len(v))
	}
	return n
}

// taskRecordJSON is the stored form of a TaskRecord.
type taskRecordJSON struct {
	Schema          int                        `json:"schema"`
	ID              string                     `json:"id"`
	Version         int64                      `json:"version"`
	Owner           string                     `json:"owner"`
	Method          string                     `json:"method,omitempty"`
	ProtocolVersion string                     `json:"protocolVersion,omitempty"`
	Status          TaskStatus                 `json:"status"`
	StatusMessage   string                     `json:"statusMessage,omitempty"`
	CreatedAt       time.Time                  `json:"createdAt"`
	UpdatedAt       time.Time                  `json:"updatedAt"`
	EndedAt         *time.Time                 `json:"endedAt,omitempty"`
	TTLMs           int64                      `json:"ttlMs,omitempty"`
	PollIntervalMs  int64                      `json:"pollIntervalMs,omitempty"`
	Result          json.RawMessage            `json:"result,omitempty"`
	Error           json.RawMessage            `json:"error,omitempty"`
	Inputs          map[string]json.RawMessage `json:"inputs,omitempty"`
	Answers         map[string]json.RawMessage `json:"answers,omitempty"`
	InputKeys       int64                      `json:"inputKeys,omitempty"`
	Cancel          bool                       `json:"cancel,omitempty"`
	Lease           *TaskLease                 `json:"lease,omitempty"`
}

// taskRecordMembers are the JSON members of taskRecordJSON.
var taskRecordMembers = map[string]bool{
	"schema": true, "id": true, "version": true, "owner": true, "method": true,
	"protocolVersion": true, "status": true, "statusMessage": true, "createdAt": true,
	"updatedAt": true, "endedAt": true, "ttlMs": true, "pollIntervalMs": true,
	"result": true, "error": true, "inputs": true, "answers": true, "inputKeys": true,
	"cancel": true, "lease": true,
}

// MarshalJSON encodes r in its stored form, with its Unknown members.
func (r TaskRecord) MarshalJSON() ([]byte, error) {
	w := taskRecordJSON{
		Schema: r.Schema, ID: r.ID, Version: r.Version, Owner: r.Owner, Method: r.Method,
		ProtocolVersion: r.ProtocolVersion, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		TTLMs: r.TTL.Milliseconds(), PollIntervalMs: r.PollInterval.Milliseconds(),
		Result: r.Result, Error: r.Error, Inputs: r.Inputs, Answers: r.Answers,
		InputKeys: r.InputKeys, Cancel: r.Cancel, Lease: r.Lease,
	}
	if w.Schema == 0 {
		w.Schema = TaskRecordSchema
	}
	if !r.EndedAt.IsZero() {
		w.EndedAt = &r.EndedAt
	}
	data, err := json.Marshal(&w)
	if err != nil || len(r.Unknown) == 0 {
		return data, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for k, v := range r.Unknown {
		if !taskRecordMembers[k] {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// UnmarshalJSON decodes a stored record, keeping the members it does not
// know in r.Unknown.
func (r *TaskRecord) UnmarshalJSON(data []byte) error {
	var w taskRecordJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("mcp: task record: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return fmt.Errorf("mcp: task record: %w", err)
	}
	var unknown map[string]json.RawMessage
	for k, v := range all {
		if !taskRecordMembers[k] {
			if unknown == nil {
				unknown = map[string]json.RawMessage{}
			}
			unknown[k] = v
		}
	}
	*r = TaskRecord{
		Schema: w.Schema, ID: w.ID, Version: w.Version, Owner: w.Owner, Method: w.Method,
		ProtocolVersion: w.ProtocolVersion, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
		TTL: time.Duration(w.TTLMs) * time.Millisecond, PollInterval: time.Duration(w.PollIntervalMs) * time.Millisecond,
		Result: w.Result, Error: w.Error, Inputs: w.Inputs, Answers: w.Answers,
		InputKeys: w.InputKeys, Cancel: w.Cancel, Lease: w.Lease, Unknown: unknown,
	}
	if r.Schema == 0 {
		r.Schema = TaskRecordSchema
	}
	if w.EndedAt != nil {
		r.EndedAt = *w.EndedAt
	}
	return nil
}

// ValidTaskID reports whether id is a task ID the stores of this package
// accept: 1 to 256 bytes of letters, digits, '-' and '_' (so that it is
// safe as a file name or a key). For authors of task stores.
func ValidTaskID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
