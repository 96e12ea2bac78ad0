package transport

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// SessionStore keeps the records of the Streamable HTTP sessions of the
// handshake era where every replica of a server can read them, so that a
// session initialized on one replica is served by any other (see
// [StreamableHTTPOptions.SessionStore]). It decides admission: Create
// counts the sessions, in total and per peer, across every replica that
// shares the store, so that MaxSessions and MaxSessionsPerPeer hold
// exactly. The records expire by themselves (Touch pushes the expiry
// back), so that a replica that dies leaks neither records nor admission
// slots.
//
// Every method must return within a bound of the store's own (a Redis
// store: its Timeout), and report failures of the store as errors other
// than those below, so that the handler answers 503 rather than 404: a
// 404 tells the client to drop a session that may be alive.
// Implementations are safe for concurrent use. [NewMemorySessionStore]
// is one for a single process and tests; package redisstore has one on
// Redis; mcptest.SessionStoreSuite checks one.
type SessionStore interface {
	// Create stores a new record, whose Version it sets to 1, unless the
	// store holds lim.MaxSessions unexpired records (ErrTooManySessions)
	// or lim.MaxSessionsPerPeer of rec.Peer (ErrTooManyPeerSessions; a
	// record with an empty Peer is not counted per peer), or one with
	// its ID already (ErrSessionExists). The check and the write are
	// atomic: stores shared by replicas admit exactly the bounds.
	Create(ctx context.Context, rec *SessionRecord, lim SessionLimits) error
	// Get returns the record of the session id; ErrSessionNotFound when
	// there is none (expired, deleted, or an ID the store cannot hold).
	Get(ctx context.Context, id string) (*SessionRecord, error)
	// Update replaces the record of rec.ID if its stored Version is
	// rec.Version (compare and swap), and then increments rec.Version;
	// ErrVersionConflict when the versions differ, ErrSessionNotFound when
	// there is no record. The admission fields (Peer) and the expiry
	// stay as stored: Touch moves the expiry.
	Update(ctx context.Context, rec *SessionRecord) error
	// Touch pushes the expiry of the session id back to expires and
	// returns the record's Version (so a replica holding a copy learns
	// that it changed); ErrSessionNotFound when there is no record.
	Touch(ctx context.Context, id string, expires time.Time) (version int64, err error)
	// Delete removes the record of the session id and gives its
	// admission slot back; ErrSessionNotFound when there is none.
	Delete(ctx context.Context, id string) error
}

// SessionLimits are the admission bounds of [SessionStore.Create]; zero
// means no bound.
type SessionLimits struct {
	MaxSessions        int
	MaxSessionsPerPeer int
}

// Errors of a [SessionStore]; implementations return them (or errors
// wrapping them) and callers test them with errors.Is.
var (
	ErrSessionNotFound     = errors.New("transport: session not found")
	ErrSessionExists       = errors.New("transport: session exists")
	ErrVersionConflict     = errors.New("transport: session record changed meanwhile")
	ErrTooManySessions     = errors.New("transport: too many sessions")
	ErrTooManyPeerSessions = errors.New("transport: too many sessions for this peer")
)

// SessionRecordSchema is the schema version of the records this package
// writes. A record of a later schema keeps the members this version does
// not know (see [SessionRecord.MarshalJSON]).
const SessionRecordSchema = 1

// SessionRecord is what a [SessionStore] keeps of a session.
type SessionRecord struct {
	// ID is the session ID (Mcp-Session-Id).
	ID string
	// ProtocolVersion is the negotiated protocol revision.
	ProtocolVersion string
	// Principal is a keyed hash of the principal the session belongs to
	// (see [WithPrincipal]), "" for none: the handler compares it with
	// the hash of each request's principal, and the store never holds the
	// principal itself, let alone a token.
	Principal string
	// Peer is the key the session counts under for the per-peer bound (a
	// keyed hash of the principal or remote address), "" when not
	// counted.
	Peer string
	// Replica names the replica holding the session's GET stream, "" for
	// none. (Not used yet: messages for a GET stream held elsewhere need
	// the message bus.)
	Replica string
	// State is the MCP session's snapshot, opaque to the transport:
	// package mcp writes and reads it.
	State jsontext.Value
	// Schema is the record's schema version (SessionRecordSchema when this
	// package wrote it).
	Schema int
	// Version is the record's version, set by the store: 1 on Create, one
	// more on each Update.
	Version int64
	// Expires is when the record expires unless touched.
	Expires time.Time

	unknown jsontext.Value // members of a later schema, kept
}

