//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/slotmap"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// httpSession is one session's connection: a [jsonrpc.PushStream] fed by
// the POSTs that carry its messages, writing to the HTTP exchanges of the
// requests they belong to.
//
// Lock order: httpStream.mu before httpSession.mu before the handler's
// mu. recvMu is taken before the others when they are taken together (a
// message delivered may be answered at once).
type httpSession struct {
	// exchangeCtx holds the values of the POST's context that a
	// 2026-07-28 exchange, a session of one request, lives in: its
	// connection's handlers descend from it, and the POST's end cancels
	// them as any exchange's that cannot be resumed (see serveExchange).
	// Nil otherwise.
	exchangeCtx context.Context
	h           *StreamableHTTPHandler
	id          string // "" in stateless mode
	principal   string
	adm         *admission // the session's slot in the table; nil when stateless
	stateless   bool
	modern      bool // an exchange of 2026-07-28 or later (see streamable_modern.go)
	// Guarded by mu, with the fields below; kept beside stateless so that
	// the flags share a word.
	closed bool
	active int32 // HTTP requests being served

	pushEnd

	mu         sync.Mutex
	version    string                               // negotiated protocol version
	routes     slotmap.Map[jsonrpc.ID, *httpStream] // the streams answering requests in flight (usually one)
	streams    map[string]*httpStream               // resumable streams by ID
	standalone *httpStream
	nextStream int64
	idleTimer  *time.Timer
	idleSet    bool // idleTimer is set to go off

	// With a SessionStore, what a session of the handshake era keeps of
	// its record (see sessionstore.go), set before it is connected; nil
	// otherwise, so that it costs nothing then.
	*sessionStored

	// delivering is the exchange whose messages are being delivered (set
	// only while recvMu is held): a response the connection writes during
	// that delivery without an ID (a refusal of the whole message, such as
	// a batch it does not accept) answers that exchange.
	delivering atomic.Pointer[httpStream]
}

func (h *StreamableHTTPHandler) newSession(id, principal string, stateless bool, version string, adm *admission) *httpSession {
	s := &httpSession{
		h:         h,
		id:        id,
		principal: principal,
		stateless: stateless,
		adm:       adm,
		version:   version,
		pushEnd:   newPushEnd(),
	}
	return s
}

// statelessConn marks a stateless exchange's session for the connectFunc.
type statelessConn struct{ *httpSession }

// BaseContext implements jsonrpc's unexported baseContexter: the context of the POST
// a 2026-07-28 exchange lives in, or nil.
func (c statelessConn) BaseContext() context.Context { return c.exchangeCtx }

// StatelessProtocolVersion implements mcplink.Stateless: package mcp
// serves the exchange as already initialized, at this revision.
func (c statelessConn) StatelessProtocolVersion() string { return c.protocolVersion() }

// SessionID implements [SessionConn].
func (s *httpSession) SessionID() string { return s.id }

// FramedWrites reports true: each message is encoded into memory of its
// own, a response body or an event (see mcplink.FramedWriter).
func (s *httpSession) FramedWrites() bool { return true }

func (s *httpSession) admissionOf() *admission { return s.adm }

// deliver passes a message (perhaps a batch) to the connection, reporting
// false when the session is closed. st is the exchange answering m, or
// nil when m carries no requests.
func (s *httpSession) deliver(m jsonrpc.Message, st *httpStream) bool {
	s.noteCancellations(m)
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	if s.receive == nil || s.isClosed() {
		return false
	}
	if st != nil {
		s.delivering.Store(st)
		defer s.delivering.Store(nil)
	}
	s.receive(m)
	return true
}

// methodCancelled is the notification by which a client cancels one of its
// requests.
const methodCancelled = "notifications/cancelled"

// noteCancellations ends the routes of the requests that m cancels: the
// server sends no response to a cancelled request, so the exchange that
// waits for one must not wait for it (else neither it nor the session
// would ever end). A response that comes anyway finds no route and is
// dropped, as the client no longer expects it.
func (s *httpSession) noteCancellations(m jsonrpc.Message) {
	switch m := m.(type) {
	case *jsonrpc.Request:
		if m.Method == methodCancelled && m.IsNotification() {
			s.cancelRoute(m)
		}
	case jsonrpc.Batch:
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Request); ok && r.Method == methodCancelled && r.IsNotification() {
				s.cancelRoute(r)
			}
		}
	}
}

// cancelRoute ends the route of the request a notifications/cancelled
// names, counting it as answered on its stream.
func (s *httpSession) cancelRoute(note *jsonrpc.Request) {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if json.Unmarshal(note.Params, &p) != nil || !p.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	st, _ := s.routes.Get(p.RequestID)
	if st == nil || st.initialize {
		s.mu.Unlock()
		return // answered already, unknown, or initialize (not cancellable)
	}
	s.routes.Delete(p.RequestID)
	s.armIdleLocked()
	s.mu.Unlock()
	st.mu.Lock()
	st.answeredLocked(1)
	st.mu.Unlock()
}

func (s *httpSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *httpSession) protocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Close implements [Conn]: the connection's owner is done with the
// session. The session is forgotten and its streams end.
func (s *httpSession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	// The routes stay: the exchanges still open answer their requests
	// with an error (see endClosedLocked).
	standalone := s.standalone
	if s.sessionStored != nil && s.streamTimer != nil {
		s.streamTimer.Stop()
	}
	s.mu.Unlock()
	if standalone != nil {
		standalone.mu.Lock()
		standalone.interruptHijackedLocked()
		standalone.mu.Unlock()
	}
	s.h.forget(s)
	// With a session store, the session lives on in its record when
	// this replica lets its copy go: its events go only when the client
	// deleted it.
	if st := s.h.opts.EventStore; st != nil && s.id != "" && (s.sessionStored == nil || s.deleteEvents.Load()) {
		if err := st.DeleteSession(context.Background(), s.id); err != nil {
			s.h.logger.Warn("mcp http: deleting session events failed", "err", err)
		}
	}
	return nil
}

// terminate ends the session from the transport's side, telling the
// connection why.
func (s *httpSession) terminate(reason error) {
	s.Close()
	s.ended(reason)
}

