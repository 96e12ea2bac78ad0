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

// decodeOwned is jsonrpc's decoder for a buffer handed over: the message
// may keep slices of data instead of copies. A nil limits means the
// defaults.
var decodeOwned = rpclink.DecodeOwned.(func(limits *jsonrpc.DecodeLimits, data []byte) (jsonrpc.Message, error))

// decodeMemo is decodeOwned (when owned; else jsonrpc.DecodeMessage) with a
// memo of the params._meta of one connection's or endpoint's messages,
// which a client of 2026-07-28 repeats in every request: text equal to
// the memo's is not validated again.
var decodeMemo = rpclink.DecodeMemo.(func(limits *jsonrpc.DecodeLimits, data []byte, owned bool, memo *jsonscan.Memo) (jsonrpc.Message, error))

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
