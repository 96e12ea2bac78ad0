// Command stdio-server is an example MCP server that speaks over standard
// input and output. It offers typed tools with structured output, a tool
// that asks the client's model (sampling), text and binary resources, a
// resource template, prompts with arguments, completion, logging and
// progress.
//
// Run it under any MCP client, for example:
//
//	go run ./examples/stdio-client -- go run ./examples/stdio-server
//
// The server itself (its tools, resources, prompts and completion) is
// built by package features, which redisstore/cmd/stdio-server serves
// from replicas sharing Redis. Its own diagnostics go to standard error;
// standard output carries only the protocol.
//
// With -http ADDR it serves the same features over HTTP instead:
// Streamable HTTP at http://ADDR/mcp and the legacy HTTP+SSE transport
// (defined by revision 2024-11-05; any revision is negotiated over it) at
// http://ADDR/sse:
//
//	go run ./examples/stdio-server -http 127.0.0.1:8080
//	go run ./examples/stdio-client -url http://127.0.0.1:8080/mcp
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/examples/stdio-server/features"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// newServer returns the example's server (package features builds it).
func newServer() (*mcp.Server, error) { return features.NewServer(nil) }

func main() {
	addr := flag.String("http", "", "serve HTTP on this address (Streamable HTTP at /mcp, legacy SSE at /sse) instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http: serve Streamable HTTP statelessly (no sessions)")
	response := flag.String("response", "auto", "with -http: answer POSTs with `auto`, json or sse")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := newServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdio-server:", err)
		os.Exit(1)
	}
	if *addr != "" {
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
		if !*stateless {
			opts.EventStore = transport.NewMemoryEventStore(nil) // resumable streams
		}
		err = serveHTTP(ctx, s, *addr, opts)
	} else {
		err = s.Run(ctx, &transport.StdioTransport{})
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "stdio-server:", err)
		os.Exit(1)
	}
}

// serveHTTP serves s over Streamable HTTP and legacy SSE until ctx ends.
func serveHTTP(ctx context.Context, s *mcp.Server, addr string, opts *transport.StreamableHTTPOptions) error {
	streamable := mcp.NewStreamableHTTPHandler(s, opts)
	legacy := mcp.NewSSEHandler(s, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable)
	mux.Handle("/sse", legacy)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "stdio-server: serving http://%s/mcp (Streamable HTTP) and http://%s/sse (HTTP+SSE)\n", ln.Addr(), ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		streamable.Close()
		legacy.Close()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
