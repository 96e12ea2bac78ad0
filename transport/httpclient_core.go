//go:build !mcpkit_nohttp

package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// This file holds what the two HTTP client transports share
// (StreamableClientTransport and SSEClientTransport): the core of a
// client connection (httpClientCore), which queues or pushes incoming
// messages, owns the goroutines reading response bodies and ends them at
// Close; the reading of SSE and JSON response bodies; and the helpers for
// requests and responses.

// The MCP header names are those of the server (headerSessionID and the
// others, in streamable_server.go): one name per header for both sides.

// Values of the transport's own request headers.
const (
	acceptJSONOrSSE = "application/json, text/event-stream"
	acceptSSE       = "text/event-stream"
	contentTypeJSON = "application/json"
)

// Bounds on what the HTTP clients read of bodies they do not need.
const (
	// statusErrorBodyLimit bounds the body kept in an HTTPStatusError.
	statusErrorBodyLimit = 512
	// drainLimit bounds what is read from a body nobody needs, so its
	// connection can be reused.
	drainLimit = 64 << 10
)

// HTTPStatusError reports an HTTP response with an unexpected status.
type HTTPStatusError struct {
	// StatusCode is the response's status code, such as 500.
	StatusCode int
	// Status is the response's status line, such as "500 Internal Server
	// Error".
	Status string
	// Body holds the start of the response body, at most 512 bytes; it is
	// empty when the server announced no body length.
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

type httpHeaderKey struct{}

// WithHTTPHeader returns a context that makes the HTTP client transports
// add h to the request that a Write with that context sends (and to the
// GET requests resuming its response stream). Headers from an enclosing
// WithHTTPHeader are kept unless h sets the same name. They take
// precedence over the transport's static Header, and the transport's own
// protocol headers take precedence over them.
func WithHTTPHeader(ctx context.Context, h http.Header) context.Context {
	merged := h.Clone()
	if outer, ok := ctx.Value(httpHeaderKey{}).(http.Header); ok {
		if merged == nil {
			merged = http.Header{}
		}
		for k, v := range outer {
			if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
	}
	return context.WithValue(ctx, httpHeaderKey{}, merged)
}

// newDefaultHTTPClient returns the client a transport uses when given none:
// the usual defaults, with an idle pool large enough for many concurrent
// calls to one server.
func newDefaultHTTPClient() *http.Client {
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

// httpClientCore is what the HTTP client connections share: the queue Read takes
// messages from, the lifetime Close ends, and the goroutines reading
// response bodies.
type httpClientCore struct {
	client    *http.Client
	ownClient bool
	// stdRT is set when the client's RoundTripper is an *http.Transport,
	// which stops reading a response body when the request's context
	// ends (see closeOnDone).
	stdRT bool
	// direct, when not nil, is the client's RoundTripper, which do calls
	// itself: the client has no cookie jar and no timeout (see do).
	direct http.RoundTripper
	header http.Header
	limit  int // largest incoming message
	// memo is the result._meta of the responses decoded (a server of
	// 2026-07-28 sends the same with every result; see jsonscan.Memo).
	memo jsonscan.Memo
	// grace is how long a POST's event stream may stay open once nothing
	// on it is awaited (see readEvents).
	grace time.Duration

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	// life ends with ctx and has no values: the connection's part of a
	// connBound, whose values are its caller's alone.
	life context.Context
	done chan struct{} // closed at Close

	mu     sync.Mutex // guards closed against wg.Add racing with Close
	closed bool
	cause  error // why the connection ended, when the peer ended it
	wg     sync.WaitGroup

	inbox clientInbox // the messages on their way to Read or receive

	// target is the URL last requested, parsed: a connection sends its
	// requests to one or two URLs, which newRequest parses once.
	target atomic.Pointer[parsedURL]
}

// parsedURL is a URL as given and parsed.
type parsedURL struct {
	text string
	url  *url.URL
}

func newHTTPClientCore(ctx context.Context, client *http.Client, header http.Header, limit int) *httpClientCore {
	c := &httpClientCore{
		client: client,
		header: header.Clone(),
		limit:  limit,
		grace:  defaultAnsweredStreamGrace,
		done:   make(chan struct{}),
	}
	if c.client == nil {
		c.client, c.ownClient = newDefaultHTTPClient(), true
	}
	c.client = sameOriginRedirects(c.client)
	switch c.client.Transport.(type) {
	case nil, *http.Transport:
		c.stdRT = true
	}
	c.setDirect()
	// The connection outlives Connect's context but keeps its values.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	life, endLife := context.WithCancel(context.Background())
	c.ctx, c.life = cctx, life
	c.cancel = func() {
		cancel()
		endLife()
	}
	c.inbox.ready = make(chan struct{}, 1)
	return c
}

// An Authorizer authorizes the requests of an HTTP client transport by
// wrapping the HTTP client's RoundTripper. Package auth's
// *auth.Authorizer is one: with it, a request the server refuses with
// 401 or 403 insufficient_scope is authorized (OAuth 2.1) and sent
// again, and its failures reach the caller as *auth.AuthorizationError
// values (errors.As finds them in the errors of Connect, Write and Read).
type Authorizer interface {
	// RoundTripper returns a RoundTripper that authorizes requests and
	// sends them with base.
	RoundTripper(base http.RoundTripper) http.RoundTripper
}

// authorize makes the connection's client send its requests through az,
// when az is not nil.
func (c *httpClientCore) authorize(az Authorizer) {
	if az == nil {
		return
	}
	base := c.client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// c.client is the connection's own copy (see sameOriginRedirects).
	c.client.Transport = az.RoundTripper(base)
	c.stdRT = false
	c.setDirect()
}

// setDirect decides whether do may send requests with the client's
// RoundTripper itself.
func (c *httpClientCore) setDirect() {
	c.direct = nil
	if c.client.Jar == nil && c.client.Timeout == 0 {
		c.direct = c.client.Transport
		if c.direct == nil {
			c.direct = http.DefaultTransport
		}
	}
}

// do sends req as c.client.Do does. An http.Client copies the headers of
// every request it sends, for the redirects it may follow, and keeps a
// list of the requests: a few hundred bytes and most of a microsecond a
// request, for redirects MCP servers rarely answer with. So when the
// client has nothing else to do for a request (no cookie jar, no
// timeout, no user information in the URL), do sends it with the
// client's RoundTripper, and hands a redirect (a 3xx answer with a
// Location) to the client, which sends the request again from the start
// and follows it as always, under the same-origin rule of
// sameOriginRedirects. Errors are wrapped in *url.Error, as the client's
// are.
func (c *httpClientCore) do(req *http.Request) (*http.Response, error) {
	if c.direct == nil || req.URL.User != nil {
		return c.client.Do(req)
	}
	resp, err := c.direct.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if headerValue(resp.Header, "Location") == "" {
			return resp, nil // nothing to follow; the client returns it too
		}
		drainClose(resp)
		again := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
			}
			again.Body = body
		}
		return c.client.Do(again)
	}
	return resp, nil
}

