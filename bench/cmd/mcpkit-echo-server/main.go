// Command mcpkit-echo-server serves the mcpkit echo server on stdin/stdout
// (transport.StdioTransport) for the stdio benchmark.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	s, err := mcpkitecho.NewServer()
	if err == nil {
		err = s.Run(context.Background(), &transport.StdioTransport{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpkit-echo-server:", err)
		os.Exit(1)
	}
}