// acquire and release bracket an HTTP request on the session, for the idle
// timeout.
func (s *httpSession) acquire() {
	s.mu.Lock()
	s.active++
	s.adm.markBusy()
	s.mu.Unlock()
}

func (s *httpSession) release() {
	s.mu.Lock()
	s.active--
	s.armIdleLocked()
	s.mu.Unlock()
}

// armIdleLocked starts (or restarts) the idle timer when the session has
// no HTTP request open: the handshake timeout until the client sends
// something after initialize, the idle timeout then. Requests in flight do
// not count: one that cannot be resumed has its POST open until it is
// answered, and the client of one that can has to come back for its
// answer (resuming, or polling again after the retry interval), so a
// session whose client stays away for the whole timeout has lost it,
// whatever its handlers still do. The timer holds no goroutine while it
// waits.
//
// The timer is set when the session goes idle with none set, and left
// alone by the requests that come and go before it goes off: it then
// sets itself again for what is left of the timeout, counted from the
// session's last going idle (the admission's idleSince; see
// idleExpired). A request costs no timer
// operation this way, where stopping the timer at its start and setting
// it again at its end cost two.
func (s *httpSession) armIdleLocked() {
	if s.closed || s.id == "" || s.active > 0 {
		return
	}
	s.adm.markIdle() // for eviction, and for idleExpired
	d := s.idleLimit()
	if d < 0 {
		return
	}
	if s.idleSet {
		return
	}
	s.idleSet = true
	if s.idleTimer == nil {
		s.idleTimer = time.AfterFunc(d, s.idleExpired)
		return
	}
	s.idleTimer.Reset(d)
}

// idleLimit is how long the session may stay idle: the handshake
// timeout until the client has sent something after initialize, then
// the idle timeout; negative for no limit.
func (s *httpSession) idleLimit() time.Duration {
	if s.h.handshake > 0 && !s.adm.established.Load() {
		return s.h.handshake
	}
	return s.h.idle
}

