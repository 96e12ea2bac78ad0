package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
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
	h         *StreamableHTTPHandler
	id        string // "" in stateless mode
	principal string
	stateless bool
	adm       *admission // the session's slot in the table; nil when stateless

	pushEnd

	mu         sync.Mutex
	version    string // negotiated protocol version
	closed     bool
	routes     map[jsonrpc.ID]*httpStream
	streams    map[string]*httpStream // resumable streams by ID
	standalone *httpStream
	nextStream int64
	active     int // HTTP requests being served
	idleTimer  *time.Timer
}

func (h *StreamableHTTPHandler) newSession(id, principal string, stateless bool, version string, adm *admission) *httpSession {
	return &httpSession{
		h:         h,
		id:        id,
		principal: principal,
		stateless: stateless,
		adm:       adm,
		version:   version,
		pushEnd:   newPushEnd(),
		routes:    make(map[jsonrpc.ID]*httpStream),
	}
}

// statelessConn marks a stateless exchange's session for the ConnectFunc.
type statelessConn struct{ *httpSession }

// ProtocolVersion implements [StatelessConn].
func (c statelessConn) ProtocolVersion() string { return c.protocolVersion() }

// SessionID implements [SessionConn].
func (s *httpSession) SessionID() string { return s.id }

func (s *httpSession) admissionOf() *admission { return s.adm }

// deliver passes a message (perhaps a batch) to the connection, reporting
// false when the session is closed.
func (s *httpSession) deliver(m jsonrpc.Message) bool { return s.push(m, s.isClosed) }

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
	s.routes = nil
	s.mu.Unlock()
	s.h.forget(s)
	if st := s.h.opts.EventStore; st != nil && s.id != "" {
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
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.mu.Unlock()
}

func (s *httpSession) release() {
	s.mu.Lock()
	s.active--
	s.armIdleLocked()
	s.mu.Unlock()
}

// armIdleLocked starts the idle timer when the session has nothing going
// on: the handshake timeout until the client sends something after
// initialize, the idle timeout then. The timer holds no goroutine while
// it waits.
func (s *httpSession) armIdleLocked() {
	if s.closed || s.id == "" || s.active > 0 || len(s.routes) > 0 {
		return
	}
	s.adm.markIdle() // for eviction
	d := s.h.idle
	if s.h.handshake > 0 && !s.adm.established.Load() {
		d = s.h.handshake
	}
	if d < 0 {
		return
	}
	if s.idleTimer == nil {
		s.idleTimer = time.AfterFunc(d, s.idleExpired)
		return
	}
	s.idleTimer.Reset(d)
}

func (s *httpSession) idleExpired() {
	s.mu.Lock()
	busy := s.closed || s.active > 0 || len(s.routes) > 0
	s.mu.Unlock()
	if !busy {
		s.h.logger.Debug("mcp http: session idle; closing", "session", s.id)
		reason := ErrSessionIdle
		if !s.adm.established.Load() {
			reason = ErrHandshakeTimeout
		}
		s.terminate(reason)
	}
}

// serveExchange serves a POST carrying requests: it routes their
// responses to a new stream answering this exchange, delivers the
// messages, and waits until the responses are out, the client leaves or
// the session ends. For an initialize exchange it registers the session
// when initialize succeeds, and reports whether it did.
func (s *httpSession) serveExchange(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, info *HTTPRequestInfo, initialize bool) bool {
	st := s.newStream(w, len(requests), initialize)
	info.closeStream = st.closeLive
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
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
		return false
	}
	for _, id := range requests {
		if _, dup := s.routes[id]; dup {
			s.mu.Unlock()
			writeJSONRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Bad Request: request id already in flight")
			return false
		}
	}
	for _, id := range requests {
		s.routes[id] = st
	}
	s.active++
	s.adm.markBusy()
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
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
	if !s.deliver(msg) {
		st.mu.Lock()
		if !st.wrote {
			st.wrote = true
			writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
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
	st.wait(r.Context())
	st.mu.Lock()
	defer st.mu.Unlock()
	if body := st.jsonBody; body != nil {
		st.jsonBody = nil
		writeJSONBody(w, body, st.initOK, s.id, s.h.writeTO)
		return st.initOK
	}
	if !st.wrote {
		// The session ended before any answer: tell the client.
		st.wrote = true
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
	}
	return st.initOK
}

// RunHandler implements [jsonrpc.HandlerRunner]: the handler of a request
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

// newStream creates the stream answering a POST with n requests.
func (s *httpSession) newStream(w http.ResponseWriter, n int, initialize bool) *httpStream {
	st := &httpStream{
		s:          s,
		w:          w,
		pending:    n,
		initialize: initialize,
		finished:   make(chan struct{}),
		detached:   make(chan struct{}),
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
		st := &httpStream{s: s, mode: ResponseSSE, standalone: true, finished: make(chan struct{}), detached: make(chan struct{})}
		if s.h.opts.EventStore != nil {
			if s.streams == nil {
				s.streams = make(map[string]*httpStream)
			}
			st.id = "get"
			s.streams[st.id] = st
		}
		s.standalone = st
	}
	return s.standalone
}

// resume serves a GET with Last-Event-ID: it replays the stream the event
// belongs to from that point and, if the stream is still live, attaches
// this exchange to it.
func (s *httpSession) resume(w http.ResponseWriter, r *http.Request, last string) {
	store := s.h.opts.EventStore
	streamID, _, err := store.After(r.Context(), s.id, last)
	if err != nil {
		if errors.Is(err, ErrEventNotFound) {
			http.Error(w, "Bad Request: unknown or expired Last-Event-ID", http.StatusBadRequest)
			return
		}
		s.h.logger.Error("mcp http: event store failed", "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	st := s.streams[streamID]
	s.mu.Unlock()
	if st == nil {
		// The stream is over (or lives elsewhere): replay what is stored.
		_, events, err := store.After(r.Context(), s.id, last)
		if err != nil {
			http.Error(w, "Bad Request: unknown or expired Last-Event-ID", http.StatusBadRequest)
			return
		}
		replay := &httpStream{s: s, mode: ResponseSSE, w: w}
		replay.mu.Lock()
		replay.startSSELocked()
		for _, e := range events {
			replay.writeEventLocked(e.ID, e.Data)
		}
		replay.mu.Unlock()
		clearWriteDeadline(w)
		return
	}
	if !st.attach(w, func() ([]StoredEvent, error) {
		_, events, err := store.After(r.Context(), s.id, last)
		return events, err
	}) {
		http.Error(w, "Conflict: the stream is already connected", http.StatusConflict)
		return
	}
	st.wait(r.Context())
}

// Write implements [Conn]: it routes m to the stream of the request it
// answers or belongs to.
func (s *httpSession) Write(ctx context.Context, m jsonrpc.Message) error {
	switch m := m.(type) {
	case *jsonrpc.Response:
		st := s.takeRoutes(m.ID)
		if st == nil {
			s.h.logger.Debug("mcp http: response with no exchange to go to", "id", m.ID.String())
			return nil
		}
		return st.send(ctx, m, 1)
	case jsonrpc.Batch:
		var st *httpStream
		n := 0
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Response); ok {
				if t := s.takeRoutes(r.ID); t != nil {
					st = t
					n++
				}
			}
		}
		if st == nil {
			return nil
		}
		return st.send(ctx, m, n)
	case *jsonrpc.Request:
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		var related *httpStream
		if id, ok := jsonrpc.RelatedRequest(ctx); ok {
			related = s.routes[id]
		}
		st := s.standalone
		s.mu.Unlock()
		if related != nil && related.carriesRequests() {
			st = related
		}
		if st == nil {
			if m.IsNotification() {
				return nil // nowhere to go; the client opened no stream
			}
			return errNoStream
		}
		return st.send(ctx, m, 0)
	}
	return fmt.Errorf("transport: cannot send %T", m)
}

// carriesRequests reports whether messages other than responses may travel
// on the stream.
func (st *httpStream) carriesRequests() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.mode != ResponseJSON && !st.done
}

// takeRoutes removes and returns the stream a response to id goes to.
func (s *httpSession) takeRoutes(id jsonrpc.ID) *httpStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.routes[id]
	delete(s.routes, id)
	if st != nil && len(s.routes) == 0 {
		s.armIdleLocked()
	}
	return st
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
	finished   chan struct{} // closed when every response has been sent
	detached   chan struct{} // closed to release the live connection

	mu       sync.Mutex
	mode     ResponseMode
	w        http.ResponseWriter // the live connection, or nil
	wrote    bool                // headers sent on the first connection
	sse      bool                // the stream is an SSE stream
	pending  int                 // responses still to send
	done     bool                // finished is closed
	released bool                // detached is closed
	initOK   bool                // an initialize succeeded on this exchange
	deadline bool                // a write deadline is set on w
	buf      []byte
	// run is the handler of the exchange's one request when it runs on the
	// POST's goroutine (see RunHandler); only that goroutine uses it.
	run func()
	// jsonBody is the application/json answer to the exchange, written by
	// the HTTP handler once the stream is finished: from the handler's own
	// goroutine, with a Content-Length and no extra flush.
	jsonBody []byte
}

