package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// HTTP header names used by the MCP HTTP transports. Go canonicalises
// header names, so these match the spellings the specification uses
// ("MCP-Session-Id", "MCP-Protocol-Version").
const (
	hcHeaderSessionID       = "Mcp-Session-Id"
	hcHeaderProtocolVersion = "Mcp-Protocol-Version"
	hcHeaderLastEventID     = "Last-Event-Id"
)

// Values of the transport's own request headers.
const (
	hcAcceptBoth = "application/json, text/event-stream"
	hcAcceptSSE  = "text/event-stream"
	hcJSONType   = "application/json"
)

// Defaults of the StreamableClientTransport options.
const (
	hcDefaultMaxRetries    = 5
	hcDefaultMinRetryDelay = time.Second
	hcDefaultMaxRetryDelay = 30 * time.Second
	hcDefaultCloseTimeout  = 5 * time.Second
	// hcErrorBodyLimit bounds the body kept in an HTTPStatusError.
	hcErrorBodyLimit = 512
	// hcDrainLimit bounds what is read from a body nobody needs, so its
	// connection can be reused.
	hcDrainLimit = 64 << 10
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
// messages of the body come later through Read.
//
// The server's Mcp-Session-Id, from the response to the initialize
// request, is sent on every later request, and so is the
// MCP-Protocol-Version header once the client has called
// SetProtocolVersion on the connection (see [ProtocolVersionSetter]).
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
// the session: Write returns a [*SessionExpiredError], unless
// ReinitializeOnSessionExpired is set. When the first POST, an initialize
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
	// to the server so that concurrent calls reuse them.
	HTTPClient *http.Client
	// Header holds headers added to every request, such as an
	// Authorization header. The transport's own headers take precedence,
	// and Mcp-Session-Id, MCP-Protocol-Version and Last-Event-ID are only
	// ever set by the transport.
	Header http.Header
	// MaxRetries bounds the attempts in a row to reconnect a broken
	// stream. Zero means 5; negative means streams are not reconnected.
	MaxRetries int
	// MinRetryDelay is the first delay of the reconnection backoff; zero
	// means one second. The delay doubles with each failed attempt, up to
	// MaxRetryDelay (zero means 30 seconds), and is randomised to between
	// half and all of that. A delay set by the server's retry field is
	// honoured as it is for the first attempt and as a minimum after.
	MinRetryDelay time.Duration
	// MaxRetryDelay caps the reconnection backoff; see MinRetryDelay.
	MaxRetryDelay time.Duration
	// CloseTimeout bounds the DELETE that Close sends to end the session;
	// zero means five seconds.
	CloseTimeout time.Duration
	// DisableStandaloneStream stops the connection from opening the GET
	// stream on which the server sends messages unprompted.
	DisableStandaloneStream bool
	// ReinitializeOnSessionExpired makes a Write that meets an expired
	// session start a new one transparently: the connection repeats the
	// initialize request and notifications/initialized it sent before,
	// adopts the new session id and retries the message once. The repeated
	// initialize's response is not delivered to Read. Any state the server
	// kept for the old session, such as subscriptions, is lost.
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

// ProtocolVersionSetter is implemented by connections of HTTP transports,
// which send the negotiated protocol revision in a header. An MCP client
// calls SetProtocolVersion after initialization, finding the method with a
// type assertion.
type ProtocolVersionSetter interface {
	// SetProtocolVersion sets the MCP-Protocol-Version header of later
	// requests. It is safe for concurrent use.
	SetProtocolVersion(v string)
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

// HTTPStatusError reports an HTTP response with an unexpected status.
type HTTPStatusError struct {
	// StatusCode is the response's status code, such as 500.
	StatusCode int
	// Status is the response's status line, such as "500 Internal Server
	// Error".
	Status string
	// Body holds the start of the response body, at most 512 bytes.
	Body string
}

// Error implements error.
func (e *HTTPStatusError) Error() string {
	s := "transport: HTTP " + e.Status
	if e.Status == "" {
		s = "transport: HTTP " + strconv.Itoa(e.StatusCode)
	}
	if e.Body != "" {
		s += ": " + strconv.Quote(e.Body)
	}
	return s
}

type hcHeaderKey struct{}

// WithHTTPHeader returns a context that makes the HTTP client transports
// add h to the request that a Write with that context sends (and to the
// GET requests resuming its response stream). Headers from an enclosing
// WithHTTPHeader are kept unless h sets the same name. They take
// precedence over the transport's static Header, and the transport's own
// protocol headers take precedence over them.
func WithHTTPHeader(ctx context.Context, h http.Header) context.Context {
	merged := h.Clone()
	if outer, ok := ctx.Value(hcHeaderKey{}).(http.Header); ok {
		if merged == nil {
			merged = http.Header{}
		}
		for k, v := range outer {
			if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
	}
	return context.WithValue(ctx, hcHeaderKey{}, merged)
}

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
		closeTimeout:     t.CloseTimeout,
		noStandalone:     t.DisableStandaloneStream,
		reinit:           t.ReinitializeOnSessionExpired,
		noFallback:       t.DisableSSEFallback,
		firstSem:         make(chan struct{}, 1),
		reinitSem:        make(chan struct{}, 1),
		hcCore:           newHCCore(ctx, t.HTTPClient, t.Header, limit),
		standaloneStatus: hcStandaloneIdle,
	}
	c.sctx, c.scancel = context.WithCancel(context.WithoutCancel(c.ctx))
	switch {
	case c.maxRetries == 0:
		c.maxRetries = hcDefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.minDelay <= 0 {
		c.minDelay = hcDefaultMinRetryDelay
	}
	if c.maxDelay <= 0 {
		c.maxDelay = hcDefaultMaxRetryDelay
	}
	c.maxDelay = max(c.maxDelay, c.minDelay)
	if c.closeTimeout <= 0 {
		c.closeTimeout = hcDefaultCloseTimeout
	}
	return c, nil
}

// hcNewHTTPClient returns the client a transport uses when given none:
// the usual defaults, with an idle pool large enough for many concurrent
// calls to one server.
func hcNewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// hcInbound is one result for Read.
type hcInbound struct {
	m   jsonrpc.Message
	err error
}

// hcCore is what the HTTP client connections share: the queue Read takes
// messages from, the lifetime Close ends, and the goroutines reading
// response bodies.
type hcCore struct {
	client    *http.Client
	ownClient bool
	// stdRT is set when the client's RoundTripper is an *http.Transport,
	// which stops reading a response body when the request's context
	// ends (see closeOnDone).
	stdRT  bool
	header http.Header
	limit  int // largest incoming message

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	in     chan hcInbound
	done   chan struct{} // closed at Close

	mu     sync.Mutex // guards closed against wg.Add racing with Close
	closed bool
	wg     sync.WaitGroup

	readErr error // the error that ended the stream; Read's goroutine only

	// Once Push is called, messages are pushed to receive instead of
	// queued for Read (see [jsonrpc.PushStream]): a response read on the
	// goroutine that POSTed the request then reaches its caller with no
	// other goroutine involved.
	pushMu  sync.Mutex // serialises receive calls
	receive func(jsonrpc.Message)
	end     func(error)
	ended   bool // end was called
}

// hcInboxSize is how many incoming messages wait for Read before the
// streams delivering them block. A connection used by a [jsonrpc.Conn]
// pushes its messages instead (see Push) and queues only those that
// arrive before Push is called.
const hcInboxSize = 16

func newHCCore(ctx context.Context, client *http.Client, header http.Header, limit int) *hcCore {
	c := &hcCore{
		client: client,
		header: header.Clone(),
		limit:  limit,
		in:     make(chan hcInbound, hcInboxSize),
		done:   make(chan struct{}),
	}
	if c.client == nil {
		c.client, c.ownClient = hcNewHTTPClient(), true
	}
	switch c.client.Transport.(type) {
	case nil, *http.Transport:
		c.stdRT = true
	}
	// The connection outlives Connect's context but keeps its values.
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return c
}

// isClosed reports whether Close has been called.
func (c *hcCore) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// closedOr returns ErrClosed in place of err once the connection is
// closed, since Close is then what made the operation fail.
func (c *hcCore) closedOr(err error) error {
	if err != nil && c.isClosed() {
		return ErrClosed
	}
	return err
}

// goStream runs f in a goroutine that Close waits for. It reports false,
// without running f, once the connection is closed.
func (c *hcCore) goStream(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// shutdown marks the connection closed and cancels everything under way.
// It reports false if it was already closed.
func (c *hcCore) shutdown() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.closed = true
	close(c.done)
	c.mu.Unlock()
	c.cancel()
	return true
}

// wait waits for the connection's goroutines and releases the idle
// connections of a client the transport made.
func (c *hcCore) wait() {
	c.wg.Wait()
	if c.ownClient {
		c.client.CloseIdleConnections()
	}
}

// link returns a context with ctx's values that ends when ctx or the
// connection ends, and the function releasing it.
func (c *hcCore) link(ctx context.Context) (context.Context, func()) {
	lctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return lctx, func() {
		stop()
		cancel()
	}
}

// Push implements [jsonrpc.PushStream]. Messages that arrived before it
// was called are pushed first.
func (c *hcCore) Push(receive func(jsonrpc.Message), end func(error)) {
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	c.receive, c.end = receive, end
	for {
		select {
		case in := <-c.in:
			c.pushLocked(in.m, in.err)
		default:
			return
		}
	}
}

// pushLocked passes one result to receive, or to end when it is an error
// that ends the stream. c.pushMu is held.
func (c *hcCore) pushLocked(m jsonrpc.Message, err error) {
	if c.ended {
		return
	}
	if err != nil {
		var de *jsonrpc.DecodeError
		if !errors.As(err, &de) {
			c.ended = true
			// end closes the connection, which waits for the goroutine
			// that is delivering: end must run on another.
			go c.end(err)
			return
		}
		m = de
	}
	if _, ok := m.(*jsonrpc.DecodeError); ok {
		// The connection answers it with a Write, which must not run
		// under pushMu: its own answer could be delivered inline.
		receive := c.receive
		c.goStream(func() { receive(m) })
		return
	}
	c.receive(m)
}

// deliver passes a result to the connection: pushed, or queued for Read.
// It reports false if the connection closed first.
func (c *hcCore) deliver(m jsonrpc.Message, err error) bool {
	c.pushMu.Lock()
	if c.receive != nil {
		defer c.pushMu.Unlock()
		if c.isClosed() {
			return false
		}
		c.pushLocked(m, err)
		return true
	}
	c.pushMu.Unlock()
	select {
	case c.in <- hcInbound{m, err}:
		return true
	case <-c.done:
		return false
	}
}

// read implements Conn.Read.
func (c *hcCore) read(ctx context.Context) (jsonrpc.Message, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case in := <-c.in:
		var de *jsonrpc.DecodeError
		if in.err != nil && !errors.As(in.err, &de) {
			c.readErr = in.err
		}
		return in.m, in.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, ErrClosed
	}
}

// newRequest returns a request with the static headers, those from
// WithHTTPHeader in ctx, and the transport's own, given as pairs of a
// canonical name and a value (an empty value leaves the header out),
// which take precedence. Session, protocol version and Last-Event-ID
// headers come from own only.
func (c *hcCore) newRequest(ctx context.Context, method, url string, body []byte, own ...string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	h := req.Header
	hcAddHeader(h, c.header)
	if uh, ok := ctx.Value(hcHeaderKey{}).(http.Header); ok {
		hcAddHeader(h, uh)
	}
	if len(h) > 0 {
		// These are the transport's to set, or to leave out.
		for _, k := range [...]string{hcHeaderSessionID, hcHeaderProtocolVersion, hcHeaderLastEventID} {
			h.Del(k)
		}
	}
	setHeaderValues(h, own...)
	return req, nil
}

// hcAddHeader sets in dst every header of src, replacing values of the
// same name.
func hcAddHeader(dst, src http.Header) {
	for k, vs := range src {
		dst.Del(k)
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// hcStreamState follows one logical event stream across reconnections.
type hcStreamState struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
	// standalone marks the GET stream; the others answer a POST.
	standalone bool
	// opened, if not nil, is closed once the stream's first GET has been
	// answered or has failed.
	opened chan struct{}
	// pending holds the requests whose responses the stream should
	// carry; one is the storage of a lone request's ID.
	pending []jsonrpc.ID
	one     [1]jsonrpc.ID
}

// expect records the requests in m as those whose responses the stream
// should carry.
func (s *hcStreamState) expect(m jsonrpc.Message) {
	s.pending = s.one[:0]
	add := func(m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && !r.IsNotification() && !slices.Contains(s.pending, r.ID) {
			s.pending = append(s.pending, r.ID)
		}
	}
	if b, ok := m.(jsonrpc.Batch); ok {
		for _, e := range b {
			add(e)
		}
	} else {
		add(m)
	}
}

// answered removes from pending the requests that m responds to.
func (s *hcStreamState) answered(m jsonrpc.Message) {
	if len(s.pending) == 0 {
		return
	}
	remove := func(id jsonrpc.ID) {
		if i := slices.Index(s.pending, id); i >= 0 {
			s.pending = slices.Delete(s.pending, i, i+1)
		}
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		remove(m.ID)
	case jsonrpc.Batch:
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Response); ok {
				remove(r.ID)
			}
		}
	}
}