// idleExpired runs when the idle timer goes off: it ends the session if
// it has been idle for its whole limit, and otherwise sets the timer
// again for what is left, unless a request is in progress, whose end
// sets it (see armIdleLocked).
func (s *httpSession) idleExpired() {
	s.mu.Lock()
	s.idleSet = false
	if s.closed || s.active > 0 {
		s.mu.Unlock()
		return
	}
	d := s.idleLimit()
	if d < 0 {
		s.mu.Unlock()
		return
	}
	if left := d - time.Duration(monoNow()-s.adm.idleSince.Load()); left > 0 {
		s.idleSet = true
		s.idleTimer.Reset(left)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.h.logger.Debug("mcp http: session idle; closing", "session", s.id)
	reason := ErrSessionIdle
	if !s.adm.established.Load() {
		reason = ErrHandshakeTimeout
	}
	s.terminate(reason)
}

// serveExchange serves a POST carrying requests: it routes their
// responses to a new stream answering this exchange, delivers the
// messages, and waits until the responses are out, the client leaves or
// the session ends. For an initialize exchange it registers the session
// when initialize succeeds, and reports whether it did.
func (s *httpSession) serveExchange(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, info *HTTPRequestInfo, initialize bool) bool {
	st := s.newStream(w, requests, initialize)
	info.stream = st
	if s.h.opts.EventStore == nil || s.stateless {
		// The exchange cannot be resumed: its handlers stop when the POST
		// ends, as when the client goes away.
		info.cancelOn, info.cancelWhy = r.Context(), errClientAbandoned
	}
	if len(msgs) == 1 && st.id == "" {
		// The exchange cannot outlive its POST (it has no stream to
		// resume), so its handler may run on the POST's goroutine.
		info.exchange = st
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeJSONBody(w, http.StatusNotFound, closedAnswer(requests), false, "", 0)
		return false
	}
	for _, id := range requests {
		if _, dup := s.routes.Get(id); dup {
			s.mu.Unlock()
			// Nothing is delivered; every request gets its refusal.
			writeJSONBody(w, http.StatusBadRequest, errorAnswer(requests, jsonrpc.CodeInvalidRequest, "Bad Request: request id already in flight"), false, "", 0)
			return false
		}
	}
	// A batch may carry one id twice: the connection answers both in the
	// batch it sends back, which the route of that id takes once.
	distinct := 0
	for _, id := range requests {
		if to, _ := s.routes.Get(id); to != st {
			s.routes.Set(id, st)
			distinct++
		}
	}
	st.pending = distinct
	s.active++
	s.adm.markBusy()
	if st.id != "" {
		s.streams[st.id] = st
	}
	s.mu.Unlock()
	defer s.release()

	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok {
			req.Extra = info
		}
	}
	if st.mode == ResponseSSE {
		st.mu.Lock()
		st.startSSELocked()
		st.mu.Unlock()
	}
	if !s.deliver(msg, st) {
		st.mu.Lock()
		s.mu.Lock()
		s.dropRoutesLocked(st)
		s.mu.Unlock()
		if !st.wrote {
			st.wrote = true
			writeJSONBody(w, http.StatusNotFound, closedAnswer(requests), false, "", 0)
		}
		st.w = nil
		st.mu.Unlock()
		return false
	}
	info.exchange = nil
	if run := st.run; run != nil {
		st.run = nil
		run()
	}
	if !st.wait(r.Context(), 0) {
		return false // a resuming client took the stream over
	}
	if hook := s.h.testHookExchangeWaited; hook != nil {
		hook(slices.Clone(requests)) // a copy: requests stays on the POST's stack
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.detachPOSTLocked(w)
	if body := st.jsonBody; body != nil {
		st.jsonBody = nil
		if initialize && s.sessionStored != nil {
			if lerr := s.h.store.created(r.Context(), s, st.initOK); lerr != nil {
				writeLookupError(w, lerr)
				return false
			}
		}
		writeJSONBody(w, st.jsonStatus, body, st.initOK, s.id, s.h.writeTO)
		return st.initOK
	}
	if !st.done && s.isClosed() {
		st.endClosedLocked(w)
	}
	if !st.wrote && st.done {
		// Every request was cancelled: no response comes, and the
		// exchange ends with an empty stream.
		st.onceOnLocked(w, st.startSSELocked)
	}
	return st.initOK
}

// endClosedLocked answers, on the exchange's connection w, the requests of
// the stream that the session ended before they were answered, with an
// error naming each, and finishes the stream.
func (st *httpStream) endClosedLocked(w http.ResponseWriter) {
	s := st.s
	s.mu.Lock()
	var ids []jsonrpc.ID
	s.routes.DeleteFunc(func(id jsonrpc.ID, to *httpStream) bool {
		if to == st {
			ids = append(ids, id)
		}
		return to == st
	})
	s.mu.Unlock()
	slices.SortFunc(ids, func(a, b jsonrpc.ID) int { return strings.Compare(a.String(), b.String()) })
	if len(ids) > 0 {
		body := closedAnswer(ids)
		if !st.wrote {
			st.wrote = true
			writeJSONBody(w, http.StatusNotFound, body, false, "", 0)
		} else if st.sse {
			st.onceOnLocked(w, func() { st.writeEventLocked("", body) })
		}
	}
	st.pending = 0
	st.finishLocked()
}

// onceOnLocked runs write with w as the stream's connection, for a last
// write after the stream let w go, and lifts the write deadline it set.
func (st *httpStream) onceOnLocked(w http.ResponseWriter, write func()) {
	st.w, st.deadline = w, false
	write()
	deadline := st.deadline
	st.w, st.deadline = nil, false
	if deadline {
		clearWriteDeadline(w)
	}
}

// dropRoutesLocked forgets the routes that lead to st. It goes through
// every route, which only the exchanges that end abnormally need.
func (s *httpSession) dropRoutesLocked(st *httpStream) {
	s.routes.DeleteFunc(func(_ jsonrpc.ID, to *httpStream) bool { return to == st })
}

// closedAnswer is the answer to requests that the session ended before
// answering: an error naming each (a batch of them when there are
// several), so that the client knows which requests failed.
func closedAnswer(ids []jsonrpc.ID) []byte {
	return errorAnswer(ids, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
}

// errorAnswer is an error response with code and msg for each of ids (a
// batch of them when there are several; one without an ID when ids is
// empty).
func errorAnswer(ids []jsonrpc.ID, code int64, msg string) []byte {
	e := &jsonrpc.Error{Code: code, Message: msg}
	var m jsonrpc.Message
	switch len(ids) {
	case 0:
		m = &jsonrpc.Response{Error: e}
	case 1:
		m = &jsonrpc.Response{ID: ids[0], Error: e}
	default:
		b := make(jsonrpc.Batch, len(ids))
		for i, id := range ids {
			b[i] = &jsonrpc.Response{ID: id, Error: e}
		}
		m = b
	}
	data, _ := jsonrpc.EncodeMessage(m)
	return data
}

// acceptNoRequests answers a POST that carried no requests: 202, unless
// some elements of its batch were invalid and without an ID, which
// JSON-RPC answers each with an error (400, with the batch of errors).
func acceptNoRequests(w http.ResponseWriter, msgs []jsonrpc.Message) {
	var errs jsonrpc.Batch
	for _, m := range msgs {
		if de, ok := m.(*jsonrpc.DecodeError); ok {
			errs = append(errs, &jsonrpc.Response{ID: de.ID, Error: de.Err})
		}
	}
	if errs == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	data, _ := jsonrpc.EncodeMessage(errs)
	writeJSONBody(w, http.StatusBadRequest, data, false, "", 0)
}

// RunHandler implements the jsonrpc connection's handler-runner hook (an unexported interface of package jsonrpc): the handler of a request
// that a POST carried alone runs on that POST's goroutine, which
// serveExchange lends it once the request is delivered. It is called
// during that delivery, on that same goroutine. Only exchanges that cannot
// be resumed qualify, as the POST's response then ends when the handler
// returns (the handler's context is cancelled if the client goes away or
// the session ends meanwhile).
func (s *httpSession) RunHandler(req *jsonrpc.Request, f func()) bool {
	info, _ := req.Extra.(*HTTPRequestInfo)
	if info == nil || info.exchange == nil || info.exchange.run != nil {
		return false
	}
	info.exchange.run = f
	return true
}

// newStream creates the stream answering a POST with requests.
func (s *httpSession) newStream(w http.ResponseWriter, requests []jsonrpc.ID, initialize bool) *httpStream {
	st := &httpStream{
		s:          s,
		w:          w,
		pending:    len(requests),
		initialize: initialize,
	}
	st.mode = s.h.opts.ResponseMode
	if initialize {
		st.mode = ResponseJSON // no session to resume yet
	}
	if !initialize && !s.stateless && s.h.opts.EventStore != nil {
		s.mu.Lock()
		if s.streams == nil {
			s.streams = make(map[string]*httpStream)
		}
		s.nextStream++
		st.id = strconv.FormatInt(s.nextStream, 10)
		if s.h.store != nil {
			// Other replicas number the session's streams too, and
			// one following the stream asks whether its writer lives.
			st.id = s.h.store.responseStreamID(s.nextStream, requests)
		}
		resumable := s.version >= primingVersion
		s.mu.Unlock()
		if st.mode == ResponseAuto && resumable {
			st.mode = ResponseSSE
		}
	}
	return st
}

// standaloneStream returns the session's GET stream, creating it.
func (s *httpSession) standaloneStream() *httpStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.standalone == nil {
		st := &httpStream{s: s, mode: ResponseSSE, standalone: true}
		if s.h.opts.EventStore != nil {
			if s.streams == nil {
				s.streams = make(map[string]*httpStream)
			}
			st.id = "get"
			if sr := s.h.store; sr != nil {
				// A stream ID of this replica's own: another replica
				// may take the session's GET stream over (see resume),
				// or hold one of its own, and each numbers the events
				// of its own.
				st.id = "get." + sr.streamTag
				if sr.relay != nil {
					st.id = "get." + sr.self
				}
			}
			s.streams[st.id] = st
		}
		s.standalone = st
	}
	return s.standalone
}

// resume serves a GET with Last-Event-ID: it replays the stream the event
// belongs to from that point and, if the stream is still live, attaches
// this exchange to it.
//
// It reports whether it handed the connection over to a goroutine of its
// own (see [httpStream.hijack]), which then calls end; else the caller
// calls end.
func (s *httpSession) resume(w http.ResponseWriter, r *http.Request, last string, end func()) (handedOver bool) {
	store := s.h.opts.EventStore
	streamID, _, err := store.After(r.Context(), s.id, last)
	if err != nil {
		if errors.Is(err, ErrEventNotFound) {
			http.Error(w, "Bad Request: unknown or expired Last-Event-ID", http.StatusBadRequest)
			return false
		}
		s.h.logger.Error("mcp http: event store failed", "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return false
	}
	s.mu.Lock()
	st := s.streams[streamID]
	s.mu.Unlock()
	adopted := false
	if sr := s.h.store; st == nil && sr != nil && sr.relay != nil && s.sessionStored != nil && (streamID == "get" || strings.HasPrefix(streamID, "get.")) {
		// The GET stream of another replica, resumed here: what it
		// stored after last is replayed, and this replica's own GET
		// stream goes on on the connection. The record names this
		// replica from now on, so the others send it what they send
		// the session outside requests.
		st = s.standaloneStream()
		adopted = true
	}
	if st == nil {
		// The stream is over, or is written elsewhere (another process
		// sharing the store): replay what is stored and, from an event
		// log, follow it until its end.
		_, events, err := store.After(r.Context(), s.id, last)
		if err != nil {
			http.Error(w, "Bad Request: unknown or expired Last-Event-ID", http.StatusBadRequest)
			return false
		}
		replay := &httpStream{s: s, mode: ResponseSSE, w: w}
		replay.mu.Lock()
		replay.startSSEHeadersLocked()
		http.NewResponseController(w).Flush()
		for _, e := range events {
			replay.writeEventLocked(e.ID, e.Data)
			last = e.ID
		}
		replay.mu.Unlock()
		if s.h.log != nil {
			s.tail(r.Context(), replay, streamID, last)
		}
		clearWriteDeadline(w)
		return false
	}
	st.mu.Lock()
	pending := st.gap
	st.mu.Unlock()
	if pending {
		// An event failed to be stored (perhaps it was, and the client
		// got it live, without an ID) and no later one records the gap
		// yet: any replay could repeat or skip it.
		http.Error(w, "Bad Request: unknown or expired Last-Event-ID", http.StatusBadRequest)
		return false
	}
	if sr := s.h.store; st.standalone && sr != nil && sr.relay != nil && s.sessionStored != nil {
		// The GET stream, resumed here: the record names this replica
		// while it lives here (see serveGET).
		sr.streamOpened(r.Context(), s)
		ended := end
		end = func() {
			sr.streamClosed(s)
			ended()
		}
		defer func() {
			if !handedOver {
				sr.streamClosed(s)
			}
		}()
	}
	replayed := last // the last event of the adopted stream replayed
	conn, ok := st.attach(w, func() ([]StoredEvent, error) {
		if st.gap { // attach holds the stream's lock
			return nil, ErrEventNotFound
		}
		_, events, err := store.After(r.Context(), s.id, last)
		if len(events) > 0 {
			replayed = events[len(events)-1].ID
		}
		return events, err
	})
	if adopted && ok {
		s.adopt(st, replayed)
	}
	if st.standalone && s.h.handOver(w, r, st, conn, end) {
		return true
	}
	if st.wait(r.Context(), conn) && s.isClosed() {
		// The session ended with requests of the stream unanswered: this
		// connection, the stream's, tells the client.
		st.mu.Lock()
		if !st.done && !st.standalone {
			st.endClosedLocked(w)
		}
		st.mu.Unlock()
	}
	return false
}

// adoptChecks are when, after a replica took a GET stream over from a
// replica that is gone, it reads the old stream's log again for what
// other replicas appended to it after the replay (see sendOrphaned): a
// sender that read the record before the takeover appends within two
// round trips, each under its store's timeout. Plain reads, not a Tail:
// a failover moves many GET streams at once, and tails are bounded.
var adoptChecks = [...]time.Duration{250 * time.Millisecond, time.Second, 2 * time.Second}

// adopt reads, at adoptChecks, the log of the GET stream st took over,
// after its event last (the last one replayed), and sends each message
// appended there on st, as an event of st: the client's stream then
// carries only st's event IDs, and a resumption misses nothing. It ends
// sooner when the session closes.
func (s *httpSession) adopt(st *httpStream, last string) {
	store := s.h.opts.EventStore
	go func() {
		start := time.Now()
		for _, at := range adoptChecks {
			time.Sleep(time.Until(start.Add(at))) // a wait of this goroutine's own, at most adoptChecks' last
			if s.isClosed() {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, events, err := store.After(ctx, s.id, last)
			for _, e := range events {
				last = e.ID
				if e.Data == nil {
					continue
				}
				if m, err := decodeOwned(&s.h.opts.DecodeLimits, e.Data); err == nil {
					st.send(ctx, m, 0, nil)
				}
			}
			cancel()
			if err != nil {
				return
			}
		}
	}()
}

// tailQuiet bounds how long a resumed stream that this process does not
// write follows its event log without getting an event: the client then
// resumes again (the connection may be held by a proxy that drops idle
// ones, and a stream whose end was lost would hold it forever).
const tailQuiet = 30 * time.Second

// tail follows the event log of stream streamID, written elsewhere, from
// the event last, writing its events to replay's connection, until the
// stream ends, its client leaves, the session ends (deleting the session's
// events wakes a waiting tail; a store's bounded wait returns), the log is
// quiet for tailQuiet, or the replica writing it is gone (see
// writerWatch): then what it stored is served, and the error answer to
// its request. A gap, the store's tail limit or an error ends the
// connection: the client resumes from the last event it got (and is
// refused if that crosses the gap).
func (s *httpSession) tail(ctx context.Context, replay *httpStream, streamID, last string) {
	quiet := time.Now().Add(tailQuiet)
	watch := s.watchWriter(streamID)
	draining := false
	for {
		deadline := watch.deadline(quiet)
		if draining {
			deadline = time.Now().Add(writerDrainWait)
		}
		tctx, tcancel := context.WithDeadline(ctx, deadline)
		b, err := s.h.log.Tail(tctx, s.id, last)
		tcancel()
		// An error at the deadline is the deadline's (a store's read
		// cut by it), whatever it says.
		waited := err != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || !time.Now().Before(deadline))
		if err != nil && !(waited && (draining || time.Now().Before(quiet))) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrEventNotFound) {
				s.h.logger.Warn("mcp http: event log tail failed", "err", err)
			}
			return
		}
		replay.mu.Lock()
		for _, e := range b.Events {
			replay.writeEventLocked(e.ID, e.Data)
			last = e.ID
		}
		gone := replay.w == nil
		replay.mu.Unlock()
		if b.Ended || gone || ctx.Err() != nil || s.isClosed() {
			return
		}
		switch {
		case len(b.Events) > 0:
			quiet = time.Now().Add(tailQuiet)
		case draining:
			// The writer is gone and stored nothing more.
			watch.answerGone(replay)
			return
		case !time.Now().Before(quiet):
			return
		case watch.gone(ctx):
			// What it stored before it went is served first.
			draining = true
		}
	}
}

