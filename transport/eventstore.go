package transport

import (
	"context"
	"errors"
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

// StoredEvent is an event returned by [EventStore.After].
type StoredEvent struct {
	ID   string
	Data []byte
}

// ErrEventNotFound is returned by [EventStore.After] when a stream cannot be
// resumed from the given event.
var ErrEventNotFound = errors.New("transport: event not found")

// MemoryEventStoreOptions bounds a [NewMemoryEventStore]. The zero value
// gives the defaults.
type MemoryEventStoreOptions struct {
	// MaxBytes bounds the total size of the stored event data; the oldest
	// events are discarded past it. Zero means 16 MiB.
	MaxBytes int
	// MaxAge is how long an event is kept. Zero means 5 minutes.
	MaxAge time.Duration
}

// MemoryEventStore is the in-memory [EventStore] returned by
// [NewMemoryEventStore]. It keeps events in one process only. A stream's
// record goes with its last event, and ending a session costs what that
// session stored.
type MemoryEventStore struct {
	maxBytes int
	maxAge   time.Duration
	now      func() time.Time
	epoch    time.Time // event times are durations since it (monotonic)

	mu       sync.Mutex
	bytes    int                    // size of the stored event data
	sessions map[string]*memSession // by session ID
	order    []memEventRef          // every queued event, oldest first
	head     int                    // index of the oldest live entry of order
	dead     int                    // entries of order[head:] whose session was deleted
	visits   int                    // events DeleteSession went through (for tests)
}

// memSession is one session's events. Sequence numbers are per session, so
// that a stream whose record went with its events and that gets new ones
// continues its IDs instead of repeating them.
type memSession struct {
	streams map[string]*memStream
	next    int64 // sequence number the next event gets
	evicted int64 // highest sequence number evicted; -1 for none
}

type memStream struct {
	id      string
	sess    *memSession
	events  []memEvent
	evicted int64 // highest sequence number of this stream evicted; -1 for none
	deleted bool  // the session was deleted: the events are gone
}

type memEvent struct {
	seq  int64
	data []byte
}

type memEventRef struct {
	stream *memStream
	size   int
	at     time.Duration // since the store's epoch
}

// NewMemoryEventStore returns an in-memory event store bounded by size and
// age. opts may be nil.
func NewMemoryEventStore(opts *MemoryEventStoreOptions) *MemoryEventStore {
	s := &MemoryEventStore{maxBytes: 16 << 20, maxAge: 5 * time.Minute, now: time.Now, epoch: time.Now(), sessions: make(map[string]*memSession)}
	if opts != nil {
		if opts.MaxBytes > 0 {
			s.maxBytes = opts.MaxBytes
		}
		if opts.MaxAge > 0 {
			s.maxAge = opts.MaxAge
		}
	}
	return s
}

// Append implements [EventStore]. The event ID is "<stream>_<sequence>",
// with sequence numbers increasing across the session's streams.
func (s *MemoryEventStore) Append(_ context.Context, sessionID, streamID string, data []byte) (string, error) {
	d := make([]byte, len(data))
	copy(d, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().Sub(s.epoch)
	s.evict(now)
	sess := s.sessions[sessionID]
	if sess == nil {
		sess = &memSession{evicted: -1}
		s.sessions[sessionID] = sess
	}
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
	seq := sess.next
	sess.next++
	st.events = append(st.events, memEvent{seq: seq, data: d})
	s.order = append(s.order, memEventRef{stream: st, size: len(d), at: now})
	s.bytes += len(d)
	s.evict(now)
	return streamID + "_" + strconv.FormatInt(seq, 10), nil
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

// After implements [EventStore].
func (s *MemoryEventStore) After(_ context.Context, sessionID, lastEventID string) (string, []StoredEvent, error) {
	i := strings.LastIndexByte(lastEventID, '_')
	if i < 0 {
		return "", nil, ErrEventNotFound
	}
	streamID := lastEventID[:i]
	seq, err := strconv.ParseInt(lastEventID[i+1:], 10, 64)
	if err != nil || seq < 0 {
		return "", nil, ErrEventNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evict(s.now().Sub(s.epoch))
	sess := s.sessions[sessionID]
	if sess == nil || seq >= sess.next {
		return "", nil, ErrEventNotFound
	}
	st := sess.streams[streamID]
	if st == nil {
		// Every event the stream had is gone. None came after lastEventID
		// if the session lost nothing after it.
		if sess.evicted > seq {
			return "", nil, ErrEventNotFound
		}
		return streamID, nil, nil
	}
	if st.evicted > seq {
		return "", nil, ErrEventNotFound // events after it were discarded
	}
	var out []StoredEvent
	for _, e := range st.events {
		if e.seq > seq {
			out = append(out, StoredEvent{ID: streamID + "_" + strconv.FormatInt(e.seq, 10), Data: e.data})
		}
	}
	return streamID, out, nil
}

// DeleteSession implements [EventStore]. It goes through the session's own
// events only; their entries in the age queue are dropped as they reach
// its head.
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
	delete(s.sessions, sessionID)
	s.compact()
	return nil
}
