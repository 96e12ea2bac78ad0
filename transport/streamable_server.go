//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// connectFunc starts serving a connection accepted by a server-side
// transport, such as one Streamable HTTP session. It must return promptly
// and serve the connection in the background until the connection is
// closed; an error refuses the connection. Package mcp supplies one that
// connects an MCP server, through mcplink (see link.go).
type connectFunc func(ctx context.Context, conn Conn) error

// ResponseMode chooses how a Streamable HTTP server answers a POST that
// carries requests.
type ResponseMode int

const (
	// ResponseAuto answers with a single application/json body when the
	// response is the only thing the request produces, and switches to an
	// SSE stream as soon as the server sends a notification or request tied
	// to it (progress, logging, sampling...). With an [EventStore] and
	// protocol 2025-11-25 or later it always streams, so that the client can
	// resume.
	ResponseAuto ResponseMode = iota
	// ResponseJSON answers with application/json. On a session of the
	// handshake era, messages tied to the request (progress, logging,
	// sampling...) go to the session's standalone GET stream instead, if
	// the client opened one, and are dropped otherwise. Where there can be
	// no GET stream (a 2026-07-28 exchange, a stateless server), the first
	// such message sent before the response turns the answer into an SSE
	// stream, as in ResponseAuto, rather than be lost (a client must
	// accept both application/json and text/event-stream). So a
	// subscriptions/listen request is answered as an SSE stream, its
	// acknowledgment first, and a 2026-07-28 request gets its progress and
	// log notifications.
	ResponseJSON
	// ResponseSSE always answers with an SSE stream.
	ResponseSSE
)