// Write implements [Conn]: it routes m to the stream of the request it
// answers or belongs to.
func (s *httpSession) Write(ctx context.Context, m jsonrpc.Message) error {
	switch m := m.(type) {
	case *jsonrpc.Response:
		if !m.ID.IsValid() {
			// A refusal of a whole message, written while it is delivered.
			if st := s.delivering.Load(); st != nil {
				s.mu.Lock()
				s.dropRoutesLocked(st)
				s.armIdleLocked()
				s.mu.Unlock()
				return st.send(ctx, m, -1, nil)
			}
		}
		st := s.routeOf(m.ID)
		if st == nil {
			s.h.logger.Debug("mcp http: response with no exchange to go to", "id", m.ID.String())
			return nil
		}
		ids := [1]jsonrpc.ID{m.ID}
		return st.send(ctx, m, 1, ids[:])
	case jsonrpc.Batch:
		var st *httpStream
		ids := make([]jsonrpc.ID, 0, len(m))
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Response); ok {
				if t := s.routeOf(r.ID); t != nil {
					st = t
					ids = append(ids, r.ID)
				}
			}
		}
		if st == nil {
			return nil
		}
		return st.send(ctx, m, len(ids), ids)
	case *jsonrpc.Request:
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		var related *httpStream
		if id, ok := jsonrpc.RelatedRequest(ctx); ok {
			related, _ = s.routes.Get(id)
		}
		st := s.standalone
		s.mu.Unlock()
		// A stateless exchange (of 2026-07-28, or of a stateless server)
		// can have no GET stream: its own stream takes the message even
		// in JSON mode.
		if related != nil && related.carriesRequests(s.stateless) {
			st = related
		} else if s.sessionStored != nil {
			// Outside any request: to the GET stream, which the record
			// may say another replica holds. A request is not sent to
			// a holder that is gone (it would wait for its answer until
			// ClientRequestTimeout): it goes to a stream here, or
			// fails at once. A notification for a holder that is gone
			// goes to the stream's new holder or into the stream's
			// event log (see sendOrphaned).
			if to := s.relayTo(ctx); to != "" {
				switch {
				case m.IsNotification():
					err := s.relayOut(ctx, to, m)
					if !errors.Is(err, mcplink.ErrNoSubscriber) {
						return err
					}
					if done, err := s.sendOrphaned(ctx, to, m); done {
						return err
					}
				case !s.h.store.gone(ctx, to):
					return s.relayOut(ctx, to, m)
				}
			}
		}
		if st == nil {
			if m.IsNotification() {
				return nil // nowhere to go; the client opened no stream
			}
			return errNoStream
		}
		return st.send(ctx, m, 0, nil)
	}
	return fmt.Errorf("transport: cannot send %T", m)
}

