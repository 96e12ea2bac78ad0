package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of [TaskStoreOptions].
const (
	DefaultMaxTasks              = 10_000      // tasks stored, ended or not
	DefaultMaxUnfinishedPerOwner = 100         // unfinished tasks of one owner
	DefaultMaxPayloadBytes       = 256 << 20   // bytes of results, errors, inputs and answers
	DefaultTaskTTL               = time.Hour   // how long an ended task is kept
	DefaultTaskPageSize          = 100         // tasks in a List page
	DefaultTaskReapInterval      = time.Minute // how often expired tasks are dropped
)

// TaskStoreOptions bound and tune the stores of this package
// ([NewMemoryTaskStore], [NewFileTaskStore]). The zero value of each
// field means its default.
type TaskStoreOptions struct {
	// MaxTasks bounds the tasks stored, ended or not
	// ([DefaultMaxTasks]).
	MaxTasks int
	// MaxUnfinishedPerOwner bounds the tasks of one owner that have not
	// ended ([DefaultMaxUnfinishedPerOwner]).
	MaxUnfinishedPerOwner int
	// MaxPayloadBytes bounds the sum over the stored tasks of their raw
	// results, errors, inputs and answers ([DefaultMaxPayloadBytes]).
	MaxPayloadBytes int64
	// DefaultTTL is how long a task whose TTL is zero is kept after it
	// ended ([DefaultTaskTTL]).
	DefaultTTL time.Duration
	// PageSize is the number of tasks a List page holds at most
	// ([DefaultTaskPageSize]).
	PageSize int
	// ReapInterval is how often the store's one reaper goroutine drops
	// the expired tasks ([DefaultTaskReapInterval]). A Create at MaxTasks
	// drops them too, first.
	ReapInterval time.Duration
	// Now returns the current time (time.Now); tests give a fake clock.
	Now func() time.Time
}

