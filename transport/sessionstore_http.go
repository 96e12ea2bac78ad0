//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// sessionRecords is a handler's use of its SessionStore.
type sessionRecords struct {
	h      *StreamableHTTPHandler
	store  SessionStore
	hasher SessionHasher
	ttl    time.Duration // a record's life after the last touch
	every  time.Duration // between rechecks; 0: every request
	// relay carries the sessions' messages between replicas (set by
	// mcplink.AttachRelay before the handler serves); nil without one.
	relay mcplink.Relay
	self  string // this replica's ID on the relay
	// held is the store as SessionHolders: the store itself when it is
	// one and the handler has a relay (the replicas holding a copy of a
	// session are then recorded, and a deletion told to the others only
	// when one does), else plainHolders, which records none.
	held SessionHolders
	// streamTag ends the IDs of the response streams this replica
	// numbers: random for each handler, so that two replicas serving
	// one session never write one stream of the shared event log.
	streamTag string
}

func newSessionRecords(h *StreamableHTTPHandler) *sessionRecords {
	sr := &sessionRecords{h: h, store: h.opts.SessionStore, held: plainHolders{h.opts.SessionStore}, ttl: h.idle}
	var tag [6]byte
	rand.Read(tag[:]) // never fails
	sr.streamTag = hex.EncodeToString(tag[:])
	if sr.ttl <= 0 {
		sr.ttl = time.Hour
	}
	switch {
	case h.opts.SessionRecheck > 0:
		sr.every = h.opts.SessionRecheck
	case h.opts.SessionRecheck == 0:
		sr.every = sr.ttl / 10
	}
	if hs, ok := h.sids.(SessionHasher); ok {
		sr.hasher = hs
	} else {
		sr.hasher = newLocalSessionIDs()
	}
	return sr
}

func (sr *sessionRecords) principalHash(id, principal string) string {
	if principal == "" {
		return ""
	}
	return sr.hasher.SessionHash(id, "principal", principal)
}

func (sr *sessionRecords) peerHash(peer string) string {
	if peer == "" {
		return ""
	}
	return sr.hasher.SessionHash("", "peer", peer)
}

// lookupError is why a request's session cannot be served: the status
// and message to answer with.
type lookupError struct {
	status int
	msg    string
}

func (e *lookupError) Error() string { return e.msg }

var (
	errStoreDown      = &lookupError{http.StatusServiceUnavailable, "Service Unavailable: the session store cannot be reached; retry"}
	errOtherPrincipal = &lookupError{http.StatusForbidden, "Forbidden: session belongs to another principal"}
)

// writeLookupError answers a request whose session cannot be served.
func writeLookupError(w http.ResponseWriter, e *lookupError) {
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSONRPCError(w, e.status, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, e.msg)
}

// newRecord returns the record of the new session s of peer, which
// admit stores once the session's initialize has run.
func (sr *sessionRecords) newRecord(s *httpSession, peer string) *SessionRecord {
	return &SessionRecord{
		ID:        s.id,
		Principal: sr.principalHash(s.id, s.principal),
		Peer:      sr.peerHash(peer),
		Schema:    SessionRecordSchema,
		Expires:   time.Now().Add(sr.ttl),
	}
}

// admit stores rec, the record of the new session s, admitting the
// session in the store, or returns why not (and keeps it for the
// initialize's answer: see created).
//
// A session's record is created by the first save of its initialize,
// with the initialize's snapshot in it, rather than before the
// initialize runs and then saved: one round trip to the store, not
// two. No other replica can ask for the session before the initialize
// is answered: its ID is in that answer.
func (sr *sessionRecords) admit(ctx context.Context, s *httpSession, rec *SessionRecord) *lookupError {
	lim := SessionLimits{MaxSessions: sr.h.limits.max, MaxSessionsPerPeer: sr.h.limits.perPeer}
	err := sr.held.CreateHeld(ctx, rec, lim, sr.self)
	var lerr *lookupError
	switch {
	case err == nil:
		s.touched.Store(time.Now().UnixNano())
		s.mu.Lock()
		s.rec, s.pending = rec, nil
		s.mu.Unlock()
		return nil
	case errors.Is(err, ErrTooManyPeerSessions):
		lerr = &lookupError{http.StatusTooManyRequests, "Too Many Requests: too many sessions for this client"}
	case errors.Is(err, ErrTooManySessions):
		lerr = &lookupError{http.StatusServiceUnavailable, "Service Unavailable: too many sessions"}
	default:
		sr.h.logger.Warn("mcp http: session store create failed", "err", err)
		lerr = errStoreDown
	}
	s.mu.Lock()
	s.pending, s.refused = nil, lerr
	s.mu.Unlock()
	return lerr
}

