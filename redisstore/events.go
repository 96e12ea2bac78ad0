package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// Defaults of [EventStoreOptions].
const (
	DefaultMaxStreamEvents   = 1000
	DefaultEventMaxAge       = 5 * time.Minute
	DefaultMaxSessionStreams = 1000
	DefaultMaxTails          = 16
	DefaultTailBlock         = time.Second
	DefaultEventBatch        = 100
	// MaxSessionIDBytes bounds the session IDs the event store accepts:
	// longer ones have no events.
	MaxSessionIDBytes = 256
	// MaxStreamIDBytes bounds the stream IDs the event store accepts.
	MaxStreamIDBytes = 64
)

// EventStoreOptions configures an [EventStore]. The zero value of each
// field means its default.
type EventStoreOptions struct {
	// Prefix starts every key of the store (DefaultPrefix). It may not
	// contain '{' or '}', which would break the hash tags.
	Prefix string
	// Timeout bounds each Redis round trip but the blocking reads of
	// tails (DefaultTimeout), which it bounds with TailBlock. Give the
	// client ContextTimeoutEnabled so that go-redis honours it.
	Timeout time.Duration
	// Breaker is the circuit breaker of the store's operations (see
	// [Breaker]); nil means one of the store's own. Give the stores on
	// one client the same.
	Breaker *Breaker
	// MaxStreamEvents is the number of events a stream keeps, about: each
	// write trims the stream with XADD MAXLEN ~, which keeps whole
	// macro-nodes, so up to about a hundred more may stay
	// (DefaultMaxStreamEvents).
	MaxStreamEvents int
	// MaxAge is how long an event is kept (DefaultEventMaxAge): each write
	// trims older events (XTRIM MINID ~) and sets the TTL of the session's
	// keys to it, so a session's events go MaxAge after its last write.
	MaxAge time.Duration
	// MaxSessionStreams bounds the streams a session stores events of
	// (DefaultMaxSessionStreams). A new stream past it makes the session
	// forget the stream that ended first (its events can no longer be
	// resumed), at the cost of a few commands; when none has ended, the
	// streams whose events all expired; when none has, the write fails
	// with ErrStreamLimit (the event still goes out live).
	MaxSessionStreams int
	// MaxTails bounds the tails of this store (this process) blocked in
	// a read at once (DefaultMaxTails); more are refused with
	// transport.ErrTailLimit. Each holds a connection of the client's
	// pool while it waits: keep it well below the pool's size.
	MaxTails int
	// TailBlock bounds one blocking read of a tail (DefaultTailBlock):
	// Tail then returns an empty batch, and its caller tails again.
	TailBlock time.Duration
	// Batch is the number of events one read returns at most
	// (DefaultEventBatch).
	Batch int
}

// EventStore is a [transport.EventLog] on Redis: each SSE stream is a
// Redis Stream, so that a client can resume a stream on any server
// process sharing the store, while the process that writes it still
// does. It is safe for concurrent use, and starts no goroutine.
//
// With the default prefix, a session sid has these keys, all under its
// hash tag and with a TTL of MaxAge refreshed by writes:
//
//	mcpkit:ev:{<sid>}:m          hash: <stream> to its epoch, <stream>:x to its end's number, # the stream count
//	mcpkit:ev:{<sid>}:e          sorted set: the ended streams by the time of their end (ms)
//	mcpkit:ev:{<sid>}:s:<stream> stream: q (number), e (epoch), d (data), f (flags) per event
//
// A stored event is one script (XADD trimmed by MAXLEN ~ and MINID ~);
// a priming event stores nothing. A read is HMGET and XRANGE in one round
// trip per Batch events; a tail that finds nothing blocks in one XREAD on
// a pooled connection, at most TailBlock, with at most MaxTails blocked
// at once (more are refused with transport.ErrTailLimit: the number of
// connections blocked never grows with the streams). DeleteSession
// deletes the streams the meta hash lists, without scanning keys. Event
// IDs are "<stream>:<epoch>:<number>:<entry ID>", parsed strictly before
// any key is built. docs/SCALING.md ("Event log") has the design.
type EventStore struct {
	client redis.UniversalClient
	opts   EventStoreOptions
	bounds bounds
	tails  chan struct{} // a token per tail blocked in a read
}

