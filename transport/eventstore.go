package transport

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EventStore keeps the SSE events a Streamable HTTP server sends, so that a
// client whose stream broke can resume it: it reconnects with GET and the
// Last-Event-ID header, and the server replays what followed that event.
// Implementations must be safe for concurrent use. [NewMemoryEventStore]
// returns a bounded in-memory store; a store shared by several server
// processes (Redis, say) lets a client resume on any of them.
//
// Events belong to a stream of a session; stream IDs are chosen by the
// server and unique within a session. Event IDs are chosen by the store and
// must identify the stream they belong to.
type EventStore interface {
	// Append stores data as the next event of the stream and returns the
	// event's ID.
	Append(ctx context.Context, sessionID, streamID string, data []byte) (eventID string, err error)
	// After returns the stream that event lastEventID belongs to and the
	// events stored after it, oldest first. It returns an error matching
	// [ErrEventNotFound] when the event is unknown to the store or events
	// after it have been discarded, so the stream cannot be replayed
	// faithfully.
	After(ctx context.Context, sessionID, lastEventID string) (streamID string, events []StoredEvent, err error)
	// DeleteSession discards every event of a session.
	DeleteSession(ctx context.Context, sessionID string) error
}

// EventLog is an [EventStore] that keeps each SSE stream as one ordered
// log, which a reader can tail while the stream's writer (in this process
// or another sharing the store) still appends to it: a client resuming a
// stream on any server process gets every later event exactly once, in
// order, and learns where the stream ends. The Streamable HTTP server uses
// these methods when its EventStore implements them; [MemoryEventStore]
// and the Redis store of package redisstore do.
//
// A log holds what its writer says, and what the store may have lost is
// never replayed as if it were whole: each event carries its number in the
// stream (counting every event the writer tried to store, those it failed
// to store too) and a gap mark when the writer knows that events before it
// were lost; a number that does not follow the one before it is a gap too
// (the memory store marks it when writing, the Redis store sees it when
// reading, which also catches events Redis lost or trimmed). A resumption
// whose range crosses a gap is refused with [ErrEventNotFound], like one
// from an unknown event. IDs of a store that lost its data (a restarted
// Redis) never resolve to newer events, and another session's IDs are
// unknown: the memory store's IDs carry an epoch, random for each
// session's log; the Redis store's name the entry of the session's log
// that holds the event, which a resumption must find there with the
// event's stream and number, and a tag of the session.
type EventLog interface {
	EventStore
	// StreamStart returns the ID of a position before every event of a
	// stream that has none stored yet: resuming from it replays each
	// event the stream gets. It stores nothing (it is the ID of a
	// priming event) and does no I/O. (For a stream with events, stores
	// differ: the Redis store's start precedes them, the memory store's
	// follows them; the server asks only for streams it has not
	// written.)
	StreamStart(sessionID, streamID string) string
	// Write stores e as the next event of the stream and returns its ID.
	// The event follows a gap when e.Gap is set or when e.Seq does not
	// follow the number of the event stored before it.
	Write(ctx context.Context, sessionID, streamID string, e LogEvent) (eventID string, err error)
	// Tail returns the events stored after lastEventID, oldest first, up
	// to a store-chosen number of them, waiting for one when there is
	// none until the stream ends or ctx is done. It returns an error
	// matching [ErrEventNotFound] when lastEventID is unknown or the next
	// event follows a gap, without waiting; events after a gap are not
	// returned with the ones before it (the next Tail, from the last
	// event returned, reports the gap). It returns an error matching
	// [ErrTailLimit], without waiting, when the store has as many tails
	// waiting as it allows, and ctx's error when ctx ends the wait. A
	// store may also return an empty batch after a bounded wait (the
	// Redis store's blocking reads are bounded): callers loop, from the
	// ID of the last event they got, until the batch says the stream
	// ended.
	Tail(ctx context.Context, sessionID, lastEventID string) (LogBatch, error)
}

// LogEvent is an event given to [EventLog.Write].
type LogEvent struct {
	// Seq is the event's number in its stream: 1 for the first event the
	// writer tried to store, and one more for each next one, whether the
	// previous write succeeded or not. Zero means the number after the
	// last event the stream has stored (the store numbers it): for a
	// writer appending to a stream whose own writer is gone.
	Seq int64
	// Data is the event's data; nil for a bare mark (an end with no
	// event), which readers get as an event with nil Data.
	Data []byte
	// Gap says that the writer failed to store an event before this one
	// (or cannot tell whether it did): a resumption from before this
	// event is refused.
	Gap bool
	// End says that this is the stream's last event.
	End bool
}

