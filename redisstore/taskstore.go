package redisstore

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// Defaults of [TaskStoreOptions] that the mcp package does not define.
const (
	DefaultPrefix       = "mcpkit:"
	DefaultTimeout      = 250 * time.Millisecond
	DefaultWatchRecheck = 2 * time.Second
	// MaxOwnerBytes bounds the owner keys the store accepts: longer ones
	// have no tasks (mcp servers store 43-byte keyed hashes).
	MaxOwnerBytes = 512
)

// TaskStoreOptions configures a [TaskStore]. The zero value of each field
// means its default.
type TaskStoreOptions struct {
	// Prefix starts every key and channel of the store (DefaultPrefix).
	// It may not contain '{' or '}', which would break the hash tags.
	Prefix string
	// Timeout bounds each Redis round trip (DefaultTimeout). Give the
	// client ContextTimeoutEnabled so that go-redis honours it.
	Timeout time.Duration
	// Breaker is the circuit breaker of the store's operations (see
	// [Breaker]); nil means one of the store's own. Give the stores on
	// one client the same.
	Breaker *Breaker
	// MaxTasks bounds the tasks stored, ended or not, across all owners
	// (mcp.DefaultMaxTasks).
	MaxTasks int
	// MaxUnfinishedPerOwner bounds the tasks of one owner that have not
	// ended (mcp.DefaultMaxUnfinishedPerOwner).
	MaxUnfinishedPerOwner int
	// MaxPayloadBytes bounds the sum over the stored tasks of their raw
	// results, errors, inputs and answers (mcp.DefaultMaxPayloadBytes).
	MaxPayloadBytes int64
	// DefaultTTL is how long a task whose TTL is zero is kept after it
	// ended (mcp.DefaultTaskTTL). An mcp.Server writes a TTL into every
	// record: TaskOptions.TTL, or, when that is zero, this (through the
	// store's DefaultTTL method).
	DefaultTTL time.Duration
	// PageSize is the number of tasks a List page holds at most
	// (mcp.DefaultTaskPageSize).
	PageSize int
	// WatchRecheck is how often a Watch reads the task again even if no
	// change was announced, so that a message lost while the Pub/Sub
	// connection was down delays a waiter by at most this much
	// (DefaultWatchRecheck).
	WatchRecheck time.Duration
	// Now returns the current time (time.Now); tests give a fake clock.
	// Expiry is decided by this clock; Redis TTLs, relative to it, only
	// reclaim the memory.
	Now func() time.Time
}

// TaskStore is an [mcp.TaskStore] and [mcp.TaskWatcher] on Redis; see the
// package documentation. It is safe for concurrent use.
type TaskStore struct {
	client redis.UniversalClient
	opts   TaskStoreOptions
	bounds bounds
	global [3]string // the keys of the store-wide bounds
	notify string    // the channel of changes

	mu      sync.Mutex
	closed  bool
	ps      *redis.PubSub                         // nil until the first Watch
	waiters map[string]map[chan struct{}]struct{} // by task ID
	stop    chan struct{}                         // closed by Close
	done    chan struct{}                         // closed when the dispatcher returns
}

var (
	_ mcp.TaskStore   = (*TaskStore)(nil)
	_ mcp.TaskWatcher = (*TaskStore)(nil)
)

// NewTaskStore returns a task store on client, which may be a standalone,
// Sentinel (failover) or Cluster client. Nil opts means the defaults. The
// store does not own client: Close stops the store's subscription, not
// the client.
func NewTaskStore(client redis.UniversalClient, opts *TaskStoreOptions) (*TaskStore, error) {
	var o TaskStoreOptions
	if opts != nil {
		o = *opts
	}
	bd, err := checkCommon(client, &o.Prefix, &o.Timeout, o.Breaker)
	if err != nil {
		return nil, err
	}
	o.MaxTasks = cmp.Or(max(o.MaxTasks, 0), mcp.DefaultMaxTasks)
	o.MaxUnfinishedPerOwner = cmp.Or(max(o.MaxUnfinishedPerOwner, 0), mcp.DefaultMaxUnfinishedPerOwner)
	o.MaxPayloadBytes = cmp.Or(max(o.MaxPayloadBytes, 0), mcp.DefaultMaxPayloadBytes)
	o.DefaultTTL = cmp.Or(max(o.DefaultTTL, 0), mcp.DefaultTaskTTL)
	o.PageSize = cmp.Or(max(o.PageSize, 0), mcp.DefaultTaskPageSize)
	o.WatchRecheck = cmp.Or(max(o.WatchRecheck, 0), DefaultWatchRecheck)
	if o.Now == nil {
		o.Now = time.Now
	}
	g := o.Prefix + "{tasks}:"
	return &TaskStore{
		client:  client,
		opts:    o,
		bounds:  bd,
		global:  [3]string{g + "exp", g + "meta", g + "bytes"},
		notify:  o.Prefix + "tasks:changed",
		waiters: map[string]map[chan struct{}]struct{}{},
		stop:    make(chan struct{}),
	}, nil
}

