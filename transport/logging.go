package transport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// LoggingTransport wraps a transport and logs every message its
// connection reads and writes, with the direction ("recv" or "send") and
// the message's JSON encoding. Undecodable incoming messages are logged as
// "recv" with their error. It is a debugging tool: it logs the full wire
// content, which may include credentials, tokens and user data, so do not
// enable it where logs are kept or shared.
//
// Logger takes precedence: when it is set, each message is a record at
// level Debug with message "jsonrpc" and string attributes "direction" and
// "message" (or "error" for an undecodable message). Otherwise each
// message is one line "recv {...}" or "send {...}" written to Writer with a
// single Write call, or to os.Stderr when Writer is nil too. Lines are
// never interleaved; Writer need not be safe for concurrent use.
//
// The connection keeps the wrapped connection's contract and passes its
// SessionID through (see [SessionConn]), and the negotiated protocol
// revision to an HTTP connection, so that an MCP client finds the same
// transport kind (stream or Streamable HTTP) through the wrapper. A write is logged after it was
// attempted, with its error if it failed.
type LoggingTransport struct {
	// Transport is the transport to wrap. Required.
	Transport Transport
	// Writer receives one line per message when Logger is nil.
	Writer io.Writer
	// Logger receives one Debug record per message.
	Logger *slog.Logger
}

// Connect connects the wrapped transport and wraps its connection.
func (t *LoggingTransport) Connect(ctx context.Context) (Conn, error) {
	if t.Transport == nil {
		return nil, errors.New("transport: LoggingTransport needs a Transport")
	}
	inner, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &loggingConn{inner: inner, logger: t.Logger, w: t.Writer}
	if c.logger == nil && c.w == nil {
		c.w = os.Stderr
	}
	if _, ok := inner.(mcplink.ProtocolVersionSetter); ok {
		return &loggingVersionConn{c}, nil
	}
	return c, nil
}

// loggingVersionConn is a loggingConn around an mcplink.ProtocolVersionSetter.
type loggingVersionConn struct{ *loggingConn }

// loggingConn logs around an inner connection.
type loggingConn struct {
	inner  Conn
	logger *slog.Logger
	w      io.Writer

	mu  sync.Mutex // serialises writes to w and guards buf
	buf []byte
}

// Read reads from the inner connection and logs what arrived.
func (c *loggingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.inner.Read(ctx)
	if err == nil {
		c.log(ctx, "recv", m, nil)
		return m, nil
	}
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) {
		c.log(ctx, "recv", nil, err)
	}
	return m, err
}

// Write writes to the inner connection and logs the message.
func (c *loggingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.inner.Write(ctx, m)
	c.log(ctx, "send", m, err)
	return err
}

// Close closes the inner connection.
func (c *loggingConn) Close() error { return c.inner.Close() }

// SessionID returns the inner connection's session ID, or "".
func (c *loggingConn) SessionID() string {
	if s, ok := c.inner.(SessionConn); ok {
		return s.SessionID()
	}
	return ""
}

// HandshakeOnly reports what the inner connection reports (see
// mcplink.HandshakeOnly).
func (c *loggingConn) HandshakeOnly() bool {
	h, ok := c.inner.(mcplink.HandshakeOnly)
	return ok && h.HandshakeOnly()
}

// FramedWrites reports what the inner connection reports (see
// mcplink.FramedWriter).
func (c *loggingConn) FramedWrites() bool {
	f, ok := c.inner.(mcplink.FramedWriter)
	return ok && f.FramedWrites()
}

// SetLogger passes the client's logger to the inner connection, when it
// takes one, for the diagnostics it logs itself (such as the answers a
// 2026-07-28 HTTP client does not send).
func (c *loggingConn) SetLogger(l *slog.Logger) {
	if s, ok := c.inner.(interface{ SetLogger(*slog.Logger) }); ok {
		s.SetLogger(l)
	}
}

// SetProtocolVersion passes the negotiated protocol version to the inner
// connection (see mcplink.ProtocolVersionSetter).
func (c *loggingVersionConn) SetProtocolVersion(v string) {
	c.inner.(mcplink.ProtocolVersionSetter).SetProtocolVersion(v)
}

// log records one message (m non-nil) or one failure to decode or send.
func (c *loggingConn) log(ctx context.Context, dir string, m jsonrpc.Message, err error) {
	if c.logger != nil {
		if !c.logger.Enabled(ctx, slog.LevelDebug) {
			return
		}
		attrs := make([]slog.Attr, 0, 3)
		attrs = append(attrs, slog.String("direction", dir))
		if m != nil {
			enc, encErr := jsonrpc.AppendMessage(nil, m)
			if encErr != nil {
				enc = []byte("<unencodable: " + encErr.Error() + ">")
			}
			attrs = append(attrs, slog.String("message", string(enc)))
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, "jsonrpc", attrs...)
		return
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	b := append(c.buf[:0], dir...)
	b = append(b, ' ')
	if m != nil {
		var encErr error
		// appendFrame keeps the line a line even if raw values hold
		// line breaks.
		if b, encErr = appendFrame(b, m); encErr != nil {
			b = append(b, "<unencodable: "...)
			b = append(b, encErr.Error()...)
			b = append(b, '>')
		} else {
			b = b[:len(b)-1] // its "\n"
		}
	}
	if err != nil {
		if m != nil {
			b = append(b, ' ')
		}
		b = append(b, "error: "...)
		b = append(b, err.Error()...)
	}
	b = append(b, '\n')
	if cap(b) <= maxRetainedBuffer {
		c.buf = b[:0]
	}
	_, _ = c.w.Write(b) // a debugging aid must not fail the connection
}