// created makes sure that the record of s, a session whose initialize
// was answered (ok: successfully), is in the store before the answer
// goes out: it returns why the session was refused when its creation
// failed, and creates the record now when the initialize saved no
// snapshot. A failed initialize needs no record.
func (sr *sessionRecords) created(ctx context.Context, s *httpSession, ok bool) *lookupError {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	pending, refused := s.pending, s.refused
	s.mu.Unlock()
	switch {
	case refused != nil:
		return refused
	case pending == nil || !ok:
		return nil
	}
	return sr.admit(ctx, s, pending)
}

// restore builds, from its record, the session id that this replica does
// not hold, for request r; nil, nil when there is no record.
func (sr *sessionRecords) restore(r *http.Request, id string) (*httpSession, *lookupError) {
	h := sr.h
	rec, err := sr.held.GetHeld(r.Context(), id, sr.self)
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, nil
	case err != nil:
		h.logger.Warn("mcp http: session store read failed", "session", id, "err", err)
		return nil, errStoreDown
	}
	principal := PrincipalFromContext(r.Context())
	if rec.Principal != sr.principalHash(id, principal) {
		return nil, errOtherPrincipal
	}
	peer, auth := peerOf(r)
	a, evicted, status := h.sessions.reserve(peer, auth, h.limits)
	for _, v := range evicted {
		h.logger.Debug("mcp http: session evicted", "session", v.id)
		v.terminate(ErrSessionEvicted)
	}
	switch status {
	case http.StatusTooManyRequests:
		return nil, &lookupError{status, "Too Many Requests: too many sessions for this client"}
	case http.StatusServiceUnavailable:
		return nil, &lookupError{status, "Service Unavailable: too many sessions"}
	}
	s := h.newSession(id, principal, false, rec.ProtocolVersion, a)
	s.sessionStored = &sessionStored{rec: rec}
	s.restored = rec.State
	if s.restored == nil {
		s.restored = jsontext.Value("{}")
	}
	s.adm.established.Store(true)
	s.touched.Store(time.Now().UnixNano())
	if err := h.connect(r.Context(), storedConn{s}); err != nil {
		h.logger.Error("mcp http: connect failed", "err", err)
		s.Close()
		return nil, &lookupError{http.StatusInternalServerError, "Internal Server Error"}
	}
	if !h.sessions.promote(s) {
		// Another request restored it meanwhile, or the handler closed.
		s.terminate(ErrSessionTerminated)
		if other, ok := h.sessions.lookup(id); ok {
			return other, nil
		}
		return nil, errStoreDown
	}
	s.mu.Lock()
	s.armIdleLocked() // the request may fail before it counts as one
	s.mu.Unlock()
	return s, nil
}

// recheck touches the record of s, a session this replica holds, when
// the last touch is older than the recheck interval: it returns nil when
// the record is gone (deleted on another replica, or expired), and
// passes the snapshot on to the MCP session when another replica changed
// it. While the store fails, s is served from this replica's copy.
func (sr *sessionRecords) recheck(ctx context.Context, s *httpSession) *httpSession {
	now := time.Now()
	if last := s.touched.Load(); sr.every > 0 && now.UnixNano()-last < int64(sr.every) {
		return s
	}
	s.touched.Store(now.UnixNano())
	v, err := sr.store.Touch(ctx, s.id, now.Add(sr.ttl))
	switch {
	case errors.Is(err, ErrSessionNotFound):
		sr.h.logger.Debug("mcp http: session record gone; closing", "session", s.id)
		s.terminate(ErrSessionTerminated)
		return nil
	case err != nil:
		sr.h.logger.Warn("mcp http: session store touch failed", "session", s.id, "err", err)
		return s
	}
	s.mu.Lock()
	changed := s.rec != nil && v != s.rec.Version
	s.mu.Unlock()
	if changed {
		sr.refresh(ctx, s)
	}
	return s
}