// LogBatch is what [EventLog.Tail] returns.
type LogBatch struct {
	// StreamID is the stream the event ID given to Tail belongs to.
	StreamID string
	// Events are the events stored after that event, oldest first.
	Events []StoredEvent
	// Ended reports that the stream's last event is the last of Events
	// (or, with no Events, the event given to Tail): nothing follows.
	Ended bool
}

// StoredEvent is an event returned by [EventStore.After].
type StoredEvent struct {
	ID   string
	Data []byte
}

// ErrEventNotFound is returned by [EventStore.After] when a stream cannot be
// resumed from the given event.
var ErrEventNotFound = errors.New("transport: event not found")

// ErrTailLimit is returned by [EventLog.Tail] when the store already has
// as many tails waiting as it allows: the caller serves what it has and
// lets its client come back later.
var ErrTailLimit = errors.New("transport: too many event log tails waiting")

// MaxEventIDBytes bounds the event IDs the stores of this module accept:
// a longer Last-Event-ID is unknown.
const MaxEventIDBytes = 256

// MemoryEventStoreOptions bounds a [NewMemoryEventStore]. The zero value
// gives the defaults.
type MemoryEventStoreOptions struct {
	// MaxBytes bounds the total size of the stored event data; the oldest
	// events are discarded past it. Zero means 16 MiB.
	MaxBytes int
	// MaxAge is how long an event is kept. Zero means 5 minutes.
	MaxAge time.Duration
	// MaxTails bounds the [EventLog.Tail] calls waiting at once; more are
	// refused with [ErrTailLimit]. Zero means 1024.
	MaxTails int
}

// MemoryEventStore is the in-memory [EventLog] returned by
// [NewMemoryEventStore]. It keeps events in one process only. A stream's
// record goes with its last event, and ending a session costs what that
// session stored. A waiting Tail holds no goroutine of the store: a write
// to the session wakes the tails waiting on it.
//
// Its event IDs are "<epoch>_<stream>_<sequence>": epoch is random for
// each session of each store (another session's IDs, or another store's,
// are unknown), and sequence numbers increase across a session's streams.
type MemoryEventStore struct {
	maxBytes int
	maxAge   time.Duration
	maxTails int
	now      func() time.Time
	start    time.Time // event times are durations since it (monotonic)

	mu       sync.Mutex
	bytes    int                    // size of the stored event data
	sessions map[string]*memSession // by session ID
	order    []memEventRef          // every queued event, oldest first
	head     int                    // index of the oldest live entry of order
	dead     int                    // entries of order[head:] whose session was deleted
	visits   int                    // events DeleteSession went through (for tests)
	tails    int                    // Tail calls waiting
}

// memSession is one session's events. Sequence numbers are per session
// and start at 1, so that a stream whose record went with its events and
// that gets new ones continues its IDs instead of repeating them.
type memSession struct {
	epoch   string // random: in every event ID of the session
	streams map[string]*memStream
	next    int64         // sequence number the next event gets
	evicted int64         // highest sequence number evicted; 0 for none
	wake    chan struct{} // closed by the next write; nil when no tail waits
	deleted bool          // DeleteSession removed it
}

type memStream struct {
	id      string
	sess    *memSession
	events  []memEvent
	evicted int64 // highest sequence number of this stream evicted; 0 for none
	written int64 // LogEvent.Seq of the last event written; 0 for none
	ended   bool  // the stream's last event is stored
	deleted bool  // the session was deleted: the events are gone
}

type memEvent struct {
	seq  int64
	data []byte
	gap  bool // events before this one were lost
	end  bool // the stream's last event
}

type memEventRef struct {
	stream *memStream
	size   int
	at     time.Duration // since the store's start
}

var _ EventLog = (*MemoryEventStore)(nil)

// NewMemoryEventStore returns an in-memory event store bounded by size and
// age. opts may be nil.
func NewMemoryEventStore(opts *MemoryEventStoreOptions) *MemoryEventStore {
	s := &MemoryEventStore{maxBytes: 16 << 20, maxAge: 5 * time.Minute, maxTails: 1024, now: time.Now, start: time.Now(),
		sessions: make(map[string]*memSession)}
	if opts != nil {
		if opts.MaxBytes > 0 {
			s.maxBytes = opts.MaxBytes
		}
		if opts.MaxAge > 0 {
			s.maxAge = opts.MaxAge
		}
		if opts.MaxTails > 0 {
			s.maxTails = opts.MaxTails
		}
	}
	return s
}

// Append implements [EventStore]: it writes data as the next event of the
// stream, with no gap.
func (s *MemoryEventStore) Append(_ context.Context, sessionID, streamID string, data []byte) (string, error) {
	return s.write(sessionID, streamID, LogEvent{Data: data}, false), nil
}