// carriesRequests reports whether messages other than responses may travel
// on the stream. With upgrade (the session can have no GET stream for
// them), a JSON-mode exchange that has sent nothing yet becomes an SSE
// stream, so that the message is not lost: every POST that carries
// requests was admitted only if its client accepts text/event-stream (see
// servePOST). That is how, in ResponseJSON mode, a request of a 2026-07-28
// exchange or of a stateless server gets its progress and log
// notifications, and a subscriptions/listen request its acknowledgment.
func (st *httpStream) carriesRequests(upgrade bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return false
	}
	if st.mode == ResponseJSON && upgrade && !st.initialize && st.w != nil && !st.wrote {
		st.mode = ResponseSSE // send starts the stream with this message
	}
	return st.mode != ResponseJSON
}

// routeOf returns the stream a response to id goes to, or nil.
func (s *httpSession) routeOf(id jsonrpc.ID) *httpStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.routes.Get(id)
	return st
}

// takeRoutesLocked removes the routes of ids that lead to st, whose lock
// the caller holds, and returns how many it removed. A response counts as
// sent on its stream only if it takes its route under the stream's lock:
// the exchange that ends with the session (endClosedLocked) answers, under
// that lock too, every request whose route is left, so that a response
// on its way then is neither lost nor sent twice.
func (s *httpSession) takeRoutesLocked(st *httpStream, ids []jsonrpc.ID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range ids {
		if to, _ := s.routes.Get(id); to == st {
			s.routes.Delete(id)
			n++
		}
	}
	if n > 0 && s.routes.Len() == 0 {
		s.armIdleLocked()
	}
	return n
}