// hcEventLimit is the event size limit for messages of at most limit
// bytes: room for the field names and line breaks around them.
func hcEventLimit(limit int) int {
	const room = 4096
	if limit > (math.MaxInt-room)/9*8 {
		return math.MaxInt // no overflow, on 32-bit platforms too
	}
	return limit + limit/8 + room
}

// readEvents reads events from body until it ends, fails, or ctx ends,
// delivering messages to Read and recording in st the resumption point.
// Events other than messages go to other, if set, which returns false to
// stop reading. It closes body and reports whether any event arrived.
func (c *hcCore) readEvents(ctx context.Context, body io.ReadCloser, st *hcStreamState, other func(sse.Event) bool) (progress bool, err error) {
	defer c.closeOnDone(ctx, body)()
	r := sse.NewReader(body, hcEventLimit(c.limit))
	lastID := ""
	for {
		ev, err := r.Next()
		switch {
		case err == nil:
		case errors.Is(err, sse.ErrEventTooLarge):
			if !c.deliver(nil, tooLargeError(c.limit)) {
				return progress, ErrClosed
			}
		default:
			return progress, err
		}
		progress = true
		if id := r.LastEventID(); id != lastID {
			lastID, st.lastID = id, id
		}
		if d, ok := r.Retry(); ok {
			st.retry, st.hasRetry = d, true
		}
		if err != nil {
			continue
		}
		if ev.Name != "" && ev.Name != "message" {
			if other != nil && !other(ev) {
				return progress, nil
			}
			continue
		}
		if len(ev.Data) == 0 {
			continue // a priming event: only its id matters
		}
		if !c.deliverData(ev.Data, st) {
			return progress, ErrClosed
		}
	}
}

