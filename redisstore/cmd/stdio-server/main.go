// Command stdio-server is the server of examples/stdio-server (the same
// tools, resources, prompts and completion, built by package
// examples/stdio-server/features) with its state in Redis, so that
// several processes started with the same flags, behind any balancer,
// serve as one server:
//
//	stdio-server -redis 127.0.0.1:6379 -keys keys.txt -http 127.0.0.1:8080
//	go run ./examples/stdio-client -url http://127.0.0.1:8080/mcp
//
// -redis ADDR keeps the sessions of the handshake era
// (redisstore.NewSessionStore), the SSE event log (NewEventStore), the
// tasks (NewTaskStore) and the claims of single-use request states
// (NewStateClaimer) in that Redis, and carries list changes and resource
// updates between the replicas (NewBus). Several addresses separated by
// commas name the nodes of a Cluster.
//
// -keys FILE reads the key ring: one hex-encoded key of at least 32 bytes
// per line (make one with openssl rand -hex 32), the first signs, all
// verify. It signs the request states of 2026-07-28 input rounds and the
// session IDs, and derives the tasks' owner key: replicas need the same
// file. Without it each process has a random key of its own, and
// requests spread over replicas are refused.
//
// Without -http it serves one client on standard input and output, as the
// example does. A stdio server has one client and no sessions, event log
// or HTTP to share: of what -redis and -keys bring, only the tasks (at
// 2026-07-28 a task started by one process is read, awaited and
// cancelled through another; in the handshake era a task belongs to the
// session that started it when the client has no principal, as over
// stdio, so another process does not see it), the single-use claims of
// request states and the key ring make sense there.
//
// With -http ADDR it serves Streamable HTTP at http://ADDR/mcp (-response
// and -stateless as in the example); the first line on standard output is
// "listening on http://HOST:PORT/mcp", so ADDR may use port 0. Unlike
// the example it does not serve the legacy HTTP+SSE transport at /sse: a
// client's POSTs there must reach the replica holding its SSE stream,
// which a balancer without affinity does not do.
//
// Build it in the redisstore module, which keeps the core module free of
// Redis:
//
//	cd redisstore && go build ./cmd/stdio-server
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/examples/stdio-server/features"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redisstore/cmd/internal/replica"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at /mcp on this address instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http: serve Streamable HTTP statelessly (no sessions)")
	response := flag.String("response", "auto", "with -http: answer POSTs with `auto`, json or sse")
	rf := replica.Register(flag.CommandLine)
	flag.Parse()
	opts := &transport.StreamableHTTPOptions{Stateless: *stateless}
	switch *response {
	case "auto":
		opts.ResponseMode = transport.ResponseAuto
	case "json":
		opts.ResponseMode = transport.ResponseJSON
	case "sse":
		opts.ResponseMode = transport.ResponseSSE
	default:
		fmt.Fprintf(os.Stderr, "stdio-server: -response must be auto, json or sse, not %q\n", *response)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, opts, rf); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "stdio-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, opts *transport.StreamableHTTPOptions, rf *replica.Flags) error {
	if rf.Redis != "" && rf.Keys == "" {
		fmt.Fprintln(os.Stderr, "stdio-server: -redis without -keys: this process signs with a random key that no other replica holds")
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	st, err := replica.Open(octx, rf)
	cancel()
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := features.NewServer(st.Server)
	if err != nil {
		return err
	}
	defer s.Close()
	if addr == "" {
		return s.Run(ctx, &transport.StdioTransport{})
	}
	if !opts.Stateless {
		opts.EventStore = transport.NewMemoryEventStore(nil) // resumable streams; Redis's with -redis
		st.HTTP(opts)
	}
	return serveHTTP(ctx, mcp.NewStreamableHTTPHandler(s, opts), addr)
}

// serveHTTP serves h at /mcp until ctx ends.
func serveHTTP(ctx context.Context, h *transport.StreamableHTTPHandler, addr string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(os.Stdout, "listening on http://%s/mcp\n", ln.Addr()); err != nil {
		ln.Close()
		h.Close()
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		h.Close()
		return err
	case <-ctx.Done():
	}
	herr := h.Close() // its open SSE streams would keep Shutdown waiting
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr := srv.Shutdown(shutdownCtx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return errors.Join(herr, serr)
}
