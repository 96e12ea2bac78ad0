// Package rpclink is what package jsonrpc offers the other packages of
// mcpkit and nobody else: the context value with which package mcp
// chooses a call's id, and the decoder for a buffer a transport hands
// over. Keeping them here keeps them out of jsonrpc's exported API, which
// is for users and for authors of transports.
//
// This package does not import jsonrpc (jsonrpc imports it), so its
// functions are generic over jsonrpc's ID type, and the decoder is set by
// jsonrpc's init, once, before any importer of jsonrpc runs.
package rpclink

import "context"

type callIDKey struct{}

// WithCallID returns a context under which jsonrpc's Conn.Call sends its
// request with id instead of a number of its own choosing: for a caller
// that needs to know the id before the answer (MCP's subscriptions/listen,
// whose notifications carry it). The caller keeps the ids it chooses unique
// among its requests in flight; a string id never meets Call's numbers.
func WithCallID[ID any](ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the id recorded by WithCallID, if any of type ID.
func CallID[ID any](ctx context.Context) (ID, bool) {
	id, ok := ctx.Value(callIDKey{}).(ID)
	return id, ok
}

// DecodeOwned is jsonrpc's decoder for a caller that hands its buffer over,
// such as a transport that read a whole HTTP body into a buffer of its own:
// the raw params, result and error data of the message may share the
// buffer's memory, which saves copying them, so the caller must not modify
// it afterwards. It is a
//
//	func(limits *jsonrpc.DecodeLimits, data []byte) (jsonrpc.Message, error)
//
// (a nil limits means the defaults), set by package jsonrpc's init and
// never changed afterwards.
var DecodeOwned any

// GrowStack gives the calling goroutine a stack large enough for a
// handler's decode, dispatch and encode at once, as jsonrpc does for its
// handler goroutines: for the other goroutines of mcpkit that run
// handlers (a task's). It is set by package jsonrpc's init and never
// changed afterwards; until then it does nothing.
var GrowStack = func() {}

// Relate returns ctx with the related request of from (see
// jsonrpc.RelatedRequest): messages written with it go where from's go,
// such as a server's request to the client that a task sends on the
// stream of a tasks/result waiting for it. It is set by package jsonrpc's
// init and never changed afterwards.
var Relate = func(ctx, from context.Context) context.Context { return ctx }