// ownerKeys are the keys of one owner's tasks, all in one hash slot.
type ownerKeys struct {
	base string // "<prefix>{<tag>}:"
}

// keysOf returns the keys of owner, and false for an owner the store
// cannot hold (too long).
func (s *TaskStore) keysOf(owner string) (ownerKeys, bool) {
	if len(owner) > MaxOwnerBytes {
		return ownerKeys{}, false
	}
	// The owner is opaque peer-derived data: encoded, it holds no brace
	// or colon, and never an empty hash tag.
	return ownerKeys{base: s.opts.Prefix + "{o" + base64.RawURLEncoding.EncodeToString([]byte(owner)) + "}:"}, true
}

func (k ownerKeys) taskPrefix() string { return k.base + "task:" }

// script returns the keys of the owner scripts for the task id.
func (k ownerKeys) script(id string) []string {
	return []string{k.taskPrefix() + id, k.base + "order", k.base + "exp", k.base + "run"}
}

// wrap wraps a Redis error.
func wrap(what string, err error) error {
	return fmt.Errorf("redisstore: %s: %w", what, err)
}

// ms returns t in Unix milliseconds, rounded up (so that a score never
// reads as expired before the time it stands for).
func ms(t time.Time) int64 {
	n := t.UnixNano()
	m := n / 1e6
	if n%1e6 > 0 {
		m++
	}
	return m
}

// nowMs returns the store clock in Unix milliseconds, rounded down.
func (s *TaskStore) nowMs(now time.Time) string {
	n := now.UnixNano()
	m := n / 1e6
	if n%1e6 < 0 {
		m--
	}
	return strconv.FormatInt(m, 10)
}

// expiryScore returns when rec can be dropped, in ms: the end plus the
// TTL, for a running task with a lease its expiry plus the TTL (it reads
// as failed then), and never for one running without a lease.
func (s *TaskStore) expiryScore(rec *mcp.TaskRecord) int64 {
	exp, ok := s.expiresAt(rec)
	if !ok {
		return never
	}
	return min(ms(exp), never)
}

// expiresAt returns when rec expires, and false when it never does.
func (s *TaskStore) expiresAt(rec *mcp.TaskRecord) (time.Time, bool) {
	if exp, ok := rec.ExpiresAt(s.opts.DefaultTTL); ok {
		return exp, true
	}
	if rec.Lease != nil { // it reads as failed once the lease expired, then expires as ended ones do
		return rec.Lease.Expires.Add(cmp.Or(max(rec.TTL, 0), s.opts.DefaultTTL)), true
	}
	return time.Time{}, false
}

// leaseScore returns the running-index score of rec: its lease's expiry,
// never without a lease, and "" for an ended task.
func leaseScore(rec *mcp.TaskRecord) string {
	switch {
	case rec.Status.Ended():
		return ""
	case rec.Lease == nil:
		return strconv.FormatInt(never, 10)
	}
	return strconv.FormatInt(min(ms(rec.Lease.Expires), never), 10)
}

// orderMember returns the member of rec in its owner's order index: the
// creation time, biased to sort as unsigned, in 20 digits, then the ID.
func orderMember(rec *mcp.TaskRecord) string {
	return fmt.Sprintf("%020d:%s", uint64(rec.CreatedAt.UnixNano())^(1<<63), rec.ID)
}

// runGlobal runs an operation of the store-wide bounds.
func (s *TaskStore) runGlobal(ctx context.Context, now time.Time, op, id string, args ...any) (string, error) {
	c := s.bounds.op(ctx)
	argv := append([]any{op, s.nowMs(now), id}, args...)
	res, err := globalScript.Run(c.ctx, s.client, s.global[:], argv...).Text()
	if err = c.end(err); err != nil {
		return "", wrap("bounds", err)
	}
	return res, nil
}

