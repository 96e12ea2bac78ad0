package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"reflect"

	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// This file holds the hooks an observer of the protocol, such as the
// OpenTelemetry middleware of module github.com/mcpkit/mcpkit/otelmcp,
// needs beyond what [Request] shows: the _meta of params, the session a
// request belongs to, and a way to add _meta members to each message of a
// request being sent without modifying the caller's params. Nothing here
// costs anything unless middleware calls it.

// MetaOf returns the _meta of p, whatever p's type. Members the protocol
// does not name, such as the W3C trace context ("traceparent",
// "tracestate", "baggage"), are in [Meta.Other]. Do not modify the _meta
// of a request received or being sent: to add members to an outgoing
// request, use [ObserveSend].
func MetaOf(p Params) *Meta { return p.meta() }

// SessionView is what an observer learns of the session a request belongs
// to.
type SessionView struct {
	// ID is the session's ID in the handshake era (the transport's
	// session ID over HTTP; on a server, a random one over other
	// transports); "" in the stateless era (2026-07-28) and for a client
	// whose transport has no session IDs.
	ID string
	// ProtocolVersion is the revision the request is made under, or ""
	// before it is known (a client's initialize).
	ProtocolVersion string
	// Done is closed when the session ends.
	Done <-chan struct{}
	// Network is how a client's session reaches its server: "tcp" over
	// the HTTP transports, "pipe" over stdio or to a subprocess; "" on a
	// server (see the request's transport.HTTPRequestInfo instead), in
	// memory and over other transports.
	Network string
	// ServerURL is the server's URL for a client's session over HTTP,
	// else nil. Do not modify it.
	ServerURL *url.URL
}

// peerOf describes the transport t of a client's session.
func peerOf(t transport.Transport) (network string, server *url.URL) {
	for {
		lt, ok := t.(*transport.LoggingTransport)
		if !ok || lt.Transport == nil {
			break
		}
		t = lt.Transport
	}
	var raw string
	switch t := t.(type) {
	case *transport.CommandTransport, *transport.StdioTransport:
		return "pipe", nil
	default:
		u, _, ok := httpClientURL(t)
		if !ok {
			return "", nil
		}
		raw = u
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "tcp", nil
	}
	u.User = nil // never credentials
	return "tcp", u
}

// sessionViewer is a session that can describe itself to observers.
type sessionViewer interface {
	view() SessionView
}

func (ss *ServerSession) view() SessionView {
	ss.mu.Lock()
	stateless := ss.stateless || ss.era == eraModern
	ss.mu.Unlock()
	v := SessionView{ProtocolVersion: ss.ProtocolVersion(), Done: ss.Done()}
	if !stateless {
		v.ID = ss.ID()
	}
	return v
}

func (cs *ClientSession) view() SessionView {
	v := SessionView{ProtocolVersion: cs.ProtocolVersion(), Done: cs.Done(), Network: cs.network, ServerURL: cs.serverURL}
	if cs.modern == nil {
		v.ID = cs.ID()
	}
	return v
}

// SessionOf describes the session a received request arrived on: a
// [*ServerRequest] or [*ClientRequest] as receiving middleware sees it.
// For any other request (one being sent) it reports false: the session of
// an outgoing request is in the [WireSend] that [ObserveSend]'s function
// receives.
func SessionOf(req Request) (SessionView, bool) {
	r, ok := req.(interface{ session() sessionViewer })
	if !ok {
		return SessionView{}, false
	}
	s := r.session()
	if s == nil {
		return SessionView{}, false
	}
	v := s.view()
	if sr, ok := req.(interface{ ProtocolVersion() string }); ok {
		v.ProtocolVersion = sr.ProtocolVersion()
	}
	return v, true
}

func (r *ServerRequest[P]) session() sessionViewer {
	if r.Session == nil {
		return nil
	}
	return r.Session
}

func (r *ClientRequest[P]) session() sessionViewer {
	if r.Session == nil {
		return nil
	}
	return r.Session
}

