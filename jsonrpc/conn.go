package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/internal/slotmap"
)

// Handler answers requests and receives notifications arriving on a [Conn].
//
// Handle is called in its own goroutine for each request (or possibly on
// the goroutine that read it: see [ConnOptions.InlineHandoff]),
// and one at a time, in arrival order, for notifications (a notification
// handler that runs long while messages wait behind it is left to finish
// on its own: see [ConnOptions.MaxQueuedNotifications]). For a request,
// the result is marshalled into the response (a [json.RawMessage], a
// non-nil *json.RawMessage or a []byte is used as is) unless err
// is non-nil, in which case err is converted with [ToWire]. For a
// notification the result and error are ignored (errors are logged).
//
// ctx is cancelled when the peer cancels the request (see [Conn.Cancel]) or
// the connection closes; it carries the request's id (see [RelatedRequest]).
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// contextBinder may be implemented by a [Stream] whose incoming requests
// carry transport data in their Extra. Before the handler of req runs, the
// [Conn] passes the context it built for the request to BindContext, with
// the function that cancels that context (nil for a notification, whose
// context cannot be cancelled), and gives the handler the context
// returned; once the handler has returned, it passes that context to
// ReleaseContext, after which cancel must no longer be called. Transports
// use it to make request-scoped data (such as the HTTP request that
// carried the message) visible to handlers, and to cancel a handler when
// its request's exchange is gone. (A method rather than a release
// function returned with the context: no closure to allocate a request.)
type contextBinder interface {
	BindContext(ctx context.Context, cancel context.CancelCauseFunc, req *Request) (bound context.Context)
	ReleaseContext(bound context.Context)
}

// bindContext applies the stream's contextBinder, if any; releaseContext
// must be called with the context it returns once the handler returned.
func (c *Conn) bindContext(ctx context.Context, cancel context.CancelCauseFunc, req *Request) context.Context {
	if c.binder != nil {
		return c.binder.BindContext(ctx, cancel, req)
	}
	return ctx
}

// releaseContext ends the binding bindContext made.
func (c *Conn) releaseContext(bound context.Context) {
	if c.binder != nil {
		c.binder.ReleaseContext(bound)
	}
}

// HandlerFunc adapts a function to the [Handler] interface.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// ConnOptions configures a [Conn]. The zero value is usable.
type ConnOptions struct {
	// Handler handles incoming requests and notifications. If nil, every
	// request is answered with CodeMethodNotFound and notifications are
	// dropped.
	Handler Handler
	// MaxInFlight bounds the incoming requests handled at once, those
	// the peer cancelled whose handlers have not returned yet included. A
	// request arriving past the bound is answered at once with
	// CodeServerOverloaded (see MaxQueuedErrors). Zero means 256.
	MaxInFlight int
	// MaxQueuedNotifications bounds the notifications waiting for
	// delivery. Once that many wait, reading waits for room (the peer's
	// writes then wait in turn): no notification is dropped. Zero means
	// 4096.
	//
	// Notifications are delivered one at a time, in arrival order. A
	// response is passed to its [Conn.Call] only once the notifications
	// read before it have been handled, so what the peer sent before its
	// answer (progress, log messages) has reached the handler when Call
	// returns. Two exceptions keep a notification handler that waits from
	// holding everything up: the answer to a call made with the context a
	// notification handler was given is passed on at once; and a handler
	// that has run for a second while messages wait behind it is left to
	// finish on its own goroutine while delivery goes on without it (at
	// most MaxInFlight such handlers at once).
	MaxQueuedNotifications int
	// AllowBatch reports whether an incoming JSON-RPC batch may be served
	// now. Nil rejects every batch with CodeInvalidRequest.
	AllowBatch func() bool
	// OnCancel, if set, is called when a [Conn.Call] gives up on its
	// response because its context ended, with the request's id, also when
	// the context ended while the request was being written. MCP uses it
	// to send notifications/cancelled.
	OnCancel func(id ID, cause error)
	// OnReceive, if set, is called for every incoming request and
	// notification (batch elements included) in the order they arrived,
	// on the goroutine that delivers them and before any is handled
	// (handlers run concurrently, so they may start in another order). It
	// must return promptly. MCP uses it to admit requests a client
	// pipelines behind initialize.
	OnReceive func(req *Request)
	// QuickNotification, if set, reports whether the handler of the
	// incoming notification req returns promptly without waiting for
	// anything (no call to the peer, no code of an application's). Such a
	// notification, arriving while no other is queued or being handled,
	// is handled on the goroutine that delivers it, which spares starting
	// a worker goroutine for it; notifications are handled in arrival
	// order either way. MCP uses it for notifications/initialized and
	// the like when no application handler is set for them.
	QuickNotification func(req *Request) bool
	// OnClose, if set, is called once when the connection shuts down, with
	// the reason (see [Conn.Err]). It runs in the goroutine that shut the
	// connection down and must not block.
	OnClose func(err error)
	// Logger receives internal errors (undeliverable responses, handler
	// panics, write failures). Nil discards them.
	Logger *slog.Logger
	// DrainTimeout bounds how long the connection keeps serving after
	// the peer ended its input cleanly (Read returned io.EOF), as a
	// client of a stdio server does when it has sent its last request
	// and closed the server's standard input: the requests already read
	// are handled and their responses written, and the notifications
	// already read are delivered, before the connection shuts down. Calls
	// waiting for the peer fail at once, since no answer can come. Once
	// the timeout passes, the remaining handlers' contexts are cancelled
	// and the connection shuts down. Zero means [DefaultDrainTimeout]; a
	// negative value shuts down at once. It applies to streams the
	// connection reads; a [PushStream]'s end shuts it down at once.
	DrainTimeout time.Duration
	// SkipUndecodable, when set, skips incoming messages that cannot be
	// decoded and carry no id, such as lines that are not JSON, logging
	// them (the first at warning level, later ones at debug level)
	// instead of answering each with an error that names no request.
	// JSON-RPC requires a server to answer them, which is the default;
	// a client, whose peer may write stray output (an MCP server on
	// stdio), sets it. Undecodable messages with an id are answered
	// either way.
	SkipUndecodable bool
	// OnSkip, if set, is called with each message SkipUndecodable skips,
	// in place of the connection's own logging of it, on the goroutine
	// that reads. It must return promptly.
	OnSkip func(de *DecodeError)
	// MaxQueuedErrors bounds the error responses the connection
	// produces itself while reading (for undecodable messages, requests
	// past MaxInFlight, duplicate ids, refused batches) that wait to be
	// written. A goroutine of their own writes them, so reading does not
	// wait for each to be written; once that many wait (the peer is not
	// reading), reading waits for room: no answer is dropped, and what
	// the connection holds stays bounded. Zero means 64. (A [PushStream]
	// delivers on goroutines of its own, which write these answers
	// themselves.)
	MaxQueuedErrors int
	// BaseContext is the parent of the contexts the connection's handlers
	// get: its values reach them, and its end cancels them (as Close
	// does, without closing the connection). Nil means the stream's
	// BaseContext when it has a BaseContext() context.Context method (as
	// a server-side HTTP transport's connection for one exchange has), else
	// context.Background().
	BaseContext context.Context
	// InlineHandoff applies to streams that can tell whether more input
	// is already buffered (the stdio server transport of package transport
	// on Linux): a request read while nothing else is buffered runs on the
	// goroutine that read it, which saves a goroutine switch, and
	// InlineHandoff is how long its handler may run there before reading
	// moves to a new goroutine. Zero
	// means DefaultInlineHandoff; a negative value turns inline handling
	// off, so that every request gets a goroutine of its own.
	InlineHandoff time.Duration
}