// urlErrorOp is the Op of the *url.Error an http.Client returns for a
// request of method: "Get", "Post" or "Delete".
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// maxRedirects is how many redirects in a row a request follows, as
// http.Client does by default.
const maxRedirects = 10

// sameOriginRedirects returns a copy of client that refuses to follow a
// redirect to another origin than the request's (scheme, host and port;
// an upgrade to https on the same host is allowed), so that the session
// id and the headers meant for the MCP server never reach another one.
// The client's own CheckRedirect, if any, then decides.
func sameOriginRedirects(client *http.Client) *http.Client {
	cc := *client
	next := client.CheckRedirect
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		from := via[0].URL
		to := req.URL
		sameHost := strings.EqualFold(from.Hostname(), to.Hostname())
		if originOf(from) != originOf(to) && !(sameHost && strings.EqualFold(to.Scheme, "https")) {
			return fmt.Errorf("transport: refusing the redirect from %s to %s, another origin", from.Redacted(), to.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("transport: stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &cc
}

// isClosed reports whether Close has been called.
func (c *httpClientCore) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// closedOr returns the error of a closed connection (see closedErr) in
// place of err once the connection is closed, since Close is then what
// made the operation fail.
func (c *httpClientCore) closedOr(err error) error {
	if err != nil && c.isClosed() {
		return c.closedErr()
	}
	return err
}

// closedErr returns what operations on the closed connection fail with:
// ErrClosed, wrapping the reason the connection ended, if one was set
// with setCause.
func (c *httpClientCore) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil {
		return fmt.Errorf("%w: %w", ErrClosed, c.cause)
	}
	return ErrClosed
}

// setCause records why the connection is ending, unless a reason was
// recorded already.
func (c *httpClientCore) setCause(err error) {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = err
	}
	c.mu.Unlock()
}

// goStream runs f in a goroutine that Close waits for. It reports false,
// without running f, once the connection is closed.
func (c *httpClientCore) goStream(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// A stream's reader goes as deep as net/http's client and the
		// decoding of what it reads: its stack grown at once is copied
		// once, with nothing to walk, rather than twice at depth.
		rpclink.GrowStack()
		f()
	}()
	return true
}