// WireSend describes one message of an outgoing request or notification
// as it is put on the wire, for the function given to [ObserveSend].
type WireSend struct {
	// ID is the JSON-RPC id of the message, known once it is written:
	// read it in the function the observer returns. The zero ID for a
	// notification.
	ID jsonrpc.ID
	// Round is 0 for the first message of a request. A request of the
	// 2026-07-28 era that the peer answers with input_required is sent
	// again with the answers; Round counts those messages (1, 2, ...).
	Round int
	// Session is the sending session.
	Session SessionView
	// Meta, set by the observer, holds members to add to the message's
	// _meta (replacing members of the same key in [Meta.Other]). The
	// message is encoded from a copy of the params: the caller's params
	// are not modified.
	Meta map[string]json.RawMessage
}

// A SendObserver is called each time a message of an observed request is
// put on the wire (see [ObserveSend]), with the context the request is
// sent under. It may fill w.Meta. The function it returns, if not nil, is
// called when that message's answer arrived (or the exchange failed), with
// nil or the error; for a notification, when it was written.
type SendObserver func(ctx context.Context, w *WireSend) (done func(err error))

// ObserveSend returns a context under which f is called for each message
// of req put on the wire. It is for sending middleware (see
// [ServerOptions.SendingMiddleware] and [ClientOptions.SendingMiddleware]),
// which passes the context it returns on with req:
//
//	return next(mcp.ObserveSend(ctx, req, observe), req)
//
// Only req is observed, not other requests sent under the context. When
// req is not a request being sent, ObserveSend returns ctx.
func ObserveSend(ctx context.Context, req Request, f SendObserver) context.Context {
	o, ok := req.(*outgoing)
	if !ok || f == nil {
		return ctx
	}
	return context.WithValue(ctx, sendObserverKey{}, &sendObserver{o: o, f: f})
}

type sendObserverKey struct{}

// sendObserver is the observer of one outgoing request.
type sendObserver struct {
	o *outgoing
	f SendObserver
}

// observerOf returns the observer of o under ctx, or nil. Only sending
// middleware can set one: without it, nothing is looked up.
func (e *endpoint) observerOf(ctx context.Context, o *outgoing) SendObserver {
	if !e.observable {
		return nil
	}
	if so, ok := ctx.Value(sendObserverKey{}).(*sendObserver); ok && so.o == o {
		return so.f
	}
	return nil
}

// observed calls observe for the message of the given round and
// returns the context to send it with (which fills WireSend.ID), the
// params to encode (a copy of o.params when the observer adds _meta
// members) and the function to call with the outcome.
func (e *endpoint) observed(ctx context.Context, o *outgoing, observe SendObserver, round int) (context.Context, Params, func(error)) {
	w := &WireSend{Round: round}
	if o.result != nil {
		h := &rpclink.CallHook[jsonrpc.ID]{Sent: func(id jsonrpc.ID) { w.ID = id }}
		if prev := rpclink.CallHookOf[jsonrpc.ID](ctx); prev != nil {
			h.ID, h.Chosen = prev.ID, prev.Chosen
		}
		ctx = rpclink.WithCallHook(ctx, h)
	}
	if e.self != nil {
		w.Session = e.self.view()
	}
	if v := o.params.meta().ProtocolVersion; v != "" {
		w.Session.ProtocolVersion = v
	}
	done := observe(ctx, w)
	if len(w.Meta) == 0 {
		return ctx, o.params, done
	}
	return ctx, withMetaMembers(o.params, w.Meta), done
}

// withMetaMembers returns a shallow copy of p whose _meta has the members
// add on top of p's own.
func withMetaMembers(p Params, add map[string]json.RawMessage) Params {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return p
	}
	c := reflect.New(v.Type().Elem())
	c.Elem().Set(v.Elem())
	cp, ok := c.Interface().(Params)
	if !ok {
		return p
	}
	m := cp.meta()
	other := make(map[string]json.RawMessage, len(m.Other)+len(add))
	maps.Copy(other, m.Other)
	maps.Copy(other, add)
	m.Other = other
	return cp
}