// deliverData decodes one message from data, which it takes over, and
// queues it for Read.
func (c *hcCore) deliverData(data []byte, st *hcStreamState) bool {
	if len(data) > c.limit {
		return c.deliver(nil, tooLargeError(c.limit))
	}
	m, err := jsonrpc.DecodeOwnedMessage(data) // data is ours alone
	if err != nil {
		return c.deliver(nil, err)
	}
	if st != nil {
		st.answered(m)
	}
	return c.deliver(m, nil)
}

// failPending ends the requests still waiting in st with error responses,
// unless ctx ended (the caller gave up on them) or the connection closed.
func (c *hcCore) failPending(ctx context.Context, st *hcStreamState, why string) {
	if ctx.Err() != nil {
		return
	}
	for _, id := range st.pending {
		resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
			Code:    jsonrpc.CodeConnectionClosed,
			Message: "transport: " + why,
		}}
		if !c.deliver(resp, nil) {
			return
		}
	}
	st.pending = st.pending[:0]
}

// readJSON reads a JSON response body, obtained with ctx, and delivers
// its message.
func (c *hcCore) readJSON(ctx context.Context, body io.ReadCloser, size int64, st *hcStreamState) {
	release := c.closeOnDone(ctx, body)
	data, err := readSized(&io.LimitedReader{R: body, N: int64(c.limit) + 1}, size, int64(c.limit))
	release()
	switch {
	case err != nil:
		c.failPending(ctx, st, "reading the response: "+err.Error())
		return
	case len(data) > c.limit:
		if !c.deliver(nil, tooLargeError(c.limit)) {
			return
		}
	case len(hcTrimSpace(data)) > 0:
		if !c.deliverData(data, st) {
			return
		}
	}
	c.failPending(ctx, st, "the server's response did not answer the request")
}

