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
//	mcpkit:{<sid>}:sess           hash: v (version), rec (the record's JSON), peer, exp (ms),
//	                              hold (the replicas holding a copy); PEXPIRE at exp
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
// Round trips, each bounded by Timeout: Get one (HMGET), GetHeld and
// Update one (a script), and Create, Touch and Delete (and CreateHeld
// and DeleteHeld) one script each on one server (a *redis.Client:
// standalone or Sentinel), which takes both slots. On a Cluster (any
// other client) they are two each: Create the admission, then the record
// (a failure of the second gives the slot back); Touch the record's
// expiry, then the admission sets'; Delete the same.
type SessionStore struct {
	client  redis.UniversalClient
	opts    SessionStoreOptions
	bounds  bounds
	all     string      // the admission set of every session
	oneSlot bool        // one script may take the admission sets and a record
	batch   groupCommit // the creations and deletions of concurrent callers, one round trip (one slot only)
}

var (
	_ transport.SessionStore   = (*SessionStore)(nil)
	_ transport.SessionHolders = (*SessionStore)(nil)
)

// MaxSessionHolders bounds the replicas a [SessionStore] records as
// holding a copy of one session (transport.SessionHolders); past it, a
// deletion counts the session as held elsewhere.
const MaxSessionHolders = 16

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
	// A *redis.Client talks to one server (standalone, or Sentinel's
	// master); a Cluster or Ring client spreads slots over several.
	_, oneSlot := client.(*redis.Client)
	return &SessionStore{client: client, opts: o, bounds: bd, all: o.Prefix + "{sessions}:all", oneSlot: oneSlot}, nil
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
	return s.peerPrefix() + peer
}

// peerPrefix is what starts the key of every peer's admission set.
func (s *SessionStore) peerPrefix() string { return s.opts.Prefix + "{sessions}:peer:" }

func (s *SessionStore) nowMs() int64 { return s.opts.Now().UnixMilli() }

// luaAdmit defines admit, which checks that a new session fits the
// admission sets, reading only, and add, which then counts it there
// (and prunes the members whose expiry has passed): all is the
// whole-store set, peerk the peer's (all again for no peer); maxPeer 0
// means no per-peer bound. admit returns 'OK', 'EXISTS', 'PEER' or
// 'FULL'. A script's first write is a command Redis refuses when out of
// memory (ZADD, or the record's HSET): once a script has written, Redis
// lets its later writes through, so no write may come before the check.
const luaAdmit = `
local function admit(all, peerk, now, id, max, maxPeer)
  local live = '(' .. now
  local s = redis.call('ZSCORE', all, id)
  if s and tonumber(s) > now then return 'EXISTS' end
  if peerk ~= all and maxPeer > 0 and redis.call('ZCOUNT', peerk, live, '+inf') >= maxPeer then return 'PEER' end
  if max > 0 and redis.call('ZCOUNT', all, live, '+inf') >= max then return 'FULL' end
  return 'OK'
end
local function add(all, peerk, now, id, exp)
  for i, k in ipairs({all, peerk}) do
    if i == 1 or k ~= all then
      redis.call('ZADD', k, exp, id)
      redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
      local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
      redis.call('PEXPIRE', k, math.max(1, tonumber(top[2]) - now))
    end
  end
end
`

// luaMove defines move, which moves a session's expiry in the admission
// sets (all, and peerk unless it is all), or removes it (an empty exp: Delete).
const luaMove = `
local function move(all, peerk, now, id, exp)
  for i, k in ipairs({all, peerk}) do
    if i == 1 or k ~= all then
      if exp == '' then redis.call('ZREM', k, id)
      else redis.call('ZADD', k, 'XX', tonumber(exp), id) end
      local top = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
      if #top > 0 then redis.call('PEXPIRE', k, math.max(1, tonumber(top[2]) - now)) end
    end
  end
end
`

