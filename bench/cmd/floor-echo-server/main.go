// Command floor-echo-server is the no-SDK baseline echo server for the
// stdio benchmark: it answers newline-delimited JSON-RPC tools/call
// requests for the echo tool on stdin/stdout until stdin is closed.
package main

import (
	"fmt"
	"os"

	"github.com/mcpkit/mcpkit/bench/internal/floor"
)

func main() {
	if err := floor.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "floor-echo-server:", err)
		os.Exit(1)
	}
}