// sessionRecordWire is a SessionRecord's JSON form.
type sessionRecordWire struct {
	Schema          int            `json:"schema"`
	ID              string         `json:"id"`
	ProtocolVersion string         `json:"protocolVersion,omitempty"`
	Principal       string         `json:"principal,omitempty"`
	Peer            string         `json:"peer,omitempty"`
	Replica         string         `json:"replica,omitempty"`
	State           jsontext.Value `json:"state,omitempty"`
	Version         int64          `json:"version,omitempty"`
	Expires         int64          `json:"expires,omitempty"` // Unix milliseconds
	Unknown         jsontext.Value `json:",unknown"`
}

// MarshalJSON encodes the record, with the members of a later schema
// that it was decoded with, so that a replica of an older version passes
// them on.
func (r *SessionRecord) MarshalJSON() ([]byte, error) {
	w := sessionRecordWire{
		Schema: r.Schema, ID: r.ID, ProtocolVersion: r.ProtocolVersion,
		Principal: r.Principal, Peer: r.Peer, Replica: r.Replica,
		State: r.State, Version: r.Version, Unknown: r.unknown,
	}
	if w.Schema == 0 {
		w.Schema = SessionRecordSchema
	}
	if !r.Expires.IsZero() {
		w.Expires = r.Expires.UnixMilli()
	}
	return jsonv2.Marshal(&w)
}

// UnmarshalJSON decodes a record, keeping the members it does not know.
func (r *SessionRecord) UnmarshalJSON(b []byte) error {
	var w sessionRecordWire
	if err := jsonv2.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("transport: decoding session record: %w", err)
	}
	*r = SessionRecord{
		ID: w.ID, ProtocolVersion: w.ProtocolVersion, Principal: w.Principal,
		Peer: w.Peer, Replica: w.Replica, State: w.State, Schema: w.Schema,
		Version: w.Version, unknown: w.Unknown,
	}
	if w.Expires != 0 {
		r.Expires = time.UnixMilli(w.Expires)
	}
	return nil
}

// Clone returns a deep copy of the record.
func (r *SessionRecord) Clone() *SessionRecord {
	c := *r
	c.State = append(jsontext.Value(nil), r.State...)
	c.unknown = append(jsontext.Value(nil), r.unknown...)
	if r.State == nil {
		c.State = nil
	}
	if r.unknown == nil {
		c.unknown = nil
	}
	return &c
}

// MemorySessionStoreOptions configures [NewMemorySessionStore]; the zero
// value is the default.
type MemorySessionStoreOptions struct {
	// Now returns the current time (time.Now); tests give a fake clock.
	Now func() time.Time
}

// MemorySessionStore is a [SessionStore] in the memory of one process,
// for tests and for handlers of one process sharing records. Expired
// records are dropped as Create meets them. It starts no goroutine.
type MemorySessionStore struct {
	now func() time.Time

	mu    sync.Mutex
	recs  map[string]*SessionRecord
	peers map[string]int // live records per non-empty peer
}

