package transport

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ConnectFunc starts serving a connection accepted by a server-side
// transport, such as one Streamable HTTP session. It must return promptly
// and serve the connection in the background until the connection is
// closed; an error refuses the connection. The mcp package supplies one
// that connects an MCP server.
type ConnectFunc func(ctx context.Context, conn Conn) error

// StatelessConn is implemented by the connections of a stateless server
// transport: each carries one HTTP exchange, and no initialize handshake
// precedes its requests. ProtocolVersion is the revision the client named
// in its MCP-Protocol-Version header (2025-03-26 when absent, as the
// specification says).
type StatelessConn interface {
	Conn
	ProtocolVersion() string
}

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
	// ResponseJSON always answers with application/json. Messages tied to
	// the request go to the session's standalone GET stream instead, if the
	// client opened one.
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
	// abandons its response stream. See [NewMemoryEventStore].
	EventStore EventStore
	// RetryInterval is the reconnection delay the server suggests to
	// clients (the SSE retry field) on resumable streams. Zero means 1s.
	RetryInterval time.Duration
	// SessionIdleTimeout closes a session that has had no HTTP request,
	// open stream or request in flight for this long, so that sessions
	// clients never DELETE do not pile up. Zero means 10 minutes; negative
	// means never.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the open sessions; past it, initialize is refused
	// with 503. Zero means 10000; negative means no bound.
	MaxSessions int
	// MaxBodyBytes bounds a POST body; a larger one is refused with 413.
	// Zero means DefaultMaxMessageSize.
	MaxBodyBytes int64
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
	// with 400. Nil accepts any.
	SupportedVersions []string
	// Logger receives the handler's diagnostics. Nil discards them.
	Logger *slog.Logger
}

// StreamableHTTPHandler is the server side of the Streamable HTTP
// transport (protocol revisions 2025-03-26 and later) as an [http.Handler]:
// mount it on the MCP endpoint of any mux, behind any middleware.
//
// Each session gets a fresh connection passed to the ConnectFunc given to
// [NewStreamableHTTPHandler]: a POST carrying an initialize request starts
// one, its response carries the new Mcp-Session-Id, and later requests
// must present it. The handler routes each response, and each message a
// request's handler sends, to the HTTP exchange of the request it belongs
// to; other server messages go to the session's standalone GET stream.
// DELETE ends a session. See [StreamableHTTPOptions] for the limits and
// the stateless mode.
//
// Handlers reach the HTTP request through [HTTPRequestInfoFromContext].
// Goroutines: none per idle session; one per HTTP request being served and
// one per request being handled.
type StreamableHTTPHandler struct {
	connect     ConnectFunc
	opts        StreamableHTTPOptions
	logger      *slog.Logger
	idle        time.Duration
	maxSessions int
	maxBody     int64
	maxEvent    int
	retry       time.Duration
	writeTO     time.Duration

	sessions sessionSet[*httpSession]
}

// NewStreamableHTTPHandler returns a handler that serves each session by
// calling connect with its connection. opts may be nil.
func NewStreamableHTTPHandler(connect ConnectFunc, opts *StreamableHTTPOptions) *StreamableHTTPHandler {
	h := &StreamableHTTPHandler{connect: connect}
	if opts != nil {
		h.opts = *opts
	}
	h.logger = h.opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.idle = h.opts.SessionIdleTimeout
	if h.idle == 0 {
		h.idle = 10 * time.Minute
	}
	h.maxSessions = h.opts.MaxSessions
	if h.maxSessions == 0 {
		h.maxSessions = 10000
	}
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
	h.retry = h.opts.RetryInterval
	if h.retry <= 0 {
		h.retry = time.Second
	}
	return h
}

// SessionIDs returns the IDs of the open sessions.
func (h *StreamableHTTPHandler) SessionIDs() []string { return h.sessions.ids() }

// CloseSession ends the session with the given ID, as a DELETE from its
// client would. It reports whether the session existed.
func (h *StreamableHTTPHandler) CloseSession(id string) bool { return h.sessions.closeOne(id) }

