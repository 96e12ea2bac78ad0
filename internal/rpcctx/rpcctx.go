// Package rpcctx holds the context values that package jsonrpc reads and
// the packages above it (mcp) set, which users never set themselves: they
// stay out of jsonrpc's exported API.
//
// The functions are generic so that this package need not import jsonrpc
// (which imports it): jsonrpc uses them with its ID type.
package rpcctx

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