// limit returns the error of a global script's answer.
func (s *TaskStore) limit(res string) error {
	switch res {
	case "MaxTasks":
		return &mcp.TaskLimitError{Limit: res, Max: int64(s.opts.MaxTasks)}
	case "MaxPayloadBytes":
		return &mcp.TaskLimitError{Limit: res, Max: s.opts.MaxPayloadBytes}
	case "CONFLICT":
		return mcp.ErrTaskConflict
	case "OK":
		return nil
	}
	return fmt.Errorf("redisstore: bounds: unexpected answer %q", res)
}

// Create implements mcp.TaskStore. The task's ID is admitted store-wide
// first (the MaxTasks and MaxPayloadBytes bounds, unique IDs), then
// written with its owner's indexes (MaxUnfinishedPerOwner).
func (s *TaskStore) Create(ctx context.Context, rec *mcp.TaskRecord) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if rec.Status == "" {
		rec.Status = mcp.TaskWorking
	}
	if !rec.Status.Valid() {
		return fmt.Errorf("redisstore: task record %q: invalid status %q", rec.ID, rec.Status)
	}
	if rec.ID != "" && !mcp.ValidTaskID(rec.ID) {
		return fmt.Errorf("redisstore: task record: invalid ID %q", rec.ID)
	}
	keys, ok := s.keysOf(rec.Owner)
	if !ok {
		return fmt.Errorf("redisstore: task record: owner key of %d bytes (at most %d)", len(rec.Owner), MaxOwnerBytes)
	}
	now := s.opts.Now()
	random := rec.ID == ""
	rec.Schema = cmp.Or(rec.Schema, mcp.TaskRecordSchema)
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
	size := rec.PayloadBytes()
	score := s.expiryScore(rec)
	for tries := 0; ; tries++ {
		if random {
			rec.ID = mcp.NewTaskID()
		}
		res, err := s.runGlobal(ctx, now, "reserve", rec.ID, score, size, s.opts.MaxTasks, s.opts.MaxPayloadBytes)
		if err == nil {
			err = s.limit(res)
		}
		if errors.Is(err, mcp.ErrTaskConflict) && random && tries < 3 {
			continue
		}
		if err != nil {
			if errors.Is(err, mcp.ErrTaskConflict) {
				err = fmt.Errorf("redisstore: task %q exists: %w", rec.ID, err)
			}
			rec.Version = 0
			return err
		}
		break
	}
	data, err := json.Marshal(rec)
	if err != nil {
		s.release(ctx, now, rec.ID)
		rec.Version = 0
		return fmt.Errorf("redisstore: task record: %w", err)
	}
	c := s.bounds.op(ctx)
	res, err := createScript.Run(c.ctx, s.client, keys.script(rec.ID),
		s.nowMs(now), keys.taskPrefix(), rec.ID, orderMember(rec), score, leaseScore(rec),
		s.opts.MaxUnfinishedPerOwner, data).Text()
	err = c.end(err)
	switch {
	case err != nil:
		err = wrap("create", err)
	case res == "CONFLICT":
		err = fmt.Errorf("redisstore: task %q exists: %w", rec.ID, mcp.ErrTaskConflict)
	case res == "LIMIT":
		err = &mcp.TaskLimitError{Limit: "MaxUnfinishedPerOwner", Max: int64(s.opts.MaxUnfinishedPerOwner)}
	}
	if err != nil {
		// The reservation would otherwise count until it expires.
		s.release(ctx, now, rec.ID)
		rec.Version = 0
		return err
	}
	return nil
}

// release forgets the store-wide reservation of id, as far as Redis lets
// it (an error leaves it to expire with the score it was given).
func (s *TaskStore) release(ctx context.Context, now time.Time, id string) {
	s.runGlobal(context.WithoutCancel(ctx), now, "remove", id)
}

// check returns the error that stops any operation: ctx's or the
// store's being closed.
func (s *TaskStore) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return mcp.ErrTaskStoreClosed
	}
	return nil
}

// Get implements mcp.TaskStore.
func (s *TaskStore) Get(ctx context.Context, owner, id string) (*mcp.TaskRecord, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.get(ctx, owner, id)
}

