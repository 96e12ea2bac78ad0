package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// MaxSessionRecordIDBytes bounds the session IDs the session store
// accepts; those an mcp.KeyRing mints have 46 bytes.
const MaxSessionRecordIDBytes = 128

// SessionStoreOptions configures a [SessionStore]. The zero value of each
// field means its default.
type SessionStoreOptions struct {
	// Prefix starts every key of the store (DefaultPrefix). It may not
	// contain '{' or '}', which would break the hash tags.
	Prefix string
	// Timeout bounds each Redis round trip (DefaultTimeout). Give the
	// client ContextTimeoutEnabled so that go-redis honours it.
	Timeout time.Duration
	// Breaker is the circuit breaker of the store's operations (see
	// [Breaker]); nil means one of the store's own. Give the stores on
	// one client the same.
	Breaker *Breaker
	// Now returns the current time (time.Now); tests give a fake clock.
	Now func() time.Time
}

// SessionStore is a [transport.SessionStore] on Redis, for
// transport.StreamableHTTPOptions.SessionStore: replicas sharing it serve
// every session of the handshake era, and admit exactly MaxSessions and
// MaxSessionsPerPeer across all of them. It is safe for concurrent use and
// starts no goroutine.
//
// With the default prefix, the keys are:
//
//	mcpkit:{<sid>}:sess           hash: v (version), rec (the record's JSON), peer, exp (ms); PEXPIRE at exp
//	mcpkit:{sessions}:all         sorted set: every session ID by expiry (ms)
//	mcpkit:{sessions}:peer:<peer> sorted set: the peer's session IDs by expiry (ms)
//
// The admission sets live in one hash slot ({sessions}), so that one
// script checks and counts both bounds atomically; on a Cluster that slot
// takes every Create, Touch and Delete (their admission half). The
// scripts prune the members whose expiry has passed, so a replica that
// dies leaks no slot beyond its sessions' expiry, and every key has a TTL
// (the sets: their latest member's expiry). Session IDs are checked
// (printable base64url and '.', at most [MaxSessionRecordIDBytes]) and
// peers must be the handler's hashes (base64url) before a key is built;
// an ID that fails is an unknown session. No operation scans keys.
//
// Round trips, each bounded by Timeout: Get one (HMGET), Update one (a
// script), Create two (admission, then the record; a failure of the
// second gives the slot back), Touch two (the record's expiry, then the
// admission sets'), Delete two.
type SessionStore struct {
	client redis.UniversalClient
	opts   SessionStoreOptions
	bounds bounds
	all    string // the admission set of every session
}

var _ transport.SessionStore = (*SessionStore)(nil)

// NewSessionStore returns a session store on client, which may be a
// standalone, Sentinel (failover) or Cluster client. Nil opts means the
// defaults. The store does not own client.
func NewSessionStore(client redis.UniversalClient, opts *SessionStoreOptions) (*SessionStore, error) {
	var o SessionStoreOptions
	if opts != nil {
		o = *opts
	}
	bd, err := checkCommon(client, &o.Prefix, &o.Timeout, o.Breaker)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &SessionStore{client: client, opts: o, bounds: bd, all: o.Prefix + "{sessions}:all"}, nil
}