// luaRecord defines record, which acts on a session's hash, key: op is
// the operation, now the time (ms); a hash whose exp has passed counts
// as absent (and is deleted). It returns 'NF' for an absent record.
//
//	create rec peer exp holder  'EXISTS' or 'OK'
//	update rec version          'CONFLICT' or the new version
//	touch exp                   {version, peer}
//	hold replica max            {version, rec, peer, exp}
//	delete replica              {peer, elsewhere (0 or 1)}
//
// The hash's hold member lists the replicas holding a copy of the
// session (see transport.SessionHolders), separated by spaces, or is '*'
// past max of them; absent (a record created without a holder), it
// stays absent, and a delete counts the session as held elsewhere. A
// hold writes PEXPIRE (with the record's own expiry) before it writes
// the list: Redis checks a script's memory at its first write only, and
// refuses none of PEXPIRE's, so a replica restoring a session records
// itself even when Redis is out of memory (writes refused,
// noeviction), where restores keep working: the list is bounded (max
// replica IDs of at most 128 bytes).
const luaRecord = `
local function record(key, op, now, a, b, c, d)
  local cur = redis.call('HMGET', key, 'v', 'exp', 'peer')
  local live = cur[1] and tonumber(cur[2]) > now
  if op == 'create' then
    if live then return 'EXISTS' end
    redis.call('HSET', key, 'v', 1, 'rec', a, 'peer', b, 'exp', c)
    if d and d ~= '' then redis.call('HSET', key, 'hold', d) end
    redis.call('PEXPIRE', key, math.max(1, tonumber(c) - now))
    return 'OK'
  end
  if not live then
    if cur[1] then redis.call('DEL', key) end
    return 'NF'
  end
  if op == 'update' then
    if cur[1] ~= b then return 'CONFLICT' end
    local v = tonumber(cur[1]) + 1
    redis.call('HSET', key, 'v', v, 'rec', a)
    return tostring(v)
  elseif op == 'touch' then
    redis.call('HSET', key, 'exp', a)
    redis.call('PEXPIRE', key, math.max(1, tonumber(a) - now))
    return {cur[1], cur[3]}
  end
  local got = redis.call('HMGET', key, 'hold', 'rec')
  local hold = got[1]
  if op == 'hold' then
    if hold and hold ~= '*' and not string.find(' ' .. hold .. ' ', ' ' .. a .. ' ', 1, true) then
      local n = 1
      for _ in string.gmatch(hold, ' ') do n = n + 1 end
      if n >= tonumber(b) then hold = '*' else hold = hold .. ' ' .. a end
      redis.call('PEXPIRE', key, math.max(1, tonumber(cur[2]) - now))
      redis.call('HSET', key, 'hold', hold)
    end
    return {cur[1], got[2], cur[3] or '', cur[2]}
  end
  local elsewhere = 0
  if a == '' or not hold or hold == '*' then
    elsewhere = 1
  else
    for r in string.gmatch(hold, '[^ ]+') do
      if r ~= a then elsewhere = 1 end
    end
  end
  redis.call('DEL', key)
  return {cur[3] or '', elsewhere}
end
`

// The scripts of a Cluster, where the admission sets and a record live
// in two slots.
var (
	// admitScript: KEYS the whole-store set and the peer's; ARGV now,
	// the ID, its expiry, MaxSessions, MaxSessionsPerPeer.
	admitScript = newScript(luaAdmit + `
local now = tonumber(ARGV[1])
local r = admit(KEYS[1], KEYS[2], now, ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5]))
if r == 'OK' then add(KEYS[1], KEYS[2], now, ARGV[2], tonumber(ARGV[3])) end
return r`)
	// moveScript: KEYS as admitScript's; ARGV now, the ID, the new
	// expiry ("" removes it).
	moveScript = newScript(luaMove + `
move(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], ARGV[3])
return 'OK'`)
	// recordScript: KEYS[1] the record; ARGV the operation, now, and
	// the operation's arguments (see luaRecord).
	recordScript = newScript(luaRecord + `
return record(KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6])`)
)