// closeOnDone makes sure that a read of body, the body of a response to
// a request made with ctx, stops when ctx ends, even mid-event, and
// returns the function that closes body once it is read. An
// *http.Transport stops the read itself; for other RoundTrippers body is
// closed when ctx ends, and the function returned also waits for that
// close, so no goroutine is left behind.
func (c *hcCore) closeOnDone(ctx context.Context, body io.Closer) func() {
	if c.stdRT {
		return func() { body.Close() }
	}
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		body.Close()
		close(closed)
	})
	return func() {
		if !stop() {
			<-closed
		}
		body.Close()
	}
}

// hcTrimSpace returns b without leading and trailing JSON whitespace.
func hcTrimSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// hcStatusError reads the start of resp's body into an HTTPStatusError and
// closes the body.
func hcStatusError(resp *http.Response) *HTTPStatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, hcErrorBodyLimit))
	resp.Body.Close()
	return &HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status, Body: string(body)}
}

// hcDrainClose reads a little of body, so its connection can be reused
// when the body was short, and closes it.
func hcDrainClose(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, hcDrainLimit))
	body.Close()
}

// hcMediaType returns the media type of a Content-Type header, lower case.
func hcMediaType(contentType string) string {
	switch contentType {
	case "application/json", "text/event-stream":
		return contentType // the common cases, without parsing
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}

// hcIsSuccess reports whether status is 2xx.
func hcIsSuccess(status int) bool { return status >= 200 && status <= 299 }

// hcSleep waits for d or until ctx ends, and reports whether ctx is still
// live.
func hcSleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// hcAwait waits until ch is closed, ctx ends or d has passed.
func hcAwait(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
	}
}

// Standalone stream states.
const (
	hcStandaloneIdle        = iota // not running
	hcStandaloneRunning            // the goroutine runs
	hcStandaloneUnsupported        // the server answered 405
)

