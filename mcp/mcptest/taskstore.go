package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// Clock is a fake clock for tests: its Now returns a time that moves only
// by Advance. The zero value starts at 2026-01-01T00:00:00Z. It is safe
// for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// clockStart is where a zero Clock starts.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = clockStart
	}
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = clockStart
	}
	c.now = c.now.Add(d)
}

// TaskStoreSuite checks that the stores newStore makes behave as
// [mcp.TaskStore] says: creation with random IDs, compare-and-swap
// updates (also under concurrency: run it with -race), deletion, owner
// isolation, the bounds (a store at a bound refuses and evicts nothing
// unexpired), expiry of ended tasks only (TTL counted from the end, the
// default an hour), leases that expire into failed tasks, stable
// owner-filtered List pages, [mcp.TaskWatcher] when the store implements
// it, unknown record members kept, and no goroutine per task.
//
// newStore must return a new, empty store honouring the options it is
// given: the bounds MaxTasks, MaxUnfinishedPerOwner and MaxPayloadBytes,
// PageSize and DefaultTTL when set, and the clock Now (the suite moves
// time only through it, and never sleeps). It should close the store at
// the end of t (t.Cleanup); the suite closes stores that implement
// io.Closer itself, at the end of each subtest, so closing must be
// idempotent.
func TaskStoreSuite(t *testing.T, newStore func(t *testing.T, opts *mcp.TaskStoreOptions) mcp.TaskStore) {
	for _, tc := range taskStoreCases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, ctx: context.Background(), clock: new(Clock)}
			opts := tc.opts
			opts.Now = h.clock.Now
			h.store = newStore(t, &opts)
			if c, ok := h.store.(io.Closer); ok {
				t.Cleanup(func() { c.Close() })
			}
			tc.run(h)
		})
	}
}

// harness is what a case of the suite works with.
type harness struct {
	t     *testing.T
	ctx   context.Context
	clock *Clock
	store mcp.TaskStore
}

// create stores a working task of owner, failing the test on error.
func (h *harness) create(owner string, edit func(*mcp.TaskRecord)) *mcp.TaskRecord {
	h.t.Helper()
	rec := &mcp.TaskRecord{Owner: owner, Method: mcp.MethodToolsCall, Status: mcp.TaskWorking}
	if edit != nil {
		edit(rec)
	}
	if err := h.store.Create(h.ctx, rec); err != nil {
		h.t.Fatalf("Create: %v", err)
	}
	return rec
}

// get returns the task, failing the test on error.
func (h *harness) get(owner, id string) *mcp.TaskRecord {
	h.t.Helper()
	rec, err := h.store.Get(h.ctx, owner, id)
	if err != nil {
		h.t.Fatalf("Get(%q, %q): %v", owner, id, err)
	}
	return rec
}

// end updates rec to completed with result.
func (h *harness) end(rec *mcp.TaskRecord, result string) {
	h.t.Helper()
	rec.Status = mcp.TaskCompleted
	rec.Result = json.RawMessage(result)
	rec.Lease = nil
	if err := h.store.Update(h.ctx, rec); err != nil {
		h.t.Fatalf("Update to completed: %v", err)
	}
}

// wantNotFound fails the test unless the task reads as not found.
func (h *harness) wantNotFound(owner, id string) {
	h.t.Helper()
	if rec, err := h.store.Get(h.ctx, owner, id); !errors.Is(err, mcp.ErrTaskNotFound) {
		h.t.Fatalf("Get(%q, %q) = %v, %v; want ErrTaskNotFound", owner, id, rec, err)
	}
}

// wantLimit fails the test unless err is a *TaskLimitError for limit.
func (h *harness) wantLimit(err error, limit string) {
	h.t.Helper()
	var le *mcp.TaskLimitError
	if !errors.As(err, &le) || le.Limit != limit {
		h.t.Fatalf("err = %v; want a *TaskLimitError for %s", err, limit)
	}
}