// get reads the task id of owner and settles it: an expired task is
// removed (not found), one whose lease expired is written as failed.
func (s *TaskStore) get(ctx context.Context, owner, id string) (*mcp.TaskRecord, error) {
	keys, ok := s.keysOf(owner)
	if !ok || !mcp.ValidTaskID(id) {
		return nil, mcp.ErrTaskNotFound
	}
	for tries := 0; ; tries++ {
		var data []byte
		err := s.bounds.read(ctx, func(ctx context.Context) (err error) {
			data, err = s.client.HGet(ctx, keys.taskPrefix()+id, "rec").Bytes()
			return err
		})
		if errors.Is(err, redis.Nil) {
			return nil, mcp.ErrTaskNotFound
		}
		if err != nil {
			return nil, wrap("get", err)
		}
		rec, err := s.settle(ctx, keys, owner, data)
		if errors.Is(err, mcp.ErrTaskConflict) && tries < 3 {
			continue // changed while settling: read it again
		}
		return rec, err
	}
}

// settle decodes a stored record and brings it up to now.
func (s *TaskStore) settle(ctx context.Context, keys ownerKeys, owner string, data []byte) (*mcp.TaskRecord, error) {
	rec := new(mcp.TaskRecord)
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("redisstore: stored task: %w", err)
	}
	if rec.Owner != owner {
		return nil, mcp.ErrTaskNotFound
	}
	now := s.opts.Now()
	if rec.LeaseExpired(now) {
		failed := rec.Clone()
		failed.Version++
		failed.Status = mcp.TaskFailed
		failed.StatusMessage = mcp.TaskMessageServerRestarted
		failed.Error = json.RawMessage(`{"code":-32603,"message":"` + mcp.TaskMessageServerRestarted + `"}`)
		failed.EndedAt = rec.Lease.Expires
		failed.UpdatedAt = now
		failed.Lease = nil
		failed.Inputs = nil
		if err := s.write(ctx, keys, failed, rec, true, now); err != nil {
			return nil, err
		}
		rec = failed
	}
	if exp, ok := s.expiresAt(rec); ok && rec.Status.Ended() && !now.Before(exp) {
		if err := s.remove(ctx, keys, rec, now); err != nil {
			return nil, err
		}
		return nil, mcp.ErrTaskNotFound
	}
	return rec, nil
}

// write stores next over prev, if prev's version is still the stored one
// (compare and swap), and records next's expiry and payload in the
// store-wide bounds when they changed.
func (s *TaskStore) write(ctx context.Context, keys ownerKeys, next, prev *mcp.TaskRecord, settling bool, now time.Time) error {
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("redisstore: task record: %w", err)
	}
	score := s.expiryScore(next)
	flag := ""
	if settling {
		flag = "1"
	}
	c := s.bounds.op(ctx)
	res, err := updateScript.Run(c.ctx, s.client, keys.script(next.ID),
		s.nowMs(now), keys.taskPrefix(), orderMember(next), prev.Version, data, score, leaseScore(next), flag, s.notify, next.ID).Text()
	err = c.end(err)
	switch {
	case err != nil:
		return wrap("update", err)
	case res == "NF":
		return mcp.ErrTaskNotFound
	case res == "CONFLICT":
		return fmt.Errorf("redisstore: task %q: %w", next.ID, mcp.ErrTaskConflict)
	}
	size := next.PayloadBytes()
	if score == s.expiryScore(prev) && size == prev.PayloadBytes() {
		return nil
	}
	// A failure here leaves the bounds with the previous size and expiry
	// of the task until its next write or its removal.
	_, err = s.runGlobal(ctx, now, "set", next.ID, next.Version, score, size)
	return err
}

// remove deletes rec from the store-wide bounds, then from its owner's
// keys. In that order, a failure between the two leaves a task the bounds
// do not count until its next write (which counts it again) or a retried
// removal, rather than a count no task holds, which a task running without
// a lease would never free.
func (s *TaskStore) remove(ctx context.Context, keys ownerKeys, rec *mcp.TaskRecord, now time.Time) error {
	if _, err := s.runGlobal(ctx, now, "remove", rec.ID); err != nil {
		return err
	}
	c := s.bounds.op(ctx)
	_, err := deleteScript.Run(c.ctx, s.client, keys.script(rec.ID),
		s.nowMs(now), keys.taskPrefix(), rec.ID, orderMember(rec), s.notify).Result()
	if err = c.end(err); err != nil {
		return wrap("delete", err)
	}
	return nil
}

