//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// SSEClientTransport is the client side of the HTTP+SSE transport of MCP
// revision 2024-11-05, which Streamable HTTP replaced. Prefer
// [StreamableClientTransport], which falls back to this transport by
// itself when the server is an old one. Connect may be called once per
// value.
//
// Connect opens the event stream at URL with a GET and waits for the
// server's endpoint event, whose data is the URL (often relative) to POST
// messages to; an endpoint of another origin than URL (scheme, host and
// port) is rejected. Each Write then POSTs one message there and expects
// a 2xx answer, usually 202 Accepted. Read returns the messages of the
// stream's message events. The stream is not resumed when it breaks: Read
// returns io.EOF when the server ended it, or the error that broke it.
// Close closes the stream.
type SSEClientTransport struct {
	// URL is the SSE endpoint. Required.
	URL string
	// HTTPClient sends the requests. Nil means a client made for this
	// transport; redirects to another origin are refused either way, as
	// for StreamableClientTransport.
	HTTPClient *http.Client
	// Header holds headers added to every request. The transport's own
	// headers take precedence.
	Header http.Header
	// Authorizer, when set, authorizes the requests, such as an
	// *auth.Authorizer; see StreamableClientTransport.Authorizer.
	Authorizer Authorizer
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. A larger message is skipped and Read returns
	// the error [IsMessageTooLarge] recognises. Negative values are
	// rejected by Connect.
	MaxMessageSize int

	connected atomic.Bool
}

// Connect opens the event stream and waits for its endpoint event. ctx
// bounds that wait only.
func (t *SSEClientTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.URL == "" {
		return nil, errors.New("transport: SSEClientTransport needs a URL")
	}
	limit, err := maxMessageSize(t.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}
	core := newHTTPClientCore(ctx, t.HTTPClient, t.Header, limit)
	core.authorize(t.Authorizer)
	l, err := dialLegacy(ctx, core, t.URL)
	if err != nil {
		core.shutdown()
		core.wait()
		return nil, err
	}
	return &sseClientConn{httpClientCore: core, legacy: l}, nil
}

// sseClientConn is the connection of an SSEClientTransport.
type sseClientConn struct {
	*httpClientCore
	legacy *legacySession
}

// HandshakeOnly reports true: the HTTP+SSE transport is of revision
// 2024-11-05 (see mcplink.HandshakeOnly).
func (c *sseClientConn) HandshakeOnly() bool { return true }

// FramedWrites reports true: each message is encoded into a POST body of
// its own (see mcplink.FramedWriter).
func (c *sseClientConn) FramedWrites() bool { return true }

// Read returns the next message of the event stream.
func (c *sseClientConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return c.read(ctx)
}

// Write POSTs m to the endpoint the server named.
func (c *sseClientConn) Write(ctx context.Context, m jsonrpc.Message) error {
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
	return c.closedOr(c.legacy.post(ctx, body))
}

// Close closes the event stream, cancels pending Writes and waits for the
// connection's goroutine. It always returns nil.
func (c *sseClientConn) Close() error {
	if c.shutdown() {
		c.wait()
	}
	return nil
}

// legacySession is an open HTTP+SSE (2024-11-05) session: the event stream is
// read by a goroutine of the core, and messages are POSTed to endpoint.
// Both SSEClientTransport and the fallback of StreamableClientTransport
// use it.
type legacySession struct {
	core     *httpClientCore
	endpoint string
}

// legacyEndpoint is the outcome of waiting for the endpoint event.
type legacyEndpoint struct {
	url string
	err error
}