// listAll returns the IDs of all of owner's tasks, page by page.
func (h *harness) listAll(owner string) []string {
	h.t.Helper()
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			h.t.Fatal("List: the cursors do not end")
		}
		recs, next, err := h.store.List(h.ctx, owner, cursor)
		if err != nil {
			h.t.Fatalf("List(%q, %q): %v", owner, cursor, err)
		}
		for _, r := range recs {
			if r.Owner != owner {
				h.t.Fatalf("List(%q) returned a task of %q", owner, r.Owner)
			}
			ids = append(ids, r.ID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
}

var taskStoreCases = []struct {
	name string
	opts mcp.TaskStoreOptions
	run  func(h *harness)
}{
	{name: "CreateGet", run: func(h *harness) {
		lease := &mcp.TaskLease{Holder: "replica-1", Expires: h.clock.Now().Add(time.Hour)}
		rec := h.create("alice", func(r *mcp.TaskRecord) {
			r.StatusMessage = "starting"
			r.ProtocolVersion = mcp.Version20251125
			r.TTL = 5 * time.Minute
			r.PollInterval = 2 * time.Second
			r.Inputs = map[string]json.RawMessage{"k1": json.RawMessage(`{"method":"elicitation/create"}`)}
			r.Lease = lease
		})
		if len(rec.ID) < 22 || rec.Version != 1 || rec.CreatedAt.IsZero() || rec.UpdatedAt.IsZero() {
			h.t.Fatalf("after Create: ID %q, Version %d, CreatedAt %v, UpdatedAt %v", rec.ID, rec.Version, rec.CreatedAt, rec.UpdatedAt)
		}
		got := h.get("alice", rec.ID)
		if got.ID != rec.ID || got.Owner != "alice" || got.Status != mcp.TaskWorking || got.StatusMessage != "starting" ||
			got.Method != mcp.MethodToolsCall || got.ProtocolVersion != mcp.Version20251125 || got.TTL != 5*time.Minute ||
			got.PollInterval != 2*time.Second || got.Version != 1 || !got.CreatedAt.Equal(rec.CreatedAt) ||
			string(got.Inputs["k1"]) != `{"method":"elicitation/create"}` || got.Lease == nil ||
			got.Lease.Holder != "replica-1" || !got.Lease.Expires.Equal(lease.Expires) || !got.EndedAt.IsZero() {
			h.t.Fatalf("Get = %+v; want what was created, %+v", got, rec)
		}
		// The record returned is the caller's: changing it changes nothing stored.
		got.Inputs["k2"] = json.RawMessage(`{}`)
		got.Status = mcp.TaskFailed
		if again := h.get("alice", rec.ID); len(again.Inputs) != 1 || again.Status != mcp.TaskWorking {
			h.t.Fatalf("a change to a returned record reached the store: %+v", again)
		}
		// IDs are random and distinct.
		seen := map[string]bool{rec.ID: true}
		for range 100 {
			r := h.create("alice", func(r *mcp.TaskRecord) { r.Status = mcp.TaskCompleted })
			if seen[r.ID] {
				h.t.Fatalf("ID %q given twice", r.ID)
			}
			seen[r.ID] = true
		}
		// An ID given by the caller is kept; a second Create of it conflicts.
		h.create("alice", func(r *mcp.TaskRecord) { r.ID = "chosen-id" })
		if err := h.store.Create(h.ctx, &mcp.TaskRecord{ID: "chosen-id", Owner: "bob", Status: mcp.TaskWorking}); !errors.Is(err, mcp.ErrTaskConflict) {
			h.t.Fatalf("Create of an existing ID: %v; want ErrTaskConflict", err)
		}
		if err := h.store.Create(h.ctx, &mcp.TaskRecord{Owner: "alice", Status: "running"}); err == nil {
			h.t.Fatal("Create with status \"running\" succeeded")
		}
	}},
	{name: "UpdateCompareAndSwap", run: func(h *harness) {
		rec := h.create("alice", nil)
		stale := h.get("alice", rec.ID)
		h.clock.Advance(time.Second)
		rec.Status = mcp.TaskInputRequired
		rec.Inputs = map[string]json.RawMessage{"1": json.RawMessage(`{"method":"roots/list"}`)}
		if err := h.store.Update(h.ctx, rec); err != nil {
			h.t.Fatal(err)
		}
		if rec.Version != 2 || !rec.UpdatedAt.Equal(h.clock.Now()) {
			h.t.Fatalf("after Update: Version %d, UpdatedAt %v; want 2, %v", rec.Version, rec.UpdatedAt, h.clock.Now())
		}
		stale.StatusMessage = "lost"
		if err := h.store.Update(h.ctx, stale); !errors.Is(err, mcp.ErrTaskConflict) {
			h.t.Fatalf("Update of a stale version: %v; want ErrTaskConflict", err)
		}
		if got := h.get("alice", rec.ID); got.StatusMessage == "lost" || got.Status != mcp.TaskInputRequired || got.Version != 2 {
			h.t.Fatalf("after a conflicting Update: %+v", got)
		}
		h.clock.Advance(time.Second)
		rec.Inputs = nil
		h.end(rec, `{"content":[]}`)
		got := h.get("alice", rec.ID)
		if got.Status != mcp.TaskCompleted || string(got.Result) != `{"content":[]}` || !got.EndedAt.Equal(h.clock.Now()) || got.Version != 3 {
			h.t.Fatalf("after ending: %+v", got)
		}
		// An ended task stays ended; its other fields may change.
		for _, st := range []mcp.TaskStatus{mcp.TaskWorking, mcp.TaskInputRequired, mcp.TaskFailed, mcp.TaskCancelled} {
			again := h.get("alice", rec.ID)
			again.Status = st
			if err := h.store.Update(h.ctx, again); !errors.Is(err, mcp.ErrTaskEnded) {
				h.t.Fatalf("Update of a completed task to %s: %v; want ErrTaskEnded", st, err)
			}
		}
		rec.StatusMessage = "done"
		rec.EndedAt = rec.EndedAt.Add(time.Hour) // ignored: a task ends once
		if err := h.store.Update(h.ctx, rec); err != nil {
			h.t.Fatalf("Update of a completed task's message: %v", err)
		}
		if got := h.get("alice", rec.ID); got.Status != mcp.TaskCompleted || got.StatusMessage != "done" || !got.EndedAt.Equal(h.clock.Now()) || !rec.EndedAt.Equal(got.EndedAt) {
			h.t.Fatalf("after the ended task's update: %+v", got)
		}
		if err := h.store.Update(h.ctx, &mcp.TaskRecord{ID: "no-such-task", Owner: "alice", Status: mcp.TaskWorking, Version: 1}); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Update of an unknown task: %v; want ErrTaskNotFound", err)
		}
	}},
	{name: "ConcurrentCompareAndSwap", run: func(h *harness) {
		rec := h.create("alice", nil)
		const writers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for range writers {
			wg.Go(func() {
				for done := 0; done < each; {
					r, err := h.store.Get(h.ctx, "alice", rec.ID)
					if err != nil {
						errs <- err
						return
					}
					r.InputKeys++
					switch err := h.store.Update(h.ctx, r); {
					case err == nil:
						done++
					case !errors.Is(err, mcp.ErrTaskConflict):
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			h.t.Fatal(err)
		}
		if got := h.get("alice", rec.ID); got.InputKeys != writers*each || got.Version != 1+writers*each {
			h.t.Fatalf("after %d increments: InputKeys %d, Version %d", writers*each, got.InputKeys, got.Version)
		}
	}},
	{name: "Delete", run: func(h *harness) {
		rec := h.create("alice", nil)
		if err := h.store.Delete(h.ctx, "alice", rec.ID); err != nil {
			h.t.Fatal(err)
		}
		h.wantNotFound("alice", rec.ID)
		if err := h.store.Delete(h.ctx, "alice", rec.ID); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("second Delete: %v; want ErrTaskNotFound", err)
		}
		if ids := h.listAll("alice"); len(ids) != 0 {
			h.t.Fatalf("List after Delete: %v", ids)
		}
	}},
	{name: "OwnerIsolation", run: func(h *harness) {
		rec := h.create("alice", nil)
		h.create("bob", nil)
		h.wantNotFound("bob", rec.ID)
		h.wantNotFound("", rec.ID)
		other := h.get("alice", rec.ID)
		other.Owner = "bob"
		other.Status = mcp.TaskCancelled
		if err := h.store.Update(h.ctx, other); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Update by another owner: %v; want ErrTaskNotFound", err)
		}
		if err := h.store.Delete(h.ctx, "bob", rec.ID); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Delete by another owner: %v; want ErrTaskNotFound", err)
		}
		if w, ok := h.store.(mcp.TaskWatcher); ok {
			if err := w.Watch(h.ctx, "bob", rec.ID, 1); !errors.Is(err, mcp.ErrTaskNotFound) {
				h.t.Fatalf("Watch by another owner: %v; want ErrTaskNotFound", err)
			}
		}
		if got := h.get("alice", rec.ID); got.Status != mcp.TaskWorking || got.Version != 1 {
			h.t.Fatalf("another owner changed the task: %+v", got)
		}
		if ids := h.listAll("alice"); !slices.Equal(ids, []string{rec.ID}) {
			h.t.Fatalf("List(alice) = %v; want [%s]", ids, rec.ID)
		}
	}},
	{name: "MaxTasks", opts: mcp.TaskStoreOptions{MaxTasks: 3}, run: func(h *harness) {
		var ids []string
		for i := range 3 {
			ids = append(ids, h.create(fmt.Sprint("owner", i), func(r *mcp.TaskRecord) { r.Status = mcp.TaskCompleted }).ID)
		}
		err := h.store.Create(h.ctx, &mcp.TaskRecord{Owner: "late", Status: mcp.TaskWorking})
		h.wantLimit(err, "MaxTasks")
		for i, id := range ids {
			h.get(fmt.Sprint("owner", i), id) // nothing evicted
		}
		// Once ended tasks expire, their room is free again.
		h.clock.Advance(mcp.DefaultTaskTTL)
		h.create("late", nil)
	}},
	{name: "MaxUnfinishedPerOwner", opts: mcp.TaskStoreOptions{MaxUnfinishedPerOwner: 2}, run: func(h *harness) {
		a := h.create("alice", nil)
		h.create("alice", func(r *mcp.TaskRecord) { r.Status = mcp.TaskInputRequired })
		h.create("alice", func(r *mcp.TaskRecord) { r.Status = mcp.TaskCompleted }) // ended ones do not count
		err := h.store.Create(h.ctx, &mcp.TaskRecord{Owner: "alice", Status: mcp.TaskWorking})
		h.wantLimit(err, "MaxUnfinishedPerOwner")
		h.create("bob", nil) // another owner has its own bound
		h.end(a, `{}`)
		h.create("alice", nil)
	}},
	{name: "MaxPayloadBytes", opts: mcp.TaskStoreOptions{MaxPayloadBytes: 100}, run: func(h *harness) {
		big := `"` + fmt.Sprintf("%078d", 0) + `"` // 80 bytes
		r := h.create("alice", func(r *mcp.TaskRecord) { r.Status = mcp.TaskCompleted; r.Result = json.RawMessage(big) })
		err := h.store.Create(h.ctx, &mcp.TaskRecord{Owner: "alice", Status: mcp.TaskCompleted, Result: json.RawMessage(big)})
		h.wantLimit(err, "MaxPayloadBytes")
		w := h.create("alice", nil)
		w.Status = mcp.TaskCompleted
		w.Result = json.RawMessage(big)
		h.wantLimit(h.store.Update(h.ctx, w), "MaxPayloadBytes")
		h.get("alice", r.ID)
		if err := h.store.Delete(h.ctx, "alice", r.ID); err != nil {
			h.t.Fatal(err)
		}
		h.end(h.get("alice", w.ID), big)
	}},
	{name: "ExpiryOfEndedTasksOnly", run: func(h *harness) {
		running := h.create("alice", func(r *mcp.TaskRecord) { r.TTL = time.Minute })
		defaulted := h.create("alice", nil)
		h.clock.Advance(1000 * time.Hour)
		h.get("alice", running.ID) // a running task never expires
		h.get("alice", defaulted.ID)
		h.end(running, `{}`)
		h.end(defaulted, `{}`)
		h.clock.Advance(time.Minute - time.Second)
		h.get("alice", running.ID) // the TTL counts from the end
		h.clock.Advance(time.Second)
		h.wantNotFound("alice", running.ID)
		if ids := h.listAll("alice"); !slices.Equal(ids, []string{defaulted.ID}) {
			h.t.Fatalf("List = %v; want only %s", ids, defaulted.ID)
		}
		h.clock.Advance(mcp.DefaultTaskTTL - time.Minute - time.Second)
		h.get("alice", defaulted.ID) // the default TTL is an hour
		h.clock.Advance(time.Second)
		h.wantNotFound("alice", defaulted.ID)
		stale := &mcp.TaskRecord{ID: running.ID, Owner: "alice", Status: mcp.TaskCompleted, Version: running.Version}
		if err := h.store.Update(h.ctx, stale); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Update of an expired task: %v; want ErrTaskNotFound", err)
		}
	}},
	{name: "DefaultTTLOption", opts: mcp.TaskStoreOptions{DefaultTTL: 10 * time.Minute}, run: func(h *harness) {
		rec := h.create("alice", func(r *mcp.TaskRecord) {
			r.Status = mcp.TaskFailed
			r.Error = json.RawMessage(`{"code":1,"message":"x"}`)
		})
		h.clock.Advance(10*time.Minute - time.Nanosecond)
		h.get("alice", rec.ID)
		h.clock.Advance(time.Nanosecond)
		h.wantNotFound("alice", rec.ID)
	}},
	{name: "LeaseExpiry", run: func(h *harness) {
		lease := func(r *mcp.TaskRecord) {
			r.Lease = &mcp.TaskLease{Holder: "replica-1", Expires: h.clock.Now().Add(time.Minute)}
		}
		dead := h.create("alice", lease)
		renewed := h.create("alice", lease)
		h.clock.Advance(30 * time.Second)
		renewed.Lease.Expires = h.clock.Now().Add(time.Minute)
		if err := h.store.Update(h.ctx, renewed); err != nil {
			h.t.Fatal(err)
		}
		h.clock.Advance(30 * time.Second)
		got := h.get("alice", dead.ID)
		if got.Status != mcp.TaskFailed || got.StatusMessage != mcp.TaskMessageServerRestarted || len(got.Error) == 0 || got.EndedAt.IsZero() {
			h.t.Fatalf("a task whose lease expired reads %+v; want failed, %q", got, mcp.TaskMessageServerRestarted)
		}
		var e struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(got.Error, &e); err != nil || e.Code == 0 || e.Message == "" {
			h.t.Fatalf("its error is %s (%v); want a JSON-RPC error object", got.Error, err)
		}
		// The runner that lost its lease cannot write any more.
		dead.Status = mcp.TaskCompleted
		if err := h.store.Update(h.ctx, dead); !errors.Is(err, mcp.ErrTaskConflict) {
			h.t.Fatalf("Update by the runner after its lease expired: %v; want ErrTaskConflict", err)
		}
		if got := h.get("alice", renewed.ID); got.Status != mcp.TaskWorking {
			h.t.Fatalf("a task whose lease was renewed reads %s", got.Status)
		}
		// A failed task expires as ended ones do; its unfinished slot is free.
		h.clock.Advance(mcp.DefaultTaskTTL)
		h.wantNotFound("alice", dead.ID)
		h.get("alice", renewed.ID)
	}},
	{name: "ListPagination", opts: mcp.TaskStoreOptions{PageSize: 3}, run: func(h *harness) {
		var want []string
		for i := range 10 {
			h.clock.Advance(time.Millisecond)
			want = append(want, h.create("alice", nil).ID)
			if i%3 == 0 {
				h.create("bob", nil)
			}
		}
		// Tasks created in the same instant come in ID order.
		h.clock.Advance(time.Millisecond)
		same := []string{h.create("alice", nil).ID, h.create("alice", nil).ID}
		slices.Sort(same)
		want = append(want, same...)
		recs, next, err := h.store.List(h.ctx, "alice", "")
		if err != nil || len(recs) != 3 || next == "" {
			h.t.Fatalf("first page: %d tasks, next %q, %v; want 3 and a cursor", len(recs), next, err)
		}
		// A task created during the listing comes on a later page.
		h.clock.Advance(time.Millisecond)
		want = append(want, h.create("alice", nil).ID)
		got := []string{recs[0].ID, recs[1].ID, recs[2].ID}
		for cursor := next; cursor != ""; {
			recs, cursor, err = h.store.List(h.ctx, "alice", cursor)
			if err != nil || len(recs) > 3 {
				h.t.Fatalf("List: %d tasks, %v", len(recs), err)
			}
			for _, r := range recs {
				got = append(got, r.ID)
			}
		}
		if !slices.Equal(got, want) {
			h.t.Fatalf("pages hold\n%v\nwant\n%v", got, want)
		}
		if ids := h.listAll("bob"); len(ids) != 4 {
			h.t.Fatalf("List(bob) = %d tasks; want 4", len(ids))
		}
		if ids := h.listAll("carol"); len(ids) != 0 {
			h.t.Fatalf("List(carol) = %v; want none", ids)
		}
		if _, _, err := h.store.List(h.ctx, "alice", "not a cursor!"); !errors.Is(err, mcp.ErrTaskCursor) {
			h.t.Fatalf("List with a bad cursor: %v; want ErrTaskCursor", err)
		}
	}},
	{name: "Watch", run: func(h *harness) {
		w, ok := h.store.(mcp.TaskWatcher)
		if !ok {
			h.t.Skip("the store does not implement TaskWatcher")
		}
		rec := h.create("alice", nil)
		if err := w.Watch(h.ctx, "alice", rec.ID, 0); err != nil {
			h.t.Fatalf("Watch of an older version: %v; want nil at once", err)
		}
		if err := w.Watch(h.ctx, "alice", "unknown", 1); !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Watch of an unknown task: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- w.Watch(h.ctx, "alice", rec.ID, 1) }()
		rec.StatusMessage = "half way"
		if err := h.store.Update(h.ctx, rec); err != nil {
			h.t.Fatal(err)
		}
		if err := <-done; err != nil {
			h.t.Fatalf("Watch across an Update: %v", err)
		}
		go func() { done <- w.Watch(h.ctx, "alice", rec.ID, rec.Version) }()
		if err := h.store.Delete(h.ctx, "alice", rec.ID); err != nil {
			h.t.Fatal(err)
		}
		if err := <-done; err != nil && !errors.Is(err, mcp.ErrTaskNotFound) {
			h.t.Fatalf("Watch across a Delete: %v", err)
		}
		rec = h.create("alice", nil)
		ctx, cancel := context.WithCancel(h.ctx)
		go func() { done <- w.Watch(ctx, "alice", rec.ID, rec.Version) }()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			h.t.Fatalf("Watch after its context ended: %v; want context.Canceled", err)
		}
	}},
	{name: "UnknownMembersKept", run: func(h *harness) {
		future := map[string]json.RawMessage{"x-future": json.RawMessage(`{"a":[1,2]}`), "flag": json.RawMessage(`true`)}
		rec := h.create("alice", func(r *mcp.TaskRecord) { r.Unknown = maps.Clone(future) })
		got := h.get("alice", rec.ID)
		if !equalRaw(got.Unknown, future) {
			h.t.Fatalf("Unknown after Create: %v; want %v", got.Unknown, future)
		}
		got.StatusMessage = "still here"
		if err := h.store.Update(h.ctx, got); err != nil {
			h.t.Fatal(err)
		}
		if got = h.get("alice", rec.ID); !equalRaw(got.Unknown, future) {
			h.t.Fatalf("Unknown after Update: %v; want %v", got.Unknown, future)
		}
		data, err := json.Marshal(got)
		if err != nil {
			h.t.Fatal(err)
		}
		var back mcp.TaskRecord
		if err := json.Unmarshal(data, &back); err != nil || !equalRaw(back.Unknown, future) || back.ID != rec.ID || back.Schema != mcp.TaskRecordSchema {
			h.t.Fatalf("JSON round trip: %+v, %v", back, err)
		}
	}},
	{name: "NoGoroutinePerTask", run: func(h *harness) {
		h.create("warm-up", nil) // a store may start one reaper at its first task
		before := runtime.NumGoroutine()
		for i := range 300 {
			h.create(fmt.Sprint("owner", i%50), func(r *mcp.TaskRecord) {
				r.Status = mcp.TaskCompleted
				r.TTL = time.Duration(i+1) * time.Second
			})
		}
		// The process's other goroutines may come and go meanwhile (a
		// timer of an earlier case firing, the test runner's); a
		// goroutine a task would be 300 more.
		if after := runtime.NumGoroutine(); after > before+10 {
			h.t.Fatalf("goroutines: %d before 300 tasks, %d after", before, after)
		}
	}},
}

// equalRaw reports whether two maps of raw JSON hold the same JSON
// values.
func equalRaw(a, b map[string]json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		var x, y any
		if json.Unmarshal(v, &x) != nil || json.Unmarshal(b[k], &y) != nil || fmt.Sprint(x) != fmt.Sprint(y) {
			return false
		}
	}
	return true
}
