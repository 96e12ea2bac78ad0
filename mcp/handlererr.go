package mcp

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ProtocolError is implemented by errors that answer a request with a
// JSON-RPC error of their choosing, such as [*ResourceNotFoundError] and
// [*URLElicitationRequiredError]. WireError returns the error object sent.
//
// # How a handler's error is sent
//
// One rule applies to the error returned by every handler, on the server
// (tools, resources, prompts, completions, subscriptions) and on the
// client (sampling, elicitation), and by receiving middleware:
//
//   - If the error value itself is a [*jsonrpc.Error] or a ProtocolError,
//     the request is answered with that JSON-RPC error. Only the returned
//     value is looked at, not the errors it wraps: a handler that returns
//     fmt.Errorf("...: %w", err) is reporting its own failure, whatever
//     err was.
//   - If the request was cancelled (its context is done) and the error is
//     or wraps [context.Canceled], the request stays cancelled: no response
//     is sent.
//   - Any other error is the handler's own failure. For tools/call it
//     becomes a result with isError set and the error's text as content,
//     which the model can read; for other methods, a JSON-RPC internal
//     error (-32603) carrying the error's text.
//
// Errors of calls a handler makes to the peer (for example
// [ServerSession.CreateMessage] or [ServerSession.Elicit]) are returned
// wrapped, never as a bare *jsonrpc.Error, so a handler that passes one on
// reports a failure of its own rather than the peer's code: a tool whose
// sampling request failed answers with an isError result, not with
// "method not found".
type ProtocolError interface {
	error
	WireError() *jsonrpc.Error
}

// isProtocolError reports whether err, as a handler returned it, chooses
// the JSON-RPC error sent.
func isProtocolError(err error) bool {
	switch err.(type) {
	case *jsonrpc.Error, ProtocolError:
		return true
	}
	return false
}

// isCancellation reports whether err is the cancellation of the request
// whose context is ctx.
func isCancellation(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, context.Canceled)
}

// handlerError applies the rule documented at [ProtocolError] to the error
// of a handler other than a tool's: what it returns is what the
// connection sends.
func handlerError(ctx context.Context, err error) error {
	if isProtocolError(err) || isCancellation(ctx, err) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// peerError wraps the error of a request this side sent when it is a
// bare *jsonrpc.Error or ProtocolError (the peer's answer, or a closed
// connection), so that a handler returning it reports its own failure
// (see [ProtocolError]); errors.As still finds the error inside.
func peerError(method string, err error) error {
	if isProtocolError(err) {
		return &callError{method: method, err: err}
	}
	return err
}

// callError is a peer's error for a request this side sent, wrapped by
// peerError.
type callError struct {
	method string
	err    error
}

func (e *callError) Error() string { return "mcp: " + e.method + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }
