//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// SSEOptions configures an [SSEHandler]. The zero value is a secure
// default.
type SSEOptions struct {
	// Endpoint is the path (or URL) clients POST their messages to; the
	// session ID is added as the sessionId query parameter. Empty means
	// the path of the GET request as the client sent it, so one handler
	// can serve both methods on one URL; set it when a path-rewriting
	// middleware (http.StripPrefix) sits in front.
	Endpoint string
	// MaxSessions bounds the open sessions. When the table is full, a new
	// session evicts the session without credentials whose client has
	// posted nothing for the longest (one that never got past its
	// handshake first), whose connection ends with [ErrSessionEvicted].
	// Zero means 10000; negative means no bound.
	MaxSessions int
	// MaxSessionsPerPeer bounds the sessions one peer may hold: the principal
	// (see [WithPrincipal]) when the request carries one, else the remote IP
	// address (an IPv6 address by its /64 prefix), except a loopback address,
	// which is not counted (the local machine, or a reverse proxy on it, which
	// every client would share). A peer past it has its own session that
	// posted nothing for the longest evicted for the new one. Behind a reverse
	// proxy elsewhere, every client has the proxy's address: rewrite the
	// request's RemoteAddr from the header the proxy sets, or raise this
	// bound. Zero means 100; negative means no bound.
	MaxSessionsPerPeer int
	// HandshakeTimeout closes a session whose client has not posted two
	// messages (initialize and notifications/initialized) this long after
	// opening it; its connection ends with [ErrHandshakeTimeout]. Zero
	// means 30s; negative means no bound.
	HandshakeTimeout time.Duration
	// MaxBodyBytes bounds a POST body (413 past it). Zero means
	// DefaultMaxMessageSize.
	MaxBodyBytes int64
	// ReadBodyTimeout bounds the time to read a POST body: a client that
	// has not sent all of it by then gets 408 and loses the connection.
	// A shorter http.Server ReadTimeout wins. Zero means 30s; negative
	// means no bound.
	ReadBodyTimeout time.Duration
	// DecodeLimits bounds what decoding one message may cost; see
	// [jsonrpc.DecodeLimits]. The zero value means its defaults.
	DecodeLimits jsonrpc.DecodeLimits
	// MaxEventBytes bounds one outgoing message; a larger response is
	// replaced by an internal error, a larger request or notification is
	// not sent. Zero means DefaultMaxMessageSize.
	MaxEventBytes int
	// WriteTimeout bounds each write to the event stream; a client that
	// stops reading for this long loses its stream, and with it the
	// session. Zero means 30s; negative means no bound.
	WriteTimeout time.Duration
	// Security configures the Origin and Host checks; see [HTTPSecurity].
	Security HTTPSecurity
	// SessionIDs mints the session IDs and checks the tag of the one each
	// POST names before looking the session up: a POST whose ID does not
	// verify gets the 404 of an unknown session. Package mcp's
	// NewSSEHandler sets it to its server's KeyRing when nil. Nil means a
	// random key of the handler's own. See [SessionIDTagger].
	SessionIDs SessionIDTagger
	// Logger receives the handler's diagnostics. Nil discards them.
	Logger *slog.Logger
}

// SSEHandler serves the HTTP+SSE transport of protocol revision 2024-11-05
// as an [http.Handler]; package mcp's NewSSEHandler returns one that serves
// an MCP server, a session of it per client. A GET opens a session: its response is an event
// stream whose first event, "endpoint", gives the URL to POST messages to
// (with the session ID in its query), and every server message travels on
// that stream as a "message" event. A POST is answered 202 Accepted at
// once. The session ends when the GET stream closes.
//
// Newer clients use Streamable HTTP ([StreamableHTTPHandler]); serve this
// handler too, on its own path, for clients that only speak this
// transport. The transport does not limit the protocol revision: the
// session negotiates it in initialize as over any other transport, so a
// client may use 2025-11-25 over it (this package's client does when it
// falls back from Streamable HTTP). A POST labelled 2026-07-28 or later
// (MCP-Protocol-Version) is refused with 400: that revision has no
// sessions, and its headers that mirror the body are not checked here.
// Goroutines: one per open session (its GET request) and one per request
// being handled.
type SSEHandler struct {
	connect   connectFunc
	opts      SSEOptions
	logger    *slog.Logger
	limits    sessionLimits
	handshake time.Duration // 0: no bound
	maxBody   int64
	bodies    bodyWatch // bounds the time to read a POST body
	maxEvent  int
	writeTO   time.Duration

	sids     SessionIDTagger
	sessions sessionSet[*sseSession]
	// relay passes the POSTs for a session whose stream another replica
	// holds to it (set by mcplink.AttachRelay before the handler
	// serves); nil without one.
	relay mcplink.Relay

	// testHookLookup, if set, is called with each session ID the handler
	// looks up in its table, after the ID's tag verified.
	testHookLookup func(id string)
}

