package mcp

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// benchEchoServer returns a server with one typed tool, as the bench
// module's echo server.
func benchEchoServer(tb testing.TB) *Server {
	type echoIn struct {
		Message string `json:"message"`
	}
	s := NewServer(&Implementation{Name: "echo", Version: "1"}, nil)
	err := AddTool(s, &Tool{Name: "echo", Description: "echo"},
		func(_ context.Context, _ *CallToolRequest, in echoIn) (string, error) { return in.Message, nil })
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// benchWriter is a minimal http.ResponseWriter for calling a handler
// directly.
type benchWriter struct {
	h    http.Header
	code int
	body []byte
}

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *benchWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}

func (w *benchWriter) Flush() {}

// BenchmarkStreamableServerSession measures the server side of one whole
// Streamable HTTP session, with no network: the handler's ServeHTTP is
// called directly for initialize, notifications/initialized, tools/list
// and DELETE, with requests and response writers made as cheaply as
// possible so that the figures are the handler's.
func BenchmarkStreamableServerSession(b *testing.B) {
	h := NewStreamableHTTPHandler(benchEchoServer(b), nil)
	defer h.Close()
	const (
		initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench","version":"1"}}}`
		notBody  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	)
	u, _ := url.Parse("http://127.0.0.1/mcp")
	ctx := context.Background()
	var w benchWriter
	do := func(method, body, sid string) *benchWriter {
		r := &http.Request{Method: method, URL: u, Host: u.Host, Header: make(http.Header, 4), RemoteAddr: "127.0.0.1:1234"}
		r = r.WithContext(ctx)
		r.Header["Accept"] = []string{"application/json, text/event-stream"}
		if body != "" {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header["Content-Type"] = []string{"application/json"}
		}
		if sid != "" {
			r.Header["Mcp-Session-Id"] = []string{sid}
			r.Header["Mcp-Protocol-Version"] = []string{"2025-11-25"}
		}
		w = benchWriter{h: make(http.Header, 4), body: w.body[:0]}
		h.ServeHTTP(&w, r)
		return &w
	}
	b.ReportAllocs()
	for b.Loop() {
		w := do(http.MethodPost, initBody, "")
		sid := w.h.Get("Mcp-Session-Id")
		if w.code != http.StatusOK || sid == "" {
			b.Fatalf("initialize: %d %s", w.code, w.body)
		}
		if w := do(http.MethodPost, notBody, sid); w.code != http.StatusAccepted {
			b.Fatalf("initialized: %d %s", w.code, w.body)
		}
		if w := do(http.MethodPost, listBody, sid); w.code != http.StatusOK {
			b.Fatalf("tools/list: %d %s", w.code, w.body)
		}
		if w := do(http.MethodDelete, "", sid); w.code != http.StatusNoContent {
			b.Fatalf("DELETE: %d %s", w.code, w.body)
		}
	}
}

// stubRoundTripper answers the client side of a session without a server:
// canned answers to initialize, notifications/initialized and tools/list,
// 405 to GET and 204 to DELETE.
type stubRoundTripper struct{}

func (stubRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	body := ""
	switch r.Method {
	case http.MethodGet:
		resp.StatusCode = http.StatusMethodNotAllowed
	case http.MethodDelete:
		resp.StatusCode = http.StatusNoContent
	case http.MethodPost:
		var buf [256]byte
		n, _ := r.Body.Read(buf[:])
		r.Body.Close()
		req := string(buf[:n])
		switch {
		case strings.Contains(req, `"initialize"`):
			resp.Header.Set("Mcp-Session-Id", "s1")
			body = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"echo","version":"1"}}}`
		case strings.Contains(req, `"tools/list"`):
			body = `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}}`
		default:
			resp.StatusCode = http.StatusAccepted
		}
	}
	if body != "" {
		resp.Header.Set("Content-Type", "application/json")
	}
	resp.ContentLength = int64(len(body))
	resp.Body = nopBody{strings.NewReader(body)}
	return resp, nil
}

type nopBody struct{ *strings.Reader }

func (nopBody) Close() error { return nil }

// BenchmarkStreamableClientSession measures the client side of one whole
// Streamable HTTP session, with no network: Connect (initialize,
// notifications/initialized and the GET the server refuses), tools/list
// and Close (DELETE) against canned answers.
func BenchmarkStreamableClientSession(b *testing.B) {
	hc := &http.Client{Transport: stubRoundTripper{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c := NewClient(&Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: "http://127.0.0.1/mcp", HTTPClient: hc})
		if err != nil {
			b.Fatal(err)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) != 1 {
			b.Fatal(res, err)
		}
		cs.Close()
	}
}
