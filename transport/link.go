package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// What this package and jsonrpc and mcp offer each other behind the API
// (see docs/ARCHITECTURE.md, "Who the exported names are for").

// decodeMemo is jsonrpc's decoder (see rpclink.DecodeMemo): for a buffer
// handed over when owned (the message may keep slices of data instead of
// copies), with a memo of the params._meta of one connection's or
// endpoint's messages, which a client of 2026-07-28 repeats in every
// request: text equal to the memo's is not validated again. A nil
// limits means the defaults.
var decodeMemo = rpclink.DecodeMemo.(func(limits *jsonrpc.DecodeLimits, data []byte, owned bool, memo *jsonscan.Memo) (jsonrpc.Message, error))

// decodeOwned is decodeMemo for a buffer handed over, without a memo.
func decodeOwned(limits *jsonrpc.DecodeLimits, data []byte) (jsonrpc.Message, error) {
	return decodeMemo(limits, data, true, nil)
}

// The constructors package mcp wraps as mcp.NewStreamableHTTPHandler and
// mcp.NewSSEHandler, with the function that serves each session.
func init() {
	mcplink.NewStreamableHTTPHandler = func(connect mcplink.ConnectFunc, opts any) any {
		o, _ := opts.(*StreamableHTTPOptions)
		return newStreamableHTTPHandler(linkConnect(connect), o)
	}
	mcplink.NewSSEHandler = func(connect mcplink.ConnectFunc, opts any) any {
		o, _ := opts.(*SSEOptions)
		return newSSEHandler(linkConnect(connect), o)
	}
}

func linkConnect(connect mcplink.ConnectFunc) connectFunc {
	return func(ctx context.Context, c Conn) error { return connect(ctx, c) }
}