// newSSEHandler returns a handler that serves each session by calling
// connect with its connection. opts may be nil.
func newSSEHandler(connect connectFunc, opts *SSEOptions) *SSEHandler {
	h := &SSEHandler{connect: connect}
	if opts != nil {
		h.opts = *opts
	}
	h.logger = h.opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.sids = sessionIDsOr(h.opts.SessionIDs)
	h.limits = sessionLimits{
		max:     positiveOr(h.opts.MaxSessions, defaultMaxSessions),
		perPeer: positiveOr(h.opts.MaxSessionsPerPeer, defaultMaxSessionsPerPeer),
	}
	h.handshake = positiveOr(h.opts.HandshakeTimeout, defaultHandshakeTimeout)
	h.bodies.init(positiveOr(h.opts.ReadBodyTimeout, defaultReadBodyTimeout))
	h.maxBody = h.opts.MaxBodyBytes
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxMessageSize
	}
	h.maxEvent = h.opts.MaxEventBytes
	if h.maxEvent <= 0 {
		h.maxEvent = DefaultMaxMessageSize
	}
	h.writeTO = h.opts.WriteTimeout
	if h.writeTO == 0 {
		h.writeTO = 30 * time.Second
	}
	return h
}

// SessionIDs returns the IDs of the open sessions.
func (h *SSEHandler) SessionIDs() []string { return h.sessions.ids() }

// CloseSession ends the session with the given ID and its event stream. It
// reports whether the session existed.
func (h *SSEHandler) CloseSession(id string) bool { return h.sessions.closeOne(id) }

// Close ends every session and refuses new ones.
func (h *SSEHandler) Close() error {
	if h.relay != nil {
		h.relay.Detach((*sseRelayTarget)(h))
	}
	h.sessions.closeAll()
	h.bodies.stop()
	return nil
}

// ServeHTTP implements [http.Handler].
func (h *SSEHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg := h.opts.Security.check(r); code != 0 {
		http.Error(w, msg, code)
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.serveGET(w, r)
	case http.MethodPost:
		h.servePOST(w, r)
	default:
		methodNotAllowed(w, "GET, POST")
	}
}