// StreamableHTTPOptions configures a [StreamableHTTPHandler]. The zero
// value is a secure, stateful default.
type StreamableHTTPOptions struct {
	// Stateless serves each POST on its own connection, with no session ID
	// and no GET stream. Any replica can then serve any request, which suits
	// horizontally scaled deployments. The limits: requests are served as if
	// the initialize handshake had happened, with no client capabilities,
	// so the server cannot send requests to the client (sampling,
	// elicitation, roots), nor notifications outside a request's own
	// response stream (list changes, resource updates), and
	// logging/setLevel and resource subscriptions do not persist.
	Stateless bool
	// ResponseMode chooses JSON or SSE answers; see [ResponseMode].
	ResponseMode ResponseMode
	// EventStore, if set, makes SSE streams resumable: each event gets an
	// ID, a client that loses a stream reconnects with GET and
	// Last-Event-ID, and a request keeps running when its client
	// disconnects. Without one, a request is cancelled when the client
	// abandons its response stream. See [NewMemoryEventStore]. A store
	// that is an [EventLog] also records where each stream ends and the
	// events it failed to store, and lets a resumption follow a stream
	// that another process sharing the store writes.
	EventStore EventStore
	// RetryInterval is the reconnection delay the server suggests to
	// clients (the SSE retry field) on resumable streams. Zero means 1s.
	RetryInterval time.Duration
	// SessionIdleTimeout closes a session that has had no HTTP request or
	// open stream for this long, so that sessions clients never DELETE do
	// not pile up. A request still being handled then (its client went
	// away without resuming its stream) is cancelled with the session.
	// Zero means 10 minutes; negative means never.
	SessionIdleTimeout time.Duration
	// HandshakeTimeout closes a session whose client has sent nothing
	// since the initialize exchange (a client normally sends
	// notifications/initialized at once) for this long, or for
	// SessionIdleTimeout if shorter; its connection ends with
	// [ErrHandshakeTimeout]. Sessions opened and abandoned thus go fast.
	// Zero means 30s; negative means only SessionIdleTimeout applies.
	HandshakeTimeout time.Duration
	// MaxSessions bounds the open sessions, counting those whose
	// initialize is under way. When the table is full, a new session
	// evicts the longest-idle session without credentials (one that never
	// finished its handshake first), whose connection ends with
	// [ErrSessionEvicted]; when none is idle, initialize is refused with
	// 503. In stateless mode it bounds the POSTs served at once. Zero
	// means 10000; negative means no bound.
	MaxSessions int
	// MaxSessionsPerPeer bounds the sessions one peer may hold: the principal
	// (see [WithPrincipal]) when the request carries one, else the remote IP
	// address (an IPv6 address by its /64 prefix), except a loopback address,
	// which is not counted (the local machine, or a reverse proxy on it, which
	// every client would share). A peer past it has its own longest-idle
	// session evicted for the new one, or, when none is idle, gets 429. Behind
	// a reverse proxy elsewhere, every client has the proxy's address: rewrite
	// the request's RemoteAddr from the header the proxy sets, or raise this
	// bound. Stateless mode has no sessions and no per-peer bound. Zero means
	// 100; negative means no bound.
	MaxSessionsPerPeer int
	// MaxRequestsPerSession bounds the HTTP requests (POSTs and GETs) in
	// progress at once on one session; past it a request is refused with
	// 429 before its body is read. Zero means 128; negative means no
	// bound.
	MaxRequestsPerSession int
	// MaxBodyBytes bounds a POST body; a larger one is refused with 413.
	// Zero means DefaultMaxMessageSize.
	MaxBodyBytes int64
	// MaxInitializeBytes bounds the body of a POST without a session ID,
	// which may only carry initialize, so that peers without a session
	// cannot make the server read and decode large bodies; a larger one is
	// refused with 413. Zero means 1 MiB (or MaxBodyBytes if smaller).
	MaxInitializeBytes int64
	// ReadBodyTimeout bounds the time to read a POST body: a client that
	// has not sent all of it by then gets 408 and loses the connection,
	// which a stalled body would otherwise hold, with its buffer, for as
	// long as the client likes. A body not read within a quarter of the
	// timeout (100 ms at most) gets the read deadline on its connection
	// (see [http.ResponseController]), lifted once the body is read; the
	// others, nearly all, get none. An http.Server ReadTimeout no longer
	// than it bounds the body instead (net/http's deadline for the whole
	// request). Zero means 30s; negative means no bound.
	ReadBodyTimeout time.Duration
	// DecodeLimits bounds what decoding one message may cost; see
	// [jsonrpc.DecodeLimits]. The zero value means its defaults.
	DecodeLimits jsonrpc.DecodeLimits
	// MaxEventBytes bounds one outgoing message. A larger response is
	// replaced by an internal error; a larger notification or request is
	// not sent. Zero means DefaultMaxMessageSize.
	MaxEventBytes int
	// WriteTimeout bounds each write to a client's response stream. A
	// client that stops reading for this long loses the stream; the
	// session survives and, with an EventStore, the client can resume.
	// Zero means 30s; negative means no bound.
	WriteTimeout time.Duration
	// Security configures the Origin and Host checks; the zero value is
	// safe for local servers. See [HTTPSecurity].
	Security HTTPSecurity
	// SupportedVersions lists the protocol revisions accepted in the
	// MCP-Protocol-Version header; a request naming another is refused
	// with 400 (-32022 with the supported revisions for a revision of the
	// stateless era, when the list has one). Nil accepts any. A list
	// without revisions of the stateless era makes an endpoint of the
	// handshake era only. A list of revisions of the stateless era
	// only (2026-07-28) makes an endpoint of that era only, as the
	// revision asks of one: GET and DELETE get 405, a Mcp-Session-Id
	// header is ignored, and a request without the revision in its
	// MCP-Protocol-Version header (initialize, say) gets 400. On an
	// endpoint of both eras, a POST whose header names a revision of the
	// stateless era is served as one, its Mcp-Session-Id ignored too: its
	// mirrored headers (Mcp-Method, Mcp-Name) are checked against its body
	// whatever else it carries.
	SupportedVersions []string
	// DisableHijack keeps standalone GET streams on net/http's request
	// goroutine. By default, a GET stream still open a tenth of a second
	// after its headers went out, on an HTTP/1.1 connection whose
	// [http.ResponseWriter] is net/http's own, is taken over from net/http
	// (hijacked): an idle session holding it then costs one goroutine
	// with a small stack and no buffers, a fifth of what net/http holds
	// for an open request. (A session that ends sooner, such as a
	// client's that connects, calls a tool and leaves, spares the CPU the
	// takeover costs.) The stream ends when its client closes the
	// connection or sends anything on it, and with its session;
	// [StreamableHTTPHandler.Close] ends it, while [http.Server.Shutdown]
	// does not wait for it. When the server ends the stream, the
	// connection goes back to the http.Server for the client to reuse.
	// Streams stay on net/http, whatever this says, on servers with a
	// ConnState hook (such as httptest's), which would see the connection
	// leave and come back as a new one, and below middleware wrappers
	// that do not implement [http.Hijacker] themselves. Set DisableHijack
	// when a middleware that does must see what the stream writes or when
	// it ends.
	DisableHijack bool
	// SessionIDs mints the session IDs and checks the tag of the one each
	// request names before looking the session up: a request whose ID
	// does not verify gets the 404 of an unknown session. Package mcp's
	// NewStreamableHTTPHandler sets it to its server's KeyRing when nil,
	// so that replicas sharing the ring accept each other's IDs. Nil
	// means a random key of the handler's own.
	SessionIDs SessionIDTagger
	// SessionStore, if set, keeps a record of each session of the
	// handshake era in a store that replicas share, so that any replica
	// serves any session: one that gets a request for a session it does
	// not hold reads the record and restores the session, initialized,
	// from the MCP session's snapshot (package mcp saves it after
	// initialize, logging/setLevel and resource subscriptions). The
	// store admits sessions: MaxSessions and MaxSessionsPerPeer then
	// bound the sessions of every replica together, exactly, and this
	// handler's table holds the sessions it serves (a restored copy it
	// evicts is restored again on its next request). Records expire
	// SessionIdleTimeout after the last request seen on any replica (an
	// hour when that is negative). With the store down, initialize gets
	// 503 with Retry-After, and so does a request for a session this
	// replica does not hold, never 404; DELETE deletes the record,
	// whichever replica gets it. The replicas must share SessionIDs (an
	// mcp.KeyRing, which also keys the hashes of principals and peers
	// that records hold: see [SessionHasher]). With a bus on the server
	// (mcp.ServerOptions.Bus), mcp.NewStreamableHTTPHandler also passes
	// the sessions' messages between replicas: a deletion closes the
	// copies elsewhere at once (told only when another replica holds
	// one, if the store is a [SessionHolders]), a cancellation reaches
	// the replica running the call, the client's answer to a server
	// request reaches the replica that sent it, and what a session is
	// sent outside any request reaches the replica holding its GET stream
	// (see [SessionRecord.Replica]). Nil keeps sessions in this process only,
	// with no store call at all. See docs/SCALING.md ("Sessions",
	// "Messages for one session").
	SessionStore SessionStore
	// SessionRecheck is how long a replica serves a session from its own
	// copy before it touches the record again, which extends the record's
	// expiry and tells the replica whether the session was deleted or its
	// state changed on another replica. Until then a replica may serve a
	// session that another deleted, with a log level or subscriptions
	// older than another set. Zero means SessionIdleTimeout/10 (a minute
	// by default); negative means every request (one store call each).
	SessionRecheck time.Duration
	// Logger receives the handler's diagnostics. Nil discards them.
	Logger *slog.Logger
}