// shutdown marks the connection closed and cancels everything under way.
// It reports false if it was already closed.
func (c *httpClientCore) shutdown() bool {
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
func (c *httpClientCore) wait() {
	c.wg.Wait()
	if c.ownClient {
		c.client.CloseIdleConnections()
	}
}

// link returns a context with ctx's values that ends when ctx or the
// connection ends, and the function releasing it. A ctx that never ends
// (its Done is nil, as a call's without deadline or cancellation) needs no
// link of its own: the connection's context with ctx's values is enough,
// and what net/http derives from it registers with the connection's
// context directly (see connBound). That spares each such call a context,
// its registration with the connection's and the closures to undo them.
func (c *httpClientCore) link(ctx context.Context) (context.Context, func()) {
	if ctx.Done() == nil {
		return &connBound{Context: c.life, values: ctx}, func() {}
	}
	lctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	return lctx, func() {
		stop()
		cancel()
	}
}

// connBound is the context of a request whose caller's context, values,
// never ends: Deadline, Done and Err are the connection's life (see
// httpClientCore.life), and a key is looked up in values, then in life,
// which holds no value but its cancellation. The context package finds
// that cancellation through the second lookup (values has none to give: a
// context that never ends holds none, or hides it, as
// context.WithoutCancel does), so contexts derived from a connBound, such
// as net/http's for the request, register with life, as they would with a
// child of it, and no goroutine watches them.
type connBound struct {
	context.Context // the connection's life
	values          context.Context
}

// Value implements context.Context.
func (c *connBound) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// newRequest returns a request with the static headers, those from
// WithHTTPHeader in ctx, and the transport's own, given as pairs of a
// canonical name and a value (an empty value leaves the header out),
// which take precedence. Session, protocol version and Last-Event-ID
// headers come from own only.
func (c *httpClientCore) newRequest(ctx context.Context, method, target string, body []byte, own ...string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	p := c.target.Load()
	if p == nil || p.text != target {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("transport: %w", err)
		}
		u.Host = strings.TrimSuffix(u.Host, ":") // as http.NewRequest does
		p = &parsedURL{text: target, url: u}
		c.target.Store(p)
	}
	// The empty URL parses at no cost into the request's own URL, which
	// then takes a copy of the parsed one: what http.NewRequestWithContext
	// does with target, without parsing it again. Host stays empty, which
	// sends the URL's: an http.Client copies the URL of a request whose
	// Host is set, to look up cookies, even without a cookie jar.
	req, err := http.NewRequestWithContext(ctx, method, "", rd)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	*req.URL = *p.url
	h := req.Header
	replaceHeaders(h, c.header)
	if uh, ok := ctx.Value(httpHeaderKey{}).(http.Header); ok {
		replaceHeaders(h, uh)
	}
	if len(h) > 0 {
		// These are the transport's to set, or to leave out.
		for _, k := range [...]string{headerSessionID, headerProtocolVersion, headerLastEventID} {
			h.Del(k)
		}
	}
	setHeaderValues(h, own...)
	return req, nil
}