// The scripts of one server (a standalone or Sentinel client), where one
// script may take both slots: Create, Touch and Delete in one round trip
// each. The peer's admission set is built from the record's peer, a
// validated hash, and ARGV's prefix of those sets.
var (
	// sessionCreateScript: KEYS the whole-store set, the peer's and the
	// record; ARGV now, the ID, its expiry, MaxSessions,
	// MaxSessionsPerPeer, the record's JSON, its peer and its holder ("" for none).
	sessionCreateScript = newScript(luaAdmit + luaRecord + `
local now = tonumber(ARGV[1])
local r = admit(KEYS[1], KEYS[2], now, ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5]))
if r ~= 'OK' then return r end
r = record(KEYS[3], 'create', now, ARGV[6], ARGV[7], ARGV[3], ARGV[8])
if r == 'OK' then add(KEYS[1], KEYS[2], now, ARGV[2], tonumber(ARGV[3])) end
return r`)
	// sessionTouchScript: KEYS the whole-store set and the record; ARGV now,
	// the ID, the new expiry, the prefix of the peers' sets.
	sessionTouchScript = newScript(luaMove + luaRecord + `
local now = tonumber(ARGV[1])
local r = record(KEYS[2], 'touch', now, ARGV[3])
if type(r) ~= 'table' then return r end
local pk = KEYS[1]
if r[2] and r[2] ~= '' then pk = ARGV[4] .. r[2] end
move(KEYS[1], pk, now, ARGV[2], ARGV[3])
return r`)
	// sessionDeleteScript: KEYS as sessionTouchScript's; ARGV now, the
	// ID, the prefix of the peers' sets, the deleting replica ("" for
	// none).
	sessionDeleteScript = newScript(luaMove + luaRecord + `
local now = tonumber(ARGV[1])
local r = record(KEYS[2], 'delete', now, ARGV[4])
if r == 'NF' then return r end
local pk = KEYS[1]
if r[1] ~= '' then pk = ARGV[3] .. r[1] end
move(KEYS[1], pk, now, ARGV[2], '')
return r`)
)

// Create implements [transport.SessionStore].
func (s *SessionStore) Create(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits) error {
	return s.create(ctx, rec, lim, "")
}

// CreateHeld implements [transport.SessionHolders].
func (s *SessionStore) CreateHeld(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits, replica string) error {
	if !validRecordID(replica) {
		return fmt.Errorf("redisstore: invalid replica ID %q", replica)
	}
	return s.create(ctx, rec, lim, replica)
}