func (o *TaskStoreOptions) resolved() TaskStoreOptions {
	var r TaskStoreOptions
	if o != nil {
		r = *o
	}
	if r.MaxTasks <= 0 {
		r.MaxTasks = DefaultMaxTasks
	}
	if r.MaxUnfinishedPerOwner <= 0 {
		r.MaxUnfinishedPerOwner = DefaultMaxUnfinishedPerOwner
	}
	if r.MaxPayloadBytes <= 0 {
		r.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if r.DefaultTTL <= 0 {
		r.DefaultTTL = DefaultTaskTTL
	}
	if r.PageSize <= 0 {
		r.PageSize = DefaultTaskPageSize
	}
	if r.ReapInterval <= 0 {
		r.ReapInterval = DefaultTaskReapInterval
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r
}

// NewMemoryTaskStore returns a [TaskStore] that keeps tasks in memory, the
// default of servers. It is bounded by opts (nil means the defaults: at
// most 10,000 tasks, 100 unfinished per owner and 256 MiB of payload); at
// a bound Create fails with a [*TaskLimitError] and nothing unexpired is
// evicted. A task that has not ended never expires; an ended one is kept
// for its TTL (an hour by default) counted from its end. One reaper
// goroutine, started by the first Create, drops expired tasks; Close
// (the store implements io.Closer) stops it. The store implements
// [TaskWatcher].
func NewMemoryTaskStore(opts *TaskStoreOptions) TaskStore {
	return newMemoryTaskStore(opts.resolved(), nil)
}

// taskPersister writes a store's records through to durable storage.
type taskPersister interface {
	// write stores rec durably.
	write(rec *TaskRecord) error
	// remove deletes the task id.
	remove(id string) error
	// read returns the stored record of id, or nil when there is none.
	read(id string) (*TaskRecord, error)
}

// memoryTaskStore is the TaskStore of NewMemoryTaskStore, and with a
// persister that of NewFileTaskStore.
type memoryTaskStore struct {
	opts    TaskStoreOptions
	persist taskPersister // nil: memory only

	mu         sync.Mutex
	tasks      map[string]*memoryTask         // by ID
	owners     map[string]map[string]struct{} // IDs by owner
	unfinished map[string]int                 // unfinished tasks by owner
	payload    int64                          // sum of payloadBytes
	closed     bool
	reaping    bool          // the reaper runs
	stop       chan struct{} // closed by Close
	done       chan struct{} // closed when the reaper returns
}

// memoryTask is a stored task.
type memoryTask struct {
	rec     *TaskRecord
	payload int64
	changed chan struct{} // closed at the next change; nil when no one waits
}

func newMemoryTaskStore(opts TaskStoreOptions, p taskPersister) *memoryTaskStore {
	return &memoryTaskStore{
		opts:       opts,
		persist:    p,
		tasks:      map[string]*memoryTask{},
		owners:     map[string]map[string]struct{}{},
		unfinished: map[string]int{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
}

// NewTaskID returns a random task ID of 128 bits, as the stores of this
// package make for a record created without one. For authors of task
// stores.
func NewTaskID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkRecord reports what makes rec unstorable.
func checkRecord(rec *TaskRecord) error {
	if !rec.Status.Valid() {
		return fmt.Errorf("mcp: task record %q: invalid status %q", rec.ID, rec.Status)
	}
	return nil
}

// Create implements TaskStore.
func (s *memoryTaskStore) Create(ctx context.Context, rec *TaskRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if rec.Status == "" {
		rec.Status = TaskWorking
	}
	if err := checkRecord(rec); err != nil {
		return err
	}
	if rec.ID != "" && !ValidTaskID(rec.ID) {
		return fmt.Errorf("mcp: task record: invalid ID %q", rec.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrTaskStoreClosed
	}
	now := s.opts.Now()
	if len(s.tasks) >= s.opts.MaxTasks {
		s.reapLocked(now)
		if len(s.tasks) >= s.opts.MaxTasks {
			return &TaskLimitError{Limit: "MaxTasks", Max: int64(s.opts.MaxTasks)}
		}
	}
	if !rec.Status.Ended() && s.unfinished[rec.Owner] >= s.opts.MaxUnfinishedPerOwner {
		return &TaskLimitError{Limit: "MaxUnfinishedPerOwner", Max: int64(s.opts.MaxUnfinishedPerOwner)}
	}
	size := rec.PayloadBytes()
	if s.payload+size > s.opts.MaxPayloadBytes {
		s.reapLocked(now)
		if s.payload+size > s.opts.MaxPayloadBytes {
			return &TaskLimitError{Limit: "MaxPayloadBytes", Max: s.opts.MaxPayloadBytes}
		}
	}
	if rec.ID == "" {
		for rec.ID = NewTaskID(); s.tasks[rec.ID] != nil; rec.ID = NewTaskID() {
		}
	} else if t := s.tasks[rec.ID]; t != nil {
		return fmt.Errorf("mcp: task %q exists: %w", rec.ID, ErrTaskConflict)
	}
	rec.Schema = cmp.Or(rec.Schema, TaskRecordSchema)
	rec.Version = 1
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	if rec.UpdatedAt.IsZero() {
		rec.UpdatedAt = now
	}
	if rec.Status.Ended() && rec.EndedAt.IsZero() {
		rec.EndedAt = now
	}
	stored := rec.Clone()
	if s.persist != nil {
		if err := s.persist.write(stored); err != nil {
			rec.Version = 0
			return err
		}
	}
	s.insertLocked(stored)
	if !s.reaping {
		s.reaping = true
		go s.reap()
	}
	return nil
}

// insertLocked adds rec to the indexes.
func (s *memoryTaskStore) insertLocked(rec *TaskRecord) {
	t := &memoryTask{rec: rec, payload: rec.PayloadBytes()}
	s.tasks[rec.ID] = t
	ids := s.owners[rec.Owner]
	if ids == nil {
		ids = map[string]struct{}{}
		s.owners[rec.Owner] = ids
	}
	ids[rec.ID] = struct{}{}
	if !rec.Status.Ended() {
		s.unfinished[rec.Owner]++
	}
	s.payload += t.payload
}

// removeLocked drops t from the indexes and wakes its watchers.
func (s *memoryTaskStore) removeLocked(t *memoryTask) {
	rec := t.rec
	delete(s.tasks, rec.ID)
	if ids := s.owners[rec.Owner]; ids != nil {
		delete(ids, rec.ID)
		if len(ids) == 0 {
			delete(s.owners, rec.Owner)
		}
	}
	if !rec.Status.Ended() {
		s.unfinishedDoneLocked(rec.Owner)
	}
	s.payload -= t.payload
	t.notify()
}

func (s *memoryTaskStore) unfinishedDoneLocked(owner string) {
	if s.unfinished[owner]--; s.unfinished[owner] <= 0 {
		delete(s.unfinished, owner)
	}
}

// notify wakes the watchers of t.
func (t *memoryTask) notify() {
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// settleLocked brings t up to now: a task whose lease expired before it
// ended becomes failed, and an ended task past its TTL is removed. It
// returns the task as it now reads, or nil when it is gone.
func (s *memoryTaskStore) settleLocked(t *memoryTask, now time.Time) *memoryTask {
	if rec := t.rec; rec.LeaseExpired(now) {
		failed := rec.Clone()
		failed.Version++
		failed.Status = TaskFailed
		failed.StatusMessage = TaskMessageServerRestarted
		failed.Error = json.RawMessage(`{"code":-32603,"message":"` + TaskMessageServerRestarted + `"}`)
		failed.EndedAt = rec.Lease.Expires
		failed.UpdatedAt = now
		failed.Lease = nil
		failed.Inputs = nil
		// Writing through may fail (a full disk): the file then keeps
		// the expired lease, which reads as failed again when reopened.
		if s.persist != nil {
			s.persist.write(failed)
		}
		s.replaceLocked(t, failed)
	}
	if exp, ok := t.rec.ExpiresAt(s.opts.DefaultTTL); ok && !now.Before(exp) {
		if s.persist != nil {
			if err := s.persist.remove(t.rec.ID); err != nil {
				return nil
			}
		}
		if s.tasks[t.rec.ID] == t {
			s.removeLocked(t)
		}
		return nil
	}
	return t
}

// replaceLocked makes rec the record of t, keeping the indexes right.
func (s *memoryTaskStore) replaceLocked(t *memoryTask, rec *TaskRecord) {
	old := t.rec
	if !old.Status.Ended() && rec.Status.Ended() {
		s.unfinishedDoneLocked(old.Owner)
	} else if old.Status.Ended() && !rec.Status.Ended() {
		s.unfinished[old.Owner]++
	}
	size := rec.PayloadBytes()
	s.payload += size - t.payload
	t.payload = size
	t.rec = rec
	t.notify()
}

// lookupLocked returns the settled task id of owner.
func (s *memoryTaskStore) lookupLocked(owner, id string) (*memoryTask, error) {
	if s.closed {
		return nil, ErrTaskStoreClosed
	}
	t := s.tasks[id]
	if t == nil || t.rec.Owner != owner {
		return nil, ErrTaskNotFound
	}
	if t = s.settleLocked(t, s.opts.Now()); t == nil {
		return nil, ErrTaskNotFound
	}
	return t, nil
}

// Get implements TaskStore.
func (s *memoryTaskStore) Get(ctx context.Context, owner, id string) (*TaskRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	return t.rec.Clone(), nil
}

// Update implements TaskStore.
func (s *memoryTaskStore) Update(ctx context.Context, rec *TaskRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(rec); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(rec.Owner, rec.ID)
	if err != nil {
		return err
	}
	if s.persist != nil {
		// Check the file too: the record may have been written by another
		// store on the same directory.
		cur, err := s.persist.read(rec.ID)
		if err != nil {
			return err
		}
		if cur == nil {
			s.removeLocked(t)
			return ErrTaskNotFound
		}
		if cur.Version != t.rec.Version {
			s.replaceLocked(t, cur)
			return fmt.Errorf("mcp: task %q: %w", rec.ID, ErrTaskConflict)
		}
	}
	old := t.rec
	if old.Version != rec.Version {
		return fmt.Errorf("mcp: task %q: version %d, stored %d: %w", rec.ID, rec.Version, old.Version, ErrTaskConflict)
	}
	if old.Status.Ended() && rec.Status != old.Status {
		return fmt.Errorf("mcp: task %q is %s: %w", rec.ID, old.Status, ErrTaskEnded)
	}
	if grow := rec.PayloadBytes() - t.payload; grow > 0 && s.payload+grow > s.opts.MaxPayloadBytes {
		return &TaskLimitError{Limit: "MaxPayloadBytes", Max: s.opts.MaxPayloadBytes}
	}
	now := s.opts.Now()
	next := rec.Clone()
	next.Schema = cmp.Or(next.Schema, TaskRecordSchema)
	next.Version = old.Version + 1
	next.CreatedAt = old.CreatedAt
	next.UpdatedAt = now
	switch {
	case old.Status.Ended():
		next.EndedAt = old.EndedAt // a task ends once
	case next.Status.Ended() && next.EndedAt.IsZero():
		next.EndedAt = now
	}
	if s.persist != nil {
		if err := s.persist.write(next); err != nil {
			return err
		}
	}
	s.replaceLocked(t, next)
	rec.Schema, rec.Version, rec.CreatedAt, rec.UpdatedAt, rec.EndedAt = next.Schema, next.Version, next.CreatedAt, next.UpdatedAt, next.EndedAt
	return nil
}

// Delete implements TaskStore.
func (s *memoryTaskStore) Delete(ctx context.Context, owner, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(owner, id)
	if err != nil {
		return err
	}
	if s.persist != nil {
		if err := s.persist.remove(id); err != nil {
			return err
		}
	}
	s.removeLocked(t)
	return nil
}

// List implements TaskStore. Tasks are ordered by creation time, then
// ID; the cursor holds the last task listed.
func (s *memoryTaskStore) List(ctx context.Context, owner, cursor string) ([]*TaskRecord, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	var after *TaskRecord
	if cursor != "" {
		c, err := parseTaskCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		after = c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, "", ErrTaskStoreClosed
	}
	now := s.opts.Now()
	var page []*TaskRecord
	for id := range s.owners[owner] {
		t := s.tasks[id]
		if t == nil {
			continue
		}
		if t = s.settleLocked(t, now); t == nil {
			continue
		}
		rec := t.rec
		if after != nil && compareTaskOrder(rec, after) <= 0 {
			continue
		}
		page = append(page, rec)
	}
	slices.SortFunc(page, compareTaskOrder)
	next := ""
	if len(page) > s.opts.PageSize {
		page = page[:s.opts.PageSize]
		next = taskCursor(page[len(page)-1])
	}
	for i, rec := range page {
		page[i] = rec.Clone()
	}
	return page, next, nil
}

// compareTaskOrder orders tasks by creation time, then ID.
func compareTaskOrder(a, b *TaskRecord) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// taskCursor returns the cursor of the page after rec.
func taskCursor(rec *TaskRecord) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(rec.CreatedAt.UnixNano(), 10) + " " + rec.ID))
}

// parseTaskCursor returns the position a cursor holds, as a record with
// CreatedAt and ID.
func parseTaskCursor(cursor string) (*TaskRecord, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTaskCursor, err)
	}
	ns, id, ok := strings.Cut(string(b), " ")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || !ValidTaskID(id) {
		return nil, ErrTaskCursor
	}
	return &TaskRecord{CreatedAt: time.Unix(0, n), ID: id}, nil
}

// Watch implements TaskWatcher.
func (s *memoryTaskStore) Watch(ctx context.Context, owner, id string, version int64) error {
	s.mu.Lock()
	t, err := s.lookupLocked(owner, id)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if t.rec.Version != version {
		s.mu.Unlock()
		return nil
	}
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	ch := t.changed
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stop:
		return ErrTaskStoreClosed
	}
}

// reap is the store's one reaper goroutine.
func (s *memoryTaskStore) reap() {
	defer close(s.done)
	tick := time.NewTicker(s.opts.ReapInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.mu.Lock()
			s.reapLocked(s.opts.Now())
			s.mu.Unlock()
		}
	}
}

// reapLocked settles every task: expired ones are dropped.
func (s *memoryTaskStore) reapLocked(now time.Time) {
	for _, t := range s.tasks {
		s.settleLocked(t, now)
	}
}

// Close stops the reaper and ends the watches; the store's methods then
// return ErrTaskStoreClosed. It implements io.Closer.
func (s *memoryTaskStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	reaping := s.reaping
	close(s.stop)
	s.mu.Unlock()
	if reaping {
		<-s.done
	}
	return nil
}

// DefaultTTL is how long the store keeps an ended task whose record has
// no TTL (TaskStoreOptions.DefaultTTL); the task runtime asks it (see
// TaskOptions.TTL).
func (s *memoryTaskStore) DefaultTTL() time.Duration { return s.opts.DefaultTTL }