// streamableClientConn is the connection of a StreamableClientTransport.
type streamableClientConn struct {
	*hcCore
	url          string
	maxRetries   int
	minDelay     time.Duration
	maxDelay     time.Duration
	closeTimeout time.Duration
	noStandalone bool
	reinit       bool
	noFallback   bool

	// firstSem serialises Writes until the first POST decided between
	// Streamable HTTP and the legacy fallback.
	firstSem chan struct{}
	decided  atomic.Bool
	legacy   atomic.Pointer[hcLegacy]

	reinitSem chan struct{} // one reinitialization at a time

	mu               sync.Mutex
	sessionID        string
	protocolVersion  string
	initReq          *jsonrpc.Request // the last initialize request written
	initNote         *jsonrpc.Request // the last notifications/initialized written
	initialized      bool             // notifications/initialized was written
	standaloneStatus int
	standaloneGen    int           // tells the running standalone goroutine from an older one
	standaloneDone   chan struct{} // closed when the running standalone goroutine ends

	// The standalone stream outlives the connection's context a little:
	// Close ends it after the DELETE, which lets the server end the GET
	// cleanly and its connection go back to the pool instead of being
	// torn down (see Close).
	sctx    context.Context
	scancel context.CancelFunc

	// testHookStandaloneExit, if set, is called when a standalone stream
	// goroutine ends.
	testHookStandaloneExit func()
}

// SessionID returns the session id the server assigned, or "" before it
// assigned one or when it uses none. Unlike most SessionConns, the value
// changes: from "" to the server's id once initialize is answered, and to
// a new id when the connection reinitializes an expired session.
func (c *streamableClientConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SetProtocolVersion makes later requests carry the MCP-Protocol-Version
// header with v. An empty v removes the header.
func (c *streamableClientConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	c.protocolVersion = v
	c.mu.Unlock()
}

func (c *streamableClientConn) version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protocolVersion
}

// Read returns the next message from any of the connection's streams.
func (c *streamableClientConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return c.read(ctx)
}

// Write POSTs m; see StreamableClientTransport.
func (c *streamableClientConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if c.isClosed() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := wireEquivalent(m); err != nil {
		return err
	}
	body, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	if !c.decided.Load() {
		select {
		case c.firstSem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return ErrClosed
		}
		if !c.decided.Load() {
			err := c.write(ctx, m, body, true)
			<-c.firstSem
			return c.closedOr(err)
		}
		<-c.firstSem
	}
	if l := c.legacy.Load(); l != nil {
		return c.closedOr(l.post(ctx, body))
	}
	return c.closedOr(c.write(ctx, m, body, false))
}

// hcIsInitialize reports whether m is an initialize request.
func hcIsInitialize(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	return ok && r.Method == "initialize" && !r.IsNotification()
}

// hcIsInitialized reports whether m is notifications/initialized.
func hcIsInitialized(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	return ok && r.Method == "notifications/initialized" && r.IsNotification()
}

// write POSTs one message and handles the answer. first marks the
// connection's first POST, which may fall back to the legacy transport.
func (c *streamableClientConn) write(ctx context.Context, m jsonrpc.Message, body []byte, first bool) error {
	isInit := hcIsInitialize(m)
	c.mu.Lock()
	switch {
	case isInit:
		c.initReq = m.(*jsonrpc.Request)
	case hcIsInitialized(m):
		c.initNote = m.(*jsonrpc.Request)
	}
	sid := ""
	if !isInit {
		sid = c.sessionID // a new initialize starts a new session
	}
	c.mu.Unlock()

	var opened <-chan struct{}
	if hcIsInitialized(m) {
		// The standalone stream's GET goes out alongside this POST.
		c.mu.Lock()
		c.initialized = true
		c.mu.Unlock()
		opened = c.startStandalone()
	}

	rctx, release := c.link(ctx)
	owned := false // a goroutine took over rctx
	defer func() {
		if !owned {
			release()
		}
	}()
	resp, err := c.post(rctx, body, sid, !isInit)
	if err != nil {
		return err
	}
	if opened != nil {
		// Wait for the GET to be answered too, so that a server request
		// sent on the standalone stream in answer to the client's next
		// request (a sampling request from a tool, say) is not sent
		// before the stream exists, and lost.
		hcAwait(rctx, opened, hcStandaloneOpenWait)
	}
	if first {
		c.decided.Store(true)
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			if isInit && !c.noFallback {
				statusErr := hcStatusError(resp)
				if err := c.fallback(ctx, body); err != nil {
					return fmt.Errorf("%w; falling back to the HTTP+SSE transport: %w", statusErr, err)
				}
				return nil
			}
		}
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		hcDrainClose(resp.Body)
		expired := &SessionExpiredError{SessionID: sid}
		if !c.reinit {
			return expired
		}
		if err := c.reinitialize(rctx, sid); err != nil {
			return fmt.Errorf("%w; reinitializing: %w", expired, err)
		}
		sid = c.SessionID()
		if resp, err = c.post(rctx, body, sid, true); err != nil {
			return err
		}
		if resp.StatusCode == http.StatusNotFound && sid != "" {
			hcDrainClose(resp.Body)
			return &SessionExpiredError{SessionID: sid}
		}
	}
	owned, err = c.handle(rctx, release, m, resp, isInit)
	return err
}