// Close ends every session and refuses new ones (503). It does not wait
// for HTTP requests being served; shut the http.Server down for that.
func (h *StreamableHTTPHandler) Close() error {
	h.sessions.closeAll()
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
var errNoStream = errors.New("transport: no stream open to the client for this message")

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
		h.servePOST(w, r)
	case http.MethodGet:
		if h.opts.Stateless {
			methodNotAllowed(w, "POST")
			return
		}
		h.serveGET(w, r)
	case http.MethodDelete:
		if h.opts.Stateless {
			methodNotAllowed(w, "POST")
			return
		}
		h.serveDELETE(w, r)
	default:
		if h.opts.Stateless {
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
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// lookup finds the session a request names, answering the request itself
// when it cannot be served: 400 without a session ID, 404 for an unknown
// one, 403 for another principal's.
func (h *StreamableHTTPHandler) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(headerSessionID)
	if id == "" {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: missing Mcp-Session-Id header")
		return nil
	}
	s, ok := h.sessions.lookup(id)
	if !ok {
		writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: unknown or expired session")
		return nil
	}
	if s.principal != PrincipalFromContext(r.Context()) {
		writeJSONRPCError(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Forbidden: session belongs to another principal")
		return nil
	}
	return s
}

// checkVersion validates the MCP-Protocol-Version header and returns the
// revision it names.
func (h *StreamableHTTPHandler) checkVersion(w http.ResponseWriter, r *http.Request) (string, bool) {
	v := r.Header.Get(headerProtocolVersion)
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
	if !accepts(r.Header.Values("Accept"), "application/json") || !accepts(r.Header.Values("Accept"), "text/event-stream") {
		writeJSONRPCError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: the client must accept both application/json and text/event-stream")
		return
	}
	if !isJSONContent(r.Header.Get("Content-Type")) {
		writeJSONRPCError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json")
		return
	}
	body, err := readSized(http.MaxBytesReader(w, r.Body, h.maxBody), r.ContentLength, readBodyPrealloc)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSONRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", h.maxBody))
			return
		}
		http.Error(w, "Bad Request: cannot read body", http.StatusBadRequest)
		return
	}
	msg, err := jsonrpc.DecodeOwnedMessage(body) // body is ours alone
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeJSONRPCError(w, http.StatusBadRequest, de.ID, de.Err.Code, de.Err.Message)
			return
		}
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error")
		return
	}
	var msgs []jsonrpc.Message
	if b, ok := msg.(jsonrpc.Batch); ok {
		msgs = b
	} else {
		msgs = []jsonrpc.Message{msg}
	}
	var (
		requests []jsonrpc.ID
		init     *jsonrpc.Request
	)
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
	_, isBatch := msg.(jsonrpc.Batch)
	if init != nil && (isBatch || init.IsNotification()) {
		writeJSONRPCError(w, http.StatusBadRequest, init.ID, jsonrpc.CodeInvalidRequest, "Bad Request: initialize must be sent alone")
		return
	}
	info := newHTTPRequestInfo(r)

	if h.opts.Stateless {
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
			w.WriteHeader(http.StatusAccepted)
			return
		}
		s := h.newSession("", info.Principal, true, version)
		defer s.terminate(ErrSessionTerminated)
		if err := h.connect(r.Context(), statelessConn{s}); err != nil {
			h.logger.Error("mcp http: connect failed", "err", err)
			writeJSONRPCError(w, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.CodeInternalError, "Internal Server Error")
			return
		}
		s.serveExchange(w, r, msg, msgs, requests, info, false)
		return
	}

	if init != nil && r.Header.Get(headerSessionID) == "" {
		if h.sessions.full(h.maxSessions) {
			writeJSONRPCError(w, http.StatusServiceUnavailable, init.ID, jsonrpc.CodeServerOverloaded, "Service Unavailable: too many sessions")
			return
		}
		s := h.newSession(newHTTPSessionID(), info.Principal, false, "")
		if err := h.connect(r.Context(), s); err != nil {
			h.logger.Error("mcp http: connect failed", "err", err)
			writeJSONRPCError(w, http.StatusInternalServerError, init.ID, jsonrpc.CodeInternalError, "Internal Server Error")
			return
		}
		if !s.serveExchange(w, r, msg, msgs, requests, info, true) {
			s.terminate(ErrSessionTerminated)
		}
		return
	}

	s := h.lookup(w, r)
	if s == nil {
		return
	}
	version := s.protocolVersion()
	if init == nil {
		v, ok := h.checkVersion(w, r)
		if !ok {
			return
		}
		if r.Header.Get(headerProtocolVersion) != "" {
			version = v
		}
	}
	if isBatch && version != batchVersion {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: batches are not allowed in protocol version "+version)
		return
	}
	if len(requests) == 0 {
		s.acquire()
		defer s.release()
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok {
				req.Extra = info
			}
		}
		if !s.deliver(msg) {
			writeJSONRPCError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Found: session closed")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.serveExchange(w, r, msg, msgs, requests, info, false)
}

func (h *StreamableHTTPHandler) serveGET(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header.Values("Accept"), "text/event-stream") {
		writeJSONRPCError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Not Acceptable: the client must accept text/event-stream")
		return
	}
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	if _, ok := h.checkVersion(w, r); !ok {
		return
	}
	s.acquire()
	defer s.release()
	if last := r.Header.Get(headerLastEventID); last != "" && h.opts.EventStore != nil {
		s.resume(w, r, last)
		return
	}
	st := s.standaloneStream()
	if !st.attach(w, nil) {
		http.Error(w, "Conflict: the session already has a GET stream", http.StatusConflict)
		return
	}
	st.wait(r.Context())
}

func (h *StreamableHTTPHandler) serveDELETE(w http.ResponseWriter, r *http.Request) {
	s := h.lookup(w, r)
	if s == nil {
		return
	}
	s.terminate(ErrSessionTerminated)
	w.WriteHeader(http.StatusNoContent)
}

func (h *StreamableHTTPHandler) register(s *httpSession) {
	h.sessions.add(s.id, s, 0) // MaxSessions was checked before initialize
}

func (h *StreamableHTTPHandler) forget(s *httpSession) {
	if s.id != "" {
		h.sessions.remove(s.id, s)
	}
}

// newHTTPSessionID returns a session ID from a cryptographically secure
// source: 128 random bits, base64url without padding.
func newHTTPSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand.Read panics rather than return an error)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
