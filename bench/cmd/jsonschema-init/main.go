// Command jsonschema-init is the floor echo server (cmd/floor-echo-server)
// with one more import, github.com/google/jsonschema-go/jsonschema, and
// nothing that uses it. BenchmarkColdStart/target starts it between the
// floor and mcpkit: its cold start minus the floor's is what
// jsonschema-go's package initialisation (and that of the packages it
// links in) costs a process, which mcpkit pays too because it keeps
// jsonschema-go.
package main

import (
	"fmt"
	"os"

	_ "github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpkit/mcpkit/bench/internal/floor"
)

func main() {
	if err := floor.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jsonschema-init:", err)
		os.Exit(1)
	}
}
