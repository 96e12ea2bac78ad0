package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// closeHTTPStream ends the SSE stream of the HTTP exchange carrying the
// current request, when there is one; test_reconnection uses it.
func closeHTTPStream(ctx context.Context) {
	if info := transport.HTTPRequestInfoFromContext(ctx); info != nil {
		info.CloseSSEStream()
	}
}

// newHTTPHandler returns the Streamable HTTP handler serving the fixture
// server, with an event store so that SSE streams can be resumed (the
// suite's SSE polling scenario closes one mid-call).
func newHTTPHandler(logger *slog.Logger) (*transport.StreamableHTTPHandler, error) {
	s, err := newServer(options{logger: logger, closeStream: closeHTTPStream})
	if err != nil {
		return nil, err
	}
	return mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{
		EventStore: transport.NewMemoryEventStore(nil),
		Logger:     logger,
	}), nil
}

// serveHTTP serves Streamable HTTP at /mcp on addr until ctx is done. It
// prints the endpoint's URL as the first line on standard output.
func serveHTTP(ctx context.Context, addr string, logger *slog.Logger) error {
	h, err := newHTTPHandler(logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	if _, err := fmt.Fprintf(os.Stdout, "listening on http://%s/mcp\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		h.Close()
		return err
	case <-ctx.Done():
	}
	// Close the MCP sessions first: their open SSE streams would otherwise
	// keep Shutdown waiting.
	herr := h.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr := srv.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return errors.Join(herr, serr)
}
