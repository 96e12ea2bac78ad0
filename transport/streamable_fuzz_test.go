package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// FuzzStreamableHTTPPost throws arbitrary bodies and headers at a
// Streamable HTTP handler: it must answer every one with a status the
// specification allows, never panic and never hang.
func FuzzStreamableHTTPPost(f *testing.F) {
	for _, seed := range []struct{ body, accept, ctype, version string }{
		{`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`, "application/json, text/event-stream", "application/json", "2025-11-25"},
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "*/*", "application/json; charset=utf-8", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","method":"n"}]`, "application/json, text/event-stream", "application/json", "2025-03-26"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "application/*, text/*", "application/json", "2025-06-18"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "application/json;q=0, text/event-stream", "application/json", "2025-11-25"},
		{`[`, "application/json, text/event-stream", "text/plain", "x"},
	} {
		f.Add(seed.body, seed.accept, seed.ctype, seed.version)
	}
	// An echo backend: nothing the fuzzer sends can make it block.
	echo := func(ctx context.Context, c Conn) error {
		jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
			AllowBatch: func() bool { return true },
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				return req.Params, nil
			}),
		}).Start()
		return nil
	}
	h := NewStreamableHTTPHandler(echo, &StreamableHTTPOptions{Stateless: true, MaxBodyBytes: 4096})
	f.Cleanup(func() { h.Close() })
	allowed := map[int]bool{200: true, 202: true, 400: true, 405: true, 406: true, 413: true, 415: true}
	f.Fuzz(func(t *testing.T, body, accept, ctype, version string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Accept", accept)
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("MCP-Protocol-Version", version)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("status %d for body %q accept %q type %q version %q", rec.Code, body, accept, ctype, version)
		}
	})
}