// DefaultInlineHandoff is the default of [ConnOptions.InlineHandoff]:
// a request read on its own from a stream that buffers its input
// holds up reading for at most this long.
const DefaultInlineHandoff = 200 * time.Microsecond

// DefaultDrainTimeout is the default of [ConnOptions.DrainTimeout]: after
// the peer ends its input, the requests already read get this long to be
// answered.
const DefaultDrainTimeout = 5 * time.Second

// Conn is a JSON-RPC connection over a [Stream]. It multiplexes concurrent
// outgoing calls and concurrent incoming requests in both directions.
//
// Every request read gets exactly one answer (unless the peer cancels
// it, see [Conn.Cancel]), and no notification read is dropped. Responses
// are written by the goroutines that handle requests, and the errors the
// connection answers by itself by a goroutine of their own, so reading
// does not wait for a write; it waits only where a bound is reached (see
// [ConnOptions.MaxQueuedErrors] and [ConnOptions.MaxQueuedNotifications]),
// which a peer that reads what it is sent never meets.
//
// A Conn is created with [NewConn] and starts reading when [Conn.Start] is
// called. All methods are safe for concurrent use.
type Conn struct {
	requestBase context.Context // ConnOptions.BaseContext, the stream's, or ctx without its cancellation
	stream      Stream
	handler     Handler
	maxInFlight int
	maxQueued   int
	allowBatch  func() bool
	onCancel    func(ID, error)
	onClose     func(error)
	onReceive   func(*Request)
	quickNote   func(*Request) bool
	logger      *slog.Logger
	buffered    bufferedStream // stream, when handlers may run inline
	binder      contextBinder  // stream, when it binds handlers' contexts; nil otherwise
	handoffIn   time.Duration
	drainFor    time.Duration // negative: no drain
	maxErrs     int
	push        bool // stream is a PushStream
	skipBad     bool
	onSkip      func(*DecodeError)

	ctx    context.Context // cancelled on close; parent of handler contexts
	cancel context.CancelFunc
	// replyCtx is the context responses are written with: c.ctx's values,
	// never cancelled.
	replyCtx context.Context
	nextID   atomic.Int64
	spare    atomic.Pointer[chan *Response] // an empty channel with room for one response, for the next call
	done     chan struct{}                  // closed when the connection is shut down
	reader   chan struct{}                  // closed when reading has ended for good
	// inputEnded is closed when the peer ended its input: calls
	// waiting for an answer fail, since none can come.
	inputEnded chan struct{}
	wg         sync.WaitGroup
	// handoff moves reading to a new goroutine when an inline handler
	// runs past handoffIn. Created on first use; owned by whichever
	// goroutine reads.
	handoff *time.Timer

	mu       sync.Mutex
	err      error                             // why the connection closed
	pending  slotmap.Map[ID, pendingCall]      // outgoing calls awaiting a response (usually one), by id
	incoming slotmap.Map[ID, *incomingRequest] // incoming requests being handled (usually one), by id
	inFlight int                               // incoming requests being handled, those cancelled by the peer included
	notes    lazyQueue[inbound]                // notifications awaiting their handler, and responses read after them
	errq     lazyQueue[*Response]              // error responses awaiting writing
	skipped  int                               // undecodable messages skipped
	endErr   error                             // why input ended; non-nil once inputEnded is closed
	// The notification worker: noteTurn numbers the notifications
	// handed to the handler; noteCur is the one whose handler the
	// current worker runs, or zero. A handler that runs past noteHandoff
	// while messages wait behind it is left to finish on its goroutine
	// (one of noteDetached) while a new worker goes on (see noteDue).
	// noteTimer runs only while messages wait behind a handler (see
	// watchNoteLocked): a handler with nothing behind it holds no one up.
	noteTurn     uint64
	noteCur      uint64
	noteStarted  time.Time
	noteOverdue  bool // noteCur has run past noteHandoff
	noteDetached int
	noteTimer    *time.Timer
	noteArmed    bool // noteTimer is set to go off
	noteHandoff  time.Duration
	noteCtx      context.Context // c.ctx, marked as a notification handler's (see noteKey)
	// turn numbers the requests run inline; lent is the turn whose
	// handler holds the reading goroutine, or zero (reading is not lent,
	// or was handed to another goroutine). readEnded is set once reader
	// is closed.
	turn      uint64
	lent      uint64
	started   bool
	closed    bool
	readEnded bool
}

