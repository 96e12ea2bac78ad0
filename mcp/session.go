package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// inMethod describes a method one side receives: how to build its typed
// request from raw params, and how to handle it.
type inMethod[S any] struct {
	notification bool
	newRequest   func(s S, raw json.RawMessage, extra *RequestExtra) (Request, error)
	handle       func(ctx context.Context, s S, req Request) (Result, error)
}

// decodeParams decodes raw params into a fresh P. Missing params decode as
// the zero value.
func decodeParams[P any, PP interface {
	*P
	Params
}](raw json.RawMessage) (PP, error) {
	p := PP(new(P))
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	if err := jsonv2.Unmarshal(raw, p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return p, nil
}

// serverMethodFor builds the table entry for a method a server receives.
func serverMethodFor[P any, PP interface {
	*P
	Params
}, R Result](method string, h func(*ServerSession, context.Context, *ServerRequest[PP]) (R, error)) inMethod[*ServerSession] {
	return inMethod[*ServerSession]{
		newRequest: func(ss *ServerSession, raw json.RawMessage, extra *RequestExtra) (Request, error) {
			p, err := decodeParams[P, PP](raw)
			if err != nil {
				return nil, err
			}
			return &ServerRequest[PP]{Session: ss, Params: p, Extra: extra, method: method}, nil
		},
		handle: func(ctx context.Context, ss *ServerSession, req Request) (Result, error) {
			res, err := h(ss, ctx, req.(*ServerRequest[PP]))
			if err != nil {
				return nil, err
			}
			return res, nil
		},
	}
}

// clientMethodFor builds the table entry for a method a client receives.
func clientMethodFor[P any, PP interface {
	*P
	Params
}, R Result](method string, h func(*ClientSession, context.Context, *ClientRequest[PP]) (R, error)) inMethod[*ClientSession] {
	return inMethod[*ClientSession]{
		newRequest: func(cs *ClientSession, raw json.RawMessage, _ *RequestExtra) (Request, error) {
			p, err := decodeParams[P, PP](raw)
			if err != nil {
				return nil, err
			}
			return &ClientRequest[PP]{Session: cs, Params: p, method: method}, nil
		},
		handle: func(ctx context.Context, cs *ClientSession, req Request) (Result, error) {
			res, err := h(cs, ctx, req.(*ClientRequest[PP]))
			if err != nil {
				return nil, err
			}
			return res, nil
		},
	}
}

func notification[S any](m inMethod[S]) inMethod[S] {
	m.notification = true
	return m
}

// endpoint is the machinery both session kinds share: the connection, and
// the sending side of the middleware chain.
type endpoint struct {
	conn   *jsonrpc.Conn
	send   MethodHandler // sending middleware chain ending in the wire
	logger *slog.Logger
}

// outgoing is an OutgoingRequest with the place its result goes.
type outgoing struct {
	OutgoingRequest
	result Result // nil for notifications
}

func (e *endpoint) init(conn *jsonrpc.Conn, mw []Middleware, logger *slog.Logger) {
	e.conn = conn
	e.logger = logger
	e.send = chain(e.wire, mw)
}

// wire is the end of the sending chain: encode, send, decode.
func (e *endpoint) wire(ctx context.Context, req Request) (Result, error) {
	o, ok := req.(*outgoing)
	if !ok {
		return nil, fmt.Errorf("mcp: sending middleware replaced the request with %T", req)
	}
	raw, err := marshalStd(o.params)
	if err != nil {
		return nil, fmt.Errorf("mcp: encoding %s params: %w", o.method, err)
	}
	if o.result == nil {
		return nil, e.conn.Notify(ctx, o.method, raw)
	}
	res, err := e.conn.Call(ctx, o.method, raw)
	if err != nil {
		return nil, fromWire(err)
	}
	if err := jsonv2.Unmarshal(res, o.result); err != nil {
		return nil, fmt.Errorf("mcp: decoding %s result: %w", o.method, err)
	}
	return o.result, nil
}

// call sends a request through the sending middleware and decodes the
// response into result.
func (e *endpoint) call(ctx context.Context, method string, params Params, result Result) error {
	_, err := e.send(ctx, &outgoing{OutgoingRequest: OutgoingRequest{method: method, params: params}, result: result})
	return peerError(method, err)
}

// notify sends a notification through the sending middleware.
func (e *endpoint) notify(ctx context.Context, method string, params Params) error {
	_, err := e.send(ctx, &outgoing{OutgoingRequest: OutgoingRequest{method: method, params: params}})
	return err
}

// onCancel tells the peer a call was abandoned (notifications/cancelled).
func (e *endpoint) onCancel(id jsonrpc.ID, cause error) {
	reason := "request cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	raw, err := marshalStd(&CancelledParams{RequestID: id, Reason: reason})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.conn.Notify(ctx, NotificationCancelled, raw); err != nil {
		e.logger.Debug("mcp: cannot send cancellation", "id", id.String(), "err", err)
	}
}

// dispatch decodes and handles one incoming message for session s.
func dispatch[S any](ctx context.Context, s S, table map[string]inMethod[S], recv MethodHandler, req *jsonrpc.Request) (any, error) {
	m, ok := table[req.Method]
	if !ok || m.notification != req.IsNotification() {
		if req.IsNotification() {
			return nil, nil // unknown notifications are ignored
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method}
	}
	var extra *RequestExtra
	if req.Extra != nil {
		extra = &RequestExtra{Value: req.Extra}
		if info, ok := req.Extra.(*transport.HTTPRequestInfo); ok {
			extra.Header = info.Header
		}
	}
	r, err := m.newRequest(s, req.Params, extra)
	if err != nil {
		return nil, err
	}
	res, err := recv(ctx, r)
	if err != nil {
		return nil, handlerError(ctx, err)
	}
	if res == nil {
		return nil, nil
	}
	return res, nil
}

// keepAlive pings the peer every interval until done closes, closing the
// session when a ping fails.
func keepAlive(interval time.Duration, done <-chan struct{}, ping func(context.Context) error, closeFn func() error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), interval)
			err := ping(ctx)
			cancel()
			if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
				closeFn()
				return
			}
		}
	}
}

// logger returns l, or a logger that discards.
func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