// StreamableHTTPHandler is the server side of the Streamable HTTP
// transport (protocol revisions 2025-03-26 and later) as an [http.Handler]:
// mount it on the MCP endpoint of any mux, behind any middleware.
//
// Package mcp's NewStreamableHTTPHandler returns one that serves an MCP
// server. Each session gets a fresh connection, which the handler has that
// server serve: a POST carrying an initialize request starts one, its
// response carries the new Mcp-Session-Id, and later requests must present
// it. The handler routes each response, and each message a
// request's handler sends, to the HTTP exchange of the request it belongs
// to; other server messages go to the session's standalone GET stream.
// DELETE ends a session. See [StreamableHTTPOptions] for the limits and
// the stateless mode.
//
// Handlers reach the HTTP request through [HTTPRequestInfoFromContext].
// Goroutines: none per idle session; one per HTTP request being served and
// one per request being handled.
type StreamableHTTPHandler struct {
	connect     connectFunc
	opts        StreamableHTTPOptions
	logger      *slog.Logger
	idle        time.Duration
	handshake   time.Duration // 0: none but idle
	limits      sessionLimits
	maxRequests int // per session; 0: no bound
	maxBody     int64
	maxInit     int64
	bodies      bodyWatch // bounds the time to read a POST body
	maxEvent    int
	log         EventLog // EventStore as an EventLog, if it is one
	retry       time.Duration
	writeTO     time.Duration
	modernOnly  bool     // SupportedVersions names only revisions of the stateless era
	noModern    bool     // SupportedVersions names no revision of the stateless era
	modernVers  []string // the revisions of the stateless era SupportedVersions names

	sids     SessionIDTagger
	sessions sessionSet[*httpSession]
	store    *sessionRecords // nil without a SessionStore
	holders  holderSet       // of hijacked GET streams
	// hijackAfter is how long a standalone GET stream stays on net/http
	// before it is hijacked (hijackDelay; tests may set it before serving).
	hijackAfter time.Duration
	metaMemo    metaMemo      // the _meta of the last 2026-07-28 request (see scanModernBody)
	decodeMemo  jsonscan.Memo // the params._meta of the last request decoded (see jsonscan.ValidObject)

	// testHookLookup, if set, is called with each session ID the handler
	// does not hold whose tag verified: the IDs that may reach the store.
	testHookLookup func(id string)

	// testHookHijacked, if set, is called when a standalone stream was
	// hijacked.
	testHookHijacked func()

	// testHookExchangeWaited, if set, is called when an exchange's POST
	// stops waiting, before it writes what is left, with the IDs of the
	// exchange's requests.
	testHookExchangeWaited func(requests []jsonrpc.ID)
}