// incomingRequest is a request being handled. Its handler's context
// carries it (see RelatedRequest), which is also how an early answer
// (rpclink.Answer) finds it.
type incomingRequest struct {
	// Context is the parent of the handler's context, which is derived
	// from the incomingRequest itself: Value gives the request as the
	// context's related request (see withRelatedRequest), one allocation
	// fewer than a context.WithValue around the parent.
	context.Context
	req       *Request
	conn      *Conn
	cancel    context.CancelCauseFunc
	collect   func(*Response) // where its response goes
	cancelled bool            // cancelled by the peer: send no response
	answered  bool            // its response went (early, or the handler returned); c.mu
	onRunner  bool            // its handler runs on a goroutine the stream lent; set before it starts
}

// Value implements context.Context for the handler's context derived
// from in: in is its related request.
func (in *incomingRequest) Value(key any) any {
	if _, ok := key.(relatedKey); ok {
		return in
	}
	return in.Context.Value(key)
}

// pendingCall is an outgoing call awaiting its response.
type pendingCall struct {
	ch chan *Response
	// fromNote is set for a call made with the context of a notification
	// handler of the connection: its response is not held behind the
	// notifications read before it, one of which may be that handler's.
	fromNote bool
}

// inbound is an item of the notification queue: a notification, or a
// response (note nil) held there until the notifications read before it
// have been handled, then passed to ch.
type inbound struct {
	note *Request
	resp *Response
	ch   chan *Response
}

// noteKey marks the context of a notification handler; its value is the
// connection.
type noteKey struct{}

// defaultNoteHandoff is how long a notification handler may hold up the
// messages read after it (see ConnOptions.MaxQueuedNotifications).
const defaultNoteHandoff = time.Second

// NewConn returns a connection over s. It does not read until Start.
func NewConn(s Stream, opts *ConnOptions) *Conn {
	if opts == nil {
		opts = &ConnOptions{}
	}
	c := &Conn{
		stream:      s,
		handler:     opts.Handler,
		maxInFlight: opts.MaxInFlight,
		maxQueued:   opts.MaxQueuedNotifications,
		allowBatch:  opts.AllowBatch,
		onCancel:    opts.OnCancel,
		onClose:     opts.OnClose,
		onReceive:   opts.OnReceive,
		quickNote:   opts.QuickNotification,
		logger:      opts.Logger,
		done:        make(chan struct{}),
		drainFor:    opts.DrainTimeout,
		skipBad:     opts.SkipUndecodable,
		onSkip:      opts.OnSkip,
		maxErrs:     opts.MaxQueuedErrors,
		noteHandoff: defaultNoteHandoff,
	}
	c.binder, _ = s.(contextBinder)
	if c.maxInFlight <= 0 {
		c.maxInFlight = 256
	}
	if c.maxQueued <= 0 {
		c.maxQueued = 4096
	}
	if c.maxErrs <= 0 {
		c.maxErrs = 64
	}
	if c.drainFor == 0 {
		c.drainFor = DefaultDrainTimeout
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if _, c.push = s.(PushStream); !c.push {
		// A push stream has no read loop, and its end shuts the
		// connection down at once: it needs neither channel, and an idle
		// HTTP session is the smaller for it.
		c.reader = make(chan struct{})
		c.inputEnded = make(chan struct{})
	}
	if bs, ok := s.(bufferedStream); ok && opts.InlineHandoff >= 0 {
		c.buffered = bs
		c.handoffIn = opts.InlineHandoff
		if c.handoffIn == 0 {
			c.handoffIn = DefaultInlineHandoff
		}
	}
	base := opts.BaseContext
	if bc, ok := s.(baseContexter); ok && base == nil {
		base = bc.BaseContext()
	}
	// The contexts of requests descend from a given base directly or,
	// without one, from the connection's context without its
	// cancellation; either way the connection cancels them itself when it
	// shuts down. So the connection's context keeps no track of them, and
	// a request's context registers with no parent of the connection's
	// (a lock and a map entry, made and undone per request).
	c.requestBase = base
	if base == nil {
		base = context.Background()
	}
	c.ctx, c.cancel = context.WithCancel(base)
	c.replyCtx = context.WithoutCancel(c.ctx)
	if c.requestBase == nil {
		c.requestBase = c.replyCtx
	}
	return c
}

// Start begins reading the stream in a new goroutine, or, for a
// [PushStream], asks the stream to start delivering. Calling it more than
// once has no effect.
func (c *Conn) Start() {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return
	}
	c.started = true
	c.mu.Unlock()
	if ps, ok := c.stream.(PushStream); ok {
		ps.Push(c.dispatch, func(err error) { c.shutdown(err) })
		return
	}
	go c.readLoop()
}

// Done returns a channel closed when the connection has shut down, because
// Close was called, the peer ended the stream (once the requests already
// read are answered, see [ConnOptions.DrainTimeout]), or reading failed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection shut down: io.EOF when the peer ended the
// stream cleanly, [ErrClosed] after Close, or the read error. It returns
// nil while the connection is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close shuts the connection down: pending calls fail with [ErrClosed],
// handler contexts are cancelled, the stream is closed, and Close waits for
// the read loop and the notification worker to return. It does not wait
// for request handlers; use [Conn.Wait] for that. Close is idempotent.
func (c *Conn) Close() error {
	err := c.shutdown(ErrClosed)
	c.waitReader()
	return err
}

// waitReader waits for the read loop, if the connection has one and it
// was started, to return.
func (c *Conn) waitReader() {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started && c.reader != nil {
		<-c.reader
	}
}