// create is Create, recording holder as holding a copy unless it is "".
func (s *SessionStore) create(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits, holder string) error {
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
	cl := rec.Clone()
	cl.Version = 0
	data, err := cl.MarshalJSON()
	if err != nil {
		return wrap("session create", err)
	}
	keys := []string{s.all, s.peerKey(rec.Peer)}
	if s.oneSlot {
		// Admission and record in one script.
		cmd, err := sessionCreateScript.RunGrouped(ctx, &s.batch, &s.bounds, s.client, append(keys, s.recordKey(rec.ID)),
			now, rec.ID, exp, max(lim.MaxSessions, 0), max(lim.MaxSessionsPerPeer, 0), data, rec.Peer, holder)
		if err != nil {
			return wrap("session create", err)
		}
		res, _ := cmd.Val().(string)
		if err := admission(res); err != nil {
			return err
		}
		rec.Version = 1
		return nil
	}
	c := s.bounds.op(ctx)
	res, err := admitScript.Run(c.ctx, s.client, keys, now, rec.ID, exp, max(lim.MaxSessions, 0), max(lim.MaxSessionsPerPeer, 0)).Text()
	if err := c.end(err); err != nil {
		return wrap("session admission", err)
	}
	if err := admission(res); err != nil {
		return err
	}
	c = s.bounds.op(ctx)
	res, err = recordScript.Run(c.ctx, s.client, []string{s.recordKey(rec.ID)}, "create", now, data, rec.Peer, exp, holder).Text()
	err = c.end(err)
	if err == nil && res == "EXISTS" {
		err = transport.ErrSessionExists
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

// admission returns the error of an admission's reply: nil for "OK".
func admission(res string) error {
	switch res {
	case "OK":
		return nil
	case "EXISTS":
		return transport.ErrSessionExists
	case "PEER":
		return transport.ErrTooManyPeerSessions
	case "FULL":
		return transport.ErrTooManySessions
	}
	return fmt.Errorf("redisstore: session admission: unexpected reply %q", res)
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
	return s.parseRecord(id, vals)
}

// GetHeld implements [transport.SessionHolders]. Recording the replica
// is idempotent, so a failed round trip is tried again like Get's.
func (s *SessionStore) GetHeld(ctx context.Context, id, replica string) (*transport.SessionRecord, error) {
	if !validRecordID(id) {
		return nil, transport.ErrSessionNotFound
	}
	if !validRecordID(replica) {
		return nil, fmt.Errorf("redisstore: invalid replica ID %q", replica)
	}
	var vals []any
	err := s.bounds.read(ctx, func(ctx context.Context) error {
		out, err := recordScript.Run(ctx, s.client, []string{s.recordKey(id)}, "hold", s.nowMs(), replica, MaxSessionHolders).Result()
		vals, _ = out.([]any)
		return err
	})
	if err != nil {
		return nil, wrap("session get", err)
	}
	if len(vals) != 4 {
		return nil, transport.ErrSessionNotFound // 'NF'
	}
	return s.parseRecord(id, vals)
}

// parseRecord returns the record of the session id from its hash's
// members v, rec, peer and exp; ErrSessionNotFound when absent or
// expired.
func (s *SessionStore) parseRecord(id string, vals []any) (*transport.SessionRecord, error) {
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
	var out any
	var err error
	if s.oneSlot {
		out, err = sessionTouchScript.Run(c.ctx, s.client, []string{s.all, s.recordKey(id)}, now, id, exp, s.peerPrefix()).Result()
	} else {
		out, err = recordScript.Run(c.ctx, s.client, []string{s.recordKey(id)}, "touch", now, exp).Result()
	}
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
	if s.oneSlot {
		return v, nil
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
	_, err := s.deleteHeld(ctx, id, "")
	return err
}

// DeleteHeld implements [transport.SessionHolders].
func (s *SessionStore) DeleteHeld(ctx context.Context, id, replica string) (elsewhere bool, err error) {
	if !validRecordID(replica) {
		return false, fmt.Errorf("redisstore: invalid replica ID %q", replica)
	}
	return s.deleteHeld(ctx, id, replica)
}

// deleteHeld is DeleteHeld, replica "" for Delete.
func (s *SessionStore) deleteHeld(ctx context.Context, id, replica string) (elsewhere bool, err error) {
	if !validRecordID(id) {
		return false, transport.ErrSessionNotFound
	}
	now := s.nowMs()
	var res any
	if s.oneSlot {
		var cmd *redis.Cmd
		cmd, err = sessionDeleteScript.RunGrouped(ctx, &s.batch, &s.bounds, s.client, []string{s.all, s.recordKey(id)}, now, id, s.peerPrefix(), replica)
		res = cmd.Val()
	} else {
		c := s.bounds.op(ctx)
		res, err = recordScript.Run(c.ctx, s.client, []string{s.recordKey(id)}, "delete", now, replica).Result()
		err = c.end(err)
	}
	if err != nil {
		return false, wrap("session delete", err)
	}
	if nf, _ := res.(string); nf == "NF" {
		return false, transport.ErrSessionNotFound
	}
	r, ok := res.([]any)
	if !ok || len(r) != 2 {
		return false, fmt.Errorf("redisstore: session delete: unexpected reply %v", res)
	}
	peer, _ := r[0].(string)
	n, _ := r[1].(int64)
	elsewhere = n != 0
	if s.oneSlot {
		return elsewhere, nil
	}
	c := s.bounds.op(ctx)
	err = c.end(moveScript.Run(c.ctx, s.client, []string{s.all, s.peerKey(peer)}, now, id, "").Err())
	if err != nil {
		return elsewhere, wrap("session delete admission", err)
	}
	return elsewhere, nil
}