// refresh reads the record of s again and passes its snapshot on,
// reporting whether it could read it. Reads and saves of one session's
// record are serialized (saveMu), so that a snapshot read before a save
// is never applied after it.
func (sr *sessionRecords) refresh(ctx context.Context, s *httpSession) bool {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	return sr.refreshLocked(ctx, s)
}

// refreshLocked is refresh with s.saveMu held.
func (sr *sessionRecords) refreshLocked(ctx context.Context, s *httpSession) bool {
	rec, err := sr.store.Get(ctx, s.id)
	if err != nil {
		sr.h.logger.Warn("mcp http: session store read failed", "session", s.id, "err", err)
		return false
	}
	s.mu.Lock()
	if s.rec != nil && rec.Version <= s.rec.Version {
		s.mu.Unlock()
		return true
	}
	s.rec = rec
	f := s.onState
	s.mu.Unlock()
	if f != nil && rec.State != nil {
		f(rec.State)
	}
	return true
}

// serveDELETE serves a DELETE with a session store: the record goes,
// whichever replica holds the session, and the copy this replica holds.
// With a relay the other replicas are told, and drop their copies at
// once; without one, a copy another replica holds lives until its next
// recheck, with the requests it is handling.
func (sr *sessionRecords) serveDELETE(w http.ResponseWriter, r *http.Request) {
	h := sr.h
	id := headerValue(r.Header, headerSessionID)
	if id == "" {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: missing Mcp-Session-Id header")
		return
	}
	s, lerr := h.session(r, id, false)
	principal := PrincipalFromContext(r.Context())
	switch {
	case lerr != nil:
		writeLookupError(w, lerr)
		return
	case s != nil && s.principal != principal:
		writeLookupError(w, errOtherPrincipal)
		return
	case s == nil && h.sids.CheckSessionID(id):
		rec, err := sr.store.Get(r.Context(), id)
		switch {
		case errors.Is(err, ErrSessionNotFound):
		case err != nil:
			h.logger.Warn("mcp http: session store read failed", "session", id, "err", err)
			writeLookupError(w, errStoreDown)
			return
		case rec.Principal != sr.principalHash(id, principal):
			writeLookupError(w, errOtherPrincipal)
			return
		}
	}
	if s == nil && !h.sids.CheckSessionID(id) {
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: unknown or expired session")
		return
	}
	elsewhere, err := sr.deleteRecord(r.Context(), id)
	switch {
	case errors.Is(err, ErrSessionNotFound) && s == nil:
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: unknown or expired session")
		return
	case err != nil && !errors.Is(err, ErrSessionNotFound):
		h.logger.Warn("mcp http: session store delete failed", "session", id, "err", err)
		writeLookupError(w, errStoreDown)
		return
	}
	if err == nil && elsewhere {
		// The replicas holding a copy drop it now, cancelling its work.
		sr.announce(r.Context(), mcplink.RelayDeleted, id, 0)
	}
	if s != nil {
		s.deleteEvents.Store(true)
		s.terminate(ErrSessionTerminated)
	} else if st := h.opts.EventStore; st != nil {
		if err := st.DeleteSession(r.Context(), id); err != nil {
			h.logger.Warn("mcp http: deleting session events failed", "err", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteRecord deletes the record of the session id and reports whether
// a replica other than this one may hold a copy of the session (always,
// unless the store records the holders).
func (sr *sessionRecords) deleteRecord(ctx context.Context, id string) (elsewhere bool, err error) {
	return sr.held.DeleteHeld(ctx, id, sr.self)
}

// plainHolders is a SessionStore used as a SessionHolders that records
// no holders: any replica may hold a copy of any session.
type plainHolders struct{ SessionStore }

func (p plainHolders) CreateHeld(ctx context.Context, rec *SessionRecord, lim SessionLimits, _ string) error {
	return p.Create(ctx, rec, lim)
}

func (p plainHolders) GetHeld(ctx context.Context, id, _ string) (*SessionRecord, error) {
	return p.Get(ctx, id)
}

func (p plainHolders) DeleteHeld(ctx context.Context, id, _ string) (bool, error) {
	return true, p.Delete(ctx, id)
}

// sessionStored is what a session of a handler with a SessionStore keeps
// of its record: the record as this replica last wrote or read it
// (guarded by the session's mu), the snapshot the session was restored
// with, the MCP session's function taking a snapshot changed elsewhere
// (guarded by mu), the record of a new session until the store has it
// and why the store refused it (guarded by mu; see admit), when the
// record was last touched (UnixNano), whether
// the client deleted the session (so its events go too), and the lock
// serializing saves.
type sessionStored struct {
	rec          *SessionRecord
	pending      *SessionRecord // the record the initialize's first save creates
	refused      *lookupError   // why the store refused to create it
	restored     []byte
	onState      func([]byte)
	touched      atomic.Int64
	deleteEvents atomic.Bool
	saveMu       sync.Mutex

	// With a relay: the GET streams of the session open here and the
	// timer that touches the record while any is (guarded by the
	// session's mu); the latest version another replica announced and
	// whether a goroutine reads the record for it; the relayed messages
	// waiting for the session and whether a goroutine delivers them
	// (guarded by relayMu).
	getStreams   int
	streamTimer  *time.Timer
	wantVersion  atomic.Int64
	refreshing   atomic.Bool
	relayMu      sync.Mutex
	relayQ       []relayed
	relayRunning bool
}

// storedConn is the connection of a session kept in a SessionStore,
// which package mcp saves its snapshot through (mcplink.SessionState).
type storedConn struct{ *httpSession }

// RestoredState implements mcplink.SessionState.
func (c storedConn) RestoredState() []byte { return c.restored }

// WatchState implements mcplink.SessionState.
func (c storedConn) WatchState(f func([]byte)) {
	c.mu.Lock()
	c.onState = f
	c.mu.Unlock()
}

// SaveState implements mcplink.SessionState: the record's State becomes
// state by compare and swap. When another replica changed the record
// since this one last read it, it reads the record again, passes its
// snapshot to the MCP session (the WatchState function) and returns
// ErrVersionConflict, so that the MCP session applies its change to that
// snapshot and saves again: no change made elsewhere is overwritten.
func (c storedConn) SaveState(ctx context.Context, version string, state []byte) error {
	s, store := c.httpSession, c.h.store.store
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if s.rec == nil {
		rec := s.pending
		s.mu.Unlock()
		if rec == nil {
			return ErrSessionNotFound
		}
		// The initialize's save: the record is created with it.
		rec.State = append(jsontext.Value(nil), state...)
		if version != "" {
			rec.ProtocolVersion = version
		}
		if c.h.store.admit(ctx, s, rec) != nil {
			return fmt.Errorf("transport: creating the session's record: %w", mcplink.ErrNotAdmitted)
		}
		return nil
	}
	rec := s.rec.Clone()
	s.mu.Unlock()
	rec.State = append(jsontext.Value(nil), state...)
	if version != "" {
		rec.ProtocolVersion = version
	}
	err := store.Update(ctx, rec)
	if err == nil {
		s.mu.Lock()
		s.rec = rec
		s.mu.Unlock()
		if s.adm.established.Load() {
			c.h.store.announce(ctx, mcplink.RelayChanged, s.id, rec.Version)
		}
		// Else the save is initialize's, made before its answer: no
		// other replica knows the session's ID yet, so none holds a
		// copy to tell (every later request, here or restored
		// elsewhere, marks the session established first).
		return nil
	}
	if errors.Is(err, ErrVersionConflict) {
		c.h.store.refreshLocked(ctx, s)
	}
	return fmt.Errorf("transport: saving session state: %w", err)
}

// Messages for sessions held on other replicas.
//
// With a SessionStore and a relay (package mcp's Bus, attached by
// mcp.NewStreamableHTTPHandler when the server has one; see
// mcplink.Relay), a handler tells the other replicas when a client
// deletes a session and when a record changes, passes on a
// cancellation for a request it is not running, the client's answer to a
// request another replica sent (its ID names that replica), and what a
// session sends outside any request when the GET stream is held by
// another replica (the record names it). Without a relay none of this
// runs: every check of it is one nil test, off the paths of requests.

func init() {
	mcplink.AttachRelay = func(handler any, r mcplink.Relay) mcplink.RelayTarget {
		if r == nil || !mcplink.ValidName(r.Replica()) {
			return nil
		}
		switch h := handler.(type) {
		case *StreamableHTTPHandler:
			if h.store == nil {
				return nil
			}
			h.store.relay, h.store.self = r, r.Replica()
			if held, ok := h.store.store.(SessionHolders); ok {
				h.store.held = held
			}
			return (*relayTarget)(h)
		case *SSEHandler:
			if !r.Addressed() {
				return nil
			}
			h.relay = r
			return (*sseRelayTarget)(h)
		}
		return nil
	}
}

// maxRelayQueue bounds the relayed messages waiting for one session.
const maxRelayQueue = 64

// errRelayTooLarge refuses to relay a message over mcplink.MaxRelayBytes.
var errRelayTooLarge = errors.New("transport: message too large to relay to another replica (over mcplink.MaxRelayBytes, 60 KiB)")

// relayed is a message another replica relayed for a session held here.
type relayed struct {
	kind string
	m    jsonrpc.Message
}

// relayTarget is the handler as its relay delivers to it.
type relayTarget StreamableHTTPHandler

// RelayReceive implements mcplink.RelayTarget. It never waits for a
// client: what goes to a session is queued for it (bounded), and a
// goroutine of the session's delivers it while any waits.
func (t *relayTarget) RelayReceive(kind, sid string, version int64, data []byte) {
	h := (*StreamableHTTPHandler)(t)
	if kind == mcplink.RelayGap {
		// Messages may have been lost: each copy checks its record at
		// its next request, and each GET stream held here, which may
		// have missed what others relayed, ends, so that its client
		// opens it again (resuming from the event log, if any) rather
		// than wait on an incomplete stream.
		for _, id := range h.sessions.ids() {
			s, ok := h.sessions.lookup(id)
			if !ok || s.sessionStored == nil {
				continue
			}
			s.touched.Store(0)
			s.mu.Lock()
			st := s.standalone
			s.mu.Unlock()
			if st != nil {
				st.mu.Lock()
				if st.w != nil {
					st.releaseLocked()
				}
				st.mu.Unlock()
			}
		}
		return
	}
	s, ok := h.sessions.lookup(sid)
	if !ok || s.sessionStored == nil {
		return // not held here
	}
	switch kind {
	case mcplink.RelayDeleted:
		h.logger.Debug("mcp http: session deleted on another replica; closing", "session", sid)
		// On a goroutine of its own: the bus's serves every session.
		go s.terminate(ErrSessionTerminated)
		return
	case mcplink.RelayChanged:
		h.store.refreshTo(s, version)
		return
	}
	m, err := decodeOwned(&h.opts.DecodeLimits, data)
	valid := err == nil
	if valid {
		switch kind {
		case mcplink.RelayCancel:
			r, ok := m.(*jsonrpc.Request)
			valid = ok && r.Method == methodCancelled && r.IsNotification()
		case mcplink.RelayAnswer:
			r, ok := m.(*jsonrpc.Response)
			valid = ok && r.ID.IsValid()
		case mcplink.RelayStream:
			_, valid = m.(*jsonrpc.Request)
		default:
			valid = false
		}
	}
	if !valid {
		h.logger.Warn("mcp http: dropping a malformed relayed message", "kind", kind, "session", sid, "bytes", len(data), "err", err)
		return
	}
	s.queueRelayed(relayed{kind, m})
}

// queueRelayed queues a relayed message for the session, never waiting.
// Past maxRelayQueue it is dropped (a request for the GET stream is
// refused to the replica that sent it).
func (s *httpSession) queueRelayed(item relayed) {
	st := s.sessionStored
	st.relayMu.Lock()
	if len(st.relayQ) >= maxRelayQueue {
		st.relayMu.Unlock()
		s.h.logger.Warn("mcp http: relayed messages queue full; dropping one", "session", s.id, "kind", item.kind)
		if item.kind == mcplink.RelayStream {
			s.refuseRelayed(item.m.(*jsonrpc.Request), "the session's messages queue is full")
		}
		return
	}
	st.relayQ = append(st.relayQ, item)
	start := !st.relayRunning
	st.relayRunning = true
	st.relayMu.Unlock()
	if start {
		go s.deliverRelayed()
	}
}

// deliverRelayed delivers the queued relayed messages until none waits.
func (s *httpSession) deliverRelayed() {
	st := s.sessionStored
	for {
		st.relayMu.Lock()
		if len(st.relayQ) == 0 {
			st.relayQ, st.relayRunning = nil, false
			st.relayMu.Unlock()
			return
		}
		item := st.relayQ[0]
		st.relayQ[0] = relayed{}
		st.relayQ = st.relayQ[1:]
		st.relayMu.Unlock()
		switch item.kind {
		case mcplink.RelayCancel, mcplink.RelayAnswer:
			// As if the client had POSTed it here: a cancellation ends
			// the route of its request, an answer resolves the request
			// this replica sent (an unknown ID is dropped, as ever).
			s.deliver(item.m, nil)
		case mcplink.RelayStream:
			s.writeRelayed(item.m.(*jsonrpc.Request))
		}
	}
}

// writeRelayed writes a message another replica made for the session's
// GET stream, held here. A request that cannot go out is refused to the
// replica that sent it, so that its caller does not wait for an answer
// that cannot come.
func (s *httpSession) writeRelayed(m *jsonrpc.Request) {
	s.mu.Lock()
	st, closed := s.standalone, s.closed
	s.mu.Unlock()
	err := errNoStream
	if st != nil && !closed {
		err = st.send(context.Background(), m, 0, nil)
	}
	if err != nil && !m.IsNotification() {
		s.refuseRelayed(m, "no stream is open to the client on the replica holding its GET stream")
	}
}

// refuseRelayed answers, with an error, a relayed request that cannot
// reach the client, to the replica its ID names.
func (s *httpSession) refuseRelayed(m *jsonrpc.Request, why string) {
	if m.IsNotification() {
		return
	}
	sr := s.h.store
	to, ok := mcplink.RequestIDReplica(m.ID.String())
	if !ok || to == sr.self {
		return
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}})
	if err == nil {
		err = sr.relay.Send(context.Background(), to, mcplink.RelayAnswer, s.id, 0, data)
	}
	if err != nil {
		s.h.logger.Warn("mcp http: refusing a relayed request failed", "session", s.id, "err", err)
	}
}

// relayTo returns the replica that holds the session's GET stream, when
// a message written outside any request must go there: "" when it stays
// here (no relay, no other replica named, or the bus cannot address one).
func (s *httpSession) relayTo(ctx context.Context) string {
	sr := s.h.store
	if sr == nil || sr.relay == nil || s.sessionStored == nil || mcplink.IsNoRelay(ctx) {
		return ""
	}
	s.mu.Lock()
	to := ""
	if s.rec != nil {
		to = s.rec.Replica
	}
	s.mu.Unlock()
	if to == "" || to == sr.self || !sr.relay.Addressed() {
		return ""
	}
	return to
}

// gone reports whether replica is known to have ended: the bus says it
// is not subscribed (see writerWatch). A bus that cannot tell, or fails,
// says nothing.
func (sr *sessionRecords) gone(ctx context.Context, replica string) bool {
	alive, err := sr.relay.Subscribed(ctx, replica)
	return err == nil && !alive
}

// sendOrphaned deals with m, a notification sent outside any request,
// whose GET stream the record says the replica dead holds, which the bus
// did not deliver to (mcplink.ErrNoSubscriber: dead is gone): a replica
// that took the stream over since (the record as stored names it) gets
// m; else, with an event log, m is appended to dead's GET stream
// (numbered after its last event), so that the client, which resumes
// that stream on some replica once its connection broke, gets it in the
// replay, or, when it appends after the replay, in what the replica
// that took the stream over reads of it again (see adopt). It reports
// whether it dealt with m: if not, m goes to this replica's GET stream,
// if any.
func (s *httpSession) sendOrphaned(ctx context.Context, dead string, m jsonrpc.Message) (bool, error) {
	sr := s.h.store
	rec, err := sr.store.Get(ctx, s.id)
	if err != nil {
		return false, nil
	}
	if to := rec.Replica; to != "" && to != dead && to != sr.self {
		if err := s.relayOut(ctx, to, m); !errors.Is(err, mcplink.ErrNoSubscriber) {
			return true, err
		}
	}
	s.mu.Lock()
	here := s.standalone != nil
	s.mu.Unlock()
	if here || rec.Replica == sr.self || s.h.log == nil {
		return false, nil
	}
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return true, err
	}
	if _, err := s.h.log.Write(ctx, s.id, "get."+dead, LogEvent{Data: data}); err != nil {
		return true, fmt.Errorf("transport: storing a message for a GET stream whose replica is gone: %w", err)
	}
	return true, nil
}

// relayOut sends m, written outside any request, to the replica holding
// the session's GET stream.
func (s *httpSession) relayOut(ctx context.Context, to string, m jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	if len(data) > mcplink.MaxRelayBytes {
		return errRelayTooLarge
	}
	return s.h.store.relay.Send(ctx, to, mcplink.RelayStream, s.id, 0, data)
}

// relayIncoming passes on what a POST without requests carries for other
// replicas: the answers to requests they sent (each to its replica) and
// the cancellations of requests not in flight here (to all). It returns
// what is left to deliver here (nil for nothing), or an error when the
// bus did not take a message: the POST then fails, and nothing of it is
// delivered, so that the client sends it again (an answer that reached
// its replica meanwhile is dropped there as unknown the second time).
func (s *httpSession) relayIncoming(ctx context.Context, msg jsonrpc.Message, msgs []jsonrpc.Message) (jsonrpc.Message, error) {
	sr := s.h.store
	var keep []jsonrpc.Message
	forwarded := false
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			if !m.ID.IsString() || !sr.relay.Addressed() {
				break
			}
			to, ok := mcplink.RequestIDReplica(m.ID.String())
			if !ok || to == sr.self {
				break
			}
			data, err := jsonrpc.EncodeMessage(m)
			if err == nil && len(data) > mcplink.MaxRelayBytes {
				err = errRelayTooLarge
			}
			if err == nil {
				err = sr.relay.Send(ctx, to, mcplink.RelayAnswer, s.id, 0, data)
			}
			if err != nil {
				return nil, err
			}
			forwarded = true
			continue
		case *jsonrpc.Request:
			if m.Method != methodCancelled || !m.IsNotification() || s.cancelsHere(m) {
				break
			}
			data, err := jsonrpc.EncodeMessage(m)
			if err == nil && len(data) > mcplink.MaxRelayBytes {
				err = errRelayTooLarge
			}
			if err == nil {
				err = sr.relay.Send(ctx, "", mcplink.RelayCancel, s.id, 0, data)
			}
			if err != nil {
				return nil, err
			}
		}
		keep = append(keep, m)
	}
	switch {
	case !forwarded:
		return msg, nil
	case len(keep) == 0:
		return nil, nil
	}
	if _, isBatch := msg.(jsonrpc.Batch); !isBatch && len(keep) == 1 {
		return keep[0], nil
	}
	return jsonrpc.Batch(keep), nil
}