// httpStream is one response stream: the answer to a POST, or the
// standalone GET stream. Its live connection (w) may come and go: an SSE
// stream can be closed by the server (polling) or lost, and resumed by a
// GET with Last-Event-ID.
type httpStream struct {
	s          *httpSession
	id         string // event store stream ID; "" when not resumable
	standalone bool
	initialize bool

	mu sync.Mutex
	// finished is closed when every response has been sent (done), and
	// detached to release the live connection (released). Both are made
	// when a wait needs them (finishedLocked, detachedLocked): an
	// exchange whose handler ran on the POST's goroutine is finished
	// before its POST waits, and never makes either.
	finished chan struct{}
	detached chan struct{}

	mode     ResponseMode
	w        http.ResponseWriter // the live connection, or nil
	wrote    bool                // headers sent on the first connection
	sse      bool                // the stream is an SSE stream
	pending  int                 // responses still to send
	done     bool                // finished is closed
	released bool                // detached is closed
	initOK   bool                // an initialize succeeded on this exchange
	deadline bool                // a write deadline is set on w
	conns    int                 // connections attached after the first
	seq      int64               // events the stream tried to store (EventLog)
	lastID   string              // ID of the last event stored (EventLog)
	gap      bool                // an event failed to be stored since lastID
	ended    bool                // the stream's end was written (EventLog)
	buf      []byte
	// run is the handler of the exchange's one request when it runs on the
	// POST's goroutine (see RunHandler); only that goroutine uses it.
	run func()
	// jsonBody is the application/json answer to the exchange, written by
	// the HTTP handler once the stream is finished: from the handler's own
	// goroutine, with a Content-Length and no extra flush.
	jsonBody []byte
	// jsonStatus is jsonBody's HTTP status.
	jsonStatus int
}

// attach makes w the stream's live connection and returns its number
// for wait. Without replay (a new GET stream) it reports false when
// another connection is live. With replay (a client resuming the stream)
// w takes over from the live connection, if any, which its client has
// evidently lost, and gets what replay returns before anything else: the
// stream's lock is held from the replay until w is live, so every event
// after the client's Last-Event-ID arrives once, in order, whether it was
// stored before or sent during the replay.
func (st *httpStream) attach(w http.ResponseWriter, replay func() ([]StoredEvent, error)) (conn int, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.w != nil {
		if replay == nil {
			return 0, false
		}
		st.releaseLocked() // the connection it replaces ends
	}
	if st.released {
		st.detached = nil // made again by the next wait
		st.released = false
	}
	st.conns++
	st.w = w
	st.wrote = false
	st.deadline = false
	if replay == nil {
		st.startSSELocked()
	} else {
		// No priming event: the client resumes from the ID it has, and a
		// new event stored now would come before the ones replayed.
		st.startSSEHeadersLocked()
		events, err := replay()
		if err != nil {
			// Live events without the stored ones would leave a hole:
			// the connection ends, and the client resumes again (and is
			// refused if the events it lacks are gone).
			if !errors.Is(err, ErrEventNotFound) {
				st.s.h.logger.Warn("mcp http: replay failed", "err", err)
			}
			http.NewResponseController(st.w).Flush() // the headers
			st.w = nil
			return st.conns, true
		}
		for _, e := range events {
			st.writeEventLocked(e.ID, e.Data)
		}
		if len(events) == 0 && st.w != nil {
			http.NewResponseController(st.w).Flush() // the headers
		}
	}
	if st.done {
		// Everything was sent: the replay is the whole story.
		st.w = nil
	}
	return st.conns, true
}

// finishedLocked returns the channel closed once the stream is
// finished, making it if need be. st.mu is held.
func (st *httpStream) finishedLocked() chan struct{} { return madeChan(&st.finished, st.done) }

// detachedLocked returns the channel closed once the live connection is
// released, making it if need be. st.mu is held.
func (st *httpStream) detachedLocked() chan struct{} { return madeChan(&st.detached, st.released) }

// madeChan returns *ch, first making it, closed if closed, when it is
// nil: a signal channel made only when something waits on it.
func madeChan(ch *chan struct{}, closed bool) chan struct{} {
	if *ch == nil {
		*ch = make(chan struct{})
		if closed {
			close(*ch)
		}
	}
	return *ch
}

// releaseLocked ends the wait of the live connection.
func (st *httpStream) releaseLocked() {
	if !st.released {
		st.released = true
		if st.detached != nil {
			close(st.detached)
		}
	}
	st.interruptHijackedLocked()
}

// wait blocks the HTTP handler of connection number conn (0 for the
// exchange's own POST, else as attach returned it) until the stream no
// longer needs it, then detaches it. It reports whether the stream is
// still this connection's: false when another took over from it.
func (st *httpStream) wait(ctx context.Context, conn int) bool {
	st.mu.Lock()
	w := st.w
	mine := st.conns == conn
	// Most often finished already (a handler run on the POST's own
	// goroutine): then no channel is made, and none is waited on.
	var finished, detached chan struct{}
	if w != nil && mine && !st.done {
		finished, detached = st.finishedLocked(), st.detachedLocked()
	}
	st.mu.Unlock()
	if w == nil || !mine {
		return mine
	}
	if finished != nil {
		select {
		case <-finished:
		case <-detached:
		case <-st.s.done:
		case <-ctx.Done():
			// The client went away. The handlers of an exchange that
			// cannot be resumed see their contexts cancelled (see
			// serveExchange).
		}
	}
	st.mu.Lock()
	deadline := false
	mine = st.conns == conn
	if conn == 0 && mine && st.w == w {
		// The exchange's own POST stays the live connection until its
		// handler has written what is left (see detachPOSTLocked): a
		// response sent meanwhile (a handler the session's end cancelled
		// answers then) goes on it, rather than be counted as sent on no
		// connection and lost.
		st.mu.Unlock()
		return true
	}
	if st.w == w {
		st.w = nil
		deadline, st.deadline = st.deadline, false
	} else if !mine {
		deadline = true // set, perhaps, before the new connection took over
	}
	st.mu.Unlock()
	if deadline {
		clearWriteDeadline(w)
	}
	return mine
}

// detachPOSTLocked ends the exchange's own POST, w, as the stream's live
// connection, after wait(ctx, 0) reported it still the stream's.
func (st *httpStream) detachPOSTLocked(w http.ResponseWriter) {
	if st.w != w {
		return // a failed write let it go
	}
	st.w = nil
	if st.deadline {
		st.deadline = false
		clearWriteDeadline(w)
	}
}

// closeLive ends the live SSE connection of the stream; see
// [HTTPRequestInfo.CloseSSEStream].
func (st *httpStream) closeLive() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.mode == ResponseJSON || st.done || st.id == "" {
		return // nothing to close, or nothing to resume from
	}
	if st.w != nil && !st.wrote {
		st.startSSELocked() // the client learns the event ID to resume from
	}
	st.releaseLocked()
}

