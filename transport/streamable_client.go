//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Defaults of the StreamableClientTransport options.
const (
	defaultMaxRetries    = 5
	defaultMinRetryDelay = time.Second
	defaultMaxRetryDelay = 30 * time.Second
	defaultRetryFloor    = 100 * time.Millisecond
	// defaultAnsweredStreamGrace is the default of AnsweredStreamGrace.
	defaultAnsweredStreamGrace = 250 * time.Millisecond
	defaultCloseTimeout        = 5 * time.Second
)

// StreamableClientTransport is the client side of the Streamable HTTP
// transport of MCP revisions 2025-03-26 and later. The zero value of every
// field but URL is a sensible default. Connect may be called once per
// value.
//
// Each message written is POSTed to URL. The server answers a request
// with a JSON body or with a stream of server-sent events carrying the
// response and any requests and notifications that precede it; both arrive
// through Read, in order of arrival, together with the messages of the
// standalone stream, a GET the connection opens alongside the POST of
// notifications/initialized so the server can send messages unprompted
// (the Write of notifications/initialized returns once both are
// answered). Write returns when the POST's
// response headers arrive, so an HTTP error is reported by Write, and the
// messages of the body come later through Read. A stream answering a
// POST is read while requests it carried await their responses, then
// until it ends or for AnsweredStreamGrace at most; the body answering a
// POST that carried no request (a notification or a response, which the
// server should answer with 202) is not read.
//
// The server's Mcp-Session-Id, from the response to the initialize
// request, is sent on every later request, and so is the
// MCP-Protocol-Version header once the MCP client has told the connection
// the revision it negotiated.
//
// A stream that breaks before it delivered the responses it was opened
// for is resumed with a GET carrying Last-Event-ID, after the delay the
// server set with an SSE retry field or an exponential backoff with
// jitter. A stream that cannot be resumed (the server sent no event ids,
// refused the GET, or MaxRetries attempts in a row failed) ends its
// requests with an error response of code [jsonrpc.CodeConnectionClosed]
// made up by the transport, so callers do not wait forever. The
// standalone stream is reconnected in the same way; a 405 answer to its
// GET means the server offers none.
//
// A 404 answer to a request carrying a session id means the server ended
// the session. Unless ReinitializeOnSessionExpired is set, the connection
// then ends with a [*SessionExpiredError]: the Write that met it returns
// it, and so does Read (a [jsonrpc.Conn] using the connection ends with
// it), whether a POST or the standalone stream's GET found the session
// gone. When the first POST, an initialize
// request, is answered 400, 404 or 405, the connection falls back to the
// HTTP+SSE transport of revision 2024-11-05 at the same URL (see
// [SSEClientTransport]), unless DisableSSEFallback is set.
//
// Close cancels every stream and pending Write, sends a DELETE naming the
// session (bounded by CloseTimeout), and waits for the connection's
// goroutines to finish. The connection implements [SessionConn].
type StreamableClientTransport struct {
	// URL is the MCP endpoint. Required.
	URL string
	// HTTPClient sends the requests. Nil means a client made for this
	// transport, whose connection pool keeps up to 64 idle connections
	// to the server so that concurrent calls reuse them. Either way, a
	// redirect to another origin (scheme, host and port; an upgrade to
	// https on the same host is allowed) is refused, so the session id
	// and headers never reach another server.
	HTTPClient *http.Client
	// Header holds headers added to every request, such as an
	// Authorization header. The transport's own headers take precedence,
	// and Mcp-Session-Id, MCP-Protocol-Version and Last-Event-ID are only
	// ever set by the transport.
	Header http.Header
	// Authorizer, when set, authorizes the requests, such as an
	// *auth.Authorizer: it wraps the HTTP client's RoundTripper, and a
	// request the server refuses for want of a token or of a scope is
	// authorized and sent again. Its errors are wrapped in those of
	// Connect, Write and Read.
	Authorizer Authorizer
	// MaxRetries bounds the attempts in a row to reconnect a broken
	// stream. Zero means 5; negative means streams are not reconnected.
	MaxRetries int
	// MinRetryDelay is the first delay of the reconnection backoff; zero
	// means one second. The delay doubles with each attempt in a row that
	// brought no message (a failed GET, or a stream that ended without
	// delivering one), up to MaxRetryDelay (zero means 30 seconds), and
	// is randomised to between half and all of that. A delay set by the
	// server's retry field replaces MinRetryDelay: it is honoured as it is
	// for the first attempt and as a minimum after, within RetryFloor and
	// MaxRetryDelay.
	MinRetryDelay time.Duration
	// MaxRetryDelay caps the reconnection backoff; see MinRetryDelay.
	MaxRetryDelay time.Duration
	// RetryFloor is the least delay before any reconnection, whatever the
	// server's retry field asks, so that a server whose streams end at
	// once cannot make the client send GETs in a tight loop. Zero means
	// 100 milliseconds; negative means no floor.
	RetryFloor time.Duration
	// CloseTimeout bounds the DELETE that Close sends to end the session;
	// zero means five seconds.
	CloseTimeout time.Duration
	// AnsweredStreamGrace bounds how long the event stream answering a
	// POST is read once every request it carried has its response: the
	// server should end it then, and one that keeps it open must not hold
	// a goroutine and a connection of the client. Messages arriving
	// meanwhile are delivered. Zero means 250 milliseconds.
	AnsweredStreamGrace time.Duration
	// DisableStandaloneStream stops the connection from opening the GET
	// stream on which the server sends messages unprompted.
	DisableStandaloneStream bool
	// ReinitializeOnSessionExpired makes a Write that meets an expired
	// session start a new one transparently: the connection repeats the
	// initialize request and notifications/initialized it sent before,
	// adopts the new session id and retries the message once. The repeated
	// initialize's response is not delivered to Read. The session state
	// the client set is restored before the retry: the connection repeats
	// the last logging/setLevel request and the resources/subscribe
	// requests not undone by resources/unsubscribe, with ids of its own,
	// and does not deliver their responses. Other state the server kept
	// for the old session is lost.
	ReinitializeOnSessionExpired bool
	// DisableSSEFallback stops the connection from falling back to the
	// 2024-11-05 HTTP+SSE transport when the first POST fails.
	DisableSSEFallback bool
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. A larger message is skipped and Read returns
	// the error [IsMessageTooLarge] recognises. Negative values are
	// rejected by Connect.
	MaxMessageSize int

	connected atomic.Bool
}