func (h *SSEHandler) serveGET(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header["Accept"], "text/event-stream") {
		http.Error(w, "Not Acceptable: the client must accept text/event-stream", http.StatusNotAcceptable)
		return
	}
	peer, auth := peerOf(r)
	a, evicted, status := h.sessions.reserve(peer, auth, h.limits)
	for _, v := range evicted {
		h.logger.Debug("mcp sse: session evicted", "session", v.id)
		v.terminate(ErrSessionEvicted)
	}
	switch status {
	case http.StatusTooManyRequests:
		http.Error(w, "Too Many Requests: too many sessions for this client", status)
		return
	case http.StatusServiceUnavailable:
		http.Error(w, "Service Unavailable: too many sessions", status)
		return
	}
	s := &sseSession{h: h, id: h.sids.MintSessionID(), principal: PrincipalFromContext(r.Context()), w: w, adm: a, pushEnd: newPushEnd()}
	if !h.sessions.promote(s) {
		h.sessions.release(a)
		http.Error(w, "Service Unavailable: the server is closing", http.StatusServiceUnavailable)
		return
	}
	if h.handshake > 0 {
		s.mu.Lock()
		s.handshakeTimer = time.AfterFunc(h.handshake, s.handshakeExpired)
		s.mu.Unlock()
	}

	endpoint := h.opts.Endpoint
	if endpoint == "" {
		endpoint = r.URL.EscapedPath()
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
			endpoint = u.EscapedPath()
		}
	}
	sep := "?"
	if u, err := url.Parse(endpoint); err == nil && u.RawQuery != "" {
		sep = "&"
	}
	endpoint += sep + "sessionId=" + url.QueryEscape(s.id)
	if h.relay != nil {
		// The replica holding the stream, for a POST that reaches
		// another (see servePOST).
		endpoint += "&replica=" + h.relay.Replica()
	}

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The session is connected before the client learns the endpoint:
	// a POST that follows the endpoint event at once must find it ready.
	if err := h.connect(r.Context(), s); err != nil {
		h.logger.Error("mcp sse: connect failed", "err", err)
		s.terminate(err)
		return
	}
	s.mu.Lock()
	s.writeLocked("endpoint", []byte(endpoint))
	s.mu.Unlock()
	select {
	case <-r.Context().Done():
		s.terminate(io.EOF) // the client went away: the session is over
	case <-s.done:
	}
	s.mu.Lock()
	s.w = nil
	s.mu.Unlock()
	clearWriteDeadline(w)
}

// session returns the session of the given ID. An ID whose tag does not
// verify is refused before anything looks it up.
func (h *SSEHandler) session(id string) (*sseSession, bool) {
	if !h.sids.CheckSessionID(id) {
		return nil, false
	}
	if h.testHookLookup != nil {
		h.testHookLookup(id)
	}
	return h.sessions.lookup(id)
}

