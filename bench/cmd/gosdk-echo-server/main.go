// Command gosdk-echo-server serves the go-sdk echo server on stdin/stdout
// (mcp.StdioTransport) for the stdio benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpkit/mcpkit/bench/internal/gosdkecho"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := gosdkecho.NewServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk-echo-server:", err)
		os.Exit(1)
	}
}
