package transport

import (
	"github.com/mcpkit/mcpkit/internal/jsonscan"
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