// replaceHeaders sets in dst every header of src, replacing values of the
// same name.
func replaceHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst.Del(k)
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// clientStream follows one logical event stream across reconnections.
type clientStream struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
	// standalone marks the GET stream; the others answer a POST.
	standalone bool
	// inline marks a body read on the goroutine that POSTed the request,
	// whose deliveries never wait for room (see deliver).
	inline bool
	// opened, if not nil, is closed once the stream's first GET has been
	// answered or has failed.
	opened chan struct{}
	// pending holds the requests whose responses the stream should
	// carry; one is the storage of a lone request's ID.
	pending []jsonrpc.ID
	one     [1]jsonrpc.ID
	// post marks the stream answering a POST, read only while requests
	// it carries await their responses.
	post bool
	// batched marks the stream of a POSTed batch, whose requests a batch
	// of responses answers. A request sent alone is answered only by a
	// response sent alone: a client that refuses batches never sees a
	// response inside one, and its caller must not wait for it.
	batched bool
}

// expect records the requests in m as those whose responses the stream
// should carry.
func (s *clientStream) expect(m jsonrpc.Message) {
	s.pending = s.one[:0]
	_, s.batched = m.(jsonrpc.Batch)
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
func (s *clientStream) answered(m jsonrpc.Message) {
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
		if !s.batched {
			return
		}
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Response); ok {
				remove(r.ID)
			}
		}
	}
}

// eventSizeLimit is the event size limit for messages of at most limit
// bytes: room for the field names and line breaks around them.
func eventSizeLimit(limit int) int {
	const room = 4096
	if limit > (math.MaxInt-room)/9*8 {
		return math.MaxInt // no overflow, on 32-bit platforms too
	}
	return limit + limit/8 + room
}

// readEvents reads events from body until it ends, fails, or ctx ends,
// delivering messages to Read and recording in st the resumption point.
// Events other than messages go to other, if set, which returns false to
// stop reading. It closes body and reports whether it delivered any
// message.
func (c *httpClientCore) readEvents(ctx context.Context, body io.ReadCloser, st *clientStream, other func(sse.Event) bool) (progress bool, err error) {
	defer c.closeOnDone(ctx, body)()
	r := sse.NewReader(body, eventSizeLimit(c.limit))
	lastID := ""
	var grace *time.Timer // closes body at the end of the grace period
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	for {
		ev, err := r.Next()
		switch {
		case err == nil:
		case errors.Is(err, sse.ErrEventTooLarge):
			if !c.deliver(nil, tooLargeError(c.limit), !st.inline) {
				return progress, ErrClosed
			}
		default:
			return progress, err
		}
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
		progress = true
		if !c.deliverData(ev.Data, st) {
			return progress, ErrClosed
		}
		if st.post && len(st.pending) == 0 && grace == nil {
			// Nothing more is awaited. The server should end the stream
			// now; reading on to its end lets the connection be reused.
			// One keeping it open must not hold this goroutine and the
			// connection: it is closed after the grace period.
			grace = time.AfterFunc(c.grace, func() { body.Close() })
		}
	}
}

// deliverData decodes one message from data, which it takes over, and
// queues it for Read. A response over the decode limits that answers a
// request of st fails that request with the decode error (see
// undecodableResponse); other decode errors go to Read.
func (c *httpClientCore) deliverData(data []byte, st *clientStream) bool {
	if len(data) > c.limit {
		return c.deliver(nil, tooLargeError(c.limit), !st.inline)
	}
	m, err := decodeMemo(nil, data, true, &c.memo) // data is ours alone
	if err != nil {
		if resp := st.undecodableResponse(err); resp != nil {
			return c.deliver(resp, nil, !st.inline)
		}
		return c.deliver(nil, err, !st.inline)
	}
	st.answered(m)
	return c.deliver(m, nil, !st.inline)
}

// undecodableResponse returns the error response that fails the request
// of s answered by a response that could not be decoded, err, and
// forgets the request; or nil when err is not such a response. The
// response carries the [*jsonrpc.DecodeError] in its Extra, so that the
// call fails with an error wrapping it (see [jsonrpc.Conn.Call]).
func (s *clientStream) undecodableResponse(err error) *jsonrpc.Response {
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || !de.Response || !de.ID.IsValid() {
		return nil
	}
	i := slices.Index(s.pending, de.ID)
	if i < 0 {
		return nil
	}
	s.pending = slices.Delete(s.pending, i, i+1)
	return &jsonrpc.Response{ID: de.ID, Error: de.Err, Extra: de}
}

