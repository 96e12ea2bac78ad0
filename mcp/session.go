package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// inMethod describes a method one side receives: how to build its typed
// request from raw params, with the place its encoded result goes (see
// inbound), and how to handle it.
type inMethod[S any] struct {
	notification bool
	required     *requiredList // the params' required members
	// newRequest builds the request from its raw params and the
	// transport's data (jsonrpc.Request.Extra).
	newRequest func(s S, raw json.RawMessage, extra any) (Request, *rpclink.Framed, error)
	handle     func(ctx context.Context, s S, req Request) (Result, error)
}

// inbound is a request received with the place its result goes once
// encoded, in one allocation: the result goes to the JSON-RPC layer as a
// pointer to it, which an interface holds without allocating, with room
// for the response's envelope before it when the result has a
// hand-written encoder (see encodeResult).
type inbound[R any] struct {
	req    R
	result rpclink.Framed
}

// paramsWith is a request's params, P, and what the transport told of
// it, in one allocation: what a handler may keep after its request ends.
// Not in the request's inbound, which holds the encoded result: a
// handler that kept its params would keep the result's memory too.
type paramsWith[P any] struct {
	params P
	extra  RequestExtra
}

// decodeParams decodes raw params into p, which is the zero value.
// Missing params leave it so.
func decodeParams(raw json.RawMessage, p Params, opts ...jsonv2.Options) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := unmarshalWith(raw, p, opts...); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

// wireReader is a protocol type with a hand-written decoder for its
// common shape (see fastwire.go). A params type's takes only params that
// have every required member.
type wireReader interface {
	readWire(data []byte, metas *capsCache) bool
}

// requiredMember is a member the protocol requires in a params object.
type requiredMember struct {
	name   string
	nullOK bool // null is a value (a member of type unknown), not absence
}

// requiredList is the list of a params type's required members, made on
// first use (see [requiredMembers]).
type requiredList struct {
	once sync.Once
	t    reflect.Type
	list []requiredMember
}

// members returns the list.
func (r *requiredList) members() []requiredMember {
	r.once.Do(func() { r.list = requiredMembers(r.t) })
	return r.list
}

// requiredMembers lists the members of the JSON object of type t that
// the protocol requires: the fields whose json tag has neither omitzero
// nor omitempty, the way the protocol types spell the schema's required
// lists. It runs once per method, when the method is first received (not
// when the method tables are built, at package initialisation, which
// every process importing the package would pay for).
func requiredMembers(t reflect.Type) []requiredMember {
	var out []requiredMember
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitzero") || strings.Contains(opts, "omitempty") {
			continue
		}
		out = append(out, requiredMember{name: name, nullOK: f.Type.Kind() == reflect.Interface})
	}
	if len(out) > 64 {
		panic(fmt.Sprintf("mcp: %v has more than 64 required members", t)) // a bug in this package's types
	}
	return out
}

// missingMember returns the first member of required that the JSON
// object raw lacks (or has as null, where null is no value), or "". raw
// has been decoded successfully already, so it is valid JSON; empty raw
// is a missing object. It reads raw in place, stops as soon as every
// member is found, and does not allocate unless a member name has
// escapes.
func missingMember(raw []byte, required []requiredMember) string {
	if len(required) == 0 {
		return ""
	}
	all := uint64(1)<<len(required) - 1
	found := scanMembers(raw, required, all)
	if found == all {
		return ""
	}
	for i, m := range required {
		if found&(1<<i) == 0 {
			return m.name
		}
	}
	return ""
}

