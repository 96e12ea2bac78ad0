// Package mcpgoecho builds the echo server used by the mcp-go benchmarks
// (github.com/mark3labs/mcp-go), shared by the in-process benchmarks and
// cmd/mcpgo-echo-server.
package mcpgoecho

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpkit/mcpkit/bench/internal/payload"
)

// NewServer returns a server with two tools: echo, taking a required
// string argument "message" and returning it as one text content block,
// and large, which takes no arguments and returns [payload.Large] as one
// text block.
func NewServer() *server.MCPServer {
	s := server.NewMCPServer("echo", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("echo"),
		mcp.WithString("message", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			msg, err := req.RequireString("message")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(msg), nil
		})
	s.AddTool(mcp.NewTool("large", mcp.WithDescription("large")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(payload.Large), nil
		})
	return s
}