// Wait blocks until the connection has shut down and every handler
// goroutine has returned, then returns the reason the connection shut down.
func (c *Conn) Wait() error {
	<-c.done
	c.waitReader()
	c.wg.Wait()
	return c.Err()
}

// shutdown closes the connection once, recording err as the reason.
func (c *Conn) shutdown(err error) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.err = err
	c.cancel()
	// Requests descend from the base, not from c.ctx.
	c.incoming.DeleteFunc(func(_ ID, in *incomingRequest) bool {
		in.cancel(nil)
		return false
	})
	if c.lent != 0 {
		// Reading is lent to a handler that may take a while; nobody
		// reads a closed connection, so reading ends here.
		c.lent = 0
		c.endReadingLocked()
	}
	// Responses held behind notifications go to their calls now: the
	// notifications will not be delivered.
	for _, it := range c.notes.items {
		if it.note == nil {
			it.ch <- it.resp
		}
	}
	if c.noteTimer != nil {
		c.noteTimer.Stop()
	}
	c.mu.Unlock()
	close(c.done)
	cerr := c.stream.Close()
	if c.onClose != nil {
		c.onClose(err)
	}
	if cerr != nil && !errors.Is(err, io.EOF) {
		return cerr
	}
	return nil
}

// Call sends a request and waits for its response. params must be raw JSON
// (an object or array) or nil. The result is the raw JSON of the response's
// result; a peer's error is returned as an [*Error]. A response that
// could not be decoded because it exceeds the decoder's limits fails the
// call at once (it is not answered to the peer) with an error wrapping
// the [*DecodeError], whose Cause, a [*LimitError], names the limit.
//
// The notifications the peer sent before the response have been handled
// when Call returns (see [ConnOptions.MaxQueuedNotifications] for the
// exceptions).
//
// If ctx ends first, Call returns ctx.Err() (wrapped), forgets the request,
// and reports it to [ConnOptions.OnCancel]. If the connection closes first,
// Call returns an error that matches [ErrClosed].
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.send(ctx, method, params, nil)
}

// callFramed is Call with params encoded in a frame (rpclink.CallFramed).
func (c *Conn) callFramed(ctx context.Context, method string, params *rpclink.Framed) (json.RawMessage, error) {
	return c.send(ctx, method, params.Value(), params)
}

// send is Call; frame, if not nil, holds params with room for the
// envelope.
func (c *Conn) send(ctx context.Context, method string, params json.RawMessage, frame *rpclink.Framed) (json.RawMessage, error) {
	// Package mcp may choose the id (subscriptions/listen) or want to
	// know it (an observer).
	var id ID
	hook := rpclink.CallHookOf[ID](ctx)
	if hook != nil && hook.Chosen {
		id = hook.ID
	} else {
		id = Int64ID(c.nextID.Add(1))
	}
	if hook != nil && hook.Sent != nil {
		hook.Sent(id)
	}
	// The channel the last call that received its response gave back,
	// or a new one. A channel goes back only once its one response was
	// received: a call that ends otherwise (its context, the
	// connection's end) leaves its channel to whoever may still send on
	// it.
	box := c.spare.Swap(nil)
	if box == nil {
		box = new(chan *Response)
		*box = make(chan *Response, 1)
	}
	ch := *box
	c.mu.Lock()
	fromNote := false
	if c.noteCur != 0 || c.noteDetached > 0 {
		// A notification handler may be calling: see pendingCall.
		v, _ := ctx.Value(noteKey{}).(*Conn)
		fromNote = v == c
	}
	if c.closed || c.endErr != nil {
		err := c.err
		if !c.closed {
			err = c.endErr
		}
		c.mu.Unlock()
		c.spare.Store(box) // never registered: nobody sends on it
		return nil, closedError(err)
	}
	if _, dup := c.pending.Get(id); dup {
		c.mu.Unlock()
		c.spare.Store(box)
		return nil, fmt.Errorf("jsonrpc: sending %s: request id %s is in flight already", method, id)
	}
	c.pending.Set(id, pendingCall{ch: ch, fromNote: fromNote})
	if c.lent != 0 {
		// The goroutine that reads is running a handler; the response
		// needs a reader now.
		c.handOffLocked()
	}
	c.mu.Unlock()

	if err := c.stream.Write(ctx, &Request{ID: id, Method: method, Params: params, frame: frame}); err != nil {
		if c.forget(id) {
			c.spare.Store(box) // still pending, so never answered
		}
		if ctx.Err() != nil && c.onCancel != nil {
			// The write was cut short by ctx, perhaps after the peer got
			// the request (an HTTP POST whose answer had not come yet):
			// tell it, as for a request cancelled later. A peer that never
			// got the request ignores the cancellation.
			c.onCancel(id, context.Cause(ctx))
		}
		return nil, fmt.Errorf("jsonrpc: sending %s: %w", method, err)
	}
	select {
	case r := <-ch:
		c.spare.Store(box)
		return callResult(method, r)
	case <-ctx.Done():
		c.forget(id)
		if c.onCancel != nil {
			c.onCancel(id, context.Cause(ctx))
		}
		return nil, fmt.Errorf("jsonrpc: %s: %w", method, ctx.Err())
	case <-c.inputEnded:
	case <-c.done:
	}
	// The connection closed or the peer can no longer answer.
	if !c.forget(id) {
		// The response was read, perhaps held behind notifications:
		// it comes before the connection shuts down (see shutdown).
		select {
		case r := <-ch:
			return callResult(method, r)
		case <-c.done:
		}
	}
	// A response may have raced with the end: responses read before the
	// end of input are delivered before inputEnded is closed.
	select {
	case r := <-ch:
		return callResult(method, r)
	default:
	}
	return nil, closedError(c.endReason())
}

