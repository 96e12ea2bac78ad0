// Command mcpgo-echo-server serves the mcp-go echo server on stdin/stdout
// (server.ServeStdio) for the stdio benchmark.
package main

import (
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpkit/mcpkit/bench/internal/mcpgoecho"
)

func main() {
	if err := server.ServeStdio(mcpgoecho.NewServer()); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo-echo-server:", err)
		os.Exit(1)
	}
}
