//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// HTTPRequestInfo describes the HTTP request that carried an incoming
// message on a server-side HTTP transport. The transport sets it as the
// message's [jsonrpc.Request.Extra] and puts it in the handler's context,
// where [HTTPRequestInfoFromContext] finds it.
//
// The handler's context also carries the values of the HTTP request's
// context (what HTTP middleware added with [context.WithValue], such as
// [WithPrincipal]), but not its cancellation or deadline: the handler of a
// request may outlive the exchange that carried it, and its context is
// cancelled as the transport documents (when the client cancels the
// request or abandons an exchange that cannot be resumed).
//
// The fields are taken from the request when it arrived and stay valid
// after the HTTP exchange is over; URL and Header are the request's own,
// shared with it and with every handler of the POST: do not modify them.
type HTTPRequestInfo struct {
	// Method is the HTTP method, usually POST.
	Method string
	// URL is the request URL as the server received it. Do not modify it.
	URL *url.URL
	// Header holds the request headers. Do not modify it.
	Header http.Header
	// RemoteAddr is the client's network address.
	RemoteAddr string
	// Proto is the protocol of the HTTP request, such as "HTTP/1.1" or
	// "HTTP/2.0".
	Proto string
	// Principal is the authenticated identity the request carried (see
	// [WithPrincipal]), or "".
	Principal string

	values    context.Context // the request's context, for its values only
	stream    *httpStream     // the exchange's, whose SSE stream CloseSSEStream ends; nil when none
	cancelOn  context.Context // done when the handler must stop; nil for never
	cancelWhy error           // the cause the handler's context is cancelled with
	// exchange is the stream answering a POST that carried one request,
	// whose handler may then run on the POST's goroutine; else nil.
	exchange *httpStream
}

type httpInfoKey struct{}

// HTTPRequestInfoFromContext returns the HTTP request information of the
// message a handler is serving, or nil when the message did not arrive
// over HTTP.
func HTTPRequestInfoFromContext(ctx context.Context) *HTTPRequestInfo {
	i, _ := ctx.Value(httpInfoKey{}).(*HTTPRequestInfo)
	return i
}

// CloseSSEStream ends the SSE stream that the response to this request
// would travel on, without ending the request: the handler keeps running,
// and a client that resumes the stream (GET with Last-Event-ID) receives
// what was sent meanwhile. This is the server side of SSE polling
// (protocol revision 2025-11-25). It does nothing when the exchange has no
// SSE stream or cannot be resumed: without an [EventStore], in stateless
// mode, and for initialize.
func (i *HTTPRequestInfo) CloseSSEStream() {
	if i != nil && i.stream != nil {
		i.stream.closeLive()
	}
}

// bind adds i to the handler's context, and cancels that context when the
// client abandons the exchange and the server cannot resume it (see
// pushEnd.BindContext).
func (i *HTTPRequestInfo) bind(ctx context.Context, cancel context.CancelCauseFunc) context.Context {
	if i.cancelOn == nil || cancel == nil {
		return &infoContext{Context: ctx, info: i}
	}
	return &infoContext{Context: ctx, info: i, cancel: cancel}
}

// infoContext is a handler's context that carries its request's
// HTTPRequestInfo and, when the info has them, the values of the HTTP
// request's context: a key is looked up in the handler's context first,
// then in those values. Deadline, Done and Err are the handler's. (One
// value for both, rather than a context.WithValue over a second wrapper:
// an allocation fewer per request.)
//
// With a cancel function, the context ends when info.cancelOn does (the
// client abandoned an exchange the server cannot resume). That link is
// made when first needed: by Done, which every wait on the context and
// every context derived from it calls, or by Err, which looks at
// cancelOn itself. A handler that never asks (most run to completion
// without looking) costs no registration with the HTTP request's context,
// which would give that context a channel and a map of its children.
type infoContext struct {
	context.Context
	info   *HTTPRequestInfo
	cancel context.CancelCauseFunc // nil: nothing to link

	linked atomic.Bool // Done made the link, or the context ended
	mu     sync.Mutex
	ended  bool        // released: the handler returned
	stop   func() bool // undoes the link; nil when not made
}

// Done implements context.Context.
func (c *infoContext) Done() <-chan struct{} {
	if c.cancel != nil && !c.linked.Load() {
		c.link()
	}
	return c.Context.Done()
}

// Err implements context.Context.
func (c *infoContext) Err() error {
	err := c.Context.Err()
	if err == nil && c.cancel != nil && !c.linked.Load() && c.info.cancelOn.Err() != nil {
		c.mu.Lock()
		if !c.ended {
			c.cancel(c.info.cancelWhy)
		}
		c.mu.Unlock()
		err = c.Context.Err()
	}
	return err
}

// link cancels the context once info.cancelOn is done.
func (c *infoContext) link() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.linked.Load() || c.ended {
		return
	}
	c.stop = context.AfterFunc(c.info.cancelOn, func() { c.cancel(c.info.cancelWhy) })
	c.linked.Store(true)
}

// release undoes the link once the handler has returned.
func (c *infoContext) release() {
	c.mu.Lock()
	c.ended = true
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Value implements context.Context.
func (c *infoContext) Value(key any) any {
	if _, ok := key.(httpInfoKey); ok {
		return c.info
	}
	if v := c.Context.Value(key); v != nil || c.info.values == nil {
		return v
	}
	return c.info.values.Value(key)
}

// newHTTPRequestInfo copies what handlers may need from r. Unless
// inBase, it keeps r's context values for the handler's context; inBase
// says that the handler's context descends from r's context already (an
// exchange of 2026-07-28, see serveModern), which then holds them.
func newHTTPRequestInfo(r *http.Request, inBase bool) *HTTPRequestInfo {
	var values context.Context
	if !inBase {
		// Only its values are read (infoContext): its cancellation and
		// deadline never reach the handler.
		values = r.Context()
	}
	i := &HTTPRequestInfo{
		values:     values,
		Method:     r.Method,
		Header:     r.Header,
		RemoteAddr: r.RemoteAddr,
		Proto:      r.Proto,
		Principal:  PrincipalFromContext(r.Context()),
		URL:        r.URL,
	}
	return i
}