// callResult returns the outcome of the call to method that r answers.
// A response that could not be decoded, such as one over the
// [DecodeLimits], comes as a [*DecodeError] in r.Extra: the error wraps
// it, so errors.As finds it and its Cause (a [*LimitError] naming the
// limit).
func callResult(method string, r *Response) (json.RawMessage, error) {
	if de, ok := r.Extra.(*DecodeError); ok {
		return nil, fmt.Errorf("jsonrpc: %s: the peer's response could not be decoded: %w", method, de)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// endReason returns why the connection closed or, while it drains, why
// its input ended.
func (c *Conn) endReason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.err
	}
	return c.endErr
}

func closedError(reason error) error {
	if reason == nil || errors.Is(reason, ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("%w: %w", ErrClosed, reason)
}

// forget forgets the call id, reporting whether it was still waiting
// for its response.
func (c *Conn) forget(id ID) bool {
	c.mu.Lock()
	_, ok := c.pending.Get(id)
	c.pending.Delete(id)
	c.mu.Unlock()
	return ok
}

// Notify sends a notification. ctx bounds the write, and tells request-
// scoped transports which incoming request the notification belongs to.
func (c *Conn) Notify(ctx context.Context, method string, params json.RawMessage) error {
	select {
	case <-c.done:
		return closedError(c.Err())
	default:
	}
	if err := c.stream.Write(ctx, &Request{Method: method, Params: params}); err != nil {
		return fmt.Errorf("jsonrpc: sending %s: %w", method, err)
	}
	return nil
}

// Cancel cancels the context of the incoming request id, if it is still
// being handled, and suppresses its response, as MCP requires for
// requests the peer cancelled. It reports whether the request was found.
//
// The id is free again at once: a request that the peer sends with it
// afterwards is served, even while the cancelled handler is still
// returning (which still counts towards [ConnOptions.MaxInFlight]). So
// Cancel must be applied once, in arrival order (see
// [ConnOptions.OnReceive]): applied again later, it would cancel that
// new request.
func (c *Conn) Cancel(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.incoming.Get(id)
	if ok {
		r.cancelled = true
		r.cancel(nil)
		c.incoming.Delete(id)
	}
	return ok
}

// readLoop reads messages until the stream fails, dispatching each. It
// returns early, leaving reading to another goroutine, when it lent itself
// to a request's handler that was slow or needed the peer (see
// bufferedStream).
func (c *Conn) readLoop() {
	for {
		m, err := c.stream.Read(c.ctx)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				c.undecodable(de)
				continue
			}
			c.endInput(err)
			return
		}
		if req, ok := m.(*Request); ok && c.buffered != nil && !req.IsNotification() && !c.buffered.Buffered() {
			if !c.serveInline(req) {
				return
			}
			continue
		}
		c.dispatch(m)
	}
}

// serveInline runs req's handler on the reading goroutine, arming the
// handoff timer meanwhile, unless other requests are being handled: then
// the connection is busy and req gets a goroutine of its own, so that
// concurrent callers are served concurrently. It reports whether this
// goroutine still reads afterwards.
func (c *Conn) serveInline(req *Request) bool {
	c.received(req)
	run, _, alone := c.prepareRequest(req, c.reply, c.replyFromReader)
	switch {
	case run == nil:
		return true // answered already
	case !alone:
		go run()
		return true
	}
	c.mu.Lock()
	c.turn++
	turn := c.turn
	c.lent = turn
	if c.handoff == nil {
		c.handoff = time.AfterFunc(c.handoffIn, c.handOff)
	} else {
		c.handoff.Reset(c.handoffIn)
	}
	c.mu.Unlock()

	run()

	c.mu.Lock()
	c.handoff.Stop()
	// If this turn was handed off, lent is zero or a later turn that
	// the new reading goroutine lent.
	stillReading := c.lent == turn
	if stillReading {
		c.lent = 0
	}
	c.mu.Unlock()
	return stillReading
}

// handOff moves reading to a new goroutine if the reading goroutine is
// still lent to a handler; the handoff timer calls it.
func (c *Conn) handOff() {
	c.mu.Lock()
	if c.lent != 0 {
		c.handOffLocked()
	}
	c.mu.Unlock()
}

// handOffLocked starts a new reading goroutine in place of the one lent
// to a handler. c.mu must be held and c.lent non-zero.
func (c *Conn) handOffLocked() {
	c.lent = 0
	go c.readLoop()
}

// endInput ends reading after Read failed with err. When the peer ended
// its input cleanly, the requests already read are served first (see
// [ConnOptions.DrainTimeout]).
func (c *Conn) endInput(err error) {
	c.mu.Lock()
	closed := c.closed
	if !closed && c.endErr == nil { // err is never nil: Read failed
		c.endErr = err
		close(c.inputEnded)
	}
	c.mu.Unlock()
	if !closed && err == io.EOF && c.drainFor > 0 {
		c.drain()
	}
	c.shutdown(err)
	c.endReading()
}

// drain waits until every handler, the notification worker and the error
// writer have returned, the drain timeout passes, or the connection
// closes, whichever comes first.
func (c *Conn) drain() {
	idle := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(idle)
	}()
	t := time.NewTimer(c.drainFor)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		c.logger.Warn("jsonrpc: requests still being handled when the drain timeout passed after end of input", "timeout", c.drainFor)
	case <-c.done:
	}
}

// undecodable answers, or skips, a message that could not be decoded.
//
// A response (see [DecodeError.Response]) is never answered: it fails
// the call it answers, if any, with de (see Call), and is otherwise
// dropped.
func (c *Conn) undecodable(de *DecodeError) {
	if de.Response && de.ID.IsValid() {
		c.deliver(&Response{ID: de.ID, Error: de.Err, Extra: de})
		return
	}
	if c.skipBad && !de.ID.IsValid() {
		if c.onSkip != nil {
			c.onSkip(de)
			return
		}
		c.mu.Lock()
		c.skipped++
		first := c.skipped == 1
		c.mu.Unlock()
		level := slog.LevelDebug
		if first {
			level = slog.LevelWarn
		}
		c.logger.Log(c.replyCtx, level, "jsonrpc: skipping an undecodable message from the peer", "err", de.Err)
		return
	}
	c.replyFromReader(&Response{ID: de.ID, Error: de.Err})
}