// newStreamableHTTPHandler returns a handler that serves each session by
// calling connect with its connection. opts may be nil.
func newStreamableHTTPHandler(connect connectFunc, opts *StreamableHTTPOptions) *StreamableHTTPHandler {
	h := &StreamableHTTPHandler{connect: connect, hijackAfter: hijackDelay}
	if opts != nil {
		h.opts = *opts
	}
	h.logger = h.opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.sids = sessionIDsOr(h.opts.SessionIDs)
	h.idle = h.opts.SessionIdleTimeout
	if h.idle == 0 {
		h.idle = defaultSessionIdleTimeout
	}
	h.handshake = positiveOr(h.opts.HandshakeTimeout, defaultHandshakeTimeout)
	if h.idle > 0 && h.handshake > h.idle {
		h.handshake = h.idle
	}
	h.limits = sessionLimits{
		max:     positiveOr(h.opts.MaxSessions, defaultMaxSessions),
		perPeer: positiveOr(h.opts.MaxSessionsPerPeer, defaultMaxSessionsPerPeer),
	}
	h.maxRequests = positiveOr(h.opts.MaxRequestsPerSession, defaultMaxSessionRequests)
	h.maxBody = h.opts.MaxBodyBytes
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxMessageSize
	}
	h.maxInit = min(positiveOr(h.opts.MaxInitializeBytes, defaultMaxInitializeBytes), h.maxBody)
	if h.maxInit <= 0 {
		h.maxInit = h.maxBody
	}
	h.bodies.init(positiveOr(h.opts.ReadBodyTimeout, defaultReadBodyTimeout))
	if h.opts.SupportedVersions != nil {
		for _, v := range h.opts.SupportedVersions {
			if isModernVersion(v) {
				h.modernVers = append(h.modernVers, v)
			}
		}
		h.modernOnly = len(h.modernVers) == len(h.opts.SupportedVersions)
		h.noModern = len(h.modernVers) == 0
	}
	h.maxEvent = h.opts.MaxEventBytes
	if h.maxEvent <= 0 {
		h.maxEvent = DefaultMaxMessageSize
	}
	h.writeTO = h.opts.WriteTimeout
	if h.writeTO == 0 {
		h.writeTO = 30 * time.Second
	}
	if h.opts.SessionStore != nil && !h.opts.Stateless {
		h.store = newSessionRecords(h)
	}
	h.log, _ = h.opts.EventStore.(EventLog)
	h.retry = h.opts.RetryInterval
	if h.retry <= 0 {
		h.retry = time.Second
	}
	return h
}

// SessionIDs returns the IDs of the open sessions.
func (h *StreamableHTTPHandler) SessionIDs() []string { return h.sessions.ids() }

// CloseSession ends the session with the given ID, as a DELETE from its
// client would. It reports whether the session existed. With a
// [StreamableHTTPOptions.SessionStore], it deletes the session's record,
// whichever replica holds the session, and reports whether there was one.
func (h *StreamableHTTPHandler) CloseSession(id string) bool {
	if h.store == nil {
		return h.sessions.closeOne(id)
	}
	s, local := h.sessions.lookup(id)
	elsewhere, err := h.store.deleteRecord(context.Background(), id)
	if err != nil && !errors.Is(err, ErrSessionNotFound) {
		h.logger.Warn("mcp http: session store delete failed", "session", id, "err", err)
	}
	if err == nil && elsewhere {
		h.store.announce(context.Background(), mcplink.RelayDeleted, id, 0)
	}
	if local {
		s.deleteEvents.Store(true)
		s.terminate(ErrSessionTerminated)
	}
	return local || err == nil
}