// post sends body to the endpoint with the protocol's headers.
func (c *streamableClientConn) post(ctx context.Context, body []byte, sid string, withVersion bool) (*http.Response, error) {
	v := ""
	if withVersion {
		v = c.version()
	}
	req, err := c.newRequest(ctx, http.MethodPost, c.url, body,
		"Content-Type", hcJSONType, "Accept", hcAcceptBoth, hcHeaderSessionID, sid, hcHeaderProtocolVersion, v)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("transport: POST: %w", err)
	}
	return resp, nil
}

// handle deals with the response to a POST of m. It reports whether it
// started a goroutine reading the body, which then owns ctx and release.
func (c *streamableClientConn) handle(ctx context.Context, release func(), m jsonrpc.Message, resp *http.Response, isInit bool) (bool, error) {
	if !hcIsSuccess(resp.StatusCode) {
		return false, hcStatusError(resp)
	}
	if isInit {
		c.mu.Lock()
		c.sessionID = resp.Header.Get(hcHeaderSessionID)
		c.mu.Unlock()
	}
	st := &hcStreamState{}
	st.expect(m)
	ct := resp.Header.Get("Content-Type")
	var run func()
	switch mt := hcMediaType(ct); {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0:
		hcDrainClose(resp.Body)
		if len(st.pending) > 0 {
			return false, fmt.Errorf("transport: the server answered a request with %q and no body", resp.Status)
		}
		return false, nil
	case mt == "text/event-stream":
		run = func() { c.follow(ctx, resp.Body, st) }
	case mt == "application/json":
		// A JSON body is read here, on the writer's goroutine: the answer
		// is complete once its headers are in, as it is not a stream.
		c.readJSON(ctx, resp.Body, resp.ContentLength, st)
		return false, nil
	default:
		hcDrainClose(resp.Body)
		if len(st.pending) > 0 {
			return false, fmt.Errorf("transport: unexpected response content type %q", ct)
		}
		return false, nil
	}
	if !c.goStream(func() {
		defer release()
		run()
	}) {
		resp.Body.Close()
		return false, ErrClosed
	}
	return true, nil
}

// retryDelay returns how long to wait before reconnecting a stream after
// failures failed attempts in a row.
func (c *streamableClientConn) retryDelay(st *hcStreamState, failures int) time.Duration {
	if st.hasRetry && failures == 0 {
		return st.retry
	}
	d := c.maxDelay
	if failures < 30 {
		d = min(c.minDelay<<failures, c.maxDelay)
		if d <= 0 { // overflow
			d = c.maxDelay
		}
	}
	d = d/2 + rand.N(d/2+1)
	if st.hasRetry {
		d = max(d, st.retry)
	}
	return d
}

// errServerHasNoStream is the 405 answer to a GET: the server offers no stream.
var errServerHasNoStream = errors.New("transport: the server offers no SSE stream (HTTP 405)")

// get opens an event stream with a GET, resuming after lastID if set.
func (c *streamableClientConn) get(ctx context.Context, lastID string) (io.ReadCloser, string, error) {
	c.mu.Lock()
	sid, v := c.sessionID, c.protocolVersion
	c.mu.Unlock()
	req, err := c.newRequest(ctx, http.MethodGet, c.url, nil,
		"Accept", hcAcceptSSE, hcHeaderSessionID, sid, hcHeaderProtocolVersion, v, hcHeaderLastEventID, lastID)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, sid, fmt.Errorf("transport: GET: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		hcDrainClose(resp.Body)
		return nil, sid, errServerHasNoStream
	case resp.StatusCode == http.StatusNotFound && sid != "":
		hcDrainClose(resp.Body)
		return nil, sid, &SessionExpiredError{SessionID: sid}
	case !hcIsSuccess(resp.StatusCode):
		return nil, sid, hcStatusError(resp)
	case hcMediaType(resp.Header.Get("Content-Type")) != "text/event-stream":
		hcDrainClose(resp.Body)
		return nil, sid, fmt.Errorf("transport: GET: unexpected content type %q", resp.Header.Get("Content-Type"))
	}
	return resp.Body, sid, nil
}