// validRecordID reports whether a session ID may go into a key: the
// characters of the IDs the transport's taggers mint (base64url and '.'),
// bounded.
func validRecordID(id string) bool {
	if id == "" || len(id) > MaxSessionRecordIDBytes {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

func (s *SessionStore) recordKey(id string) string { return s.opts.Prefix + "{" + id + "}:sess" }

// peerKey returns the admission set of peer ("" for the uncounted
// peer: the whole-store set stands in, and is not counted twice).
func (s *SessionStore) peerKey(peer string) string {
	if peer == "" {
		return s.all
	}
	return s.opts.Prefix + "{sessions}:peer:" + peer
}

func (s *SessionStore) nowMs() int64 { return s.opts.Now().UnixMilli() }

// admitScript counts a new session in the admission sets. KEYS[1] is the
// whole-store set, KEYS[2] the peer's (KEYS[1] again for no peer). ARGV:
// now, the ID, its expiry, MaxSessions, MaxSessionsPerPeer (0: none).
var admitScript = newScript(`
local now, id, exp = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local max, maxPeer = tonumber(ARGV[4]), tonumber(ARGV[5])
local peer = KEYS[2] ~= KEYS[1]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if peer then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
if redis.call('ZSCORE', KEYS[1], id) then return 'EXISTS' end
if peer and maxPeer > 0 and redis.call('ZCARD', KEYS[2]) >= maxPeer then return 'PEER' end
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then return 'FULL' end
local function add(k)
  redis.call('ZADD', k, exp, id)
  local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', k, math.max(1, tonumber(top[2]) - now))
end
add(KEYS[1])
if peer then add(KEYS[2]) end
return 'OK'
`)

// moveScript moves a session's expiry in the admission sets, or removes
// it (ARGV[3] "": Delete). KEYS as admitScript's; ARGV: now, the ID, the
// new expiry.
var moveScript = newScript(`
local now, id = tonumber(ARGV[1]), ARGV[2]
for i, k in ipairs(KEYS) do
  if i == 1 or k ~= KEYS[1] then
    if ARGV[3] == '' then redis.call('ZREM', k, id)
    else redis.call('ZADD', k, 'XX', tonumber(ARGV[3]), id) end
    local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
    if #top > 0 then redis.call('PEXPIRE', k, math.max(1, tonumber(top[2]) - now)) end
  end
end
return 'OK'
`)

// recordScript acts on a session's hash, KEYS[1]. ARGV[1] is the
// operation, ARGV[2] now (ms); a hash whose exp has passed counts as
// absent (and is deleted). It returns 'NF' for an absent record.
//
//	create rec peer exp         'EXISTS' or 'OK'
//	update rec version          'CONFLICT' or the new version
//	touch exp                   {version, peer}
//	delete                      the peer
var recordScript = newScript(`
local op, now = ARGV[1], tonumber(ARGV[2])
local cur = redis.call('HMGET', KEYS[1], 'v', 'exp', 'peer')
if cur[1] and tonumber(cur[2]) <= now then
  redis.call('DEL', KEYS[1])
  cur = {false, false, false}
end
if op == 'create' then
  if cur[1] then return 'EXISTS' end
  redis.call('HSET', KEYS[1], 'v', 1, 'rec', ARGV[3], 'peer', ARGV[4], 'exp', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(ARGV[5]) - now))
  return 'OK'
end
if not cur[1] then return 'NF' end
if op == 'update' then
  if cur[1] ~= ARGV[4] then return 'CONFLICT' end
  local v = tonumber(cur[1]) + 1
  redis.call('HSET', KEYS[1], 'v', v, 'rec', ARGV[3])
  return tostring(v)
elseif op == 'touch' then
  redis.call('HSET', KEYS[1], 'exp', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(ARGV[3]) - now))
  return {cur[1], cur[3]}
end
redis.call('DEL', KEYS[1])
return cur[3]
`)

// Create implements [transport.SessionStore].
func (s *SessionStore) Create(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits) error {
	if !validRecordID(rec.ID) {
		return fmt.Errorf("redisstore: invalid session ID %q", rec.ID)
	}
	if rec.Peer != "" && !validRecordID(rec.Peer) {
		return fmt.Errorf("redisstore: invalid peer key %q", rec.Peer)
	}
	now := s.nowMs()
	exp := rec.Expires.UnixMilli()
	if exp <= now {
		return errors.New("redisstore: session record expired already")
	}
	keys := []string{s.all, s.peerKey(rec.Peer)}
	c := s.bounds.op(ctx)
	res, err := admitScript.Run(c.ctx, s.client, keys, now, rec.ID, exp, max(lim.MaxSessions, 0), max(lim.MaxSessionsPerPeer, 0)).Text()
	err = c.end(err)
	switch {
	case err != nil:
		return wrap("session admission", err)
	case res == "EXISTS":
		return transport.ErrSessionExists
	case res == "PEER":
		return transport.ErrTooManyPeerSessions
	case res == "FULL":
		return transport.ErrTooManySessions
	}
	cl := rec.Clone()
	cl.Version = 0
	data, err := cl.MarshalJSON()
	if err == nil {
		c := s.bounds.op(ctx)
		res, err = recordScript.Run(c.ctx, s.client, []string{s.recordKey(rec.ID)}, "create", now, data, rec.Peer, exp).Text()
		err = c.end(err)
		if err == nil && res == "EXISTS" {
			err = transport.ErrSessionExists
		}
	}
	if err != nil {
		// The slot would otherwise count until the record's expiry.
		c := s.bounds.op(context.WithoutCancel(ctx))
		c.end(moveScript.Run(c.ctx, s.client, keys, now, rec.ID, "").Err())
		if errors.Is(err, transport.ErrSessionExists) {
			return err
		}
		return wrap("session create", err)
	}
	rec.Version = 1
	return nil
}

// Get implements [transport.SessionStore].
func (s *SessionStore) Get(ctx context.Context, id string) (*transport.SessionRecord, error) {
	if !validRecordID(id) {
		return nil, transport.ErrSessionNotFound
	}
	var vals []any
	err := s.bounds.read(ctx, func(ctx context.Context) (err error) {
		vals, err = s.client.HMGet(ctx, s.recordKey(id), "v", "rec", "peer", "exp").Result()
		return err
	})
	if err != nil {
		return nil, wrap("session get", err)
	}
	v, _ := vals[0].(string)
	data, _ := vals[1].(string)
	peer, _ := vals[2].(string)
	expStr, _ := vals[3].(string)
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if v == "" || err != nil || exp <= s.nowMs() {
		return nil, transport.ErrSessionNotFound
	}
	version, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("redisstore: session %q: bad version %q", id, v)
	}
	rec := new(transport.SessionRecord)
	if err := rec.UnmarshalJSON([]byte(data)); err != nil {
		return nil, fmt.Errorf("redisstore: session %q: %w", id, err)
	}
	rec.ID, rec.Peer, rec.Version, rec.Expires = id, peer, version, time.UnixMilli(exp)
	return rec, nil
}

// Update implements [transport.SessionStore].
func (s *SessionStore) Update(ctx context.Context, rec *transport.SessionRecord) error {
	if !validRecordID(rec.ID) {
		return transport.ErrSessionNotFound
	}
	cl := rec.Clone()
	cl.Version = 0
	data, err := cl.MarshalJSON()
	if err != nil {
		return fmt.Errorf("redisstore: session record: %w", err)
	}
	c := s.bounds.op(ctx)
	res, err := recordScript.Run(c.ctx, s.client, []string{s.recordKey(rec.ID)}, "update", s.nowMs(), data, rec.Version).Text()
	err = c.end(err)
	switch {
	case err != nil:
		return wrap("session update", err)
	case res == "NF":
		return transport.ErrSessionNotFound
	case res == "CONFLICT":
		return transport.ErrVersionConflict
	}
	v, err := strconv.ParseInt(res, 10, 64)
	if err != nil {
		return fmt.Errorf("redisstore: session update: bad version %q", res)
	}
	rec.Version = v
	return nil
}

// Touch implements [transport.SessionStore].
func (s *SessionStore) Touch(ctx context.Context, id string, expires time.Time) (int64, error) {
	if !validRecordID(id) {
		return 0, transport.ErrSessionNotFound
	}
	now, exp := s.nowMs(), expires.UnixMilli()
	c := s.bounds.op(ctx)
	out, err := recordScript.Run(c.ctx, s.client, []string{s.recordKey(id)}, "touch", now, exp).Result()
	err = c.end(err)
	if err != nil {
		return 0, wrap("session touch", err)
	}
	res, ok := out.([]any)
	if !ok || len(res) != 2 {
		return 0, transport.ErrSessionNotFound // 'NF'
	}
	vs, _ := res[0].(string)
	peer, _ := res[1].(string)
	v, err := strconv.ParseInt(vs, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redisstore: session touch: bad version %q", vs)
	}
	c = s.bounds.op(ctx)
	err = c.end(moveScript.Run(c.ctx, s.client, []string{s.all, s.peerKey(peer)}, now, id, exp).Err())
	if err != nil {
		// The record lives on; its admission slot may expire before it,
		// which loosens the bounds until the next touch.
		return v, wrap("session touch admission", err)
	}
	return v, nil
}

// Delete implements [transport.SessionStore].
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	if !validRecordID(id) {
		return transport.ErrSessionNotFound
	}
	now := s.nowMs()
	c := s.bounds.op(ctx)
	res, err := recordScript.Run(c.ctx, s.client, []string{s.recordKey(id)}, "delete", now).Result()
	err = c.end(err)
	if errors.Is(err, redis.Nil) {
		err, res = nil, "" // the Lua false of an absent peer field
	}
	if err != nil {
		return wrap("session delete", err)
	}
	peer, _ := res.(string)
	if peer == "NF" {
		return transport.ErrSessionNotFound
	}
	c = s.bounds.op(ctx)
	err = c.end(moveScript.Run(c.ctx, s.client, []string{s.all, s.peerKey(peer)}, now, id, "").Err())
	if err != nil {
		return wrap("session delete admission", err)
	}
	return nil
}
