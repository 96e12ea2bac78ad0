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

// CallHook is what a caller of jsonrpc's Conn.Call sets for the call about
// its id (see WithCallHook).
type CallHook[ID any] struct {
	// ID, when Chosen, is the id the request is sent with instead of a
	// number of Call's choosing: for a caller that needs to know the id
	// before the answer (MCP's subscriptions/listen, whose notifications
	// carry it). The caller keeps the ids it chooses unique among its
	// requests in flight; a string id never meets Call's numbers.
	ID     ID
	Chosen bool
	// Sent, if set, is told the id just before the request is written
	// (an observer's, such as a span's jsonrpc.request.id).
	Sent func(ID)
}

// WithCallHook returns a context under which jsonrpc's Conn.Call follows h.
func WithCallHook[ID any](ctx context.Context, h *CallHook[ID]) context.Context {
	return context.WithValue(ctx, callIDKey{}, h)
}

// WithCallID returns a context under which jsonrpc's Conn.Call sends its
// request with id (see CallHook.ID).
func WithCallID[ID any](ctx context.Context, id ID) context.Context {
	return WithCallHook(ctx, &CallHook[ID]{ID: id, Chosen: true})
}

// CallHookOf returns the hook set by WithCallHook or WithCallID, or nil.
func CallHookOf[ID any](ctx context.Context) *CallHook[ID] {
	h, _ := ctx.Value(callIDKey{}).(*CallHook[ID])
	return h
}

// DecodeMemo is jsonrpc's decoder for the transports. When owned, the
// caller hands its buffer over (a transport that read a whole HTTP body
// into a buffer of its own): the raw params, result and error data of the
// message may share the buffer's memory, which saves copying them, so the
// caller must not modify the buffer afterwards; else it is
// DecodeMessage, which copies what it keeps. A memo (nil for none)
// spares validating the same params._meta again in the messages of one
// connection or endpoint (see jsonscan.ValidObject). A nil limits means
// the defaults. It is a
//
//	func(limits *jsonrpc.DecodeLimits, data []byte, owned bool, memo *jsonscan.Memo) (jsonrpc.Message, error)
//
// set by package jsonrpc's init and never changed afterwards.
var DecodeMemo any

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

// CanAnswer reports whether the request whose handler has ctx can be
// answered before the handler returns (see Answer). It is set by package
// jsonrpc's init and never changed afterwards.
var CanAnswer = func(ctx context.Context) bool { return false }

// Answer sends result (JSON) as the response to the request whose handler
// has ctx, while the handler goes on, and reports whether it did: what the
// handler returns later goes nowhere, and the connection no longer counts
// the request (MaxInFlight, Wait). It cannot when the handler runs on a
// goroutine a stream lent (an HTTP POST's) or the request was answered.
// For a task that a tools/call becomes while its handler runs on. It is
// set by package jsonrpc's init and never changed afterwards.
var Answer = func(ctx context.Context, result []byte) bool { return false }