// follow reads an event stream and, when it breaks, reconnects it with a
// GET carrying Last-Event-ID, until it is no longer needed or cannot be
// resumed. A POST's stream is needed until the requests it carried are
// answered; the standalone stream (body nil to start with a GET) until
// Close. MaxRetries failed GETs in a row end it; a GET
// that opens a stream is a success even if the stream then ends at once,
// as servers polling their clients do.
func (c *streamableClientConn) follow(ctx context.Context, body io.ReadCloser, st *hcStreamState) {
	defer st.markOpened()
	standalone := st.standalone
	failures := 0          // failed GETs in a row
	budget := c.maxRetries // failures allowed
	if body == nil {
		budget++ // the first GET is a connection, not a reconnection
	}
	for {
		if body != nil {
			budget = c.maxRetries
			_, err := c.readEvents(ctx, body, st, nil)
			body = nil
			if ctx.Err() != nil || errors.Is(err, ErrClosed) || c.isClosed() {
				return
			}
			if !standalone && len(st.pending) == 0 {
				return // the server ended the stream after responding
			}
			if !standalone && st.lastID == "" {
				c.failPending(ctx, st, "the response stream ended before the response and cannot be resumed")
				return
			}
			if failures >= budget {
				c.failPending(ctx, st, "the response stream ended and reconnecting is disabled")
				return
			}
			if !hcSleep(ctx, c.retryDelay(st, failures)) {
				return
			}
		}
		rbody, sid, err := c.get(ctx, st.lastID)
		st.markOpened()
		switch {
		case err == nil:
			body = rbody
			failures = 0
			continue
		case errors.Is(err, errServerHasNoStream):
			// A definite answer, even if ctx ended meanwhile.
			if standalone {
				c.mu.Lock()
				c.standaloneStatus = hcStandaloneUnsupported
				c.mu.Unlock()
			} else {
				c.failPending(ctx, st, "the response stream ended and the server does not resume streams")
			}
			return
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrSessionExpired):
			if standalone {
				if c.endStandalone(sid) {
					return
				}
				continue // the session was renewed: use the new one
			}
			c.failPending(ctx, st, err.Error())
			return
		}
		failures++
		if failures >= budget {
			if !standalone {
				c.failPending(ctx, st, "the response stream could not be resumed: "+err.Error())
			}
			return
		}
		if !hcSleep(ctx, c.retryDelay(st, failures)) {
			return
		}
	}
}

// hcStandaloneCloseGrace bounds how long Close waits, after the DELETE,
// for the server to end the standalone stream.
const hcStandaloneCloseGrace = 250 * time.Millisecond

// hcStandaloneOpenWait bounds how long the write of
// notifications/initialized waits for the standalone stream to open.
const hcStandaloneOpenWait = 10 * time.Second

// markOpened closes st.opened once.
func (st *hcStreamState) markOpened() {
	if st.opened != nil {
		close(st.opened)
		st.opened = nil
	}
}