// cancelsHere reports whether the request a notifications/cancelled
// names is in flight on this replica (an exchange here waits for it).
func (s *httpSession) cancelsHere(note *jsonrpc.Request) bool {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if jsonv2.Unmarshal(note.Params, &p) != nil || !p.RequestID.IsValid() {
		return true // nothing to pass on
	}
	return s.routeOf(p.RequestID) != nil
}

// writeRelayError answers a POST whose messages for another replica the
// bus did not take.
func writeRelayError(w http.ResponseWriter, err error) {
	if errors.Is(err, errRelayTooLarge) {
		writeJSONRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Content Too Large: "+err.Error())
		return
	}
	w.Header().Set("Retry-After", "1")
	writeJSONRPCError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Service Unavailable: the message could not be passed to the replica awaiting it; retry")
}

// announce tells the other replicas that the record of the session id
// changed (RelayChanged, version) or was deleted (RelayDeleted). A
// failure is logged: they find out at their next recheck.
func (sr *sessionRecords) announce(ctx context.Context, kind, id string, version int64) {
	if sr.relay == nil {
		return
	}
	if err := sr.relay.Send(ctx, "", kind, id, version, nil); err != nil {
		sr.h.logger.Warn("mcp http: telling the other replicas failed; they find out at their next recheck", "kind", kind, "session", id, "err", err)
	}
}