func (h *SSEHandler) servePOST(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		http.Error(w, "Bad Request: missing sessionId", http.StatusBadRequest)
		return
	}
	s, ok := h.session(id)
	if !ok && h.relay != nil && h.sids.CheckSessionID(id) {
		if to := r.URL.Query().Get("replica"); to != "" && to != h.relay.Replica() && mcplink.ValidName(to) {
			h.relayPOST(w, r, id, to)
			return
		}
	}
	if !ok {
		http.Error(w, "Not Found: unknown session", http.StatusNotFound)
		return
	}
	if s.principal != PrincipalFromContext(r.Context()) {
		http.Error(w, "Forbidden: session belongs to another principal", http.StatusForbidden)
		return
	}
	if !isJSONContent(headerValue(r.Header, "Content-Type")) {
		http.Error(w, "Unsupported Media Type: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if v := headerValue(r.Header, headerProtocolVersion); isModernVersion(v) {
		// This transport is of 2024-11-05: a POST labelled with a
		// revision whose headers mirror the body would be served with
		// headers nothing checks, which intermediaries (and the auth
		// middleware) may have trusted.
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(v)+"; the HTTP+SSE transport serves only 2024-11-05")
		return
	}
	body, status, reason := readRequestBody(w, r, h.maxBody, &h.bodies)
	if status != 0 {
		http.Error(w, reason, status)
		return
	}
	s.posted()
	msg, err := decodeOwned(&h.opts.DecodeLimits, body) // body is ours alone
	if err != nil {
		// Answer on the event stream, as the session's peer expects, and
		// tell the HTTP client too.
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			s.deliver(de)
		}
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	info := newHTTPRequestInfo(r, false)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		m.Extra = info
	case jsonrpc.Batch:
		for _, e := range m {
			if req, ok := e.(*jsonrpc.Request); ok {
				req.Extra = info
			}
		}
	}
	if !s.deliver(msg) {
		http.Error(w, "Not Found: session closed", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}

// sseRelayed is a POST relayed to the replica holding its session's
// stream (mcplink.RelaySSE).
type sseRelayed struct {
	Principal string         `json:"p,omitempty"`
	Msg       jsontext.Value `json:"m"`
}

// relayPOST passes a POST for the session id, whose stream the replica to
// holds (the endpoint it gave the client says so), to that replica: 202
// once the bus took it, 503 with Retry-After when it did not, 413 when
// it is too large to relay. The principal goes as a keyed hash, which the
// holder compares with its session's.
func (h *SSEHandler) relayPOST(w http.ResponseWriter, r *http.Request, id, to string) {
	if !isJSONContent(headerValue(r.Header, "Content-Type")) {
		http.Error(w, "Unsupported Media Type: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, status, reason := readRequestBody(w, r, min(h.maxBody, mcplink.MaxRelayBytes-1024), &h.bodies)
	if status != 0 {
		http.Error(w, reason, status)
		return
	}
	if !jsontext.Value(body).IsValid() {
		http.Error(w, "Bad Request: the body is not JSON", http.StatusBadRequest)
		return
	}
	data, err := json.Marshal(&sseRelayed{Principal: h.principalHash(id, PrincipalFromContext(r.Context())), Msg: body})
	if err == nil {
		err = h.relay.Send(r.Context(), to, mcplink.RelaySSE, id, 0, data)
	}
	if err != nil {
		h.logger.Warn("mcp sse: relaying a POST to the replica holding its stream failed", "session", id, "err", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: the message could not be passed to the replica holding the session's stream; retry", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}

// principalHash is the keyed hash of principal that a relayed POST
// carries, "" for none.
func (h *SSEHandler) principalHash(id, principal string) string {
	if principal == "" {
		return ""
	}
	if hs, ok := h.sids.(SessionHasher); ok {
		return hs.SessionHash(id, "principal", principal)
	}
	return "?" // no shared key: a principal never matches across replicas
}

// sseRelayTarget is the SSE handler as its relay delivers to it.
type sseRelayTarget SSEHandler

// RelayReceive implements mcplink.RelayTarget: a POST relayed by another
// replica for a session whose stream this one holds is delivered as if
// it had been POSTed here. A malformed one, or one for a session not
// held here or of another principal, is dropped and logged.
func (t *sseRelayTarget) RelayReceive(kind, sid string, _ int64, data []byte) {
	h := (*SSEHandler)(t)
	if kind != mcplink.RelaySSE {
		return
	}
	s, ok := h.sessions.lookup(sid)
	if !ok {
		h.logger.Debug("mcp sse: dropping a relayed POST for a session not held here", "session", sid)
		return
	}
	var p sseRelayed
	if err := json.Unmarshal(data, &p); err != nil {
		h.logger.Warn("mcp sse: dropping a malformed relayed POST", "session", sid, "err", err)
		return
	}
	if p.Principal != h.principalHash(sid, s.principal) {
		h.logger.Warn("mcp sse: dropping a relayed POST of another principal", "session", sid)
		return
	}
	s.posted()
	msg, err := decodeOwned(&h.opts.DecodeLimits, p.Msg)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			s.deliver(de)
		}
		return
	}
	info := &HTTPRequestInfo{Method: http.MethodPost, Principal: s.principal, values: WithPrincipal(context.Background(), s.principal)}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		m.Extra = info
	case jsonrpc.Batch:
		for _, e := range m {
			if req, ok := e.(*jsonrpc.Request); ok {
				req.Extra = info
			}
		}
	}
	s.queueRelayed(msg)
}

// queueRelayed queues a relayed message for the session, never waiting
// (the bus's delivery goroutine serves every session); past
// maxRelayQueue it is dropped and logged. A goroutine delivers the
// queue while it is not empty.
func (s *sseSession) queueRelayed(m jsonrpc.Message) {
	s.relayMu.Lock()
	if len(s.relayQ) >= maxRelayQueue {
		s.relayMu.Unlock()
		s.h.logger.Warn("mcp sse: relayed messages queue full; dropping one", "session", s.id)
		return
	}
	s.relayQ = append(s.relayQ, m)
	start := !s.relayRunning
	s.relayRunning = true
	s.relayMu.Unlock()
	if !start {
		return
	}
	go func() {
		for {
			s.relayMu.Lock()
			if len(s.relayQ) == 0 {
				s.relayQ, s.relayRunning = nil, false
				s.relayMu.Unlock()
				return
			}
			m := s.relayQ[0]
			s.relayQ[0] = nil
			s.relayQ = s.relayQ[1:]
			s.relayMu.Unlock()
			s.deliver(m)
		}
	}()
}

// sseSession is one legacy SSE session's connection: a
// [jsonrpc.PushStream] fed by POSTs, writing to the GET event stream.
type sseSession struct {
	h         *SSEHandler
	id        string
	principal string

	pushEnd

	adm      *admission   // the session's slot in the table
	messages atomic.Int32 // POSTs received, up to 2

	// The messages other replicas relayed, waiting for delivery, and
	// whether a goroutine delivers them.
	relayMu      sync.Mutex
	relayQ       []jsonrpc.Message
	relayRunning bool

	mu             sync.Mutex
	w              http.ResponseWriter // nil once the GET request is over
	closed         bool
	buf            []byte
	handshakeTimer *time.Timer
}

// SessionID implements [SessionConn].
func (s *sseSession) SessionID() string { return s.id }

// FramedWrites reports true: each message is encoded into an event of its
// own (see mcplink.FramedWriter).
func (s *sseSession) FramedWrites() bool { return true }

func (s *sseSession) admissionOf() *admission { return s.adm }

// posted records a POST from the client: the second ends the handshake.
// The time of the last one is what eviction goes by.
func (s *sseSession) posted() {
	s.adm.markIdle()
	if s.messages.Load() >= 2 || s.messages.Add(1) < 2 {
		return
	}
	s.adm.established.Store(true)
	s.mu.Lock()
	if s.handshakeTimer != nil {
		s.handshakeTimer.Stop()
	}
	s.mu.Unlock()
}

func (s *sseSession) handshakeExpired() {
	if !s.adm.established.Load() {
		s.h.logger.Debug("mcp sse: handshake timeout; closing", "session", s.id)
		s.terminate(ErrHandshakeTimeout)
	}
}

func (s *sseSession) deliver(m jsonrpc.Message) bool { return s.push(m, s.isClosed) }

func (s *sseSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Write implements [Conn]: every message goes on the event stream.
func (s *sseSession) Write(_ context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(m)
	isRequest := false
	if _, ok := m.(*jsonrpc.Request); ok {
		isRequest = true
	}
	switch {
	case err != nil && isRequest:
		return err
	case err != nil:
		// Responses still get an answer, so that the client's calls end.
		data = errorReplacement(m, "internal error: cannot encode response")
	case len(data) > s.h.maxEvent:
		if isRequest {
			return fmt.Errorf("transport: message of %d bytes exceeds MaxEventBytes (%d)", len(data), s.h.maxEvent)
		}
		data = errorReplacement(m, "internal error: response too large")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.w == nil {
		return ErrClosed
	}
	if !s.writeLocked("message", data) {
		return fmt.Errorf("transport: event stream write failed: %w", ErrClosed)
	}
	return nil
}

// writeLocked writes one event, reporting whether it went out.
func (s *sseSession) writeLocked(name string, data []byte) bool {
	if s.w == nil {
		return false
	}
	s.buf = appendNamedSSE(s.buf[:0], name, data)
	ok := writeAndFlush(s.w, s.buf, s.h.writeTO)
	if cap(s.buf) > maxRetainedBuffer {
		s.buf = nil
	}
	if !ok {
		s.w = nil
		// The client stopped reading: the session cannot go on.
		go s.terminate(ErrClosed)
	}
	return ok
}

// Close implements [Conn]: the session is forgotten and its stream ends.
func (s *sseSession) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	if s.handshakeTimer != nil {
		s.handshakeTimer.Stop()
	}
	s.mu.Unlock()
	s.h.sessions.drop(s)
	return nil
}

func (s *sseSession) terminate(reason error) {
	s.Close()
	s.ended(reason)
}

// appendNamedSSE appends an event with the given name and data.
func appendNamedSSE(b []byte, name string, data []byte) []byte {
	return sse.AppendEvent(b, &sse.Event{Name: name, Data: data})
}