// Close ends every session and refuses new ones (503). It waits for the
// GET streams taken over from net/http (see
// [StreamableHTTPOptions.DisableHijack]) to end, which takes at most a
// second, but not for HTTP requests being served; shut the http.Server
// down for that.
func (h *StreamableHTTPHandler) Close() error {
	if h.store != nil && h.store.relay != nil {
		h.store.relay.Detach((*relayTarget)(h))
	}
	// The holders of hijacked streams learn that the handler is closing
	// before their streams end, so that each closes its connection
	// rather than hand it back to the http.Server.
	h.holders.refuse()
	h.sessions.closeAll()
	h.bodies.stop()
	h.holders.close()
	return nil
}

// ErrSessionTerminated is the reason a server-side HTTP session's
// connection reports (to [jsonrpc.Conn], whose Err returns it) when the
// HTTP session was terminated: by the client's DELETE, by
// [StreamableHTTPHandler.CloseSession] or [SSEHandler.CloseSession], or by
// the handler's Close. It concerns the transport's session only; the mcp
// package reports an ended MCP session, whatever the transport, with
// mcp.ErrSessionClosed.
var ErrSessionTerminated = errors.New("transport: HTTP session terminated")

// ErrSessionIdle is the reason a server-side HTTP session's connection
// reports when it was closed for being idle too long.
var ErrSessionIdle = errors.New("transport: HTTP session idle timeout")

// errNoStream is returned when a server-to-client request has no stream to
// travel on.
var errNoStream = mcplink.ErrNoStream

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
	defaultHeaderVersion  = "2025-03-26" // assumed when the header is missing
	batchVersion          = "2025-03-26" // the only revision with batches
	primingVersion        = "2025-11-25" // first revision with priming events
)

// ServeHTTP implements [http.Handler].
func (h *StreamableHTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg := h.opts.Security.check(r); code != 0 {
		http.Error(w, msg, code)
		return
	}
	switch r.Method {
	case http.MethodPost:
		if len(r.Header[headerSessionID]) > 0 {
			// The handler of a session's request may run on this
			// goroutine, net/http's for the connection, whose stack the
			// collector shrinks while it waits for the next request:
			// grown here, a few frames deep, it is not copied again deep
			// in the handler, where jsonrpc grows it.
			rpclink.GrowStack()
		}
		h.servePOST(w, r)
	case http.MethodGet:
		if h.opts.Stateless || h.modernOnly {
			methodNotAllowed(w, "POST")
			return
		}
		h.serveGET(w, r)
	case http.MethodDelete:
		if h.opts.Stateless || h.modernOnly {
			methodNotAllowed(w, "POST")
			return
		}
		h.serveDELETE(w, r)
	default:
		if h.opts.Stateless || h.modernOnly {
			methodNotAllowed(w, "POST")
		} else {
			methodNotAllowed(w, "GET, POST, DELETE")
		}
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
}

// writeJSONRPCError answers an HTTP exchange with a JSON-RPC error body.
func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	writeJSONRPCErrorData(w, status, id, code, msg, nil)
}

// writeJSONRPCErrorData is writeJSONRPCError with the error's data.
func writeJSONRPCErrorData(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string, errData []byte) {
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg, Data: errData}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// lookup finds the session a request names, answering the request itself
// when it cannot be served: 400 without a session ID, 404 for an unknown
// one, 403 for another principal's, 503 when the session store cannot
// tell.
func (h *StreamableHTTPHandler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := headerValue(r.Header, headerSessionID)
	if id == "" {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: missing Mcp-Session-Id header")
		return nil
	}
	s, lerr := h.session(r, id, true)
	if lerr != nil {
		writeLookupError(w, lerr)
		return nil
	}
	if s == nil {
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: unknown or expired session")
		return nil
	}
	if s.principal != PrincipalFromContext(r.Context()) {
		writeJSONRPCError(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Forbidden: session belongs to another principal")
		return nil
	}
	s.adm.established.Store(true) // a request after initialize: the handshake is over
	return s
}

// session returns the session of the given ID that request r names, nil
// when there is none. An ID whose tag does not verify is refused before
// anything looks it up: the session store shared by replicas is reached
// through here too, so that forged IDs cost it nothing. With a store, a
// session this replica holds is rechecked now and then (see
// [StreamableHTTPOptions.SessionRecheck]), and, with restore, one it does
// not hold is restored from its record.
func (h *StreamableHTTPHandler) session(r *http.Request, id string, restore bool) (*httpSession, *lookupError) {
	// A session held here was minted here or restored after its tag
	// verified: its ID needs no MAC again (one per request otherwise).
	if s, ok := h.sessions.lookup(id); ok {
		if h.store == nil {
			return s, nil
		}
		return h.store.recheck(r.Context(), s), nil
	}
	if !h.sids.CheckSessionID(id) {
		return nil, nil
	}
	if h.testHookLookup != nil {
		h.testHookLookup(id)
	}
	if h.store != nil && restore {
		return h.store.restore(r, id)
	}
	return nil, nil
}

// checkVersion validates the MCP-Protocol-Version header and returns the
// revision it names.
func (h *StreamableHTTPHandler) checkVersion(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := headerValue(r.Header, headerProtocolVersion)
	if v == "" {
		v = defaultHeaderVersion
	}
	if h.opts.SupportedVersions != nil && !slices.Contains(h.opts.SupportedVersions, v) {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(v))
		return "", false
	}
	return v, true
}

