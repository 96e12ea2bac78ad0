package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// recordHandler collects slog records.
type recordHandler struct {
	level slog.Level
	mu    sync.Mutex
	recs  []map[string]string
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *recordHandler) WithGroup(string) slog.Handler                { return h }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	rec := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool {
		rec[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

const (
	logReq  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`
	logResp = `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`
)

// exchange sends logReq from client to server and logResp back.
func exchange(t *testing.T, client, server Conn) {
	t.Helper()
	ctx := context.Background()
	if err := client.Write(ctx, request(1, "tools/call", `{"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if err := server.Write(ctx, &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: []byte(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLoggingTransportWriter(t *testing.T) {
	ct, st := NewInMemoryTransports()
	var buf bytes.Buffer
	client, err := (&LoggingTransport{Transport: ct, Writer: &buf}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	server, _ := st.Connect(context.Background())
	exchange(t, client, server)
	want := "send " + logReq + "\nrecv " + logResp + "\n"
	if buf.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", buf.String(), want)
	}

	// Raw values with line breaks stay on one log line; failures are logged.
	buf.Reset()
	client.Write(context.Background(), request(2, "m", "{\n\"a\": 1}"))
	server.Close()
	client.Write(context.Background(), request(3, "m", ""))
	want = "send " + `{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":1}}` + "\n" +
		"send " + `{"jsonrpc":"2.0","id":3,"method":"m"}` + " error: " + ErrClosed.Error() + "\n"
	if buf.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", buf.String(), want)
	}
	client.Close()
}

func TestLoggingTransportLogger(t *testing.T) {
	ct, st := NewInMemoryTransports()
	h := &recordHandler{level: slog.LevelDebug}
	var buf bytes.Buffer
	// Logger takes precedence over Writer.
	client, err := (&LoggingTransport{Transport: ct, Logger: slog.New(h), Writer: &buf}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, _ := st.Connect(context.Background())
	exchange(t, client, server)
	want := []map[string]string{
		{"msg": "jsonrpc", "level": "DEBUG", "direction": "send", "message": logReq},
		{"msg": "jsonrpc", "level": "DEBUG", "direction": "recv", "message": logResp},
	}
	if len(h.recs) != len(want) {
		t.Fatalf("records %v, want %v", h.recs, want)
	}
	for i := range want {
		for k, v := range want[i] {
			if h.recs[i][k] != v {
				t.Errorf("record %d: %s=%q, want %q", i, k, h.recs[i][k], v)
			}
		}
	}
	if buf.Len() != 0 {
		t.Errorf("Writer used although Logger is set: %q", buf.String())
	}
}

func TestLoggingTransportLevelDisabled(t *testing.T) {
	ct, st := NewInMemoryTransports()
	h := &recordHandler{level: slog.LevelInfo}
	client, _ := (&LoggingTransport{Transport: ct, Logger: slog.New(h)}).Connect(context.Background())
	defer client.Close()
	server, _ := st.Connect(context.Background())
	exchange(t, client, server)
	if len(h.recs) != 0 {
		t.Errorf("records at level Info: %v", h.recs)
	}
}

func TestLoggingTransportDecodeError(t *testing.T) {
	var buf bytes.Buffer
	inner := &IOTransport{Reader: strings.NewReader("{oops\n"), Writer: io.Discard}
	c, err := (&LoggingTransport{Transport: inner, Writer: &buf}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var de *jsonrpc.DecodeError
	if _, err := c.Read(context.Background()); !errors.As(err, &de) {
		t.Fatalf("Read: %v, want a DecodeError", err)
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Fatalf("Read: %v, want io.EOF", err)
	}
	if got := buf.String(); !strings.HasPrefix(got, "recv error: ") || strings.Count(got, "\n") != 1 {
		t.Errorf("logged %q, want one recv error line", got)
	}
}

type sessionConn struct{ Conn }

func (sessionConn) SessionID() string { return "sess-1" }

type sessionTransport struct{ Transport }

func (t sessionTransport) Connect(ctx context.Context) (Conn, error) {
	c, err := t.Transport.Connect(ctx)
	return sessionConn{c}, err
}

func TestLoggingTransportSessionID(t *testing.T) {
	ct, _ := NewInMemoryTransports()
	c, err := (&LoggingTransport{Transport: sessionTransport{ct}, Writer: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := c.(SessionConn); !ok || s.SessionID() != "sess-1" {
		t.Errorf("session id not passed through")
	}
	if _, err := (&LoggingTransport{}).Connect(context.Background()); err == nil {
		t.Error("Connect without a Transport succeeded")
	}
}

// TestLoggingTransportKeepsKind checks that the wrapper is a
// mcplink.ProtocolVersionSetter exactly when what it wraps is one, and reports
// HandshakeOnly as what it wraps does: a client finds the same transport
// kind through it (a stream transport must not look like Streamable
// HTTP).
func TestLoggingTransportKeepsKind(t *testing.T) {
	ct, _ := NewInMemoryTransports()
	tests := []struct {
		name          string
		inner         Transport
		setter        bool
		handshakeOnly bool
	}{
		{"in-memory", ct, false, false},
		{"streamable HTTP", &StreamableClientTransport{URL: "http://127.0.0.1:1/mcp"}, true, false},
		{"HTTP+SSE", connTransport{&sseClientConn{}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := (&LoggingTransport{Transport: tt.inner, Writer: io.Discard}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.(mcplink.ProtocolVersionSetter); ok != tt.setter {
				t.Errorf("mcplink.ProtocolVersionSetter: %v, want %v", ok, tt.setter)
			}
			h, ok := c.(mcplink.HandshakeOnly)
			if !ok || h.HandshakeOnly() != tt.handshakeOnly {
				t.Errorf("HandshakeOnly: %v (implemented %v), want %v", ok && h.HandshakeOnly(), ok, tt.handshakeOnly)
			}
		})
	}
}

// connTransport is a Transport whose Connect returns one given
// connection.
type connTransport struct{ c Conn }

func (t connTransport) Connect(context.Context) (Conn, error) { return t.c, nil }