// failPending ends the requests still waiting in st with error responses,
// unless ctx ended (the caller gave up on them) or the connection closed.
func (c *httpClientCore) failPending(ctx context.Context, st *clientStream, why string) {
	c.failPendingCause(ctx, st, why, nil)
}

// failPendingCause is failPending for a known cause: a
// [*jsonrpc.DecodeError] for an answer that could not be decoded goes in
// the responses' Extra, so that the calls fail with errors wrapping it
// (see [jsonrpc.Conn.Call]).
func (c *httpClientCore) failPendingCause(ctx context.Context, st *clientStream, why string, cause error) {
	if len(st.pending) == 0 || ctx.Err() != nil {
		// Nothing to fail (every call answered, as nearly always): return
		// before de, which escapes, costs an allocation.
		return
	}
	var de *jsonrpc.DecodeError
	if cause != nil {
		why += ": " + cause.Error()
		errors.As(cause, &de)
	}
	for _, id := range st.pending {
		resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
			Code:    jsonrpc.CodeConnectionClosed,
			Message: "transport: " + why,
		}}
		if de != nil {
			resp.Extra = de
		}
		if !c.deliver(resp, nil, !st.inline) {
			return
		}
	}
	st.pending = st.pending[:0]
}

// readJSON reads a JSON response body, obtained with ctx, and delivers
// its message. A body too large or that cannot be decoded fails the
// requests it answers with the decode error; it is not passed on to
// Read, which would answer the server.
func (c *httpClientCore) readJSON(ctx context.Context, body io.ReadCloser, size int64, st *clientStream) {
	release := c.closeOnDone(ctx, body)
	data, err := readSized(body, size, int64(c.limit), int64(c.limit))
	release()
	switch {
	case err != nil:
		c.failPending(ctx, st, "reading the response: "+err.Error())
		return
	case len(data) > c.limit:
		c.failPendingCause(ctx, st, "the server's response could not be decoded", tooLargeError(c.limit))
		return
	case len(trimJSONSpace(data)) > 0:
		m, err := decodeMemo(nil, data, true, &c.memo) // data is ours alone
		if err != nil {
			c.failPendingCause(ctx, st, "the server's response could not be decoded", err)
			return
		}
		st.answered(m)
		if !c.deliver(m, nil, !st.inline) {
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
func (c *httpClientCore) closeOnDone(ctx context.Context, body io.Closer) func() {
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

// trimJSONSpace returns b without leading and trailing JSON whitespace.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// newHTTPStatusError reads the start of resp's body into an
// HTTPStatusError and closes the body. Only a body of announced length is
// read: the status is the answer, and a body of unknown length could be
// one that never ends.
func newHTTPStatusError(resp *http.Response) *HTTPStatusError {
	var body []byte
	if resp.ContentLength > 0 {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, min(resp.ContentLength, statusErrorBodyLimit)))
	}
	resp.Body.Close()
	return &HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status, Body: string(body)}
}

// drainClose reads the body of resp, which nobody needs, so that its
// connection can be reused, and closes it. Only a body of announced
// length, at most drainLimit bytes, is read: a body of unknown length
// could be one that never ends, and closing it costs only the
// connection.
func drainClose(resp *http.Response) {
	if resp.ContentLength > 0 && resp.ContentLength <= drainLimit {
		io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	resp.Body.Close()
}

// mediaType returns the media type of a Content-Type header, lower case.
func mediaType(contentType string) string {
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

// isSuccess reports whether status is 2xx.
func isSuccess(status int) bool { return status >= 200 && status <= 299 }

// sleepCtx waits for d or until ctx ends, and reports whether ctx is still
// live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
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

// awaitClosed waits until ch is closed, ctx ends or d has passed.
func awaitClosed(ctx context.Context, ch <-chan struct{}, d time.Duration) {
	select {
	case <-ch:
		return // closed already: no timer
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
	}
}