func (h *StreamableHTTPHandler) servePOST(w http.ResponseWriter, r *http.Request) {
	// What can be judged without the body is judged first.
	if !acceptsJSONAndSSE(r.Header["Accept"]) {
		writeJSONRPCError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: the client must accept both application/json and text/event-stream")
		return
	}
	if !isJSONContent(headerValue(r.Header, "Content-Type")) {
		writeJSONRPCError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json")
		return
	}
	var (
		s     *httpSession
		a     *admission
		limit = h.maxBody
		// The label decides the era, whatever else the POST carries: a
		// POST labelled 2026-07-28 or later is served as that revision
		// asks (its mirrored headers checked against its body), and an
		// Mcp-Session-Id on it is ignored, as that revision has no
		// sessions. Served on the session the header names, it would
		// reach a handler with headers that nothing checked, which
		// intermediaries and the auth middleware may have trusted.
		modern = isModernVersion(headerValue(r.Header, headerProtocolVersion)) && !h.noModern
	)
	if h.modernOnly && !modern {
		// No handshake on an endpoint of the stateless era only: the
		// header names no revision of that era (or none at all).
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(headerValue(r.Header, headerProtocolVersion))+
				"; this endpoint serves only "+strings.Join(h.opts.SupportedVersions, ", "))
		return
	}
	switch {
	case h.opts.Stateless || modern:
		// MaxSessions bounds the exchanges in progress. In stateless mode
		// not per peer: behind a load balancer, where stateless servers
		// usually are, every client would be one peer. On an endpoint
		// that also serves sessions, a 2026-07-28 exchange (a
		// subscriptions/listen stream can last) takes a slot of its peer
		// as a session does, so that one peer cannot hold them all.
		lim := sessionLimits{max: h.limits.max}
		if !h.opts.Stateless {
			lim = h.limits
		}
		if a = h.reserve(w, r, lim); a == nil {
			return
		}
		defer h.sessions.release(a)
	case headerValue(r.Header, headerSessionID) == "":
		// It may only carry initialize: its session's slot is taken
		// before the body is read, so that the bounds on sessions also
		// bound the handshakes under way, and the body is small. The
		// session takes the slot over; release gives back a slot still
		// reserved when the POST ends.
		if a = h.reserve(w, r, h.limits); a == nil {
			return
		}
		defer h.sessions.release(a)
		limit = h.maxInit
	default:
		if s = h.lookup(w, r); s == nil {
			return
		}
		if !s.adm.enter(h.maxRequests) {
			writeJSONRPCError(w, http.StatusTooManyRequests, jsonrpc.ID{}, jsonrpc.CodeServerOverloaded, "Too Many Requests: too many requests in progress on this session")
			return
		}
		defer s.adm.leave()
		if headerValue(r.Header, headerProtocolVersion) != "" {
			if _, ok := h.checkVersion(w, r); !ok {
				return
			}
		}
	}

	msg, ok := h.readMessage(w, r, limit)
	if !ok {
		return
	}
	// The message's parts, kept in variables of this frame (passed on
	// one by one, not in a struct, so that they stay on the stack).
	var (
		msgs     []jsonrpc.Message // msg, or the elements of a batch
		requests []jsonrpc.ID      // the ids of the requests among msgs
		init     *jsonrpc.Request  // the initialize request among msgs
	)
	b, isBatch := msg.(jsonrpc.Batch)
	if isBatch {
		msgs = b
	} else {
		msgs = []jsonrpc.Message{msg}
	}
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Request:
			if !m.IsNotification() {
				requests = append(requests, m.ID)
			}
			if m.Method == "initialize" {
				init = m
			}
		case *jsonrpc.DecodeError:
			if m.ID.IsValid() {
				requests = append(requests, m.ID)
			}
		}
	}
	if init != nil && (isBatch || init.IsNotification()) {
		writeJSONRPCError(w, http.StatusBadRequest, init.ID, jsonrpc.CodeInvalidRequest, "Bad Request: initialize must be sent alone")
		return
	}
	info := newHTTPRequestInfo(r, modern)
	switch {
	case modern:
		h.serveModern(w, r, msg, msgs, requests, isBatch, info)
	case h.opts.Stateless:
		h.serveStateless(w, r, msg, msgs, requests, init, isBatch, info)
	case s == nil:
		h.serveInitialize(w, r, a, msg, msgs, requests, init, info)
	default:
		h.serveSessionPOST(w, r, s, msg, msgs, requests, isBatch, info)
	}
}