var _ transport.EventLog = (*EventStore)(nil)

// NewEventStore returns an event store on client, which may be a
// standalone, Sentinel (failover) or Cluster client. Nil opts means the
// defaults. The store does not own client.
func NewEventStore(client redis.UniversalClient, opts *EventStoreOptions) (*EventStore, error) {
	var o EventStoreOptions
	if opts != nil {
		o = *opts
	}
	bd, err := checkCommon(client, &o.Prefix, &o.Timeout, o.Breaker)
	if err != nil {
		return nil, err
	}
	o.MaxStreamEvents = cmp.Or(max(o.MaxStreamEvents, 0), DefaultMaxStreamEvents)
	o.MaxAge = cmp.Or(max(o.MaxAge, 0), DefaultEventMaxAge)
	o.MaxSessionStreams = cmp.Or(max(o.MaxSessionStreams, 0), DefaultMaxSessionStreams)
	o.MaxTails = cmp.Or(max(o.MaxTails, 0), DefaultMaxTails)
	o.TailBlock = cmp.Or(max(o.TailBlock, 0), DefaultTailBlock)
	o.Batch = cmp.Or(max(o.Batch, 0), DefaultEventBatch)
	return &EventStore{client: client, opts: o, bounds: bd, tails: make(chan struct{}, o.MaxTails)}, nil
}

// ErrStreamLimit is returned (wrapped) by a write of a new stream to a
// session that already stores events of MaxSessionStreams streams, none
// of them ended or expired.
var ErrStreamLimit = errors.New("redisstore: too many event streams in the session")

