package everything

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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

// Handler is the fixture server served over Streamable HTTP.
type Handler struct {
	*transport.StreamableHTTPHandler
	// Server is the fixture server the handler serves.
	Server *mcp.Server
}

// Close closes the handler's sessions, then the server.
func (h *Handler) Close() error {
	herr := h.StreamableHTTPHandler.Close()
	return errors.Join(herr, h.Server.Close())
}

// NewHTTPHandler returns the Streamable HTTP handler serving the fixture
// server, with an in-memory event store so that SSE streams can be
// resumed (the suite's SSE polling scenario closes one mid-call), unless
// o.HTTP sets another. It sets o.CloseStream.
func NewHTTPHandler(o Options) (*Handler, error) {
	o.CloseStream = closeHTTPStream
	s, err := NewServer(o)
	if err != nil {
		return nil, err
	}
	opts := &transport.StreamableHTTPOptions{
		EventStore: transport.NewMemoryEventStore(nil),
		Logger:     o.Logger,
	}
	if o.HTTP != nil {
		o.HTTP(opts)
	}
	return &Handler{StreamableHTTPHandler: mcp.NewStreamableHTTPHandler(s, opts), Server: s}, nil
}

// ServeHTTP serves Streamable HTTP at /mcp on addr until ctx is done. It
// writes "listening on http://HOST:PORT/mcp" and a newline to announce
// first, so that addr may use port 0.
func ServeHTTP(ctx context.Context, addr string, announce io.Writer, o Options) error {
	h, err := NewHTTPHandler(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if o.Logger != nil {
		srv.ErrorLog = slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)
	}
	if _, err := fmt.Fprintf(announce, "listening on http://%s/mcp\n", ln.Addr()); err != nil {
		ln.Close()
		h.Close()
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

// ServeStdio serves one session over standard input and output until
// ctx is done or the client leaves.
func ServeStdio(ctx context.Context, o Options) error {
	s, err := NewServer(o)
	if err != nil {
		return err
	}
	err = s.Run(ctx, &transport.StdioTransport{})
	return errors.Join(err, s.Close())
}