// Update implements mcp.TaskStore.
func (s *TaskStore) Update(ctx context.Context, rec *mcp.TaskRecord) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if !rec.Status.Valid() {
		return fmt.Errorf("redisstore: task record %q: invalid status %q", rec.ID, rec.Status)
	}
	keys, _ := s.keysOf(rec.Owner)
	old, err := s.get(ctx, rec.Owner, rec.ID)
	if err != nil {
		return err
	}
	if old.Version != rec.Version {
		return fmt.Errorf("redisstore: task %q: version %d, stored %d: %w", rec.ID, rec.Version, old.Version, mcp.ErrTaskConflict)
	}
	if old.Status.Ended() && rec.Status != old.Status {
		return fmt.Errorf("redisstore: task %q is %s: %w", rec.ID, old.Status, mcp.ErrTaskEnded)
	}
	now := s.opts.Now()
	size := rec.PayloadBytes()
	if size > old.PayloadBytes() {
		res, err := s.runGlobal(ctx, now, "check", rec.ID, size, s.opts.MaxPayloadBytes)
		if err != nil {
			return err
		}
		if err := s.limit(res); err != nil {
			return err
		}
	}
	next := rec.Clone()
	next.Schema = cmp.Or(next.Schema, mcp.TaskRecordSchema)
	next.Version = old.Version + 1
	next.CreatedAt = old.CreatedAt
	next.UpdatedAt = now
	switch {
	case old.Status.Ended():
		next.EndedAt = old.EndedAt // a task ends once
	case next.Status.Ended() && next.EndedAt.IsZero():
		next.EndedAt = now
	}
	if err := s.write(ctx, keys, next, old, false, now); err != nil {
		return err
	}
	rec.Schema, rec.Version, rec.CreatedAt, rec.UpdatedAt, rec.EndedAt = next.Schema, next.Version, next.CreatedAt, next.UpdatedAt, next.EndedAt
	return nil
}

// Delete implements mcp.TaskStore.
func (s *TaskStore) Delete(ctx context.Context, owner, id string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	rec, err := s.get(ctx, owner, id)
	if err != nil {
		return err
	}
	keys, _ := s.keysOf(owner)
	return s.remove(ctx, keys, rec, s.opts.Now())
}

// List implements mcp.TaskStore. The cursor holds the owner-index member
// of the last task listed.
func (s *TaskStore) List(ctx context.Context, owner, cursor string) ([]*mcp.TaskRecord, string, error) {
	if err := s.check(ctx); err != nil {
		return nil, "", err
	}
	start := "-"
	if cursor != "" {
		m, err := parseCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start = "(" + m
	}
	keys, ok := s.keysOf(owner)
	if !ok {
		return nil, "", nil
	}
	want := s.opts.PageSize + 1
	var page []*mcp.TaskRecord
	var members []string
	// Each round reads a batch of the index; entries of expired tasks are
	// skipped (and dropped), so a page may need more than one.
	for rounds := 0; len(page) < want && rounds < 64; rounds++ {
		var batch []string
		err := s.bounds.read(ctx, func(ctx context.Context) (err error) {
			batch, err = s.client.ZRangeByLex(ctx, keys.base+"order", &redis.ZRangeBy{Min: start, Max: "+", Count: int64(want)}).Result()
			return err
		})
		if err != nil {
			return nil, "", wrap("list", err)
		}
		if len(batch) == 0 {
			break
		}
		cmds := make([]*redis.StringCmd, len(batch))
		err = s.bounds.read(ctx, func(octx context.Context) error {
			pipe := s.client.Pipeline()
			for i, m := range batch {
				cmds[i] = pipe.HGet(octx, keys.taskPrefix()+memberID(m), "rec")
			}
			_, err := pipe.Exec(octx)
			return err
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, "", wrap("list", err)
		}
		var stale []any
		for i, m := range batch {
			data, err := cmds[i].Bytes()
			if errors.Is(err, redis.Nil) {
				stale = append(stale, m)
				continue
			}
			if err != nil {
				return nil, "", wrap("list", err)
			}
			rec, err := s.settle(ctx, keys, owner, data)
			if errors.Is(err, mcp.ErrTaskNotFound) {
				continue
			}
			if errors.Is(err, mcp.ErrTaskConflict) {
				rec, err = s.get(ctx, owner, memberID(m))
				if errors.Is(err, mcp.ErrTaskNotFound) {
					continue
				}
			}
			if err != nil {
				return nil, "", err
			}
			if len(page) < want {
				page = append(page, rec)
				members = append(members, m)
			}
		}
		if len(stale) > 0 {
			c := s.bounds.op(ctx)
			c.end(s.client.ZRem(c.ctx, keys.base+"order", stale...).Err())
		}
		start = "(" + batch[len(batch)-1]
	}
	next := ""
	if len(page) > s.opts.PageSize {
		page = page[:s.opts.PageSize]
		next = base64.RawURLEncoding.EncodeToString([]byte(members[len(page)-1]))
	}
	return page, next, nil
}

// memberID returns the task ID of an order-index member.
func memberID(m string) string {
	_, id, _ := strings.Cut(m, ":")
	return id
}

// parseCursor returns the order-index member a cursor holds.
func parseCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", fmt.Errorf("%w: %w", mcp.ErrTaskCursor, err)
	}
	m := string(b)
	created, id, ok := strings.Cut(m, ":")
	if !ok || len(created) != 20 || !mcp.ValidTaskID(id) {
		return "", mcp.ErrTaskCursor
	}
	if _, err := strconv.ParseUint(created, 10, 64); err != nil {
		return "", mcp.ErrTaskCursor
	}
	return m, nil
}