// validSessionID reports whether a session ID may go into a key: printable
// ASCII without braces (the hash tag), bounded.
func validSessionID(id string) bool {
	if id == "" || len(id) > MaxSessionIDBytes {
		return false
	}
	for i := range len(id) {
		if c := id[i]; c <= ' ' || c > '~' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// validStreamID reports whether a stream ID may go into a key and an
// event ID: letters, digits, '_', '.' and '-', bounded.
func validStreamID(id string) bool {
	if id == "" || len(id) > MaxStreamIDBytes {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// sessionKeys returns the meta hash of a session and the prefix of its
// stream keys, all in the session's hash slot.
func (s *EventStore) sessionKeys(sessionID string) (meta, streams string) {
	base := s.opts.Prefix + "ev:{" + sessionID + "}:"
	return base + "m", base + "s:"
}

// endedKey returns the key of the sorted set of a session's ended
// streams, by the time of their end (ms); meta is the session's meta
// hash key (see sessionKeys).
func endedKey(meta string) string { return meta[:len(meta)-1] + "e" }

// epochBytes is the size of a stream's epoch.
const epochBytes = 6

// startEpoch is the epoch of positions before a stream's first event,
// which StreamStart gives without reading the stream's epoch.
const startEpoch = "0"

// position is a place in a stream, parsed from an event ID
// "<stream>:<epoch>:<seq>:<entry>": entry is the Redis Stream entry ID of
// event number seq of the stream, stored in the stream's generation
// epoch; the start of a stream is "<stream>:0:0:0-0".
type position struct {
	stream, epoch, entry string
	seq                  int64
}

func (p position) eventID() string {
	return p.stream + ":" + p.epoch + ":" + strconv.FormatInt(p.seq, 10) + ":" + p.entry
}

// parseEventID parses an event ID of this store, reporting false for
// anything else: nothing of an ID goes into a key or command unchecked.
func parseEventID(id string) (position, bool) {
	if len(id) > transport.MaxEventIDBytes {
		return position{}, false
	}
	parts := strings.Split(id, ":")
	if len(parts) != 4 || !validStreamID(parts[0]) || !validEpoch(parts[1]) || !decimal(parts[2]) {
		return position{}, false
	}
	ms, n, ok := strings.Cut(parts[3], "-")
	if !ok || !decimal(ms) || !decimal(n) {
		return position{}, false
	}
	seq, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return position{}, false
	}
	p := position{stream: parts[0], epoch: parts[1], seq: seq, entry: parts[3]}
	if (p.epoch == startEpoch) != (p.seq == 0 && p.entry == "0-0") {
		return position{}, false
	}
	return p, true
}

// validEpoch reports whether e is an epoch: startEpoch, or lowercase hex.
func validEpoch(e string) bool {
	if e == startEpoch {
		return true
	}
	if len(e) != 2*epochBytes {
		return false
	}
	for i := range len(e) {
		if c := e[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decimal reports whether s is a decimal number without sign or leading
// zero, of at most 19 digits (an int64, and a Redis entry ID part).
func decimal(s string) bool {
	if s == "" || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Append implements [transport.EventStore]: it writes data as an event
// of the stream that follows no gap the store can tell. A nil data (a
// priming event) stores nothing: the ID is the stream's start.
func (s *EventStore) Append(ctx context.Context, sessionID, streamID string, data []byte) (string, error) {
	if data == nil {
		return s.StreamStart(sessionID, streamID), nil
	}
	return s.write(ctx, sessionID, streamID, transport.LogEvent{Data: data}, false)
}

// Write implements [transport.EventLog]: one script (EVALSHA) per event.
func (s *EventStore) Write(ctx context.Context, sessionID, streamID string, e transport.LogEvent) (string, error) {
	return s.write(ctx, sessionID, streamID, e, true)
}

// StreamStart implements [transport.EventLog].
func (s *EventStore) StreamStart(_, streamID string) string {
	return position{stream: streamID, epoch: startEpoch, entry: "0-0"}.eventID()
}

// writeScript stores an event. KEYS[1] is the session's meta hash,
// KEYS[2] the stream, KEYS[3] the session's ended streams; ARGV: the
// stream ID, the event's number ("" for the store to number it, "+" for
// the number after the stream's last stored event), its data, its
// flags, a new epoch for a new stream, MAXLEN, the age bound and TTL in
// ms, MaxSessionStreams, and the prefix of the session's stream keys. A
// new stream past the bound first makes the session forget the stream
// that ended first (the sorted set KEYS[3], by the end's time; a member
// whose end mark is gone is skipped, at most 8 of them); when none has,
// the streams whose key expired (a scan of the meta hash, which only a
// session holding MaxSessionStreams live streams pays). Stream keys are
// undeclared keys of the same slot, which Cluster allows scripts without
// flags.
var writeScript = newScript(`
local ep = redis.call('HGET', KEYS[1], ARGV[1])
local fresh = not ep
if fresh then
  local max = tonumber(ARGV[9])
  if redis.call('HINCRBY', KEYS[1], '#', 1) > max then
    local freed = false
    for _ = 1, 8 do
      local old = redis.call('ZPOPMIN', KEYS[3])
      if #old == 0 then break end
      if redis.call('HEXISTS', KEYS[1], old[1] .. ':x') == 1 then
        redis.call('DEL', ARGV[10] .. old[1])
        redis.call('HDEL', KEYS[1], old[1], old[1] .. ':x', old[1] .. ':n')
        freed = true
        break
      end
    end
    if freed then
      redis.call('HINCRBY', KEYS[1], '#', -1)
    else
      local live = 0
      for _, k in ipairs(redis.call('HKEYS', KEYS[1])) do
        if k ~= '#' and not string.find(k, ':', 1, true) then
          if redis.call('EXISTS', ARGV[10] .. k) == 1 then
            live = live + 1
          else
            redis.call('HDEL', KEYS[1], k, k .. ':x', k .. ':n')
            redis.call('ZREM', KEYS[3], k)
          end
        end
      end
      if live >= max then
        redis.call('HSET', KEYS[1], '#', live)
        return false
      end
      redis.call('HSET', KEYS[1], '#', live + 1)
    end
  end
  ep = ARGV[5]
end
local seq = ARGV[2]
if seq == '' then
  seq = tostring(redis.call('HINCRBY', KEYS[1], ARGV[1] .. ':n', 1))
elseif seq == '+' then
  seq = '1'
  local last = fresh and {} or redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if #last > 0 then
    local f = last[1][2]
    for i = 1, #f, 2 do
      if f[i] == 'q' then seq = tostring(tonumber(f[i + 1]) + 1) end
    end
  end
end
local id
if ARGV[4] == '' then
  id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'q', seq, 'e', ep, 'd', ARGV[3])
else
  id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 'q', seq, 'e', ep, 'd', ARGV[3], 'f', ARGV[4])
end
local ms = tonumber(string.match(id, '^(%d+)-'))
local ended = string.find(ARGV[4], 'x', 1, true)
if ended and fresh then
  redis.call('HSET', KEYS[1], ARGV[1], ep, ARGV[1] .. ':x', seq)
elseif fresh then
  redis.call('HSET', KEYS[1], ARGV[1], ep)
elseif ended then
  redis.call('HSET', KEYS[1], ARGV[1] .. ':x', seq)
end
if ended then
  redis.call('ZADD', KEYS[3], ms, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
if not fresh then
  redis.call('XTRIM', KEYS[2], 'MINID', '~', string.format('%d', ms - tonumber(ARGV[7])))
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return {ep, seq, id}
`)

// write stores e; numbered says whether e.Seq counts the stream's events
// (else the store numbers them).
func (s *EventStore) write(ctx context.Context, sessionID, streamID string, e transport.LogEvent, numbered bool) (string, error) {
	if !validSessionID(sessionID) || !validStreamID(streamID) {
		return "", fmt.Errorf("redisstore: invalid session or stream ID")
	}
	if numbered && e.Seq < 0 {
		return "", fmt.Errorf("redisstore: event number %d", e.Seq)
	}
	meta, streams := s.sessionKeys(sessionID)
	seq, flags := "", ""
	switch {
	case numbered && e.Seq == 0:
		seq = "+" // after the stream's last event
	case numbered:
		seq = strconv.FormatInt(e.Seq, 10)
	}
	if e.Gap {
		flags += "g"
	}
	if e.End {
		flags += "x"
	}
	if e.Data == nil {
		flags += "z" // a bare mark: its event has no data
	}
	var b [epochBytes]byte
	rand.Read(b[:])
	age := s.opts.MaxAge.Milliseconds()
	c := s.bounds.op(ctx)
	// The age bound is counted on Redis' clock, from the new entry's ID.
	res, err := writeScript.Run(c.ctx, s.client, []string{meta, streams + streamID, endedKey(meta)},
		streamID, seq, e.Data, flags, hex.EncodeToString(b[:]), s.opts.MaxStreamEvents, age, age, s.opts.MaxSessionStreams, streams).StringSlice()
	err = c.end(err)
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("redisstore: write to session %s: %w", sessionID, ErrStreamLimit)
	}
	if err != nil {
		return "", wrap("event write", err)
	}
	if len(res) != 3 {
		return "", fmt.Errorf("redisstore: event write: unexpected reply %q", res)
	}
	n, err := strconv.ParseInt(res[1], 10, 64)
	if err != nil {
		return "", fmt.Errorf("redisstore: event write: unexpected number %q", res[1])
	}
	return position{stream: streamID, epoch: res[0], seq: n, entry: res[2]}.eventID(), nil
}

// readResult is what one read of a stream got.
type readResult struct {
	events []transport.StoredEvent
	ended  bool   // the stream's end is the last of events (or the position read from)
	hole   bool   // events after the last of events follow a hole
	epoch  string // the stream's epoch; "" when it has none
	full   bool   // the read returned as many entries as it could: more may follow
}

// read is one read of the events stored after p (XRANGE, with the
// stream's epoch and end from the session's meta hash). It checks them
// against p (see check), and returns ErrEventNotFound when p is unknown or
// the first follows a hole.
func (s *EventStore) read(ctx context.Context, sessionID string, p position) (readResult, error) {
	meta, streams := s.sessionKeys(sessionID)
	key := streams + p.stream
	// One round trip of two reads of the session's slot, not a script:
	// Lua's conversion of the entries cost more than the read. They need
	// not be atomic: each entry carries its epoch and number, which check
	// verifies, and the end mark is in the entries too. One entry more
	// than a batch tells whether more follow.
	var hm *redis.SliceCmd
	var xr *redis.XMessageSliceCmd
	err := s.bounds.read(context.WithoutCancel(ctx), func(octx context.Context) error {
		_, err := s.client.Pipelined(octx, func(pipe redis.Pipeliner) error {
			hm = pipe.HMGet(octx, meta, p.stream, p.stream+":x")
			xr = pipe.XRangeN(octx, key, "("+p.entry, "+", int64(s.opts.Batch+1))
			return nil
		})
		return err
	})
	if err != nil {
		return readResult{}, wrap("event read", err)
	}
	res := hm.Val()
	if len(res) != 2 {
		return readResult{}, fmt.Errorf("redisstore: event read: unexpected reply")
	}
	epoch, _ := res[0].(string)
	if p.epoch != startEpoch && p.epoch != epoch {
		return readResult{}, transport.ErrEventNotFound // unknown, or the store lost the stream
	}
	entries := entriesOf(xr.Val())
	if v, ok := res[1].(string); ok && len(entries) == 0 && v == strconv.FormatInt(p.seq, 10) {
		return readResult{ended: true}, nil
	}
	full := len(entries) > s.opts.Batch
	if full {
		entries = entries[:s.opts.Batch]
	}
	r := check(p, epoch, entries)
	r.epoch, r.full = epoch, full
	if len(r.events) == 0 && r.hole {
		return readResult{}, transport.ErrEventNotFound
	}
	return r, nil
}

// wait is a blocking read (XREAD BLOCK) of the events after p, within
// block, for a tail that found none stored; epoch is the stream's epoch
// that read found.
func (s *EventStore) wait(ctx context.Context, sessionID string, p position, epoch string, block time.Duration) (readResult, error) {
	_, streams := s.sessionKeys(sessionID)
	c := s.bounds.opWithin(ctx, block+s.opts.Timeout)
	res, err := s.client.XRead(c.ctx, &redis.XReadArgs{Streams: []string{streams + p.stream, p.entry}, Count: int64(s.opts.Batch), Block: block}).Result()
	err = c.end(err)
	switch {
	case errors.Is(err, redis.Nil):
		return readResult{}, nil
	case err != nil && ctx.Err() != nil:
		return readResult{}, ctx.Err()
	case err != nil:
		return readResult{}, wrap("event tail", err)
	}
	var entries []entry
	if len(res) == 1 {
		entries = entriesOf(res[0].Messages)
	}
	r := check(p, epoch, entries)
	if len(r.events) == 0 && r.hole {
		return readResult{}, transport.ErrEventNotFound
	}
	return r, nil
}

// entry is a stored event as read: its Redis entry ID and fields.
type entry struct {
	id, q, e, f, d string
}

// setField sets a field of the entry by its name.
func (en *entry) setField(k, v string) {
	switch k {
	case "q":
		en.q = v
	case "e":
		en.e = v
	case "f":
		en.f = v
	case "d":
		en.d = v
	}
}

// entriesOf converts the entries of an XRANGE or XREAD reply.
func entriesOf(msgs []redis.XMessage) []entry {
	out := make([]entry, len(msgs))
	for i, m := range msgs {
		out[i].id = m.ID
		for k, v := range m.Values {
			v, _ := v.(string)
			out[i].setField(k, v)
		}
	}
	return out
}

// check returns the events of entries that continue p without a hole:
// each numbered one more than the one before (p's, first), of the epoch
// of p (or, from a stream's start, of the stream's epoch), with no gap
// mark. Entries after a hole are not returned.
func check(p position, epoch string, entries []entry) readResult {
	want := p.epoch
	if want == startEpoch {
		want = epoch // "" when the stream had no events at the read
	}
	var r readResult
	prev := p.seq
	for _, m := range entries {
		e, f := m.e, m.f
		seq, err := strconv.ParseInt(m.q, 10, 64)
		if want == "" {
			want = e // the stream's first events, got by the blocking read
		}
		if err != nil || seq != prev+1 || e != want || strings.Contains(f, "g") {
			r.hole = true
			return r
		}
		prev = seq
		ev := transport.StoredEvent{ID: position{stream: p.stream, epoch: e, seq: seq, entry: m.id}.eventID()}
		if !strings.Contains(f, "z") {
			ev.Data = []byte(m.d)
		}
		r.events = append(r.events, ev)
		if strings.Contains(f, "x") {
			r.ended = true
			return r
		}
	}
	return r
}

// After implements [transport.EventStore]: it reads the stream in
// batches, and refuses a range with a hole.
func (s *EventStore) After(ctx context.Context, sessionID, lastEventID string) (string, []transport.StoredEvent, error) {
	p, ok := parseEventID(lastEventID)
	if !ok || !validSessionID(sessionID) {
		return "", nil, transport.ErrEventNotFound
	}
	var all []transport.StoredEvent
	for {
		r, err := s.read(ctx, sessionID, p)
		if err != nil {
			return "", nil, err
		}
		if r.hole {
			return "", nil, transport.ErrEventNotFound
		}
		all = append(all, r.events...)
		if !r.full || r.ended || len(r.events) == 0 {
			return p.stream, all, nil
		}
		p, _ = parseEventID(r.events[len(r.events)-1].ID)
	}
}

// Tail implements [transport.EventLog]. Only the blocking read honours
// ctx's cancellation: the read of what is stored is bounded by Timeout.
// A tail blocks in one XREAD on a connection of the client's pool, at
// most TailBlock, and at most MaxTails at once in this store.
func (s *EventStore) Tail(ctx context.Context, sessionID, lastEventID string) (transport.LogBatch, error) {
	p, ok := parseEventID(lastEventID)
	if !ok || !validSessionID(sessionID) {
		return transport.LogBatch{}, transport.ErrEventNotFound
	}
	b := transport.LogBatch{StreamID: p.stream}
	r, err := s.read(ctx, sessionID, p)
	if err != nil {
		return transport.LogBatch{}, err
	}
	if len(r.events) > 0 || r.ended {
		b.Events, b.Ended = r.events, r.ended
		return b, nil
	}
	select {
	case s.tails <- struct{}{}:
		defer func() { <-s.tails }()
	default:
		return transport.LogBatch{}, transport.ErrTailLimit
	}
	if err := ctx.Err(); err != nil {
		return b, err
	}
	block := s.opts.TailBlock
	if d, ok := ctx.Deadline(); ok {
		// The reply must come before ctx's deadline: a block ending on
		// it makes the reply late, an i/o timeout (which the breaker
		// would count) rather than an empty batch.
		left := time.Until(d)
		block = min(block, left-min(s.opts.Timeout, left/2))
	}
	if block < time.Millisecond {
		return b, context.DeadlineExceeded
	}
	if r, err = s.wait(ctx, sessionID, p, r.epoch, block); err != nil {
		return transport.LogBatch{}, err
	}
	b.Events, b.Ended = r.events, r.ended
	return b, nil
}

// DeleteSession implements [transport.EventStore]: it deletes the
// session's streams, which its meta hash lists, and the hash; no key is
// scanned.
func (s *EventStore) DeleteSession(ctx context.Context, sessionID string) error {
	if !validSessionID(sessionID) {
		return nil
	}
	meta, streams := s.sessionKeys(sessionID)
	var fields []string
	err := s.bounds.read(ctx, func(ctx context.Context) (err error) {
		fields, err = s.client.HKeys(ctx, meta).Result()
		return err
	})
	if err != nil {
		return wrap("event session delete", err)
	}
	keys := []string{meta, endedKey(meta)}
	for _, f := range fields {
		if validStreamID(f) {
			keys = append(keys, streams+f)
		}
	}
	c := s.bounds.op(ctx)
	if err := c.end(s.client.Del(c.ctx, keys...).Err()); err != nil {
		return wrap("event session delete", err)
	}
	return nil
}
