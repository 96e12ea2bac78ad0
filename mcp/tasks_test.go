package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

func i64(n int64) *int64 { return &n }

// TestTaskWireTypes: each wire type of tasks, in both forms, encodes (with
// encoding/json and with the SDK's engine) to JSON that the official
// schema of its form accepts and that equals the spec's example where the
// spec has one, and decodes back to the same value.
func TestTaskWireTypes(t *testing.T) {
	created := time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)
	updated := time.Date(2025, 11, 25, 10, 50, 0, 0, time.UTC)
	const id = "786512e2-9e0d-44bd-8f29-789f320fe840"
	const ext, rev2025 = "ext-tasks", Version20251125
	// request wraps params in a JSON-RPC request, for the schema's
	// definitions of whole requests.
	request := func(method string) func([]byte) []byte {
		return func(params []byte) []byte {
			return []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + string(params) + `}`)
		}
	}
	tests := []struct {
		name   string
		schema string              // the schema: ext-tasks (2026-07-28) or a revision
		def    string              // its definition
		wrap   func([]byte) []byte // makes the value's JSON what def describes
		value  any                 // a pointer to the value
		want   string              // the spec's example, when it has one
	}{
		{name: "2026 CreateTaskResult", schema: ext, def: "CreateTaskResult",
			value: &DetailedTask{ResultType: ResultTypeTask, TaskID: id, Status: TaskWorking, StatusMessage: "The operation is now in progress.",
				CreatedAt: created, LastUpdatedAt: created.Add(10 * time.Minute), TTLMs: i64(60000), PollIntervalMs: i64(5000)},
			want: `{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"The operation is now in progress.","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}`},
		{name: "2026 GetTaskResult working", schema: ext, def: "GetTaskResult",
			value: &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskWorking, CreatedAt: created, LastUpdatedAt: updated, TTLMs: i64(3600000), PollIntervalMs: i64(5000)},
			want:  `{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000}`},
		{name: "2026 GetTaskResult input_required", schema: ext, def: "GetTaskResult",
			value: &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskInputRequired, CreatedAt: created, LastUpdatedAt: updated, TTLMs: i64(3600000), PollIntervalMs: i64(5000),
				InputRequests: map[string]*InputRequest{"name": {Method: MethodElicitationCreate,
					Params: json.RawMessage(`{"mode":"form","message":"Please enter your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)}}},
			want: `{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"input_required","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Please enter your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}}`},
		{name: "2026 GetTaskResult completed", schema: ext, def: "GetTaskResult",
			value: &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskCompleted, CreatedAt: created, LastUpdatedAt: updated, TTLMs: i64(3600000), PollIntervalMs: i64(5000),
				Result: json.RawMessage(`{"content":[{"type":"text","text":"Hello, Luca!"}],"isError":false}`)},
			want: `{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"completed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,"result":{"content":[{"type":"text","text":"Hello, Luca!"}],"isError":false}}`},
		{name: "2026 GetTaskResult failed", schema: ext, def: "GetTaskResult",
			value: &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskFailed, StatusMessage: "Tool execution failed: API rate limit exceeded",
				CreatedAt: created, LastUpdatedAt: updated, TTLMs: i64(3600000), Error: &jsonrpc.Error{Code: -32603, Message: "API rate limit exceeded"}}},
		{name: "2026 GetTaskResult cancelled, unlimited TTL", schema: ext, def: "GetTaskResult",
			value: &DetailedTask{ResultType: ResultTypeComplete, TaskID: id, Status: TaskCancelled, CreatedAt: created, LastUpdatedAt: updated},
			want:  `{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"cancelled","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":null}`},
		{name: "2026 TaskStatusNotificationParams", schema: ext, def: "TaskStatusNotificationParams",
			value: &DetailedTask{TaskID: id, Status: TaskCompleted, CreatedAt: created, LastUpdatedAt: updated, TTLMs: i64(60000), PollIntervalMs: i64(5000),
				Result: json.RawMessage(`{"content":[{"type":"text","text":"Operation completed successfully."}],"isError":false}`)},
			want: `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"completed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":60000,"pollIntervalMs":5000,"result":{"content":[{"type":"text","text":"Operation completed successfully."}],"isError":false}}`},
		{name: "2026 GetTaskRequest", schema: ext, def: "GetTaskRequest", wrap: request(MethodTasksGet),
			value: &GetTaskParams{TaskID: id}, want: `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}`},
		{name: "2026 UpdateTaskRequest", schema: ext, def: "UpdateTaskRequest", wrap: request(MethodTasksUpdate),
			value: &UpdateTaskParams{TaskID: id, InputResponses: map[string]json.RawMessage{"name": json.RawMessage(`{"action":"accept","content":{"input":"Luca"}}`)}},
			want:  `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","inputResponses":{"name":{"action":"accept","content":{"input":"Luca"}}}}`},
		{name: "2026 UpdateTaskResult", schema: ext, def: "UpdateTaskResult",
			value: &EmptyResult{ResultType: ResultTypeComplete}, want: `{"resultType":"complete"}`},
		{name: "2026 CancelTaskRequest", schema: ext, def: "CancelTaskRequest", wrap: request(MethodTasksCancel),
			value: &CancelTaskParams{TaskID: id}},
		{name: "2026 CancelTaskResult", schema: ext, def: "CancelTaskResult",
			value: &EmptyResult{ResultType: ResultTypeComplete}},
		{name: "2026 TaskSubscriptionNotifications", schema: ext, def: "TaskSubscriptionNotifications",
			value: &SubscriptionFilter{TaskIDs: []string{id, "b"}}},

		{name: "2025 Task", schema: rev2025, def: "Task",
			value: &Task{TaskID: id, Status: TaskWorking, StatusMessage: "busy", CreatedAt: created, LastUpdatedAt: updated, TTL: i64(60000), PollInterval: i64(5000)},
			want:  `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"busy","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttl":60000,"pollInterval":5000}`},
		{name: "2025 CreateTaskResult", schema: rev2025, def: "CreateTaskResult",
			value: &CreateTaskResult{Task: Task{TaskID: id, Status: TaskWorking, CreatedAt: created, LastUpdatedAt: created}},
			want:  `{"task":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}}`},
		{name: "2025 GetTaskResult", schema: rev2025, def: "GetTaskResult",
			value: &Task{Meta: Meta{Other: map[string]json.RawMessage{MetaRelatedTask: json.RawMessage(`{"taskId":"x"}`)}}, TaskID: id, Status: TaskFailed, CreatedAt: created, LastUpdatedAt: updated, TTL: i64(1)}},
		{name: "2025 CancelTaskResult", schema: rev2025, def: "CancelTaskResult",
			value: &Task{TaskID: id, Status: TaskCancelled, CreatedAt: created, LastUpdatedAt: updated}},
		{name: "2025 ListTasksResult", schema: rev2025, def: "ListTasksResult",
			value: &ListTasksResult{Tasks: []*Task{{TaskID: id, Status: TaskCompleted, CreatedAt: created, LastUpdatedAt: updated}}, NextCursor: "c2"}},
		{name: "2025 ListTasksResult empty", schema: rev2025, def: "ListTasksResult",
			value: &ListTasksResult{Tasks: []*Task{}}, want: `{"tasks":[]}`},
		{name: "2025 TaskStatusNotificationParams", schema: rev2025, def: "TaskStatusNotificationParams",
			value: &Task{TaskID: id, Status: TaskInputRequired, CreatedAt: created, LastUpdatedAt: updated, TTL: i64(5)}},
		{name: "2025 GetTaskRequest", schema: rev2025, def: "GetTaskRequest", wrap: request(MethodTasksGet), value: &GetTaskParams{TaskID: id}},
		{name: "2025 GetTaskPayloadRequest", schema: rev2025, def: "GetTaskPayloadRequest", wrap: request(MethodTasksResult), value: &TaskPayloadParams{TaskID: id}},
		{name: "2025 CancelTaskRequest", schema: rev2025, def: "CancelTaskRequest", wrap: request(MethodTasksCancel), value: &CancelTaskParams{TaskID: id}},
		{name: "2025 ListTasksRequest", schema: rev2025, def: "ListTasksRequest", wrap: request(MethodTasksList), value: &ListTasksParams{Cursor: "c1"}},
		{name: "2025 RelatedTaskMetadata", schema: rev2025, def: "RelatedTaskMetadata", value: &RelatedTaskMetadata{TaskID: id}},
		{name: "2025 TaskMetadata", schema: rev2025, def: "TaskMetadata", value: &TaskMetadata{TTL: i64(60000)}, want: `{"ttl":60000}`},
		{name: "2025 CallToolRequest with task", schema: rev2025, def: "CallToolRequest", wrap: request(MethodToolsCall),
			value: &CallToolParams{Name: "slow", Task: &TaskMetadata{TTL: i64(1000)}}, want: `{"name":"slow","task":{"ttl":1000}}`},
		{name: "2025 server tasks capability", schema: rev2025, def: "ServerCapabilities",
			wrap:  func(b []byte) []byte { return []byte(`{"tasks":` + string(b) + `}`) },
			value: &TasksCapabilities{List: &struct{}{}, Cancel: &struct{}{}, Requests: &TaskRequestsCapabilities{Tools: &ToolTaskCapabilities{Call: &struct{}{}}}},
			want:  `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`},
		{name: "2025 client tasks capability", schema: rev2025, def: "ClientCapabilities",
			wrap: func(b []byte) []byte { return []byte(`{"tasks":` + string(b) + `}`) },
			value: &TasksCapabilities{Cancel: &struct{}{}, Requests: &TaskRequestsCapabilities{
				Sampling: &SamplingTaskCapabilities{CreateMessage: &struct{}{}}, Elicitation: &ElicitationTaskCapabilities{Create: &struct{}{}}}},
			want: `{"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}`},
		{name: "2025 Tool with taskSupport", schema: rev2025, def: "Tool",
			value: &Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`), Execution: &ToolExecution{TaskSupport: TaskRequired}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := officialSchema(t, tc.schema, tc.def)
			if r == nil {
				t.Fatalf("no definition %s in the %s schema", tc.def, tc.schema)
			}
			std, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			sdk, err := marshalStd(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			for _, enc := range []struct {
				name string
				data []byte
			}{{"encoding/json", std}, {"SDK", sdk}} {
				if tc.want != "" && !jsonEqual(t, enc.data, []byte(tc.want)) {
					t.Errorf("%s: %s\nwant %s", enc.name, enc.data, tc.want)
				}
				doc := enc.data
				if tc.wrap != nil {
					doc = tc.wrap(doc)
				}
				var v any
				if err := json.Unmarshal(doc, &v); err != nil {
					t.Fatal(err)
				}
				if err := r.Validate(v); err != nil {
					t.Errorf("%s: %s: the schema's %s refuses it: %v", enc.name, enc.data, tc.def, err)
				}
				for _, dec := range []struct {
					name      string
					unmarshal func([]byte, any) error
				}{{"encoding/json", json.Unmarshal}, {"SDK", unmarshalStd}} {
					back := reflect.New(reflect.TypeOf(tc.value).Elem()).Interface()
					if err := dec.unmarshal(enc.data, back); err != nil {
						t.Fatalf("%s decoding %s: %v", dec.name, enc.data, err)
					}
					if !reflect.DeepEqual(back, tc.value) {
						t.Errorf("%s decoding %s encoding: got %+v\nwant %+v", dec.name, enc.name, back, tc.value)
					}
				}
			}
		})
	}
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// TestTaskStatus: Ended and Valid sort the five statuses.
func TestTaskStatus(t *testing.T) {
	for _, tc := range []struct {
		s            TaskStatus
		ended, valid bool
	}{
		{TaskWorking, false, true}, {TaskInputRequired, false, true},
		{TaskCompleted, true, true}, {TaskFailed, true, true}, {TaskCancelled, true, true},
		{"", false, false}, {"done", false, false},
	} {
		if tc.s.Ended() != tc.ended || tc.s.Valid() != tc.valid {
			t.Errorf("%q: Ended %v, Valid %v; want %v, %v", tc.s, tc.s.Ended(), tc.s.Valid(), tc.ended, tc.valid)
		}
	}
}

// TestTaskRecordJSON: a record round-trips through its JSON form, which
// keeps durations in milliseconds and members it does not know.
func TestTaskRecordJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &TaskRecord{Schema: TaskRecordSchema, ID: "t1", Version: 7, Owner: "o", Method: MethodToolsCall, ProtocolVersion: Version20260728,
		Status: TaskCompleted, StatusMessage: "m", CreatedAt: at, UpdatedAt: at.Add(time.Second), EndedAt: at.Add(2 * time.Second),
		TTL: 90 * time.Second, PollInterval: 1500 * time.Millisecond, Result: json.RawMessage(`{"a":1}`), Error: json.RawMessage(`{"code":1,"message":"x"}`),
		Inputs: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"roots/list"}`)}, Answers: map[string]json.RawMessage{"j": json.RawMessage(`{}`)},
		InputKeys: 3, Cancel: true, Lease: &TaskLease{Holder: "h", Expires: at.Add(time.Hour)},
		Unknown: map[string]json.RawMessage{"future": json.RawMessage(`[1]`)}}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"ttlMs":90000`)) || !bytes.Contains(data, []byte(`"pollIntervalMs":1500`)) || !bytes.Contains(data, []byte(`"future":[1]`)) {
		t.Errorf("record JSON %s", data)
	}
	for _, dec := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"encoding/json", json.Unmarshal}, {"SDK", unmarshalStd}} {
		var back TaskRecord
		if err := dec.unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, rec) {
			t.Errorf("%s: got %+v\nwant %+v", dec.name, &back, rec)
		}
	}
	// A record without a schema version reads as the current one; a
	// running task has no end.
	var old TaskRecord
	if err := json.Unmarshal([]byte(`{"id":"t2","owner":"o","status":"working","version":1,"createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z"}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Schema != TaskRecordSchema || !old.EndedAt.IsZero() || old.Unknown != nil {
		t.Errorf("old record: %+v", old)
	}
}
