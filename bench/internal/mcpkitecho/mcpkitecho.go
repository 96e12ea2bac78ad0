// Package mcpkitecho builds the echo server used by the mcpkit benchmarks,
// shared by the in-process benchmarks and cmd/mcpkit-echo-server.
package mcpkitecho

import (
	"context"

	"github.com/mcpkit/mcpkit/bench/internal/payload"
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

// NewServer returns a server with two typed tools. echo's input schema is
// inferred from EchoIn (and checked per call) and its output is a string:
// the result is one text content block holding the message, with no
// structured content, like the other SDKs' echo servers. large takes no
// arguments and returns [payload.Large] as one text block.
func NewServer() (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (string, error) {
			return in.Message, nil
		})
	if err != nil {
		return nil, err
	}
	err = mcp.AddTool(s, &mcp.Tool{Name: "large", Description: "large"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (string, error) {
			return payload.Large, nil
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