// ErrSessionExpired is matched, with errors.Is, by a [*SessionExpiredError].
var ErrSessionExpired = errors.New("transport: session expired")

// SessionExpiredError reports that the server answered 404 to a request
// naming a session: it ended the session, and a new one must start with a
// new initialize request. errors.Is(err, ErrSessionExpired) holds for it.
type SessionExpiredError struct {
	// SessionID is the id of the session that expired.
	SessionID string
}

// Error implements error.
func (e *SessionExpiredError) Error() string {
	return "transport: session " + strconv.Quote(e.SessionID) + " expired (HTTP 404)"
}

// Is reports whether target is ErrSessionExpired.
func (e *SessionExpiredError) Is(target error) bool { return target == ErrSessionExpired }

// Connect checks the options and returns the connection. No request is
// sent until the first Write.
func (t *StreamableClientTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.URL == "" {
		return nil, errors.New("transport: StreamableClientTransport needs a URL")
	}
	limit, err := maxMessageSize(t.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}
	c := &streamableClientConn{
		url:              t.URL,
		maxRetries:       t.MaxRetries,
		minDelay:         t.MinRetryDelay,
		maxDelay:         t.MaxRetryDelay,
		floor:            t.RetryFloor,
		closeTimeout:     t.CloseTimeout,
		noStandalone:     t.DisableStandaloneStream,
		reinit:           t.ReinitializeOnSessionExpired,
		noFallback:       t.DisableSSEFallback,
		firstSem:         make(chan struct{}, 1),
		httpClientCore:   newHTTPClientCore(ctx, t.HTTPClient, t.Header, limit),
		standaloneStatus: standaloneIdle,
	}
	c.authorize(t.Authorizer)
	if !c.noStandalone {
		c.sctx, c.scancel = context.WithCancel(context.WithoutCancel(c.ctx))
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = defaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.minDelay <= 0 {
		c.minDelay = defaultMinRetryDelay
	}
	if c.maxDelay <= 0 {
		c.maxDelay = defaultMaxRetryDelay
	}
	switch {
	case c.floor == 0:
		c.floor = defaultRetryFloor
	case c.floor < 0:
		c.floor = 0
	}
	c.maxDelay = max(c.maxDelay, c.minDelay, c.floor)
	if c.closeTimeout <= 0 {
		c.closeTimeout = defaultCloseTimeout
	}
	if t.AnsweredStreamGrace > 0 {
		c.grace = t.AnsweredStreamGrace
	}
	return c, nil
}