// refreshTo reads the record of s again, in a goroutine of its own, when
// this copy is older than version; one such goroutine per session at a
// time, which reads until the copy is as new as the latest version
// announced.
func (sr *sessionRecords) refreshTo(s *httpSession, version int64) {
	for {
		w := s.wantVersion.Load()
		if version <= w || s.wantVersion.CompareAndSwap(w, version) {
			break
		}
	}
	if !s.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		read := false // the record was read, and was no newer than have
		for {
			have := s.recordVersion()
			if have >= s.wantVersion.Load() || read || s.isClosed() {
				s.refreshing.Store(false)
				// An announcement that came meanwhile is read on its
				// own, unless this one took it.
				if have < s.wantVersion.Load() && !read && !s.isClosed() && s.refreshing.CompareAndSwap(false, true) {
					continue
				}
				return
			}
			if !sr.refresh(context.Background(), s) {
				s.refreshing.Store(false)
				return
			}
			read = s.recordVersion() == have
		}
	}()
}

// recordVersion returns the version of the record as this copy has it.
func (s *httpSession) recordVersion() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return 0
	}
	return s.rec.Version
}

// streamOpened records that this replica holds the GET stream of s,
// which has a record, so that the other replicas relay to it what they
// send the session outside a request, and keeps the record alive while
// the stream lives.
func (sr *sessionRecords) streamOpened(ctx context.Context, s *httpSession) {
	if err := sr.setReplica(ctx, s, sr.self, ""); err != nil {
		sr.h.logger.Warn("mcp http: recording the replica of the GET stream failed; other replicas keep what they send outside requests", "session", s.id, "err", err)
	}
	s.mu.Lock()
	s.getStreams++
	if s.getStreams == 1 && !s.closed {
		if s.streamTimer == nil {
			s.streamTimer = time.AfterFunc(sr.keepEvery(), func() { sr.keepStream(s) })
		} else {
			s.streamTimer.Reset(sr.keepEvery())
		}
	}
	s.mu.Unlock()
}