// dialLegacy opens the event stream at rawURL and waits for its endpoint
// event. setup bounds the wait; the stream then lives until core closes,
// and when it ends Read returns io.EOF or the error that ended it.
func dialLegacy(setup context.Context, core *httpClientCore, rawURL string) (*legacySession, error) {
	base, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	ctx, cancel := context.WithCancel(core.ctx)
	stop := context.AfterFunc(setup, cancel)
	fail := func(err error) (*legacySession, error) {
		stop()
		cancel()
		if setup.Err() != nil {
			return nil, setup.Err()
		}
		return nil, err
	}
	req, err := core.newRequest(ctx, http.MethodGet, rawURL, nil, "Accept", acceptSSE)
	if err != nil {
		return fail(err)
	}
	resp, err := core.do(req)
	if err != nil {
		return fail(fmt.Errorf("transport: GET: %w", err))
	}
	if !isSuccess(resp.StatusCode) {
		return fail(newHTTPStatusError(resp))
	}
	if ct := headerValue(resp.Header, "Content-Type"); mediaType(ct) != "text/event-stream" {
		drainClose(resp)
		return fail(fmt.Errorf("transport: GET: unexpected content type %q, want text/event-stream", ct))
	}
	endpoint := make(chan legacyEndpoint, 1)
	if !core.goStream(func() {
		defer cancel()
		core.readLegacy(ctx, resp.Body, base, endpoint)
	}) {
		resp.Body.Close()
		return fail(ErrClosed)
	}
	select {
	case ep := <-endpoint:
		if ep.err != nil {
			return fail(ep.err)
		}
		if !stop() {
			return fail(setup.Err()) // setup ended as the endpoint arrived
		}
		return &legacySession{core: core, endpoint: ep.url}, nil
	case <-setup.Done():
		return fail(setup.Err())
	}
}

// readLegacy reads the legacy event stream: the first endpoint event goes
// to endpoint, messages to Read. When the stream ends, so does Read's
// stream of messages.
func (c *httpClientCore) readLegacy(ctx context.Context, body io.ReadCloser, base *url.URL, endpoint chan<- legacyEndpoint) {
	found, bad := false, false
	_, err := c.readEvents(ctx, body, &clientStream{}, func(ev sse.Event) bool {
		if ev.Name != "endpoint" || found {
			return true
		}
		found = true
		u, err := resolveLegacyEndpoint(base, string(ev.Data))
		endpoint <- legacyEndpoint{u, err}
		bad = err != nil
		return !bad
	})
	if bad {
		return
	}
	if !found {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		endpoint <- legacyEndpoint{err: fmt.Errorf("transport: the SSE stream ended before its endpoint event: %w", err)}
		return
	}
	if ctx.Err() != nil || errors.Is(err, ErrClosed) {
		return
	}
	if err != io.EOF {
		err = fmt.Errorf("transport: SSE stream: %w", err)
	}
	c.deliver(nil, err, true)
}

// resolveLegacyEndpoint resolves the data of an endpoint event against the
// stream's URL and checks that the result has the same origin.
func resolveLegacyEndpoint(base *url.URL, data string) (string, error) {
	ref, err := url.Parse(strings.TrimSpace(data))
	if err != nil {
		return "", fmt.Errorf("transport: bad endpoint event: %w", err)
	}
	u := base.ResolveReference(ref)
	if originOf(u) != originOf(base) {
		return "", fmt.Errorf("transport: the endpoint %q is not of the origin of %q", u.Redacted(), base.Redacted())
	}
	return u.String(), nil
}

// originOf returns the scheme, host and port of u, in lower case and with
// the scheme's default port made explicit.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// post sends one message to the endpoint and checks for a 2xx answer.
func (l *legacySession) post(ctx context.Context, body []byte) error {
	rctx, release := l.core.link(ctx)
	defer release()
	req, err := l.core.newRequest(rctx, http.MethodPost, l.endpoint, body, "Content-Type", contentTypeJSON)
	if err != nil {
		return err
	}
	resp, err := l.core.do(req)
	if err != nil {
		return fmt.Errorf("transport: POST: %w", err)
	}
	if !isSuccess(resp.StatusCode) {
		return newHTTPStatusError(resp)
	}
	drainClose(resp)
	return nil
}
