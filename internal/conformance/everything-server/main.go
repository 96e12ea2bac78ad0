// Command everything-server is the fixture server that the official MCP
// conformance suite (@modelcontextprotocol/conformance) tests: it offers
// every tool, resource, prompt and completion the suite's server scenarios
// of the 2025-11-25 requirement set call, with the argument and result
// shapes they expect, and the skills of the Skills extension (SEP-2640)
// that its sep-2640-* scenarios look for. The server itself is built by
// package internal/conformance/everything.
//
// Usage:
//
//	everything-server               serve one session on stdin and stdout
//	everything-server -http ADDR    serve Streamable HTTP at http://ADDR/mcp
//
// With -http, the first line on standard output is
// "listening on http://HOST:PORT/mcp", so ADDR may use port 0. The
// server's own diagnostics go to standard error. conformance_test.go at
// the repository root builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpkit/mcpkit/internal/conformance/everything"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP at path /mcp on this address (host:port; port 0 picks one) instead of stdio")
	verbose := flag.Bool("v", false, "log debug diagnostics to standard error")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	o := everything.Options{Logger: logger}
	var err error
	if *httpAddr != "" {
		err = everything.ServeHTTP(ctx, *httpAddr, os.Stdout, o)
	} else {
		err = everything.ServeStdio(ctx, o)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "everything-server:", err)
		os.Exit(1)
	}
}