// streamClosed undoes streamOpened when the GET stream ends: the record
// no longer names this replica, unless another took the stream since.
func (sr *sessionRecords) streamClosed(s *httpSession) {
	s.mu.Lock()
	s.getStreams--
	last := s.getStreams == 0
	if last && s.streamTimer != nil {
		s.streamTimer.Stop()
	}
	closed := s.closed
	s.mu.Unlock()
	if !last || closed && s.deleteEvents.Load() {
		return
	}
	if err := sr.setReplica(context.Background(), s, "", sr.self); err != nil && !errors.Is(err, ErrSessionNotFound) {
		sr.h.logger.Warn("mcp http: clearing the replica of the GET stream failed", "session", s.id, "err", err)
	}
}

// keepEvery is how often a live GET stream touches its record.
func (sr *sessionRecords) keepEvery() time.Duration {
	if sr.every > 0 {
		return sr.every
	}
	return sr.ttl / 10
}

// keepStream touches the record of s, whose GET stream this replica
// holds, so that the session does not expire elsewhere while the stream
// lives; it runs from the stream's timer (no goroutine while it waits).
func (sr *sessionRecords) keepStream(s *httpSession) {
	s.mu.Lock()
	live := s.getStreams > 0 && !s.closed
	s.mu.Unlock()
	if !live {
		return
	}
	now := time.Now()
	s.touched.Store(now.UnixNano())
	_, err := sr.store.Touch(context.Background(), s.id, now.Add(sr.ttl))
	switch {
	case errors.Is(err, ErrSessionNotFound):
		sr.h.logger.Debug("mcp http: session record gone; closing", "session", s.id)
		s.terminate(ErrSessionTerminated)
		return
	case err != nil:
		sr.h.logger.Warn("mcp http: session store touch failed", "session", s.id, "err", err)
	}
	s.mu.Lock()
	if s.getStreams > 0 && !s.closed {
		s.streamTimer.Reset(sr.keepEvery())
	}
	s.mu.Unlock()
}

// setReplica sets the record's Replica to to, by compare and swap (a
// conflict reads the record again and retries, up to three tries); with
// onlyIf set, only while the record names onlyIf. It announces the
// change.
func (sr *sessionRecords) setReplica(ctx context.Context, s *httpSession, to, onlyIf string) error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	var err error
	for try := 0; try < 3; try++ {
		s.mu.Lock()
		if s.rec == nil {
			s.mu.Unlock()
			return ErrSessionNotFound
		}
		rec := s.rec.Clone()
		s.mu.Unlock()
		if rec.Replica == to || onlyIf != "" && rec.Replica != onlyIf {
			return nil
		}
		rec.Replica = to
		if err = sr.store.Update(ctx, rec); err == nil {
			s.mu.Lock()
			s.rec = rec
			s.mu.Unlock()
			sr.announce(ctx, mcplink.RelayChanged, s.id, rec.Version)
			return nil
		}
		if !errors.Is(err, ErrVersionConflict) || !sr.refreshLocked(ctx, s) {
			return err
		}
	}
	return err
}
