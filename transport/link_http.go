//go:build !mcpkit_nohttp

package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

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

// decodeOwned is decodeMemo for a buffer handed over, without a memo.
func decodeOwned(limits *jsonrpc.DecodeLimits, data []byte) (jsonrpc.Message, error) {
	return decodeMemo(limits, data, true, nil)
}