// Write implements [EventLog].
func (s *MemoryEventStore) Write(_ context.Context, sessionID, streamID string, e LogEvent) (string, error) {
	return s.write(sessionID, streamID, e, true), nil
}

// StreamStart implements [EventLog]: the position is the session's last
// sequence number, which no event of the stream follows yet. It records
// the session (its epoch) if the store has nothing of it yet.
func (s *MemoryEventStore) StreamStart(sessionID, streamID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessionLocked(sessionID)
	return sess.eventID(streamID, sess.next-1)
}

// sessionLocked returns the session's record, creating it.
func (s *MemoryEventStore) sessionLocked(sessionID string) *memSession {
	sess := s.sessions[sessionID]
	if sess == nil {
		var b [memEpochBytes]byte
		rand.Read(b[:])
		sess = &memSession{epoch: hex.EncodeToString(b[:]), next: 1}
		s.sessions[sessionID] = sess
	}
	return sess
}

// memEpochBytes is the size of a session's epoch.
const memEpochBytes = 6

func (sess *memSession) eventID(streamID string, seq int64) string {
	return sess.epoch + "_" + streamID + "_" + strconv.FormatInt(seq, 10)
}

// write stores e; numbered says whether e.Seq counts the stream's events.
func (s *MemoryEventStore) write(sessionID, streamID string, e LogEvent, numbered bool) string {
	d := make([]byte, len(e.Data))
	copy(d, e.Data)
	if e.Data == nil {
		d = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().Sub(s.start)
	s.evict(now)
	sess := s.sessionLocked(sessionID)
	if sess.streams == nil {
		sess.streams = make(map[string]*memStream)
	}
	st := sess.streams[streamID]
	if st == nil {
		// Events of an earlier record of this stream may have gone with
		// any the session lost: resuming from before those is refused.
		st = &memStream{id: streamID, sess: sess, evicted: sess.evicted}
		sess.streams[streamID] = st
	}
	gap := e.Gap
	if numbered {
		if e.Seq == 0 {
			e.Seq = st.written + 1
		}
		gap = gap || (st.written > 0 && e.Seq != st.written+1)
		st.written = e.Seq
	}
	st.ended = st.ended || e.End
	seq := sess.next
	sess.next++
	st.events = append(st.events, memEvent{seq: seq, data: d, gap: gap, end: e.End})
	s.order = append(s.order, memEventRef{stream: st, size: len(d), at: now})
	s.bytes += len(d)
	s.evict(now)
	if sess.wake != nil {
		close(sess.wake)
		sess.wake = nil
	}
	return sess.eventID(streamID, seq)
}

// evict drops the oldest events while the store is over its bounds, and
// the record of a stream with its last event.
func (s *MemoryEventStore) evict(now time.Duration) {
	for s.head < len(s.order) {
		ref := s.order[s.head]
		if s.bytes <= s.maxBytes && now-ref.at <= s.maxAge {
			break
		}
		s.order[s.head] = memEventRef{}
		s.head++
		st := ref.stream
		if st.deleted {
			s.dead--
			continue // its data went with its session
		}
		s.bytes -= ref.size
		e := st.events[0]
		st.events[0] = memEvent{}
		st.events = st.events[1:]
		st.evicted = e.seq
		st.sess.evicted = e.seq // events leave each session in sequence order
		if len(st.events) == 0 {
			delete(st.sess.streams, st.id)
			if len(st.sess.streams) == 0 {
				st.sess.streams = nil // a map does not shrink: let it go
			}
		}
	}
	s.compact()
}

// compact drops the dead part of the order queue once it is most of the
// queue: the evicted entries before head, or the entries of deleted
// sessions, which would otherwise wait for eviction to reach them (and
// eviction runs only when events are appended).
func (s *MemoryEventStore) compact() {
	live := len(s.order) - s.head - s.dead
	if live == 0 {
		s.order, s.head, s.dead = nil, 0, 0
		return
	}
	if s.dead > 1024 && s.dead > live {
		kept := make([]memEventRef, 0, 2*live)
		for _, ref := range s.order[s.head:] {
			if !ref.stream.deleted {
				kept = append(kept, ref)
			}
		}
		s.order, s.head, s.dead = kept, 0, 0
		return
	}
	if s.head > 1024 && s.head*2 > len(s.order) {
		rest := s.order[s.head:]
		s.order = nil // not rest[:0:0], which would keep the old array
		if len(rest) > 0 {
			s.order = make([]memEventRef, len(rest), 2*len(rest))
			copy(s.order, rest)
		}
		s.head = 0
	}
}

// memPos is a position in a session's events, parsed from an event ID.
type memPos struct {
	epoch, stream string
	seq           int64
}

// parseID splits an event ID of this store into its epoch, stream and
// sequence number, reporting false for anything else.
func parseID(id string) (memPos, bool) {
	const n = 2 * memEpochBytes
	if len(id) > MaxEventIDBytes || len(id) <= n+1 || id[n] != '_' {
		return memPos{}, false
	}
	rest := id[n+1:]
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 || !digits(rest[i+1:]) {
		return memPos{}, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil {
		return memPos{}, false
	}
	return memPos{epoch: id[:n], stream: rest[:i], seq: seq}, true
}

// digits reports whether s is a non-empty run of ASCII digits of a
// sensible length.
func digits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readLocked returns the events of the stream after sequence number seq;
// whole asks for all of them and refuses a gap among them, else the ones
// before the first gap are returned. It reports whether the stream's end
// is the last event returned (or seq).
func (s *MemoryEventStore) readLocked(sessionID string, p memPos, whole bool) ([]StoredEvent, bool, error) {
	s.evict(s.now().Sub(s.start))
	sess := s.sessions[sessionID]
	if sess == nil || p.epoch != sess.epoch || p.seq >= sess.next {
		return nil, false, ErrEventNotFound
	}
	streamID, seq := p.stream, p.seq
	st := sess.streams[streamID]
	if st == nil {
		// Every event the stream had is gone, or it has none yet. None
		// came after seq if the session lost nothing after it.
		if sess.evicted > seq {
			return nil, false, ErrEventNotFound
		}
		return nil, false, nil
	}
	if st.evicted > seq {
		return nil, false, ErrEventNotFound // events after it were discarded
	}
	i, _ := slices.BinarySearchFunc(st.events, seq+1, func(e memEvent, seq int64) int { return cmp.Compare(e.seq, seq) })
	rest := st.events[i:]
	var out []StoredEvent
	for j, e := range rest {
		if e.gap {
			if whole || j == 0 {
				return nil, false, ErrEventNotFound
			}
			return out, false, nil
		}
		out = append(out, StoredEvent{ID: sess.eventID(streamID, e.seq), Data: e.data})
	}
	// Everything after seq was returned: the stream ended if its last
	// event is its end.
	return out, st.ended && st.events[len(st.events)-1].end, nil
}

// After implements [EventStore]. It refuses a range that crosses a gap.
func (s *MemoryEventStore) After(_ context.Context, sessionID, lastEventID string) (string, []StoredEvent, error) {
	p, ok := parseID(lastEventID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.evict(s.now().Sub(s.start)) // as any use does
		return "", nil, ErrEventNotFound
	}
	out, _, err := s.readLocked(sessionID, p, true)
	if err != nil {
		return "", nil, err
	}
	return p.stream, out, nil
}

// Tail implements [EventLog]. It waits for a write to the session, or the
// session's deletion, without a goroutine.
func (s *MemoryEventStore) Tail(ctx context.Context, sessionID, lastEventID string) (LogBatch, error) {
	p, ok := parseID(lastEventID)
	if !ok {
		return LogBatch{}, ErrEventNotFound
	}
	b := LogBatch{StreamID: p.stream}
	waiting := false
	defer func() {
		if waiting {
			s.mu.Lock()
			s.tails--
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		events, ended, err := s.readLocked(sessionID, p, false)
		if err != nil || len(events) > 0 || ended {
			s.mu.Unlock()
			if err != nil {
				return LogBatch{}, err
			}
			b.Events, b.Ended = events, ended
			return b, nil
		}
		if !waiting {
			if s.tails >= s.maxTails {
				s.mu.Unlock()
				return LogBatch{}, ErrTailLimit
			}
			s.tails++
			waiting = true
		}
		sess := s.sessions[sessionID] // readLocked found it
		if sess.wake == nil {
			sess.wake = make(chan struct{})
		}
		wake := sess.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return b, ctx.Err()
		}
		s.mu.Lock()
		gone := sess.deleted
		s.mu.Unlock()
		if gone {
			return LogBatch{}, ErrEventNotFound
		}
	}
}

// DeleteSession implements [EventStore]. It goes through the session's own
// events only; their entries in the age queue are dropped as they reach
// its head. Tails waiting on the session return.
func (s *MemoryEventStore) DeleteSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[sessionID]
	if sess == nil {
		return nil
	}
	for _, st := range sess.streams {
		for _, e := range st.events {
			s.bytes -= len(e.data)
			s.visits++
		}
		s.dead += len(st.events)
		st.events = nil
		st.deleted = true
	}
	if sess.wake != nil {
		close(sess.wake)
		sess.wake = nil
	}
	sess.deleted = true
	delete(s.sessions, sessionID)
	s.compact()
	return nil
}