// replyFromReader writes a response produced while receiving a message.
// A [PushStream] delivers on goroutines of its own, such as the one
// serving an HTTP request, which may wait for the write; otherwise the
// goroutine reading must not, and the response is queued (see
// replyAsync).
func (c *Conn) replyFromReader(r *Response) {
	if c.push {
		c.reply(r)
		return
	}
	c.replyAsync(r)
}

// replyAsync queues a response for the error writer, so that the
// goroutine reading never waits for the peer to read (see
// [ConnOptions.MaxQueuedErrors]).
func (c *Conn) replyAsync(r *Response) {
	if r == nil {
		return // a suppressed response
	}
	c.mu.Lock()
	for warned := false; ; {
		if c.closed {
			c.mu.Unlock()
			return
		}
		ok, start := c.errq.push(r, c.maxErrs)
		if ok {
			if start {
				c.wg.Add(1)
				go c.errorLoop()
			}
			c.mu.Unlock()
			return
		}
		// The peer is not reading: stop reading until it does.
		room := c.errq.wait()
		c.mu.Unlock()
		if !warned {
			warned = true
			c.logger.Debug("jsonrpc: error response queue full (the peer is not reading); reading waits", "id", r.ID.String())
		}
		select {
		case <-room:
		case <-c.done:
		}
		c.mu.Lock()
	}
}

// errorLoop writes queued error responses until the queue is empty or the
// connection closes.
func (c *Conn) errorLoop() {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		r, ok := c.errq.pop(c.closed)
		c.mu.Unlock()
		if !ok {
			return
		}
		c.reply(r)
	}
}

// endReading records that reading has ended for good, once.
func (c *Conn) endReading() {
	c.mu.Lock()
	c.endReadingLocked()
	c.mu.Unlock()
}

func (c *Conn) endReadingLocked() {
	if !c.readEnded && c.reader != nil {
		c.readEnded = true
		close(c.reader)
	}
}

// received reports an incoming request or notification to
// ConnOptions.OnReceive, in arrival order.
func (c *Conn) received(r *Request) {
	if c.onReceive != nil {
		c.onReceive(r)
	}
}

func (c *Conn) dispatch(m Message) {
	switch m := m.(type) {
	case *Request:
		c.received(m)
		if m.IsNotification() {
			c.enqueue(m)
			return
		}
		c.startRequest(m, nil)
	case *Response:
		c.deliver(m)
	case *DecodeError:
		c.undecodable(m)
	case Batch:
		c.dispatchBatch(m)
	}
}

// reply writes a response outside any handler, logging failures.
func (c *Conn) reply(r *Response) {
	if r == nil {
		return // a suppressed response
	}
	// A response already computed is still sent while the stream is open,
	// even if Close has begun: the peer is waiting for it.
	if err := c.stream.Write(c.replyCtx, r); err != nil {
		c.logger.Debug("jsonrpc: write failed", "id", r.ID.String(), "err", err)
	}
}