// startStandalone starts the standalone stream, unless it is disabled,
// running, unsupported, or the session is not initialized yet. When it
// starts it, it returns a channel closed once the stream's first GET has
// been answered (or failed).
func (c *streamableClientConn) startStandalone() <-chan struct{} {
	if c.noStandalone {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initialized || c.standaloneStatus != hcStandaloneIdle {
		return nil
	}
	c.standaloneGen++
	gen := c.standaloneGen
	opened := make(chan struct{})
	done := make(chan struct{})
	started := c.goStream(func() {
		defer close(done)
		c.follow(c.sctx, nil, &hcStreamState{standalone: true, opened: opened})
		c.mu.Lock()
		if c.standaloneGen == gen && c.standaloneStatus == hcStandaloneRunning {
			c.standaloneStatus = hcStandaloneIdle
		}
		c.mu.Unlock()
		if c.testHookStandaloneExit != nil {
			c.testHookStandaloneExit()
		}
	})
	if !started {
		return nil
	}
	c.standaloneStatus = hcStandaloneRunning
	c.standaloneDone = done
	return opened
}

// endStandalone decides whether the standalone stream ends after its GET
// with session sid met an expired session: it does, unless the session
// was renewed meanwhile.
func (c *streamableClientConn) endStandalone(sid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != sid {
		return false
	}
	c.standaloneStatus = hcStandaloneIdle
	c.standaloneGen++ // a stream started from now on is not this one
	return true
}

// reinitialize starts a new session in place of the expired one, by
// repeating the initialize request and notifications/initialized.
func (c *streamableClientConn) reinitialize(ctx context.Context, expired string) error {
	select {
	case c.reinitSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.reinitSem }()
	c.mu.Lock()
	sid, init, note := c.sessionID, c.initReq, c.initNote
	c.mu.Unlock()
	if sid != expired {
		return nil // another Write already renewed the session
	}
	if init == nil {
		return errors.New("transport: no initialize request to repeat")
	}
	body, err := jsonrpc.EncodeMessage(init)
	if err != nil {
		return err
	}
	resp, err := c.post(ctx, body, "", false)
	if err != nil {
		return err
	}
	if !hcIsSuccess(resp.StatusCode) {
		return hcStatusError(resp)
	}
	newSID := resp.Header.Get(hcHeaderSessionID)
	if err := c.awaitResponse(ctx, resp, init.ID); err != nil {
		return err
	}
	c.mu.Lock()
	c.sessionID = newSID
	c.mu.Unlock()
	if note != nil {
		body, err := jsonrpc.EncodeMessage(note)
		if err != nil {
			return err
		}
		resp, err := c.post(ctx, body, newSID, true)
		if err != nil {
			return err
		}
		if !hcIsSuccess(resp.StatusCode) {
			return hcStatusError(resp)
		}
		hcDrainClose(resp.Body)
	}
	c.startStandalone()
	return nil
}

// awaitResponse reads the body of the repeated initialize request's POST
// until the response to id, which it swallows: the client saw the first
// one. Other messages go to Read.
func (c *streamableClientConn) awaitResponse(ctx context.Context, resp *http.Response, id jsonrpc.ID) error {
	var found *jsonrpc.Response
	check := func(m jsonrpc.Message) bool {
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == id {
			found = r
			return true
		}
		return false
	}
	switch ct := resp.Header.Get("Content-Type"); hcMediaType(ct) {
	case "application/json":
		data, err := readSized(io.LimitReader(resp.Body, int64(c.limit)+1), resp.ContentLength, int64(c.limit))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("transport: reading the initialize response: %w", err)
		}
		if len(data) > c.limit {
			return errors.New("transport: the initialize response is too large")
		}
		m, err := jsonrpc.DecodeOwnedMessage(data) // data is ours alone
		if err != nil {
			return fmt.Errorf("transport: the initialize response: %w", err)
		}
		check(m)
	case "text/event-stream":
		body := resp.Body
		defer c.closeOnDone(ctx, body)()
		r := sse.NewReader(body, hcEventLimit(c.limit))
		for found == nil {
			ev, err := r.Next()
			if errors.Is(err, sse.ErrEventTooLarge) {
				continue
			}
			if err != nil {
				return fmt.Errorf("transport: reading the initialize response: %w", err)
			}
			if (ev.Name != "" && ev.Name != "message") || len(ev.Data) == 0 {
				continue
			}
			m, err := jsonrpc.DecodeOwnedMessage(ev.Data) // the reader returns a copy
			if err == nil && !check(m) {
				c.deliver(m, nil)
			}
		}
	default:
		hcDrainClose(resp.Body)
		return fmt.Errorf("transport: unexpected content type %q for the initialize response", ct)
	}
	switch {
	case found == nil:
		return errors.New("transport: the server did not answer the initialize request")
	case found.Error != nil:
		return fmt.Errorf("transport: initialize: %w", found.Error)
	}
	return nil
}

// fallback switches the connection to the 2024-11-05 HTTP+SSE transport
// at the same URL and sends it the initialize request in body.
func (c *streamableClientConn) fallback(ctx context.Context, body []byte) error {
	l, err := dialLegacy(ctx, c.hcCore, c.url)
	if err != nil {
		return err
	}
	c.legacy.Store(l)
	return l.post(ctx, body)
}

// Close ends the connection: it cancels pending Writes and the streams
// answering them, ends the session with a DELETE bounded by CloseTimeout
// (a 405 answer or a failure is ignored), then ends the standalone stream
// and waits for the connection's goroutines. After a successful DELETE it
// first gives the server a moment (hcStandaloneCloseGrace, within
// CloseTimeout) to end the standalone stream itself, as a server ending
// the session does, so that the stream's connection can be reused rather
// than torn down. It always returns nil.
func (c *streamableClientConn) Close() error {
	if !c.shutdown() {
		return nil
	}
	if sid := c.SessionID(); sid != "" && c.legacy.Load() == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), c.closeTimeout)
		if req, err := c.newRequest(ctx, http.MethodDelete, c.url, nil,
			hcHeaderSessionID, sid, hcHeaderProtocolVersion, c.version()); err == nil {
			if resp, err := c.client.Do(req); err == nil {
				hcDrainClose(resp.Body)
				c.mu.Lock()
				done := c.standaloneDone
				c.mu.Unlock()
				if done != nil && hcIsSuccess(resp.StatusCode) {
					hcAwait(ctx, done, hcStandaloneCloseGrace)
				}
			}
		}
		cancel()
	}
	c.scancel()
	c.wait()
	return nil
}