// NewMemorySessionStore returns an empty store; opts may be nil.
func NewMemorySessionStore(opts *MemorySessionStoreOptions) *MemorySessionStore {
	s := &MemorySessionStore{now: time.Now, recs: make(map[string]*SessionRecord), peers: make(map[string]int)}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

var _ SessionStore = (*MemorySessionStore)(nil)

// liveLocked returns the unexpired record of id, dropping an expired one.
func (s *MemorySessionStore) liveLocked(id string, now time.Time) *SessionRecord {
	r := s.recs[id]
	if r != nil && !r.Expires.IsZero() && !now.Before(r.Expires) {
		s.removeLocked(r)
		return nil
	}
	return r
}

func (s *MemorySessionStore) removeLocked(r *SessionRecord) {
	delete(s.recs, r.ID)
	if r.Peer != "" {
		if s.peers[r.Peer]--; s.peers[r.Peer] <= 0 {
			delete(s.peers, r.Peer)
		}
	}
}

// pruneLocked drops the expired records.
func (s *MemorySessionStore) pruneLocked(now time.Time) {
	for id := range s.recs {
		s.liveLocked(id, now)
	}
}

// Create implements [SessionStore].
func (s *MemorySessionStore) Create(ctx context.Context, rec *SessionRecord, lim SessionLimits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.liveLocked(rec.ID, now) != nil {
		return ErrSessionExists
	}
	full := lim.MaxSessions > 0 && len(s.recs) >= lim.MaxSessions
	peerFull := lim.MaxSessionsPerPeer > 0 && rec.Peer != "" && s.peers[rec.Peer] >= lim.MaxSessionsPerPeer
	if full || peerFull {
		s.pruneLocked(now)
		full = lim.MaxSessions > 0 && len(s.recs) >= lim.MaxSessions
		peerFull = lim.MaxSessionsPerPeer > 0 && rec.Peer != "" && s.peers[rec.Peer] >= lim.MaxSessionsPerPeer
	}
	switch {
	case peerFull:
		return ErrTooManyPeerSessions
	case full:
		return ErrTooManySessions
	}
	rec.Version = 1
	c := rec.Clone()
	s.recs[c.ID] = c
	if c.Peer != "" {
		s.peers[c.Peer]++
	}
	return nil
}

// Get implements [SessionStore].
func (s *MemorySessionStore) Get(ctx context.Context, id string) (*SessionRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveLocked(id, now)
	if r == nil {
		return nil, ErrSessionNotFound
	}
	return r.Clone(), nil
}

// Update implements [SessionStore].
func (s *MemorySessionStore) Update(ctx context.Context, rec *SessionRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveLocked(rec.ID, now)
	switch {
	case r == nil:
		return ErrSessionNotFound
	case r.Version != rec.Version:
		return ErrVersionConflict
	}
	c := rec.Clone()
	c.Peer, c.Expires = r.Peer, r.Expires
	c.Version++
	s.recs[c.ID] = c
	rec.Version = c.Version
	return nil
}

// Touch implements [SessionStore].
func (s *MemorySessionStore) Touch(ctx context.Context, id string, expires time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveLocked(id, now)
	if r == nil {
		return 0, ErrSessionNotFound
	}
	r.Expires = expires
	return r.Version, nil
}

// Delete implements [SessionStore].
func (s *MemorySessionStore) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveLocked(id, now)
	if r == nil {
		return ErrSessionNotFound
	}
	s.removeLocked(r)
	return nil
}

// Len returns the number of unexpired records.
func (s *MemorySessionStore) Len() int {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	return len(s.recs)
}