// deliver passes r to the call waiting for it: at once, unless
// notifications read before it are still being handled; then after them,
// so that what the peer sent before its answer has reached the handlers
// when the call returns.
func (c *Conn) deliver(r *Response) {
	c.mu.Lock()
	p, ok := c.pending.Get(r.ID)
	c.pending.Delete(r.ID)
	if !ok {
		c.mu.Unlock()
		c.logger.Debug("jsonrpc: response to unknown request", "id", r.ID.String())
		return
	}
	if !p.fromNote && !c.closed && (c.noteCur != 0 || len(c.notes.items) > 0) {
		// Not bounded by MaxQueuedNotifications: held responses are
		// bounded by the calls made.
		c.notes.push(inbound{resp: r, ch: p.ch}, -1)
		c.watchNoteLocked()
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	p.ch <- r
}

// enqueue queues a notification for in-order delivery, starting the worker
// if none is running. While MaxQueuedNotifications wait, it waits for
// room: reading stops rather than drop one.
func (c *Conn) enqueue(n *Request) {
	quick := c.quickNote != nil && c.quickNote(n)
	c.mu.Lock()
	if quick && !c.notes.running && !c.closed {
		c.runNoteHere(n)
		return
	}
	for warned := false; ; {
		if c.closed {
			c.mu.Unlock()
			return
		}
		ok, start := c.notes.push(inbound{note: n}, c.maxQueued)
		if ok {
			if start {
				c.wg.Add(1)
				go c.notifyLoop()
			} else {
				c.watchNoteLocked()
			}
			c.mu.Unlock()
			return
		}
		room := c.notes.wait()
		c.mu.Unlock()
		if !warned {
			warned = true
			c.logger.Debug("jsonrpc: notification queue full; reading waits", "method", n.Method)
		}
		select {
		case <-room:
		case <-c.done:
		}
		c.mu.Lock()
	}
}

// notifyLoop delivers queued notifications one at a time, and the
// responses held behind them, until the queue is empty, the connection
// closes, or a handler it runs is left behind (see noteDue).
func (c *Conn) notifyLoop() {
	defer c.wg.Done()
	// A worker lives for a burst of notifications, whose handlers go as
	// deep as a request's (notifications/initialized's does): grown here,
	// its stack is copied once with nothing to walk (see growStack).
	growStack()
	c.mu.Lock()
	for {
		it, ok := c.notes.pop(c.closed)
		if !ok {
			c.mu.Unlock()
			return
		}
		if it.note == nil {
			c.mu.Unlock()
			it.ch <- it.resp
			c.mu.Lock()
			continue
		}
		turn, base := c.beginNoteLocked()
		c.mu.Unlock()
		c.runNote(base, it.note)
		c.mu.Lock()
		if !c.endNoteLocked(turn) {
			// Left behind: another worker has taken over.
			c.mu.Unlock()
			return
		}
	}
}

// runNoteHere handles the quick notification n (see
// ConnOptions.QuickNotification) on the calling goroutine, in place of a
// worker: the queue is marked as drained meanwhile, so that what arrives
// behind n waits for it, and a worker takes on what did, if anything.
// c.mu is held on entry and released.
func (c *Conn) runNoteHere(n *Request) {
	c.notes.running = true
	c.wg.Add(1)
	defer c.wg.Done()
	turn, base := c.beginNoteLocked()
	c.mu.Unlock()
	c.runNote(base, n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.endNoteLocked(turn) {
		return // left behind: a worker took over the queue
	}
	if len(c.notes.items) == 0 || c.closed {
		c.notes.running = false
		return
	}
	c.wg.Add(1)
	go c.notifyLoop()
}

// beginNoteLocked makes the handler about to run the current one, and
// returns its turn and the context to run it under. c.mu is held.
func (c *Conn) beginNoteLocked() (uint64, context.Context) {
	c.noteTurn++
	c.noteCur = c.noteTurn
	c.noteOverdue = false
	c.noteStarted = time.Now()
	c.watchNoteLocked()
	if c.noteCtx == nil {
		c.noteCtx = context.WithValue(c.ctx, noteKey{}, c)
	}
	return c.noteCur, c.noteCtx
}

// runNote runs the handler of notification n under base.
func (c *Conn) runNote(base context.Context, n *Request) {
	ctx := c.bindContext(base, nil, n)
	_, err := c.call(ctx, n)
	c.releaseContext(ctx)
	if err != nil {
		c.logger.Debug("jsonrpc: notification handler failed", "method", n.Method, "err", err)
	}
}

// endNoteLocked ends the turn of a handler that returned. It reports
// false if the handler was left behind meanwhile (see
// handOffIfOverdueLocked), when the goroutine that ran it has nothing
// left to do. c.mu is held.
func (c *Conn) endNoteLocked(turn uint64) bool {
	if c.noteCur != turn {
		c.noteDetached--
		return false
	}
	c.noteCur = 0
	if c.noteArmed {
		c.noteArmed = false
		c.noteTimer.Stop()
	}
	return true
}

// watchNoteLocked makes sure that messages waiting behind the running
// notification handler are handed to a new worker once the handler has
// run for noteHandoff: at once if it has, or when noteTimer goes off. It
// does nothing while nothing waits, so that the timer (and the wake-up of
// the runtime's poller that setting one can cost) is spared to the usual
// handler, which returns before anything arrives behind it. c.mu is held.
func (c *Conn) watchNoteLocked() {
	if c.noteCur == 0 || len(c.notes.items) == 0 || c.closed {
		return
	}
	if c.noteOverdue {
		c.handOffIfOverdueLocked()
		return
	}
	if c.noteArmed {
		return
	}
	left := c.noteHandoff - time.Since(c.noteStarted)
	if left <= 0 {
		c.noteOverdue = true
		c.handOffIfOverdueLocked()
		return
	}
	c.noteArmed = true
	if c.noteTimer == nil {
		c.noteTimer = time.AfterFunc(left, c.noteDue)
	} else {
		c.noteTimer.Reset(left)
	}
}

// noteDue runs when noteTimer goes off: the handler it was set for has
// run for noteHandoff, unless that one returned and another runs since.
func (c *Conn) noteDue() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noteArmed = false
	// For a handler that started since, this sets the timer again, for
	// what is left of its time.
	c.watchNoteLocked()
}

// handOffIfOverdueLocked leaves the notification handler that has run
// past noteHandoff to finish on its own, and starts a new worker for the
// messages waiting behind it, if any: a handler that waits (for the
// answer to a call of its own, say) holds up neither the notifications
// after it nor, once the queue is full, reading. At most MaxInFlight
// handlers are left behind at once; past that, the queue waits for them.
// c.mu is held.
func (c *Conn) handOffIfOverdueLocked() {
	if !c.noteOverdue || c.noteCur == 0 || len(c.notes.items) == 0 || c.closed {
		return
	}
	if c.noteDetached >= c.maxInFlight {
		return
	}
	c.noteCur = 0
	c.noteOverdue = false
	c.noteDetached++
	c.wg.Add(1)
	go c.notifyLoop()
}

// startRequest registers an incoming request and handles it in a new
// goroutine (or one the stream lends, see handlerRunner). When collect is
// nil the response is written; otherwise it is passed to collect (for
// batches), with nil for a suppressed response.
func (c *Conn) startRequest(req *Request, collect func(*Response)) {
	runner, _ := c.stream.(handlerRunner)
	immediate := collect
	if collect == nil {
		collect, immediate = c.reply, c.replyFromReader
	} else {
		runner = nil // a batch's requests run side by side
	}
	run, in, _ := c.prepareRequest(req, collect, immediate)
	if run == nil {
		return
	}
	if runner != nil && runner.RunHandler(req, run) {
		// Before run starts, on the goroutine that will run it (the
		// stream runs it after this delivery): nobody reads it sooner.
		in.onRunner = true
		return
	}
	go run()
}

// prepareRequest registers an incoming request and returns the function
// that handles it and passes its response to collect, the request as the
// connection tracks it, and whether no other request was being handled.
// It returns a nil function when the request
// was answered at once (overload, duplicate id, closed connection): that
// answer goes to immediate, which must not wait for the peer when called
// on the reading goroutine.
func (c *Conn) prepareRequest(req *Request, collect, immediate func(*Response)) (run func(), in *incomingRequest, alone bool) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		immediate(nil)
		return nil, nil, false
	case c.inFlight >= c.maxInFlight:
		c.mu.Unlock()
		immediate(&Response{ID: req.ID, Error: ErrOverloaded})
		return nil, nil, false
	}
	if _, dup := c.incoming.Get(req.ID); dup {
		c.mu.Unlock()
		immediate(&Response{ID: req.ID, Error: &Error{Code: CodeInvalidRequest, Message: "invalid request: id already in use by a request in flight"}})
		return nil, nil, false
	}
	alone = c.inFlight == 0
	parent := c.requestBase
	// A variable of its own, not the named result: the closure below
	// captures it, which would move a named result to the heap.
	inc := &incomingRequest{Context: parent, req: req, conn: c, collect: collect}
	ctx, cancel := context.WithCancelCause(inc)
	inc.cancel = cancel
	c.incoming.Set(req.ID, inc)
	c.inFlight++
	c.wg.Add(1)
	c.mu.Unlock()

	return func() {
		growStack()
		hctx := c.bindContext(ctx, cancel, req)
		result, err := c.call(hctx, req)
		c.releaseContext(hctx)
		cancel(nil)
		c.mu.Lock()
		if inc.answered {
			// Answered early (answerEarly did the rest): what the
			// handler returned goes nowhere.
			c.mu.Unlock()
			return
		}
		suppressed := c.endIncomingLocked(inc)
		c.mu.Unlock()
		if suppressed {
			collect(nil)
		} else {
			collect(c.response(req, result, err))
		}
		c.wg.Done()
	}, inc, alone
}