// startSSELocked sends the SSE headers and, on a resumable stream of a
// recent enough session, the priming event.
func (st *httpStream) startSSELocked() {
	if !st.startSSEHeadersLocked() {
		return
	}
	if st.id != "" && st.s.protocolVersion() >= primingVersion {
		if log := st.s.h.log; log != nil {
			// The position of the last event stored, without a write.
			id := st.lastID
			if id == "" {
				id = log.StreamStart(st.s.id, st.id)
			}
			st.buf = appendSSE(st.buf[:0], id, nil, st.s.h.retry)
			st.flushLocked()
			return
		}
		id, err := st.s.h.opts.EventStore.Append(context.Background(), st.s.id, st.id, nil)
		if err == nil {
			st.buf = appendSSE(st.buf[:0], id, nil, st.s.h.retry)
			st.flushLocked()
			return
		}
		st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
	}
	http.NewResponseController(st.w).Flush()
}

// startSSEHeadersLocked makes the stream an SSE stream and sends the
// headers on the live connection, reporting whether it did.
func (st *httpStream) startSSEHeadersLocked() bool {
	st.mode = ResponseSSE
	st.sse = true
	if st.w == nil || st.wrote {
		return false
	}
	st.wrote = true
	setHeaderValues(st.w.Header(), "Content-Type", "text/event-stream", "Cache-Control", "no-cache",
		"X-Accel-Buffering", "no", headerSessionID, st.s.id)
	st.w.WriteHeader(http.StatusOK)
	return true
}

