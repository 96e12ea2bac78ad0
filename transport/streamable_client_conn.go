//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Standalone stream states.
const (
	standaloneIdle        = iota // not running
	standaloneRunning            // the goroutine runs
	standaloneUnsupported        // the server answered 405
)

// streamableClientConn is the connection of a StreamableClientTransport.
type streamableClientConn struct {
	*httpClientCore
	metaMemo     metaMemo // the _meta of the last 2026-07-28 request (see mirroredName)
	url          string
	maxRetries   int
	minDelay     time.Duration
	maxDelay     time.Duration
	floor        time.Duration // least reconnection delay
	closeTimeout time.Duration
	noStandalone bool
	reinit       bool
	noFallback   bool

	// firstSem serialises Writes until the first POST decided between
	// Streamable HTTP and the legacy fallback.
	firstSem chan struct{}
	decided  atomic.Bool
	modern   atomic.Bool // 2026-07-28 or later: see streamable_client_modern.go
	legacy   atomic.Pointer[legacySession]

	reinitSem chan struct{} // one reinitialization at a time; made by the first, under mu

	dropped droppedResponses // the responses not sent in 2026-07-28: see streamable_client_modern.go

	mu              sync.Mutex
	sessionID       string
	protocolVersion string
	initReq         *jsonrpc.Request // the last initialize request written
	initNote        *jsonrpc.Request // the last notifications/initialized written
	initialized     bool             // notifications/initialized was written
	// The session state a reinitialization restores: the last
	// logging/setLevel request written, and the resources/subscribe
	// requests written by URI, less those unsubscribed since.
	logLevel         *jsonrpc.Request
	subs             map[string]*jsonrpc.Request
	expiryReported   bool // the expiry of the session was reported to Read
	standaloneStatus int
	standaloneGen    int           // tells the running standalone goroutine from an older one
	standaloneDone   chan struct{} // closed when the running standalone goroutine ends

	// The standalone stream outlives the connection's context a little:
	// Close ends it after the DELETE, which lets the server end the GET
	// cleanly and its connection go back to the pool instead of being
	// torn down (see Close). Both are nil when the stream is disabled.
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
//
// A revision of 2026-07-28 or later switches the connection to that
// revision's Streamable HTTP (see streamable_client_modern.go); it must be
// set before the first Write.
func (c *streamableClientConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	c.protocolVersion = v
	c.mu.Unlock()
	c.modern.Store(isModernVersion(v))
}

// FramedWrites reports true: each message is encoded into a POST body of
// its own (see mcplink.FramedWriter).
func (c *streamableClientConn) FramedWrites() bool { return true }

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
	if c.modern.Load() && c.dropModern(ctx, m) {
		return nil
	}
	if c.isClosed() {
		return c.closedErr()
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
	if c.modern.Load() {
		return c.closedOr(c.writeModern(ctx, m, body))
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

// isInitializeRequest reports whether m is an initialize request.
func isInitializeRequest(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	return ok && r.Method == "initialize" && !r.IsNotification()
}

// isInitializedNote reports whether m is notifications/initialized.
func isInitializedNote(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Request)
	return ok && r.Method == "notifications/initialized" && r.IsNotification()
}

// write POSTs one message and handles the answer. first marks the
// connection's first POST, which may fall back to the legacy transport.
func (c *streamableClientConn) write(ctx context.Context, m jsonrpc.Message, body []byte, first bool) error {
	isInit := isInitializeRequest(m)
	c.mu.Lock()
	switch {
	case isInit:
		c.initReq = m.(*jsonrpc.Request)
	case isInitializedNote(m):
		c.initNote = m.(*jsonrpc.Request)
	case c.reinit:
		c.recordStateLocked(m)
	}
	sid := ""
	if !isInit {
		sid = c.sessionID // a new initialize starts a new session
	}
	c.mu.Unlock()

	var opened <-chan struct{}
	if isInitializedNote(m) {
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
		awaitClosed(rctx, opened, standaloneOpenWait)
	}
	if first {
		c.decided.Store(true)
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			if isInit && !c.noFallback {
				statusErr := newHTTPStatusError(resp)
				if err := c.fallback(ctx, body); err != nil {
					return fmt.Errorf("%w; falling back to the HTTP+SSE transport: %w", statusErr, err)
				}
				return nil
			}
		}
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		drainClose(resp)
		expired := &SessionExpiredError{SessionID: sid}
		if !c.reinit {
			c.sessionExpired(sid)
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
			drainClose(resp)
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
		"Content-Type", contentTypeJSON, "Accept", acceptJSONOrSSE, headerSessionID, sid, headerProtocolVersion, v)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, fmt.Errorf("transport: POST: %w", err)
	}
	return resp, nil
}

// handle deals with the response to a POST of m. It reports whether it
// started a goroutine reading the body, which then owns ctx and release.
func (c *streamableClientConn) handle(ctx context.Context, release func(), m jsonrpc.Message, resp *http.Response, isInit bool) (bool, error) {
	if !isSuccess(resp.StatusCode) {
		return false, newHTTPStatusError(resp)
	}
	if isInit {
		c.mu.Lock()
		c.sessionID = headerValue(resp.Header, headerSessionID)
		c.mu.Unlock()
	}
	st := &clientStream{}
	st.expect(m)
	ct := headerValue(resp.Header, "Content-Type")
	var run func()
	switch mt := mediaType(ct); {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0:
		drainClose(resp)
		if len(st.pending) > 0 {
			return false, fmt.Errorf("transport: the server answered a request with %q and no body", resp.Status)
		}
		return false, nil
	case mt == "text/event-stream":
		if len(st.pending) == 0 {
			// The stream answers nothing that is awaited (the POST
			// carried no request): it is not read, lest it never end.
			resp.Body.Close()
			return false, nil
		}
		st.post = true
		run = func() { c.follow(ctx, resp.Body, st) }
	case mt == "application/json":
		// A JSON body is read here, on the writer's goroutine: the answer
		// is complete once its headers are in, as it is not a stream.
		st.inline = true
		c.readJSON(ctx, resp.Body, resp.ContentLength, st)
		return false, nil
	default:
		drainClose(resp)
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
// n attempts in a row that brought nothing: failed GETs, and streams that
// ended without delivering a message. The delay starts at the server's
// retry field if it sent one, else at minDelay, doubles with each such
// attempt (randomised to between half and all of that, but never below
// the server's delay), and stays between floor and maxDelay.
func (c *streamableClientConn) retryDelay(st *clientStream, n int) time.Duration {
	base := c.minDelay
	if st.hasRetry {
		base = st.retry
	}
	base = min(max(base, c.floor), c.maxDelay)
	if st.hasRetry && n == 0 {
		return base // the server's delay, as it asked
	}
	d := c.maxDelay
	if n < 62 && base > 0 && base <= c.maxDelay>>n {
		d = base << n
	}
	d = d/2 + rand.N(d/2+1)
	if st.hasRetry {
		d = max(d, base)
	}
	return min(max(d, c.floor), c.maxDelay)
}

// errNoGETStream is the 405 answer to a GET: the server offers no stream.
var errNoGETStream = errors.New("transport: the server offers no SSE stream (HTTP 405)")

// get opens an event stream with a GET, resuming after lastID if set.
func (c *streamableClientConn) get(ctx context.Context, lastID string) (io.ReadCloser, string, error) {
	c.mu.Lock()
	sid, v := c.sessionID, c.protocolVersion
	c.mu.Unlock()
	req, err := c.newRequest(ctx, http.MethodGet, c.url, nil,
		"Accept", acceptSSE, headerSessionID, sid, headerProtocolVersion, v, headerLastEventID, lastID)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, sid, fmt.Errorf("transport: GET: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		drainClose(resp)
		return nil, sid, errNoGETStream
	case resp.StatusCode == http.StatusNotFound && sid != "":
		drainClose(resp)
		return nil, sid, &SessionExpiredError{SessionID: sid}
	case !isSuccess(resp.StatusCode):
		return nil, sid, newHTTPStatusError(resp)
	case mediaType(headerValue(resp.Header, "Content-Type")) != "text/event-stream":
		drainClose(resp)
		return nil, sid, fmt.Errorf("transport: GET: unexpected content type %q", headerValue(resp.Header, "Content-Type"))
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
func (c *streamableClientConn) follow(ctx context.Context, body io.ReadCloser, st *clientStream) {
	defer st.markOpened()
	standalone := st.standalone
	failures := 0          // failed GETs in a row
	budget := c.maxRetries // failures allowed
	idle := 0              // attempts in a row that brought no message
	if body == nil {
		budget++ // the first GET is a connection, not a reconnection
	}
	for {
		if body != nil {
			budget = c.maxRetries
			delivered, err := c.readEvents(ctx, body, st, nil)
			body = nil
			if delivered {
				idle = 0
			}
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
			// A stream that ends at once, however often, is reconnected
			// at a falling rate: it counts toward the backoff.
			if !sleepCtx(ctx, c.retryDelay(st, idle)) {
				return
			}
			idle++
		}
		rbody, sid, err := c.get(ctx, st.lastID)
		st.markOpened()
		switch {
		case err == nil:
			body = rbody
			failures = 0
			continue
		case errors.Is(err, errNoGETStream):
			// A definite answer, even if ctx ended meanwhile.
			if standalone {
				c.mu.Lock()
				c.standaloneStatus = standaloneUnsupported
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
					c.sessionExpired(sid)
					return
				}
				continue // the session was renewed: use the new one
			}
			c.failPending(ctx, st, err.Error())
			c.sessionExpired(sid)
			return
		}
		failures++
		if failures >= budget {
			if !standalone {
				c.failPending(ctx, st, "the response stream could not be resumed: "+err.Error())
			}
			return
		}
		if !sleepCtx(ctx, c.retryDelay(st, idle)) {
			return
		}
		idle++
	}
}

// standaloneCloseGrace bounds how long Close waits, after the DELETE,
// for the server to end the standalone stream.
const standaloneCloseGrace = 250 * time.Millisecond

// standaloneOpenWait bounds how long the write of
// notifications/initialized waits for the standalone stream to open.
const standaloneOpenWait = 10 * time.Second

// markOpened closes st.opened once.
func (st *clientStream) markOpened() {
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
	if !c.initialized || c.standaloneStatus != standaloneIdle {
		return nil
	}
	c.standaloneGen++
	gen := c.standaloneGen
	opened := make(chan struct{})
	done := make(chan struct{})
	started := c.goStream(func() {
		defer close(done)
		c.follow(c.sctx, nil, &clientStream{standalone: true, opened: opened})
		c.mu.Lock()
		if c.standaloneGen == gen && c.standaloneStatus == standaloneRunning {
			c.standaloneStatus = standaloneIdle
		}
		c.mu.Unlock()
		if c.testHookStandaloneExit != nil {
			c.testHookStandaloneExit()
		}
	})
	if !started {
		return nil
	}
	c.standaloneStatus = standaloneRunning
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
	c.standaloneStatus = standaloneIdle
	c.standaloneGen++ // a stream started from now on is not this one
	return true
}

// reinitialize starts a new session in place of the expired one, by
// repeating the initialize request and notifications/initialized.
func (c *streamableClientConn) reinitialize(ctx context.Context, expired string) error {
	c.mu.Lock()
	if c.reinitSem == nil {
		c.reinitSem = make(chan struct{}, 1) // most sessions never expire
	}
	sem := c.reinitSem
	c.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-sem }()
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
	if !isSuccess(resp.StatusCode) {
		return newHTTPStatusError(resp)
	}
	newSID := headerValue(resp.Header, headerSessionID)
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
		if !isSuccess(resp.StatusCode) {
			return newHTTPStatusError(resp)
		}
		drainClose(resp)
	}
	c.restoreState(ctx, newSID)
	c.startStandalone()
	return nil
}

// sessionExpired reports, once, that the server forgot session sid, when
// the connection does not reinitialize: Read returns (or the pushed
// connection ends with) a *SessionExpiredError, so that the session
// using the connection ends instead of failing every call.
func (c *streamableClientConn) sessionExpired(sid string) {
	if c.reinit {
		return
	}
	c.mu.Lock()
	report := !c.expiryReported && sid != "" && sid == c.sessionID
	c.expiryReported = c.expiryReported || report
	c.mu.Unlock()
	if report {
		err := &SessionExpiredError{SessionID: sid}
		c.setCause(err)
		c.deliver(nil, err, false)
	}
}

// recordStateLocked records the session state that m, a message being
// written, sets. c.mu is held.
func (c *streamableClientConn) recordStateLocked(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.IsNotification() {
		return
	}
	switch r.Method {
	case "logging/setLevel":
		c.logLevel = r
	case "resources/subscribe", "resources/unsubscribe":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(r.Params, &p) != nil {
			return
		}
		if r.Method == "resources/unsubscribe" {
			delete(c.subs, p.URI)
			return
		}
		if c.subs == nil {
			c.subs = make(map[string]*jsonrpc.Request)
		}
		c.subs[p.URI] = r
	}
}

// restoreState repeats, on the new session sid, the requests that set
// the old session's state: the logging level and the resource
// subscriptions. Their responses are not delivered to Read; a failure
// leaves that part of the state unrestored, as the server decided.
func (c *streamableClientConn) restoreState(ctx context.Context, sid string) {
	c.mu.Lock()
	var reqs []*jsonrpc.Request
	if c.logLevel != nil {
		reqs = append(reqs, c.logLevel)
	}
	for _, uri := range slices.Sorted(maps.Keys(c.subs)) {
		reqs = append(reqs, c.subs[uri])
	}
	c.mu.Unlock()
	for i, r := range reqs {
		// An id of its own, which no call of the client's uses.
		replay := &jsonrpc.Request{ID: jsonrpc.StringID("mcpkit-restore-" + strconv.Itoa(i)), Method: r.Method, Params: r.Params}
		body, err := jsonrpc.EncodeMessage(replay)
		if err != nil {
			continue
		}
		resp, err := c.post(ctx, body, sid, true)
		if err != nil {
			return
		}
		if !isSuccess(resp.StatusCode) {
			drainClose(resp)
			continue
		}
		c.awaitResponse(ctx, resp, replay.ID)
	}
}

// awaitResponse reads the body answering a POST the connection made for
// itself (the repeated initialize request, or a request restoring the
// session's state) until the response to id, which it swallows: the
// client saw the first one. Other messages go to Read.
func (c *streamableClientConn) awaitResponse(ctx context.Context, resp *http.Response, id jsonrpc.ID) error {
	var found *jsonrpc.Response
	check := func(m jsonrpc.Message) bool {
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == id {
			found = r
			return true
		}
		return false
	}
	switch ct := headerValue(resp.Header, "Content-Type"); mediaType(ct) {
	case "application/json":
		data, err := readSized(resp.Body, resp.ContentLength, int64(c.limit), int64(c.limit))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("transport: reading the initialize response: %w", err)
		}
		if len(data) > c.limit {
			return errors.New("transport: the initialize response is too large")
		}
		m, err := decodeOwned(nil, data) // data is ours alone
		if err != nil {
			return fmt.Errorf("transport: the initialize response: %w", err)
		}
		check(m)
	case "text/event-stream":
		body := resp.Body
		defer c.closeOnDone(ctx, body)()
		r := sse.NewReader(body, eventSizeLimit(c.limit))
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
			m, err := decodeOwned(nil, ev.Data) // the reader returns a copy
			if err == nil && !check(m) {
				c.deliver(m, nil, false) // a writer's goroutine
			}
		}
	default:
		drainClose(resp)
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
	l, err := dialLegacy(ctx, c.httpClientCore, c.url)
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
// first gives the server a moment (standaloneCloseGrace, within
// CloseTimeout) to end the standalone stream itself, as a server ending
// the session does, so that the stream's connection can be reused rather
// than torn down. It always returns nil.
func (c *streamableClientConn) Close() error {
	if !c.shutdown() {
		return nil
	}
	c.dropped.close()
	if sid := c.SessionID(); sid != "" && c.legacy.Load() == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), c.closeTimeout)
		if req, err := c.newRequest(ctx, http.MethodDelete, c.url, nil,
			headerSessionID, sid, headerProtocolVersion, c.version()); err == nil {
			if resp, err := c.do(req); err == nil {
				drainClose(resp)
				c.mu.Lock()
				done := c.standaloneDone
				c.mu.Unlock()
				if done != nil && isSuccess(resp.StatusCode) {
					awaitClosed(ctx, done, standaloneCloseGrace)
				}
			}
		}
		cancel()
	}
	if c.scancel != nil { // nil when the standalone stream is disabled
		c.scancel()
	}
	c.wait()
	return nil
}