// endIncomingLocked ends the handling of in as far as the connection is
// concerned (its response is about to go) and reports whether the peer
// cancelled it (no response then). c.mu is held.
func (c *Conn) endIncomingLocked(in *incomingRequest) (suppressed bool) {
	in.answered = true
	if cur, ok := c.incoming.Get(in.req.ID); ok && cur == in {
		c.incoming.Delete(in.req.ID)
	}
	c.inFlight--
	return in.cancelled
}

// canAnswerEarly reports whether the request whose handler has ctx can be
// answered before its handler returns (see rpclink.CanAnswer): not when
// the handler runs on a goroutine a stream lent (an HTTP POST's, whose
// response ends only when the handler returns), nor once answered.
func canAnswerEarly(ctx context.Context) bool {
	in, _ := ctx.Value(relatedKey{}).(*incomingRequest)
	if in == nil || in.conn == nil {
		return false
	}
	c := in.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	return !in.onRunner && !in.answered
}

// answerEarly sends result as the response to the request whose handler
// has ctx, while the handler goes on (see rpclink.Answer): the
// connection then counts the request as handled (MaxInFlight, Wait) and
// drops whatever the handler returns. It reports false, sending nothing,
// when the request cannot be answered early.
func answerEarly(ctx context.Context, result []byte) bool {
	in, _ := ctx.Value(relatedKey{}).(*incomingRequest)
	if in == nil || in.conn == nil {
		return false
	}
	c := in.conn
	c.mu.Lock()
	if in.onRunner || in.answered {
		c.mu.Unlock()
		return false
	}
	suppressed := c.endIncomingLocked(in)
	c.mu.Unlock()
	if suppressed {
		in.collect(nil)
	} else {
		in.collect(&Response{ID: in.req.ID, Result: json.RawMessage(result)})
	}
	c.wg.Done()
	return true
}

// call runs the handler, turning a panic into an internal error.
func (c *Conn) call(ctx context.Context, req *Request) (result any, err error) {
	if c.handler == nil {
		if req.IsNotification() {
			return nil, nil
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("jsonrpc: handler panicked", "method", req.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: CodeInternalError, Message: "internal error: handler panicked"}
		}
	}()
	return c.handler.Handle(ctx, req)
}

// response builds the response for a handled request.
func (c *Conn) response(req *Request, result any, err error) *Response {
	if err != nil {
		return &Response{ID: req.ID, Error: ToWire(err)}
	}
	if f, ok := result.(*rpclink.Framed); ok && f != nil {
		return &Response{ID: req.ID, Result: f.Value(), frame: f}
	}
	raw, err := marshalResult(result)
	if err != nil {
		c.logger.Error("jsonrpc: cannot marshal result", "method", req.Method, "err", err)
		return &Response{ID: req.ID, Error: &Error{Code: CodeInternalError, Message: "internal error: cannot encode result"}}
	}
	return &Response{ID: req.ID, Result: raw}
}

func marshalResult(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case *rpclink.Framed:
		if v != nil {
			return v.Value(), nil
		}
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		return v, nil
	case *json.RawMessage:
		// A result encoded by the handler into memory of its own, which
		// it hands over without boxing a slice header.
		if v != nil {
			return *v, nil
		}
	case jsontext.Value:
		return json.RawMessage(v), nil
	case []byte:
		return json.RawMessage(v), nil
	}
	return jsonv2.Marshal(v, jsonv2.Deterministic(true))
}

// dispatchBatch serves a batch: requests concurrently, notifications in
// order, responses to pending calls; the answers go back as one batch.
func (c *Conn) dispatchBatch(b Batch) {
	if c.allowBatch == nil || !c.allowBatch() {
		c.replyFromReader(&Response{Error: &Error{Code: CodeInvalidRequest, Message: "invalid request: batches are not allowed"}})
		return
	}
	var (
		mu      sync.Mutex
		answers Batch
		wg      sync.WaitGroup
	)
	collect := func(r *Response) {
		if r != nil {
			mu.Lock()
			answers = append(answers, r)
			mu.Unlock()
		}
		wg.Done()
	}
	for _, m := range b {
		switch m := m.(type) {
		case *Request:
			c.received(m)
			if m.IsNotification() {
				c.enqueue(m)
				continue
			}
			wg.Add(1)
			c.startRequest(m, collect)
		case *Response:
			c.deliver(m)
		case *DecodeError:
			wg.Add(1)
			collect(&Response{ID: m.ID, Error: m.Err})
		}
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		wg.Wait()
		if len(answers) == 0 {
			return
		}
		if err := c.stream.Write(c.ctx, answers); err != nil {
			c.logger.Debug("jsonrpc: batch write failed", "err", err)
		}
	}()
}
