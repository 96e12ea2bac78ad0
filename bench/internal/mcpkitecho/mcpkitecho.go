// Package mcpkitecho builds the echo server used by the mcpkit benchmarks,
// shared by the in-process benchmarks and cmd/mcpkit-echo-server.
package mcpkitecho

import (
	"context"

	"github.com/mcpkit/mcpkit/mcp"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Message string `json:"message"`
}

// EchoOut is the echo tool's structured output (see [NewStructuredServer]).
type EchoOut struct {
	Message string `json:"message"`
}

// NewServer returns a server with one typed tool, echo, whose input schema
// is inferred from EchoIn (and checked per call) and whose output is a
// string: the result is one text content block holding the message, with
// no structured content, like the other SDKs' echo servers.
func NewServer() (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (string, error) {
			return in.Message, nil
		})
	return s, err
}

// NewStructuredServer is like NewServer but the tool's output is the
// struct EchoOut: the result carries it as structuredContent (checked
// against the inferred output schema) plus its JSON as a text block.
func NewStructuredServer() (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (EchoOut, error) {
			return EchoOut{Message: in.Message}, nil
		})
	return s, err
}
