package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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

// SessionHolders is implemented by a [SessionStore] that records, with
// each session, the replicas holding a copy of it, so that a handler
// deleting a session tells the other replicas (on its relay; see
// package mcp's Bus) only when one of them holds a copy: a DELETE on the
// replica that created the session, the usual case with one replica or
// a balancer keeping sessions on their replica, then costs no
// broadcast. A replica is recorded by the create or the read that gives
// it its copy, atomically with it, so that a delete either finds the
// replica recorded or the read finds no record: "DELETE anywhere: 404
// everywhere" stays exact. A handler uses these methods when it has a
// relay, and the plain ones otherwise. [MemorySessionStore] and package
// redisstore's store implement it; mcptest.SessionStoreSuite checks it.
type SessionHolders interface {
	// CreateHeld is Create, recording replica as holding a copy of the
	// session.
	CreateHeld(ctx context.Context, rec *SessionRecord, lim SessionLimits, replica string) error
	// GetHeld is Get, recording replica as holding a copy of the session
	// when there is a record.
	GetHeld(ctx context.Context, id, replica string) (*SessionRecord, error)
	// DeleteHeld is Delete, and reports whether a replica other than
	// replica may hold a copy: true also when the store cannot tell (a
	// record created by plain Create, or one with more holders than the
	// store keeps).
	DeleteHeld(ctx context.Context, id, replica string) (elsewhere bool, err error)
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
	// Replica names the replica holding the session's GET stream, ""
	// for none: set when the stream opens and cleared when it closes, by
	// a handler whose server has a bus (package mcp's Bus, whose replica
	// IDs it holds), so that the other replicas send it what they send
	// the session outside any request.
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
// records are dropped as Create meets them. It is a [SessionHolders]
// too. It starts no goroutine.
type MemorySessionStore struct {
	now func() time.Time

	mu    sync.Mutex
	recs  map[string]*SessionRecord
	peers map[string]int      // live records per non-empty peer
	held  map[string][]string // the replicas holding each record made by CreateHeld
}

// NewMemorySessionStore returns an empty store; opts may be nil.
func NewMemorySessionStore(opts *MemorySessionStoreOptions) *MemorySessionStore {
	s := &MemorySessionStore{now: time.Now, recs: make(map[string]*SessionRecord), peers: make(map[string]int), held: make(map[string][]string)}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

var (
	_ SessionStore   = (*MemorySessionStore)(nil)
	_ SessionHolders = (*MemorySessionStore)(nil)
)

// maxMemoryHolders bounds the replicas a MemorySessionStore records per
// session; past it, DeleteHeld reports that others may hold one.
const maxMemoryHolders = 64

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
	delete(s.held, r.ID)
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
	return s.create(ctx, rec, lim, "")
}

// CreateHeld implements [SessionHolders].
func (s *MemorySessionStore) CreateHeld(ctx context.Context, rec *SessionRecord, lim SessionLimits, replica string) error {
	if replica == "" {
		return errors.New("transport: CreateHeld: empty replica")
	}
	return s.create(ctx, rec, lim, replica)
}

// create is Create, recording replica as the holder unless it is "".
func (s *MemorySessionStore) create(ctx context.Context, rec *SessionRecord, lim SessionLimits, replica string) error {
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
	if replica != "" {
		s.held[c.ID] = []string{replica}
	}
	return nil
}

// Get implements [SessionStore].
func (s *MemorySessionStore) Get(ctx context.Context, id string) (*SessionRecord, error) {
	return s.GetHeld(ctx, id, "")
}

// GetHeld implements [SessionHolders]; replica "" records none.
func (s *MemorySessionStore) GetHeld(ctx context.Context, id, replica string) (*SessionRecord, error) {
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
	// A record without holders (made by Create) stays unknown, and one
	// with as many as kept stays so: both count as held elsewhere.
	if hs, ok := s.held[id]; ok && replica != "" && len(hs) < maxMemoryHolders && !slices.Contains(hs, replica) {
		s.held[id] = append(hs, replica)
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
	_, err := s.DeleteHeld(ctx, id, "")
	return err
}

// DeleteHeld implements [SessionHolders].
func (s *MemorySessionStore) DeleteHeld(ctx context.Context, id, replica string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.liveLocked(id, now)
	if r == nil {
		return false, ErrSessionNotFound
	}
	hs, ok := s.held[id]
	elsewhere := !ok || len(hs) >= maxMemoryHolders || slices.ContainsFunc(hs, func(h string) bool { return h != replica })
	s.removeLocked(r)
	return elsewhere, nil
}

// Len returns the number of unexpired records.
func (s *MemorySessionStore) Len() int {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	return len(s.recs)
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