// readMessage reads and decodes a POST's body of at most limit bytes,
// answering the request itself and reporting false when it cannot.
func (h *StreamableHTTPHandler) readMessage(w http.ResponseWriter, r *http.Request, limit int64) (jsonrpc.Message, bool) {
	body, status, reason := readRequestBody(w, r, limit, &h.bodies)
	if status != 0 {
		writeJSONRPCError(w, status, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, reason)
		return nil, false
	}
	msg, err := decodeMemo(&h.opts.DecodeLimits, body, true, &h.decodeMemo) // body is ours alone
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeJSONRPCError(w, http.StatusBadRequest, de.ID, de.Err.Code, de.Err.Message)
			return nil, false
		}
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error")
		return nil, false
	}
	return msg, true
}

// reserve takes a session slot for r's peer, evicting as lim requires, or
// refuses r and returns nil.
func (h *StreamableHTTPHandler) reserve(w http.ResponseWriter, r *http.Request, lim sessionLimits) *admission {
	peer, auth := peerOf(r)
	a, evicted, status := h.sessions.reserve(peer, auth, lim)
	for _, s := range evicted {
		h.logger.Debug("mcp http: session evicted", "session", s.id)
		s.terminate(ErrSessionEvicted)
	}
	switch status {
	case http.StatusTooManyRequests:
		writeJSONRPCError(w, status, jsonrpc.ID{}, jsonrpc.CodeServerOverloaded, "Too Many Requests: too many sessions for this client")
	case http.StatusServiceUnavailable:
		writeJSONRPCError(w, status, jsonrpc.ID{}, jsonrpc.CodeServerOverloaded, "Service Unavailable: too many sessions")
	}
	return a
}

func (h *StreamableHTTPHandler) serveStateless(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, init *jsonrpc.Request, isBatch bool, info *HTTPRequestInfo) {
	version := defaultHeaderVersion
	if init == nil {
		v, ok := h.checkVersion(w, r)
		if !ok {
			return
		}
		version = v
	}
	if isBatch && version != batchVersion {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: batches are not allowed in protocol version "+version)
		return
	}
	if len(requests) == 0 {
		// Notifications and responses have no one to go to without a
		// session; accept and drop them.
		acceptNoRequests(w, msgs)
		return
	}
	s := h.newSession("", info.Principal, true, version, nil)
	defer s.terminate(ErrSessionTerminated)
	if err := h.connect(r.Context(), statelessConn{s}); err != nil {
		h.logger.Error("mcp http: connect failed", "err", err)
		writeJSONRPCError(w, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.CodeInternalError, "Internal Server Error")
		return
	}
	s.serveExchange(w, r, msg, msgs, requests, info, false)
}

// serveInitialize serves a POST without a session ID, which must carry
// initialize, for which a slot was reserved.
func (h *StreamableHTTPHandler) serveInitialize(w http.ResponseWriter, r *http.Request, a *admission, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, init *jsonrpc.Request, info *HTTPRequestInfo) {
	if init == nil {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: missing Mcp-Session-Id header")
		return
	}
	s := h.newSession(h.sids.MintSessionID(), info.Principal, false, "", a) // s owns the slot now
	var conn Conn = s
	if h.store != nil {
		// The record is created with the initialize's snapshot (see
		// sessionRecords.admit).
		s.sessionStored = &sessionStored{pending: h.store.newRecord(s, a.peer)}
		conn = storedConn{s}
	}
	if err := h.connect(r.Context(), conn); err != nil {
		h.logger.Error("mcp http: connect failed", "err", err)
		s.Close()
		h.dropRecord(s)
		writeJSONRPCError(w, http.StatusInternalServerError, init.ID, jsonrpc.CodeInternalError, "Internal Server Error")
		return
	}
	if !s.serveExchange(w, r, msg, msgs, requests, info, true) {
		s.terminate(ErrSessionTerminated)
		h.dropRecord(s)
	}
}

