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
// [NewMemoryEventStore]. It keeps events in one process only.
type MemoryEventStore struct {
	maxBytes int
	maxAge   time.Duration
	now      func() time.Time

	mu       sync.Mutex
	bytes    int
	sessions map[string]map[string]*memStream // session -> stream -> events
	order    []memEventRef                    // every stored event, oldest first
	head     int                              // index of the oldest live entry of order
}

type memStream struct {
	first  int64 // sequence number of events[0]
	next   int64 // sequence number the next event gets
	events [][]byte
}

type memEventRef struct {
	session, stream string
	size            int
	at              time.Time
}

// NewMemoryEventStore returns an in-memory event store bounded by size and
// age. opts may be nil.
func NewMemoryEventStore(opts *MemoryEventStoreOptions) *MemoryEventStore {
	s := &MemoryEventStore{maxBytes: 16 << 20, maxAge: 5 * time.Minute, now: time.Now, sessions: make(map[string]map[string]*memStream)}
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

// Append implements [EventStore]. The event ID is "<stream>_<sequence>".
func (s *MemoryEventStore) Append(_ context.Context, sessionID, streamID string, data []byte) (string, error) {
	d := make([]byte, len(data))
	copy(d, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = make(map[string]*memStream)
		s.sessions[sessionID] = streams
	}
	st := streams[streamID]
	if st == nil {
		st = &memStream{}
		streams[streamID] = st
	}
	seq := st.next
	st.next++
	st.events = append(st.events, d)
	now := s.now()
	s.order = append(s.order, memEventRef{session: sessionID, stream: streamID, size: len(d), at: now})
	s.bytes += len(d)
	s.evict(now)
	return streamID + "_" + strconv.FormatInt(seq, 10), nil
}

// evict drops the oldest events while the store is over its bounds.
func (s *MemoryEventStore) evict(now time.Time) {
	for s.head < len(s.order) {
		ref := s.order[s.head]
		if s.bytes <= s.maxBytes && now.Sub(ref.at) <= s.maxAge {
			break
		}
		s.order[s.head] = memEventRef{}
		s.head++
		s.bytes -= ref.size
		streams := s.sessions[ref.session]
		if streams == nil {
			continue // the session was deleted
		}
		st := streams[ref.stream]
		if st == nil || len(st.events) == 0 {
			continue
		}
		st.events[0] = nil
		st.events = st.events[1:]
		st.first++
	}
	// Compact the order queue once most of it is dead.
	if s.head > 1024 && s.head*2 > len(s.order) {
		s.order = append(s.order[:0:0], s.order[s.head:]...)
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
	s.evict(s.now())
	st := s.sessions[sessionID][streamID]
	if st == nil || seq >= st.next || seq+1 < st.first {
		return "", nil, ErrEventNotFound
	}
	var out []StoredEvent
	for i, e := range st.events[seq+1-st.first:] {
		out = append(out, StoredEvent{ID: streamID + "_" + strconv.FormatInt(seq+1+int64(i), 10), Data: e})
	}
	return streamID, out, nil
}

// DeleteSession implements [EventStore].
func (s *MemoryEventStore) DeleteSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions[sessionID] {
		for _, e := range st.events {
			s.bytes -= len(e)
		}
	}
	delete(s.sessions, sessionID)
	// Their entries in order stay until evicted; mark them free of size.
	for i := s.head; i < len(s.order); i++ {
		if s.order[i].session == sessionID {
			s.order[i].size = 0
		}
	}
	return nil
}