// scanMembers returns the set of required members that the object raw
// holds with a value. Anything but an object holds none.
func scanMembers(raw []byte, required []requiredMember, all uint64) uint64 {
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return 0
	}
	i++
	var found uint64
	for found != all {
		i = jsonscan.SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return found // the end of the object
		}
		start := i
		i = jsonscan.StringEnd(raw, i)
		if i < 0 {
			return found
		}
		name := raw[start+1 : i-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			u, err := jsontext.AppendUnquote(nil, raw[start:i])
			if err != nil {
				return found
			}
			name = u
		}
		i = jsonscan.SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != ':' {
			return found
		}
		i = jsonscan.SkipSpace(raw, i+1)
		null := bytes.HasPrefix(raw[i:], []byte("null"))
		if i = jsonscan.ValueEnd(raw, i); i < 0 {
			return found
		}
		for k, m := range required {
			if string(name) == m.name && (!null || m.nullOK) {
				found |= 1 << k
			}
		}
		if i = jsonscan.SkipSpace(raw, i); i < len(raw) && raw[i] == ',' {
			i++
		}
	}
	return found
}

// missingParamError is the error for params that lack a required member.
func missingParamError(member string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: missing required member %q", member)}
}

// serverMethodFor builds the table entry for a method a server receives.
// The params' required members (see [requiredMembers]) are checked before
// the request reaches any middleware or handler.
func serverMethodFor[P any, PP interface {
	*P
	Params
}, R Result](method string, h func(*ServerSession, context.Context, *ServerRequest[PP]) (R, error)) inMethod[*ServerSession] {
	required := &requiredList{t: reflect.TypeFor[P]()}
	return inMethod[*ServerSession]{
		required: required,
		newRequest: func(ss *ServerSession, raw json.RawMessage, x any) (Request, *rpclink.Framed, error) {
			pw := &paramsWith[P]{}
			var extra *RequestExtra
			if x != nil {
				pw.extra = RequestExtra{Value: x, Header: requestHeader(x)}
				extra = &pw.extra
			}
			p := PP(&pw.params)
			r, fast := any(p).(wireReader)
			if fast = fast && r.readWire(raw, ss.metaCache()); !fast {
				// readWire left p as it was: the zero value.
				if err := decodeParams(raw, p, ss.decodeOptions()...); err != nil {
					return nil, nil, err
				}
			}
			if p.meta().ProtocolVersion != "" && removedInModern(method) {
				// The method does not exist on this request's revision,
				// whatever its params.
				ss.chooseModern()
				return nil, nil, errRemovedInModern(method)
			}
			if !fast { // readWire takes only params with their required members
				if m := missingMember(raw, required.members()); m != "" {
					return nil, nil, missingParamError(m)
				}
			}
			in := &inbound[ServerRequest[PP]]{req: ServerRequest[PP]{Session: ss, Params: p, Extra: extra, method: method}}
			return &in.req, &in.result, nil
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

// clientMethodFor builds the table entry for a method a client receives,
// checking required members as [serverMethodFor] does.
func clientMethodFor[P any, PP interface {
	*P
	Params
}, R Result](method string, h func(*ClientSession, context.Context, *ClientRequest[PP]) (R, error)) inMethod[*ClientSession] {
	required := &requiredList{t: reflect.TypeFor[P]()}
	return inMethod[*ClientSession]{
		required: required,
		newRequest: func(cs *ClientSession, raw json.RawMessage, _ any) (Request, *rpclink.Framed, error) {
			p := PP(new(P))
			if err := decodeParams(raw, p, wire().received...); err != nil {
				return nil, nil, err
			}
			if m := missingMember(raw, required.members()); m != "" {
				return nil, nil, missingParamError(m)
			}
			in := &inbound[ClientRequest[PP]]{req: ClientRequest[PP]{Session: cs, Params: p, method: method}}
			return &in.req, &in.result, nil
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
	send   MethodHandler // sending middleware chain ending in the wire; nil without middleware (see out)
	logger *slog.Logger
	// modernCall, when set (a client of the stateless era, see
	// client_modern.go), sends requests in place of the plain call.
	modernCall func(context.Context, *outgoing) (Result, error)
	// self is the session, for observers (see observe.go).
	self sessionViewer
	// observable: sending middleware is installed, so a message may have
	// an observer (ObserveSend); without, none is looked for.
	observable bool
	// framed: the transport encodes each message into memory of its own
	// (mcplink.FramedWriter), so results and params are encoded with room
	// for the envelope (see encodeResult and callEncoded).
	framed bool
}

// outgoing is an outgoingRequest with the place its result goes.
type outgoing struct {
	outgoingRequest
	result Result // nil for notifications
	// frame holds the params of a call when the hand-written encoder
	// takes them, with room for the request's envelope (see callEncoded).
	frame rpclink.Framed
}

func (e *endpoint) init(conn *jsonrpc.Conn, tc jsonrpc.Stream, mw []Middleware, logger *slog.Logger) {
	e.conn = conn
	e.logger = logger
	if f, ok := tc.(mcplink.FramedWriter); ok {
		e.framed = f.FramedWrites()
	}
	if len(mw) > 0 {
		// Without middleware the wire is called directly (see out): a
		// method value stored here would cost an allocation per session,
		// and so per 2026-07-28 exchange.
		e.send = chain(e.wire, mw)
	}
	e.observable = len(mw) > 0
}

// out sends req through the sending middleware, if any, and the wire.
func (e *endpoint) out(ctx context.Context, req *outgoing) (Result, error) {
	if e.send != nil {
		return e.send(ctx, req)
	}
	return e.wire(ctx, req)
}

// wire is the end of the sending chain: encode, send, decode.
func (e *endpoint) wire(ctx context.Context, req Request) (Result, error) {
	o, ok := req.(*outgoing)
	if !ok {
		return nil, fmt.Errorf("mcp: sending middleware replaced the request with %T", req)
	}
	if o.result != nil && e.modernCall != nil {
		return e.modernCall(ctx, o) // it encodes the params with their _meta envelope
	}
	var done func(error)
	params := o.params
	if observe := e.observerOf(ctx, o); observe != nil {
		ctx, params, done = e.observed(ctx, o, observe, 0)
	}
	if o.result == nil {
		raw, err := marshalStd(params)
		if err != nil {
			return nil, fmt.Errorf("mcp: encoding %s params: %w", o.method, err)
		}
		err = e.conn.Notify(ctx, o.method, raw)
		if done != nil {
			done(err)
		}
		return nil, err
	}
	res, err := callEncoded(ctx, e.conn, e.framed, o, params)
	if done != nil {
		done(err)
	}
	if err != nil {
		return nil, fromWire(err)
	}
	if !readFinal(o, res, nil) {
		if done, err := captureTask(ctx, o, res, false); done {
			return o.result, err // a task in place of the result (client_tasks.go)
		}
		if err := unmarshalReceived(res, o.result); err != nil {
			return nil, fmt.Errorf("mcp: decoding %s result: %w", o.method, err)
		}
	}
	if m := lackingMember(o.result); m != "" {
		return nil, &ResultError{Method: o.method, Member: m}
	}
	return o.result, nil
}

// callFramed is jsonrpc's Conn.Call for params with room for the
// request's envelope (see rpclink.CallFramed).
var callFramed = rpclink.CallFramed.(func(*jsonrpc.Conn, context.Context, string, *rpclink.Framed) (json.RawMessage, error))

// callEncoded encodes params and calls o's method with them on conn.
// When framed, the hand-written encoder writes into o's frame, after room
// where the transport writes the request's envelope, so that the params
// are not copied into the message; otherwise, and for the engine's
// encoding, the params are sent as they are.
func callEncoded(ctx context.Context, conn *jsonrpc.Conn, framed bool, o *outgoing, params Params) (json.RawMessage, error) {
	raw, off, err := encodeWithRoom(params, rpclink.ParamsRoom, framed)
	if err != nil {
		return nil, fmt.Errorf("mcp: encoding %s params: %w", o.method, err)
	}
	if off > 0 {
		o.frame.Set(raw, off)
		return callFramed(conn, ctx, o.method, &o.frame)
	}
	return conn.Call(ctx, o.method, raw)
}

// encodeWithRoom encodes v as marshalStd does, and returns its encoding
// as buf[off:]. When framed, the hand-written encoder writes after room
// bytes (off is room) where the transport writes the message's envelope
// (see rpclink.Framed); the engine's encoding has none (off is 0).
func encodeWithRoom(v any, room int, framed bool) (buf []byte, off int, err error) {
	if !framed {
		buf, err = marshalStd(v)
		return buf, 0, err
	}
	if a, ok := v.(wireAppender); ok {
		if b, ok := a.appendWire(rpclink.Room(room)); ok {
			return b, room, nil
		}
	}
	buf, err = marshalWith(v, wire().marshal)
	return buf, 0, err
}

// ResultError reports a peer's result that lacks a member the protocol
// requires and that would reach the application as nil: an object member
// (such as serverInfo or capabilities of initialize), or a null element
// of a list (such as "tools":[null]). The result is not handed out.
type ResultError struct {
	Method string // the request's method
	Member string // the path of the member, such as "serverInfo" or "tools[2]"
}

// Error implements error.
func (e *ResultError) Error() string {
	return fmt.Sprintf("mcp: %s result: missing or null required member %s", e.Method, e.Member)
}

// memberPath joins the name of a member with the path a nilMember method
// found inside it.
func memberPath(name, sub string) string {
	if sub[0] == '[' {
		return name + sub
	}
	return name + "." + sub
}

// elemPath is the path of element i of the list member name, followed by
// sub, the path found inside that element, if any.
func elemPath(name string, i int, sub string) string {
	p := name + "[" + strconv.Itoa(i) + "]"
	if sub == "" {
		return p
	}
	return memberPath(p, sub)
}

// call sends a request through the sending middleware and decodes the
// response into result.
func (e *endpoint) call(ctx context.Context, method string, params Params, result Result) error {
	_, err := e.out(ctx, &outgoing{outgoingRequest: outgoingRequest{method: method, params: params}, result: result})
	return peerError(method, err)
}

// notify sends a notification through the sending middleware.
func (e *endpoint) notify(ctx context.Context, method string, params Params) error {
	_, err := e.out(ctx, &outgoing{outgoingRequest: outgoingRequest{method: method, params: params}})
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

// dispatch decodes and handles one incoming message for session s. The
// result goes back encoded (see inbound), by the options every protocol
// value is encoded with.
func dispatch[S any](ctx context.Context, s S, table map[string]inMethod[S], recv MethodHandler, req *jsonrpc.Request) (any, error) {
	m, ok := table[req.Method]
	if !ok || m.notification != req.IsNotification() {
		if req.IsNotification() {
			return nil, nil // unknown notifications are ignored
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method}
	}
	r, result, err := m.newRequest(s, req.Params, req.Extra)
	if err != nil {
		return nil, err
	}
	res, err := recv(ctx, r)
	if err != nil {
		return nil, handlerError(ctx, err)
	}
	if res == nil || req.IsNotification() {
		return nil, nil
	}
	framed := false
	if f, ok := any(s).(interface{ framedWrites() bool }); ok {
		framed = f.framedWrites()
	}
	if err := encodeResult(res, result, framed); err != nil {
		if l, ok := any(s).(interface{ log() *slog.Logger }); ok {
			l.log().Error("mcp: cannot encode result", "method", req.Method, "err", err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: cannot encode result"}
	}
	return result, nil
}

// encodeResult encodes res into f as marshalStd does; when framed, with
// rpclink.ResultRoom bytes of room for the response's envelope before a
// hand-written encoding (see encodeWithRoom).
func encodeResult(res Result, f *rpclink.Framed, framed bool) error {
	buf, off, err := encodeWithRoom(res, rpclink.ResultRoom, framed)
	f.Buf, f.Off = buf, int32(off) // a fresh inbound's frame: unclaimed
	return err
}

// framedWrites reports whether the endpoint's transport encodes each
// message into memory of its own (see endpoint.framed).
func (e *endpoint) framedWrites() bool { return e.framed }

// log returns the endpoint's logger.
func (e *endpoint) log() *slog.Logger { return e.logger }

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