// keyedHash returns the base64url HMAC-SHA256 of s under key, for the
// principal and peer fields of a record.
func keyedHash(key []byte, label, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SessionHasher is implemented by a [SessionIDTagger] that can hash values
// for a [SessionStore]'s records under a secret key that the replicas
// sharing its keys share, so that a record holds neither the principal
// nor the peer's address in clear, and any replica computes the same
// hashes. Package mcp's KeyRing is one. A tagger that is not one is
// hashed under a random key of the handler's own, which suits only a
// store that one handler uses.
type SessionHasher interface {
	// SessionHash returns a keyed hash of s for the given label. For the
	// principal, id is the session's ID, so that the key is the one that
	// tagged the ID (a key rotation leaves existing sessions their
	// owner); for values compared across sessions (the peer), id is "".
	SessionHash(id, label, s string) string
}

// SessionHash implements [SessionHasher] under the tagger's key.
func (l *localSessionIDs) SessionHash(_, label, s string) string {
	return keyedHash(l.key, label, s)
}

// sessionRecords is a handler's use of its SessionStore.
type sessionRecords struct {
	h      *StreamableHTTPHandler
	store  SessionStore
	hasher SessionHasher
	ttl    time.Duration // a record's life after the last touch
	every  time.Duration // between rechecks; 0: every request
}

func newSessionRecords(h *StreamableHTTPHandler) *sessionRecords {
	sr := &sessionRecords{h: h, store: h.opts.SessionStore, ttl: h.idle}
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

// create stores the record of the new session s of peer, admitting it
// in the store, or returns why not.
func (sr *sessionRecords) create(ctx context.Context, s *httpSession, peer string) *lookupError {
	rec := &SessionRecord{
		ID:        s.id,
		Principal: sr.principalHash(s.id, s.principal),
		Peer:      sr.peerHash(peer),
		Schema:    SessionRecordSchema,
		Expires:   time.Now().Add(sr.ttl),
	}
	lim := SessionLimits{MaxSessions: sr.h.limits.max, MaxSessionsPerPeer: sr.h.limits.perPeer}
	err := sr.store.Create(ctx, rec, lim)
	switch {
	case err == nil:
		s.rec = rec
		s.touched.Store(time.Now().UnixNano())
		return nil
	case errors.Is(err, ErrTooManyPeerSessions):
		return &lookupError{http.StatusTooManyRequests, "Too Many Requests: too many sessions for this client"}
	case errors.Is(err, ErrTooManySessions):
		return &lookupError{http.StatusServiceUnavailable, "Service Unavailable: too many sessions"}
	}
	sr.h.logger.Warn("mcp http: session store create failed", "err", err)
	return errStoreDown
}

// restore builds, from its record, the session id that this replica does
// not hold, for request r; nil, nil when there is no record.
func (sr *sessionRecords) restore(r *http.Request, id string) (*httpSession, *lookupError) {
	h := sr.h
	rec, err := sr.store.Get(r.Context(), id)
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

// refresh reads the record of s again and passes its snapshot on.
func (sr *sessionRecords) refresh(ctx context.Context, s *httpSession) {
	rec, err := sr.store.Get(ctx, s.id)
	if err != nil {
		sr.h.logger.Warn("mcp http: session store read failed", "session", s.id, "err", err)
		return
	}
	s.mu.Lock()
	if s.rec != nil && rec.Version <= s.rec.Version {
		s.mu.Unlock()
		return
	}
	s.rec = rec
	f := s.onState
	s.mu.Unlock()
	if f != nil && rec.State != nil {
		f(rec.State)
	}
}

// serveDELETE serves a DELETE with a session store: the record goes,
// whichever replica holds the session, and the copy this replica holds.
// (A copy another replica holds lives until its next recheck, with the
// requests it is handling: telling it at once needs the message bus.)
func (sr *sessionRecords) serveDELETE(w http.ResponseWriter, r *http.Request) {
	h := sr.h
	id := r.Header.Get(headerSessionID)
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
	err := sr.store.Delete(r.Context(), id)
	switch {
	case errors.Is(err, ErrSessionNotFound) && s == nil:
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: unknown or expired session")
		return
	case err != nil && !errors.Is(err, ErrSessionNotFound):
		h.logger.Warn("mcp http: session store delete failed", "session", id, "err", err)
		writeLookupError(w, errStoreDown)
		return
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

// sessionStored is what a session of a handler with a SessionStore keeps
// of its record: the record as this replica last wrote or read it
// (guarded by the session's mu), the snapshot the session was restored
// with, the MCP session's function taking a snapshot changed elsewhere
// (guarded by mu), when the record was last touched (UnixNano), whether
// the client deleted the session (so its events go too), and the lock
// serializing saves.
type sessionStored struct {
	rec          *SessionRecord
	restored     []byte
	onState      func([]byte)
	touched      atomic.Int64
	deleteEvents atomic.Bool
	saveMu       sync.Mutex
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
		s.mu.Unlock()
		return ErrSessionNotFound
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
		return nil
	}
	if errors.Is(err, ErrVersionConflict) {
		c.h.store.refresh(ctx, s)
	}
	return fmt.Errorf("transport: saving session state: %w", err)
}