// send writes m to the stream; responses is the number of responses m
// carries, or -1 when m answers every request of the stream. ids, when
// set, are the IDs of the responses, whose routes to the stream send takes
// (see takeRoutesLocked); the responses whose route is gone were answered
// otherwise, and are not sent.
func (st *httpStream) send(ctx context.Context, m jsonrpc.Message, responses int, ids []jsonrpc.ID) error {
	data, err := jsonrpc.EncodeMessage(m)
	switch {
	case err != nil && responses == 0:
		return err
	case err != nil:
		// The requests still get an answer, so that the exchange ends.
		st.s.h.logger.Error("mcp http: cannot encode response; replaced by an error", "err", err)
		data = errorReplacement(m, "internal error: cannot encode response")
	case len(data) > st.s.h.maxEvent:
		if responses == 0 {
			return fmt.Errorf("transport: message of %d bytes exceeds MaxEventBytes (%d)", len(data), st.s.h.maxEvent)
		}
		st.s.h.logger.Error("mcp http: response too large; replaced by an error", "size", len(data))
		data = errorReplacement(m, "internal error: response too large")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if ids != nil {
		if responses = st.s.takeRoutesLocked(st, ids); responses == 0 {
			return nil
		}
	}
	if st.done {
		return nil
	}
	if responses < 0 {
		responses = max(st.pending, 1)
	}
	if st.initialize && responses > 0 {
		st.adoptInitializeLocked(m)
	}
	if st.mode == ResponseAuto {
		if responses > 0 && responses == st.pending {
			st.mode = ResponseJSON
		} else {
			st.mode = ResponseSSE
		}
	}
	if st.mode == ResponseJSON {
		if responses > 0 && st.w != nil && !st.wrote {
			// In JSON mode the first response is the whole answer: the
			// handler's goroutine writes it when the stream finishes.
			st.wrote = true
			st.jsonBody, st.jsonStatus = data, http.StatusOK
			if st.s.modern {
				st.jsonStatus = modernStatus(m)
			}
		}
	} else {
		if !st.sse {
			st.startSSELocked()
		}
		eventID := ""
		if st.id != "" {
			eventID = st.storeLocked(ctx, data, !st.standalone && responses > 0 && st.pending-responses <= 0)
		}
		// Stored or not, the event goes out live (without an ID if it
		// could not be stored).
		st.writeEventLocked(eventID, data)
		if st.w == nil && st.id == "" && responses == 0 && !m.(*jsonrpc.Request).IsNotification() {
			return errNoStream
		}
	}
	st.answeredLocked(responses)
	return nil
}

// nextSeqLocked counts an event the stream tries to store and returns
// its number for the log: its count, or, for the GET stream of a handler
// relaying to other replicas, 0 (the store numbers it after the stream's
// last), because those may append to a GET stream whose holder they
// believe gone (see sendOrphaned), and a holder that is in fact alive
// must not then number its events over theirs. A failed write still
// marks the next event (st.gap).
func (st *httpStream) nextSeqLocked() int64 {
	st.seq++
	if st.standalone && st.s.h.store != nil && st.s.h.store.relay != nil {
		return 0
	}
	return st.seq
}

// storeLocked stores data as the stream's next event, last saying whether
// it is the stream's last, and returns its ID, or "" when it could not be
// stored. The store's write is not cancelled with the handler that sends
// the event: it has a deadline of its own.
func (st *httpStream) storeLocked(ctx context.Context, data []byte, last bool) string {
	ctx = context.WithoutCancel(ctx)
	log := st.s.h.log
	if log == nil {
		id, err := st.s.h.opts.EventStore.Append(ctx, st.s.id, st.id, data)
		if err != nil {
			st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
			return ""
		}
		return id
	}
	st.ended = st.ended || last
	id, err := log.Write(ctx, st.s.id, st.id, LogEvent{Seq: st.nextSeqLocked(), Data: data, Gap: st.gap, End: last})
	if err != nil {
		// The next event carries a gap mark: a resumption from before it
		// is refused rather than replayed without this one.
		st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
		st.gap = true
		if last {
			// No next event: a bare end mark, after the gap, tells the
			// tails of the stream that it ended (no resumption gets
			// past a gap mark, so it is never sent).
			if _, err := log.Write(ctx, st.s.id, st.id, LogEvent{Seq: st.nextSeqLocked(), Gap: true, End: true}); err != nil {
				st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
			}
		}
		return ""
	}
	st.lastID, st.gap = id, false
	return id
}

// answeredLocked records that n more requests of the stream are answered
// (or need no answer), and finishes the stream after the last.
func (st *httpStream) answeredLocked(n int) {
	if n <= 0 || st.done {
		return
	}
	st.pending -= n
	if st.pending <= 0 && !st.standalone {
		st.finishLocked()
	}
}

// finishLocked marks the stream as finished: its exchange ends, and a
// client resuming it gets what the event store kept.
func (st *httpStream) finishLocked() {
	if st.done {
		return
	}
	st.done = true
	if st.finished != nil {
		close(st.finished)
	}
	st.s.mu.Lock()
	if st.id != "" && st.s.streams != nil {
		delete(st.s.streams, st.id)
	}
	closed := st.s.closed
	st.s.mu.Unlock()
	if log := st.s.h.log; log != nil && st.id != "" && st.sse && !st.ended && !closed {
		// The stream finished without a last event stored (its requests
		// were cancelled): a bare end mark ends the tails of the stream.
		st.ended = true
		if id, err := log.Write(context.Background(), st.s.id, st.id, LogEvent{Seq: st.nextSeqLocked(), Gap: st.gap, End: true}); err != nil {
			st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
		} else {
			st.lastID = id
		}
	}
}

// adoptInitializeLocked records the outcome of initialize: on success the
// session is registered and learns its protocol version.
func (st *httpStream) adoptInitializeLocked(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error != nil {
		return
	}
	version, ok := resultVersion(r.Result)
	if !ok {
		return
	}
	st.initOK = true
	st.s.mu.Lock()
	st.s.version = version
	st.s.mu.Unlock()
	st.s.h.register(st.s)
}

// resultVersion returns the protocolVersion of an initialize result as
// the engine decodes it into a string member: found in the one pass that
// validates the text (jsonscan.ValidObject) when it is printable ASCII
// without escapes (what mcp's server writes), else by the engine; false
// for a result the engine refuses.
func resultVersion(result []byte) (string, bool) {
	var top [8]jsonscan.Member // an initialize result has 3 to 5
	if n, ok := jsonscan.ValidObject(result, top[:], nil); ok && n <= len(top) {
		for _, m := range top[:n] {
			if string(result[m.Name.Start:m.Name.End]) != `"protocolVersion"` {
				continue
			}
			if s, ok := jsonscan.PlainString(result[m.Value.Start:m.Value.End]); ok && jsonscan.PlainRun(s, 0) == len(s) {
				return string(s), true
			}
			break // the engine decides
		}
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return "", false
	}
	return res.ProtocolVersion, true
}

// writeEventLocked writes one SSE event to the live connection, if any.
func (st *httpStream) writeEventLocked(id string, data []byte) {
	if st.w == nil {
		return
	}
	st.buf = appendSSE(st.buf[:0], id, data, 0)
	st.flushLocked()
}

func (st *httpStream) flushLocked() {
	st.deadline = st.deadline || st.s.h.writeTO > 0
	if !writeAndFlush(st.w, st.buf, st.s.h.writeTO) {
		st.w = nil
	}
	if cap(st.buf) > maxRetainedBuffer {
		st.buf = nil
	}
}

// appendSSE appends one SSE event: a message event when data is non-nil,
// else a priming event carrying only its ID (and retry, if positive).
func appendSSE(b []byte, id string, data []byte, retry time.Duration) []byte {
	e := sse.Event{ID: id, Data: data, Retry: retry}
	if data != nil {
		e.Name = "message"
	}
	return sse.AppendEvent(b, &e)
}

// errorReplacement is the error response (a batch of them for a batch)
// sent instead of responses that cannot be sent, with the same IDs.
func errorReplacement(m jsonrpc.Message, msg string) []byte {
	e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	var out jsonrpc.Message = &jsonrpc.Response{Error: e}
	switch m := m.(type) {
	case *jsonrpc.Response:
		out = &jsonrpc.Response{ID: m.ID, Error: e}
	case jsonrpc.Batch:
		b := make(jsonrpc.Batch, 0, len(m))
		for _, r := range m {
			if r, ok := r.(*jsonrpc.Response); ok {
				b = append(b, &jsonrpc.Response{ID: r.ID, Error: e})
			}
		}
		out = b
	}
	data, _ := jsonrpc.EncodeMessage(out)
	return data
}

// writeJSONBody writes an application/json answer with the given status on w (with the session
// ID header when withSession). Small bodies go out with the handler's
// return, in one write with the headers, net/http counting their
// Content-Length (one header fewer for it to copy when the status is
// written); a larger one is bounded by timeout when positive, as a slow
// reader could otherwise hold the handler, and announces its length.
func writeJSONBody(w http.ResponseWriter, status int, body []byte, withSession bool, sessionID string, timeout time.Duration) {
	if !withSession {
		sessionID = ""
	}
	length := ""
	if len(body) > smallJSONBody {
		length = strconv.Itoa(len(body))
	}
	setHeaderValues(w.Header(), "Content-Type", "application/json", "Content-Length", length,
		headerSessionID, sessionID)
	w.WriteHeader(status)
	if len(body) <= smallJSONBody || timeout <= 0 {
		w.Write(body)
		return
	}
	writeAndFlush(w, body, timeout)
	clearWriteDeadline(w)
}

// smallJSONBody is the size up to which a JSON answer fits net/http's
// response buffer (its bufferBeforeChunkingSize) and is written without a
// deadline, net/http giving it a Content-Length.
const smallJSONBody = 2048

// writeAndFlush writes b to w and flushes it, bounded by timeout when
// positive, and reports whether it went out.
func writeAndFlush(w http.ResponseWriter, b []byte, timeout time.Duration) bool {
	rc := http.NewResponseController(w)
	if timeout > 0 {
		rc.SetWriteDeadline(time.Now().Add(timeout)) // unsupported writers just have no bound
	}
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// clearWriteDeadline lifts the deadline writeAndFlush set, so that it does
// not outlive the exchange on a kept-alive connection.
func clearWriteDeadline(w http.ResponseWriter) {
	http.NewResponseController(w).SetWriteDeadline(time.Time{})
}

// errClientAbandoned is the cause a handler's context is cancelled with
// when the client of an exchange that cannot be resumed goes away.
var errClientAbandoned = errors.New("transport: the client abandoned the request")
