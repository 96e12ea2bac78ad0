package jsonrpc

import "context"

// Stream is a bidirectional stream of JSON-RPC messages: what a transport
// provides and a [Conn] consumes.
//
// Read is called from one goroutine at a time; Write may be called
// concurrently and must write each message whole. Close unblocks pending
// Read and Write calls, which then return errors. Read returns io.EOF when
// the peer ended the stream cleanly, and a [*DecodeError] (without ending
// the stream) when one message could not be decoded.
//
// Write's context carries the related incoming request, if any (see
// [RelatedRequest]), so a transport with request-scoped streams, such as
// Streamable HTTP, can route a response or a request-related notification
// to the stream of the request it belongs to.
type Stream interface {
	Read(ctx context.Context) (Message, error)
	Write(ctx context.Context, m Message) error
	Close() error
}

// PushStream is a [Stream] that delivers incoming messages by calling the
// connection back, instead of having a goroutine wait in Read. A transport
// whose messages arrive on goroutines it does not own (one per HTTP
// request, say) implements it so that an idle connection holds no
// goroutine at all.
//
// When a [Conn]'s stream implements PushStream, [Conn.Start] calls Push
// once and never calls Read. The stream then calls receive for each
// incoming message, from one goroutine at a time and in arrival order (a
// *[DecodeError] is answered like one returned by Read), and calls end
// once, with the reason, when no more messages will arrive; io.EOF means
// the peer ended the stream cleanly. receive does not block on handlers:
// requests are handled on their own goroutines.
type PushStream interface {
	Stream
	Push(receive func(Message), end func(error))
}

// baseContexter may be implemented by a [Stream] that serves one exchange
// bounded by a context, such as an HTTP request: a [Conn] over it makes
// that context the parent of its handlers' contexts (unless
// [ConnOptions.BaseContext] is set), so that the end of the exchange
// cancels them without a watcher of their own.
type baseContexter interface {
	BaseContext() context.Context
}

// handlerRunner may be implemented by a [PushStream] whose messages arrive
// on goroutines that can serve them, such as the goroutine of the HTTP
// request that carried a request: running the handler there spares a
// goroutine switch on each side of it.
//
// For each incoming request (outside a batch) the [Conn] offers the
// function that runs the handler and sends its response to RunHandler,
// during the receive call that delivered req. If RunHandler returns true,
// the stream has taken f and must call it exactly once, on any goroutine
// and at any time, typically on the delivering goroutine once receive has
// returned; until f returns, [Conn.Wait] waits for it. If RunHandler
// returns false, the Conn runs f on a goroutine of its own, as it does
// for any other stream.
type handlerRunner interface {
	RunHandler(req *Request, f func()) bool
}

// bufferedStream may be implemented by a [Stream] that can tell whether
// its next Read would return at once. A [Conn] reading such a stream runs
// a request's handler on the reading goroutine when nothing else is
// buffered, instead of starting a goroutine for it: a request answered
// quickly then costs no goroutine switch, which is most of the round trip
// on a stream read with blocking system calls, such as standard input.
// Reading moves to a new goroutine as soon as the handler sends a request
// of its own, and when it has not returned within
// [ConnOptions.InlineHandoff], so a slow handler never holds up the
// connection for longer than that.
//
// Buffered is called on the reading goroutine, right after Read returned.
type bufferedStream interface {
	Stream
	// Buffered reports whether more input is already buffered, so that
	// the next Read need not wait.
	Buffered() bool
}

type relatedKey struct{}

// withRelatedRequest returns a context recording that messages written with
// it belong to the incoming request in (a pointer: no allocation to box it).
func withRelatedRequest(ctx context.Context, in *incomingRequest) context.Context {
	return context.WithValue(ctx, relatedKey{}, in)
}

// WithoutRelatedRequest returns a context with ctx's values, deadline and
// cancellation but no related request: messages written with it belong
// to no incoming request (a transport that routes by request, such as
// Streamable HTTP, sends them as it sends those written outside any
// handler). It is for work that outlives the request that started it.
func WithoutRelatedRequest(ctx context.Context) context.Context {
	if _, ok := RelatedRequest(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, relatedKey{}, (*incomingRequest)(nil))
}

// relate returns ctx with from's related request, or with none if from has
// none (see rpclink.Relate).
func relate(ctx, from context.Context) context.Context {
	in, _ := from.Value(relatedKey{}).(*incomingRequest)
	if in == nil {
		return WithoutRelatedRequest(ctx)
	}
	return withRelatedRequest(ctx, &incomingRequest{req: in.req}) // the route, not the right to answer
}

// RelatedRequest returns the incoming request that messages written with
// ctx belong to. Conn sets it on handler contexts; a response names its
// request by its own ID.
func RelatedRequest(ctx context.Context) (ID, bool) {
	in, _ := ctx.Value(relatedKey{}).(*incomingRequest)
	if in == nil {
		return ID{}, false
	}
	return in.req.ID, true
}