// dropRecord deletes the record of s, whose initialize failed, from the
// session store.
func (h *StreamableHTTPHandler) dropRecord(s *httpSession) {
	if s.sessionStored == nil {
		return
	}
	s.mu.Lock()
	created := s.rec != nil
	s.mu.Unlock()
	if !created {
		return
	}
	if err := h.store.store.Delete(context.Background(), s.id); err != nil && !errors.Is(err, ErrSessionNotFound) {
		h.logger.Warn("mcp http: session store delete failed", "session", s.id, "err", err)
	}
}

// serveSessionPOST serves a POST naming a session, whose protocol version
// header was checked before the body was read.
func (h *StreamableHTTPHandler) serveSessionPOST(w http.ResponseWriter, r *http.Request, s *httpSession, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, isBatch bool, info *HTTPRequestInfo) {
	// Batches are the negotiated revision's to allow, whatever the header
	// says: the connection refuses them by the same rule.
	if isBatch {
		if version := s.protocolVersion(); version != batchVersion {
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: batches are not allowed in protocol version "+version)
			return
		}
	}
	if len(requests) == 0 {
		if h.store != nil && h.store.relay != nil && s.sessionStored != nil {
			// Answers to requests of other replicas go to them, and
			// cancellations of requests not running here to all; the
			// 202 says the bus took them.
			m, err := s.relayIncoming(r.Context(), msg, msgs)
			if err != nil {
				h.logger.Warn("mcp http: relaying to another replica failed", "session", s.id, "err", err)
				writeRelayError(w, err)
				return
			}
			if m == nil {
				acceptNoRequests(w, msgs)
				return
			}
			msg = m
		}
		s.acquire()
		defer s.release()
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok {
				req.Extra = info
			}
		}
		if !s.deliver(msg, nil) {
			writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
			return
		}
		acceptNoRequests(w, msgs)
		return
	}
	s.serveExchange(w, r, msg, msgs, requests, info, false)
}

func (h *StreamableHTTPHandler) serveGET(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header["Accept"], "text/event-stream") {
		writeJSONRPCError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: the client must accept text/event-stream")
		return
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	if !s.adm.enter(h.maxRequests) {
		writeJSONRPCError(w, http.StatusTooManyRequests, jsonrpc.ID{}, jsonrpc.CodeServerOverloaded, "Too Many Requests: too many requests in progress on this session")
		return
	}
	end := s.adm.leave
	if _, ok := h.checkVersion(w, r); !ok {
		end()
		return
	}
	s.acquire()
	end = func() {
		s.release()
		s.adm.leave()
	}
	// A stream taken over from net/http calls end when it is over.
	handedOver := false
	defer func() {
		if !handedOver {
			end()
		}
	}()
	if last := headerValue(r.Header, headerLastEventID); last != "" && h.opts.EventStore != nil {
		handedOver = s.resume(w, r, last, end)
		return
	}
	st := s.standaloneStream()
	sr := h.store
	recorded := sr != nil && sr.relay != nil && s.sessionStored != nil
	if recorded {
		// The record names this replica while the stream lives here,
		// from before the client sees the stream open: another replica
		// reading the record once the client has the stream sends this
		// one what the session gets outside requests.
		sr.streamOpened(r.Context(), s)
	}
	conn, ok := st.attach(w, nil)
	if !ok {
		if recorded {
			sr.streamClosed(s)
		}
		http.Error(w, "Conflict: the session already has a GET stream", http.StatusConflict)
		return
	}
	if recorded {
		ended := end
		end = func() {
			sr.streamClosed(s)
			ended()
		}
	}
	if handedOver = h.handOver(w, r, st, conn, end); !handedOver {
		st.wait(r.Context(), conn)
	}
}

func (h *StreamableHTTPHandler) serveDELETE(w http.ResponseWriter, r *http.Request) {
	if h.store != nil {
		h.store.serveDELETE(w, r)
		return
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	s.terminate(ErrSessionTerminated)
	w.WriteHeader(http.StatusNoContent)
}

// register makes the session, whose slot was reserved before its
// initialize was read, one of the open sessions.
func (h *StreamableHTTPHandler) register(s *httpSession) {
	if !h.sessions.promote(s) {
		// The handler closed meanwhile: the session is over.
		go s.terminate(ErrSessionTerminated)
	}
}

func (h *StreamableHTTPHandler) forget(s *httpSession) {
	if s.adm != nil {
		h.sessions.drop(s)
	}
}