// Watch implements mcp.TaskWatcher. The store holds one Pub/Sub
// subscription, to a channel every write announces its task ID on,
// whatever the number of watches; a watch also reads the task again every
// WatchRecheck, so that an announcement lost while the subscription was
// down is made up for.
func (s *TaskStore) Watch(ctx context.Context, owner, id string, version int64) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	ch, err := s.subscribe(ctx, id)
	if err != nil {
		return err
	}
	defer s.unsubscribe(id, ch)
	tick := time.NewTicker(s.opts.WatchRecheck)
	defer tick.Stop()
	for {
		rec, err := s.get(ctx, owner, id)
		if err != nil {
			return err
		}
		if rec.Version != version {
			return nil
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stop:
			return mcp.ErrTaskStoreClosed
		}
	}
}

// subscribe registers a waiter for id, subscribing the store first if
// it is not.
func (s *TaskStore) subscribe(ctx context.Context, id string) (chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, mcp.ErrTaskStoreClosed
	}
	if s.ps == nil {
		// The context bounds the connection and the confirmation only:
		// go-redis keeps the subscription, and renews it, on its own.
		c := s.bounds.op(ctx)
		ps := s.client.Subscribe(c.ctx, s.notify)
		_, err := ps.Receive(c.ctx) // the confirmation
		if err = c.end(err); err != nil {
			ps.Close()
			return nil, wrap("subscribe", err)
		}
		s.ps = ps
		s.done = make(chan struct{})
		go s.dispatch(ps.Channel(), s.done)
	}
	ch := make(chan struct{}, 1)
	w := s.waiters[id]
	if w == nil {
		w = map[chan struct{}]struct{}{}
		s.waiters[id] = w
	}
	w[ch] = struct{}{}
	return ch, nil
}

// unsubscribe drops a waiter.
func (s *TaskStore) unsubscribe(id string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.waiters[id]; w != nil {
		delete(w, ch)
		if len(w) == 0 {
			delete(s.waiters, id)
		}
	}
}

// dispatch wakes the waiters of each task announced, until the
// subscription closes.
func (s *TaskStore) dispatch(msgs <-chan *redis.Message, done chan struct{}) {
	for m := range msgs {
		s.mu.Lock()
		for ch := range s.waiters[m.Payload] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
	}
	close(done) // the channel closes with the subscription, in Close
}

// Close ends the store's subscription and its watches; the store's
// methods then return mcp.ErrTaskStoreClosed. It does not close the
// client. It implements io.Closer and may be called more than once.
func (s *TaskStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	ps, done := s.ps, s.done
	s.mu.Unlock()
	if ps == nil {
		return nil
	}
	err := ps.Close()
	<-done
	return err
}

// DefaultTTL returns how long the store keeps an ended task whose record
// has no TTL; an mcp.Server whose TaskOptions.TTL is zero uses it too.
func (s *TaskStore) DefaultTTL() time.Duration { return s.opts.DefaultTTL }
