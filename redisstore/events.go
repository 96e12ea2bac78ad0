package redisstore

import (
	"cmp"
	"context"
	"crypto/sha256"
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
	DefaultMaxEvents   = 1000
	DefaultEventMaxAge = 5 * time.Minute
	DefaultMaxTails    = 16
	DefaultTailBlock   = time.Second
	DefaultEventBatch  = 100
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
	// MaxEvents is the number of events a session keeps, about, all its
	// SSE streams together (DefaultMaxEvents): each write trims the
	// session's log with XADD MAXLEN ~, which keeps whole macro-nodes,
	// so up to about a hundred more may stay. It bounds what a session
	// can make Redis hold, however many streams it opens.
	MaxEvents int
	// MaxAge is how long an event can be resumed from
	// (DefaultEventMaxAge): a Last-Event-ID older than that is refused as
	// unknown, and each write sets the TTL of the session's log to it, so
	// a session's events go MaxAge after its last write.
	MaxAge time.Duration
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

// EventStore is a [transport.EventLog] on Redis: each session's SSE
// streams are one Redis Stream, its log, so that a client can resume a
// stream on any server process sharing the store, while the process that
// writes it still does. It is safe for concurrent use, and starts no
// goroutine.
//
// With the default prefix, a session sid has one key, under its hash tag
// and with a TTL of MaxAge refreshed by each write:
//
//	mcpkit:ev:{<sid>}:l   stream: s (SSE stream), q (its number in the stream), d (data), f (flags) per event
//
// A stored event is two plain commands (XADD trimmed by MAXLEN ~, and
// PEXPIRE) in one round trip, which the writes of concurrent callers
// share (see groupCommit); a priming event stores nothing; an event
// the store numbers (Seq 0) is a script that finds the stream's last
// number. A read is an XRANGE per Batch entries of the log, from the
// event resumed from, which must still be there: so a resumption never
// crosses events Redis lost or trimmed; the entries of the session's
// other streams are skipped. A tail that finds nothing blocks in one XREAD
// on a pooled connection, at most TailBlock, with at most MaxTails
// blocked at once (more are refused with transport.ErrTailLimit: the
// number of connections blocked never grows with the streams).
// DeleteSession deletes the log. Event IDs are
// "<stream>:<tag>:<number>:<entry ID>", tag naming the store's prefix and
// the session, parsed strictly before any key is built.
// docs/SCALING.md ("Event log") has the design.
type EventStore struct {
	client redis.UniversalClient
	opts   EventStoreOptions
	bounds bounds
	tails  chan struct{} // a token per tail blocked in a read
	batch  groupCommit   // the writes of concurrent callers, one round trip
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
	o.MaxEvents = cmp.Or(max(o.MaxEvents, 0), DefaultMaxEvents)
	o.MaxAge = cmp.Or(max(o.MaxAge, 0), DefaultEventMaxAge)
	o.MaxTails = cmp.Or(max(o.MaxTails, 0), DefaultMaxTails)
	o.TailBlock = cmp.Or(max(o.TailBlock, 0), DefaultTailBlock)
	o.Batch = cmp.Or(max(o.Batch, 0), DefaultEventBatch)
	return &EventStore{client: client, opts: o, bounds: bd, tails: make(chan struct{}, o.MaxTails)}, nil
}

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

// validStreamID reports whether a stream ID may go into an event ID:
// letters, digits, '_', '.' and '-', bounded.
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

// logKey returns the key of a session's log, in the session's hash slot.
func (s *EventStore) logKey(sessionID string) string {
	return s.opts.Prefix + "ev:{" + sessionID + "}:l"
}

// tagBytes is the size of a session's tag in its event IDs.
const tagBytes = 6

// tag returns the tag of the event IDs of a session: the first tagBytes
// of SHA-256 of the store's prefix and the session ID, in hex. Entry IDs
// and stream IDs repeat from one log to another; the tag makes another
// session's event IDs, and another store's, unknown.
func (s *EventStore) tag(sessionID string) string {
	h := sha256.Sum256([]byte(s.opts.Prefix + "\x00" + sessionID))
	return hex.EncodeToString(h[:tagBytes])
}

// startTag is the tag of positions before a stream's first event, which
// StreamStart gives without knowing the session.
const startTag = "0"

// position is a place in a stream, parsed from an event ID
// "<stream>:<tag>:<seq>:<entry>": entry is the ID of the entry of the
// session's log that holds event number seq of the stream; the start of
// a stream is "<stream>:0:0:0-0".
type position struct {
	stream, tag, entry string
	seq                int64
}

func (p position) eventID() string {
	return p.stream + ":" + p.tag + ":" + strconv.FormatInt(p.seq, 10) + ":" + p.entry
}

// start reports whether p is the start of its stream.
func (p position) start() bool { return p.tag == startTag }

// parseEventID parses an event ID of this store, reporting false for
// anything else: nothing of an ID goes into a key or command unchecked.
func parseEventID(id string) (position, bool) {
	if len(id) > transport.MaxEventIDBytes {
		return position{}, false
	}
	parts := strings.Split(id, ":")
	if len(parts) != 4 || !validStreamID(parts[0]) || !validTag(parts[1]) || !decimal(parts[2]) {
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
	p := position{stream: parts[0], tag: parts[1], seq: seq, entry: parts[3]}
	if p.start() != (p.seq == 0 && p.entry == "0-0") {
		return position{}, false
	}
	return p, true
}

// validTag reports whether t is a tag: startTag, or lowercase hex.
func validTag(t string) bool {
	if t == startTag {
		return true
	}
	if len(t) != 2*tagBytes {
		return false
	}
	for i := range len(t) {
		if c := t[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
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

// Append implements [transport.EventStore]: it writes data as the event
// after the stream's last stored one. A nil data (a priming event)
// stores nothing: the ID is the stream's start.
func (s *EventStore) Append(ctx context.Context, sessionID, streamID string, data []byte) (string, error) {
	if data == nil {
		return s.StreamStart(sessionID, streamID), nil
	}
	return s.Write(ctx, sessionID, streamID, transport.LogEvent{Data: data})
}

// StreamStart implements [transport.EventLog].
func (s *EventStore) StreamStart(_, streamID string) string {
	return position{stream: streamID, tag: startTag, entry: "0-0"}.eventID()
}

// Write implements [transport.EventLog]: an event the writer numbers is
// XADD and PEXPIRE, in a round trip that carries the writes of other
// callers under way at the same time; one the store numbers (Seq 0), a
// script (EVALSHA).
func (s *EventStore) Write(ctx context.Context, sessionID, streamID string, e transport.LogEvent) (string, error) {
	if !validSessionID(sessionID) || !validStreamID(streamID) {
		return "", fmt.Errorf("redisstore: invalid session or stream ID")
	}
	if e.Seq < 0 {
		return "", fmt.Errorf("redisstore: event number %d", e.Seq)
	}
	key := s.logKey(sessionID)
	var flags string
	if e.Gap {
		flags += "g"
	}
	if e.End {
		flags += "x"
	}
	if e.Data == nil {
		flags += "z" // a bare mark: its event has no data
	}
	if e.Seq == 0 {
		return s.writeNext(ctx, sessionID, streamID, e.Data, flags)
	}
	args := make([]any, 0, 14)
	args = append(args, "xadd", key, "maxlen", "~", s.opts.MaxEvents, "*", "s", streamID, "q", e.Seq, "d", e.Data)
	if flags != "" {
		args = append(args, "f", flags)
	}
	xadd := redis.NewCmd(ctx, args...)
	op := &pendingOp{cmds: []redis.Cmder{noRetry{xadd}, redis.NewBoolCmd(ctx, "pexpire", key, s.opts.MaxAge.Milliseconds())}}
	s.batch.do(ctx, &s.bounds, s.client, op)
	if op.err != nil {
		return "", wrap("event write", op.err)
	}
	entry, err := xadd.Text()
	if err != nil || !validEntryID(entry) {
		return "", fmt.Errorf("redisstore: event write: unexpected entry ID %q", entry)
	}
	return position{stream: streamID, tag: s.tag(sessionID), seq: e.Seq, entry: entry}.eventID(), nil
}

// validEntryID reports whether id is a Redis Stream entry ID as Redis
// spells them, "<ms>-<n>".
func validEntryID(id string) bool {
	ms, n, ok := strings.Cut(id, "-")
	return ok && decimal(ms) && decimal(n)
}

// writeNextScript stores an event numbered after the last event of its
// stream that the log holds (1 when it holds none): it reads the log
// backwards, at most ARGV[6] entries. KEYS[1] is the session's log;
// ARGV: the stream ID, the data, the flags, MAXLEN, the TTL in ms, and
// the bound of the scan. It returns the event's number and entry ID.
var writeNextScript = newScript(`
local seq, last, scanned, bound = 1, '+', 0, tonumber(ARGV[6])
while scanned < bound do
  local batch = redis.call('XREVRANGE', KEYS[1], last, '-', 'COUNT', 100)
  local found = false
  for _, en in ipairs(batch) do
    local f, s, q = en[2], nil, nil
    for i = 1, #f, 2 do
      if f[i] == 's' then s = f[i + 1] elseif f[i] == 'q' then q = f[i + 1] end
    end
    if s == ARGV[1] then
      seq = (tonumber(q) or 0) + 1
      found = true
      break
    end
  end
  if found or #batch < 100 then break end
  scanned = scanned + #batch
  last = '(' .. batch[#batch][1]
end
local id
if ARGV[3] == '' then
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 's', ARGV[1], 'q', seq, 'd', ARGV[2])
else
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 's', ARGV[1], 'q', seq, 'd', ARGV[2], 'f', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {tostring(seq), id}
`)

// writeNext stores an event the store numbers (see writeNextScript).
func (s *EventStore) writeNext(ctx context.Context, sessionID, streamID string, data []byte, flags string) (string, error) {
	c := s.bounds.op(ctx)
	res, err := writeNextScript.Run(c.ctx, s.client, []string{s.logKey(sessionID)},
		streamID, data, flags, s.opts.MaxEvents, s.opts.MaxAge.Milliseconds(), s.scanBound()).StringSlice()
	if err := c.end(err); err != nil {
		return "", wrap("event write", err)
	}
	if len(res) != 2 || !validEntryID(res[1]) {
		return "", fmt.Errorf("redisstore: event write: unexpected reply %q", res)
	}
	n, err := strconv.ParseInt(res[0], 10, 64)
	if err != nil || n < 1 {
		return "", fmt.Errorf("redisstore: event write: unexpected number %q", res[0])
	}
	return position{stream: streamID, tag: s.tag(sessionID), seq: n, entry: res[1]}.eventID(), nil
}

// scanBound bounds the entries of a log one read scans: the log holds
// about MaxEvents, and XADD MAXLEN ~ leaves up to a macro-node more; the
// rest is for entries written while the read goes on.
func (s *EventStore) scanBound() int { return 2*s.opts.MaxEvents + 200 }

// readResult is what one read of a log got for one stream.
type readResult struct {
	events []transport.StoredEvent
	ended  bool   // the stream's end is the last of events (or the position read from)
	hole   bool   // events after the last of events follow a hole
	full   bool   // the read returned Batch events: more may follow
	next   string // the last entry of the log scanned, where a blocking read goes on
	prev   int64  // the number of the stream's last event read (the position's when none)
}

// take goes through entries of the log that follow r.next, adding the
// events of p's stream that continue the ones before without a hole:
// each numbered one more than the one before (p's, first), with no gap
// mark. It reports whether the read is over: the stream ended, a hole,
// or Batch events (full when entries follow them: more says that the
// log holds entries after msgs).
func (s *EventStore) take(p position, tag string, r *readResult, msgs []redis.XMessage, more bool) bool {
	for i, m := range msgs {
		r.next = m.ID
		en := entryOf(m)
		if en.s != p.stream {
			continue
		}
		seq, err := strconv.ParseInt(en.q, 10, 64)
		if err != nil || seq != r.prev+1 || strings.Contains(en.f, "g") {
			r.hole = true
			return true
		}
		r.prev = seq
		ev := transport.StoredEvent{ID: position{stream: p.stream, tag: tag, seq: seq, entry: m.ID}.eventID()}
		if !strings.Contains(en.f, "z") {
			ev.Data = []byte(en.d)
		}
		r.events = append(r.events, ev)
		if strings.Contains(en.f, "x") {
			r.ended = true
			return true
		}
		if len(r.events) == s.opts.Batch {
			r.full = more || i < len(msgs)-1
			return true
		}
	}
	return false
}

// read is one read of the events of p's stream stored after p: XRANGE of
// the session's log from p's own entry, which must still be there (with
// p's stream and number, and younger than MaxAge: else the events after
// p may have gone), through the entries of other streams, until Batch
// events, the stream's end or the end of the log. It returns
// ErrEventNotFound when p is unknown or the first event follows a hole.
func (s *EventStore) read(ctx context.Context, sessionID string, p position) (readResult, error) {
	tag := s.tag(sessionID)
	if !p.start() && p.tag != tag {
		return readResult{}, transport.ErrEventNotFound // another session's, or another store's
	}
	key := s.logKey(sessionID)
	r := readResult{next: p.entry, prev: p.seq}
	from, own := "-", !p.start()
	if own {
		from = p.entry // inclusive: p's own entry first
	}
	for scanned := 0; ; {
		count := s.opts.Batch + 1 // one more tells whether more follow
		if own {
			count++
		}
		var msgs []redis.XMessage
		err := s.bounds.read(context.WithoutCancel(ctx), func(octx context.Context) (err error) {
			msgs, err = s.client.XRangeN(octx, key, from, "+", int64(count)).Result()
			return err
		})
		if err != nil {
			return readResult{}, wrap("event read", err)
		}
		more := len(msgs) == count
		if own {
			if len(msgs) == 0 || !s.isOwn(p, msgs[0]) {
				return readResult{}, transport.ErrEventNotFound
			}
			own = false
			if strings.Contains(entryOf(msgs[0]).f, "x") {
				r.ended = true
				return r, nil
			}
			msgs = msgs[1:]
		}
		scanned += len(msgs)
		if s.take(p, tag, &r, msgs, more) {
			break
		}
		if !more || scanned >= s.scanBound() {
			break
		}
		from = "(" + r.next
	}
	if len(r.events) == 0 && r.hole {
		return readResult{}, transport.ErrEventNotFound
	}
	return r, nil
}

// isOwn reports whether m is the entry of the event at p, young enough to
// resume from.
func (s *EventStore) isOwn(p position, m redis.XMessage) bool {
	if m.ID != p.entry {
		return false
	}
	en := entryOf(m)
	if en.s != p.stream || en.q != strconv.FormatInt(p.seq, 10) {
		return false
	}
	msText, _, _ := strings.Cut(m.ID, "-")
	ms, err := strconv.ParseInt(msText, 10, 64)
	return err == nil && time.Since(time.UnixMilli(ms)) <= s.opts.MaxAge
}

// wait is a blocking read (XREAD BLOCK) of the log after r.next, within
// block, for a tail whose read r found no event after p: entries of other
// streams are skipped, and the read goes on until block is spent.
func (s *EventStore) wait(ctx context.Context, sessionID string, p position, r readResult, block time.Duration) (readResult, error) {
	key, tag := s.logKey(sessionID), s.tag(sessionID)
	deadline := time.Now().Add(block)
	for {
		left := time.Until(deadline)
		if left < time.Millisecond {
			return readResult{}, nil
		}
		c := s.bounds.opWithin(ctx, left+s.opts.Timeout)
		res, err := s.client.XRead(c.ctx, &redis.XReadArgs{Streams: []string{key, r.next}, Count: int64(s.opts.Batch), Block: left}).Result()
		err = c.end(err)
		switch {
		case errors.Is(err, redis.Nil):
			return readResult{}, nil
		case err != nil && ctx.Err() != nil:
			return readResult{}, ctx.Err()
		case err != nil:
			return readResult{}, wrap("event tail", err)
		}
		if len(res) != 1 || len(res[0].Messages) == 0 {
			return readResult{}, nil
		}
		s.take(p, tag, &r, res[0].Messages, false)
		if len(r.events) > 0 || r.ended {
			return r, nil
		}
		if r.hole {
			return readResult{}, transport.ErrEventNotFound
		}
	}
}

// entry is a stored event as read: its fields.
type entry struct {
	s, q, f, d string
}

// entryOf reads the fields of an entry of an XRANGE or XREAD reply.
func entryOf(m redis.XMessage) entry {
	var en entry
	for k, v := range m.Values {
		v, _ := v.(string)
		switch k {
		case "s":
			en.s = v
		case "q":
			en.q = v
		case "f":
			en.f = v
		case "d":
			en.d = v
		}
	}
	return en
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
	if r, err = s.wait(ctx, sessionID, p, r, block); err != nil {
		return transport.LogBatch{}, err
	}
	b.Events, b.Ended = r.events, r.ended
	return b, nil
}

// DeleteSession implements [transport.EventStore]: it deletes the
// session's log.
func (s *EventStore) DeleteSession(ctx context.Context, sessionID string) error {
	if !validSessionID(sessionID) {
		return nil
	}
	c := s.bounds.op(ctx)
	if err := c.end(s.client.Del(c.ctx, s.logKey(sessionID)).Err()); err != nil {
		return wrap("event session delete", err)
	}
	return nil
}