// attach makes w the stream's live connection, after replaying what
// replay returns. It reports false when another connection is live.
func (st *httpStream) attach(w http.ResponseWriter, replay func() ([]StoredEvent, error)) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.w != nil {
		return false
	}
	if st.released {
		st.detached = make(chan struct{})
		st.released = false
	}
	st.w = w
	st.wrote = false
	st.deadline = false
	st.startSSELocked()
	if replay != nil {
		events, err := replay()
		if err != nil {
			st.s.h.logger.Warn("mcp http: replay failed", "err", err)
		}
		for _, e := range events {
			st.writeEventLocked(e.ID, e.Data)
		}
	}
	if st.done {
		// Everything was sent: the replay is the whole story.
		st.w = nil
	}
	return true
}

// wait blocks the HTTP handler until the stream no longer needs this
// connection, then detaches it.
func (st *httpStream) wait(ctx context.Context) {
	st.mu.Lock()
	w := st.w
	detached := st.detached
	st.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case <-st.finished:
	case <-detached:
	case <-st.s.done:
	case <-ctx.Done():
		// The client went away. The handlers of an exchange that cannot be
		// resumed see their contexts cancelled (see serveExchange).
	}
	st.mu.Lock()
	deadline := false
	if st.w == w {
		st.w = nil
		deadline, st.deadline = st.deadline, false
	}
	st.mu.Unlock()
	if deadline {
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
	if !st.released {
		st.released = true
		close(st.detached)
	}
}

// startSSELocked sends the SSE headers and, on a resumable stream of a
// recent enough session, the priming event.
func (st *httpStream) startSSELocked() {
	st.mode = ResponseSSE
	st.sse = true
	if st.w == nil || st.wrote {
		return
	}
	st.wrote = true
	setHeaderValues(st.w.Header(), "Content-Type", "text/event-stream", "Cache-Control", "no-cache",
		"X-Accel-Buffering", "no", headerSessionID, st.s.id)
	st.w.WriteHeader(http.StatusOK)
	if st.id != "" && st.s.protocolVersion() >= primingVersion {
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

// send writes m to the stream; responses is the number of responses m
// carries.
func (st *httpStream) send(ctx context.Context, m jsonrpc.Message, responses int) error {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	if len(data) > st.s.h.maxEvent {
		if responses == 0 {
			return fmt.Errorf("transport: message of %d bytes exceeds MaxEventBytes (%d)", len(data), st.s.h.maxEvent)
		}
		st.s.h.logger.Error("mcp http: response too large; replaced by an error", "size", len(data))
		data = oversizeReplacement(m)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return nil
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
			st.jsonBody = data
		}
	} else {
		if !st.sse {
			st.startSSELocked()
		}
		eventID := ""
		if st.id != "" {
			id, err := st.s.h.opts.EventStore.Append(ctx, st.s.id, st.id, data)
			if err != nil {
				st.s.h.logger.Warn("mcp http: event store append failed", "err", err)
			} else {
				eventID = id
			}
		}
		st.writeEventLocked(eventID, data)
		if st.w == nil && st.id == "" && responses == 0 && !m.(*jsonrpc.Request).IsNotification() {
			return errNoStream
		}
	}
	if responses > 0 {
		st.pending -= responses
		if st.pending <= 0 && !st.standalone {
			st.done = true
			close(st.finished)
			st.s.mu.Lock()
			if st.id != "" && st.s.streams != nil {
				delete(st.s.streams, st.id)
			}
			st.s.mu.Unlock()
		}
	}
	return nil
}

// adoptInitializeLocked records the outcome of initialize: on success the
// session is registered and learns its protocol version.
func (st *httpStream) adoptInitializeLocked(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return
	}
	st.initOK = true
	st.s.mu.Lock()
	st.s.version = res.ProtocolVersion
	st.s.mu.Unlock()
	st.s.h.register(st.s)
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

// oversizeReplacement is the error response sent instead of a response too
// large to send.
func oversizeReplacement(m jsonrpc.Message) []byte {
	var id jsonrpc.ID
	if r, ok := m.(*jsonrpc.Response); ok {
		id = r.ID
	}
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: response too large"}})
	return data
}

// writeJSONBody writes an application/json answer on w (with the session
// ID header when withSession). Small bodies go out with the handler's
// return, in one write with the headers; a larger one is bounded by
// timeout when positive, as a slow reader could otherwise hold the
// handler.
func writeJSONBody(w http.ResponseWriter, body []byte, withSession bool, sessionID string, timeout time.Duration) {
	if !withSession {
		sessionID = ""
	}
	setHeaderValues(w.Header(), "Content-Type", "application/json", "Content-Length", strconv.Itoa(len(body)),
		headerSessionID, sessionID)
	w.WriteHeader(http.StatusOK)
	if len(body) <= smallJSONBody || timeout <= 0 {
		w.Write(body)
		return
	}
	writeAndFlush(w, body, timeout)
	clearWriteDeadline(w)
}

// smallJSONBody is the size up to which a JSON answer fits net/http's
// response buffer and is written without a deadline.
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
