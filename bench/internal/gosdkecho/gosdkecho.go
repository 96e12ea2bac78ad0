// Package gosdkecho builds the echo server used by the go-sdk benchmarks
// (github.com/modelcontextprotocol/go-sdk), shared by the in-process
// benchmarks and cmd/gosdk-echo-server.
package gosdkecho

import (
	"context"

	"github.com/mcpkit/mcpkit/bench/internal/payload"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Message string `json:"message"`
}

// NewServer returns a server with two tools registered with the typed
// API: echo (input schema inferred from EchoIn and validated per call),
// whose result is one text content block holding the message and no
// structured output, and large, which takes no arguments and returns
// [payload.Large] as one text block.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "large", Description: "large"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: payload.Large}}}, nil, nil
		})
	return s
}
