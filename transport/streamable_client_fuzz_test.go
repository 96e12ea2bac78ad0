package transport

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// FuzzStreamableClientResponse answers a client's call with an arbitrary
// status, content type and body (JSON responses, SSE events, batches,
// junk) through a fake RoundTripper. Whatever the server sends, the
// client must not panic, the call must end (with the server's answer or
// an error) and Close must return.
func FuzzStreamableClientResponse(f *testing.F) {
	const (
		jsonType = 0
		sseType  = 1
	)
	for _, seed := range []struct {
		status uint8
		ctype  uint8
		body   string
	}{
		{0, jsonType, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{0, jsonType, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`},
		{0, jsonType, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{0, jsonType, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`},
		{0, jsonType, `{nope`},
		{0, jsonType, ``},
		{0, sseType, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"},
		{0, sseType, "id: 1\nretry: 0\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"},
		{0, sseType, "data: [{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"},
		{0, sseType, "data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}\n\n"},
		{0, sseType, "event: endpoint\ndata: /x\n\n: comment\n\ndata: [1,2]\n\n"},
		{0, sseType, "data: " + string(bytes.Repeat([]byte("x"), 600)) + "\n\n"},
		{1, jsonType, ``},
		{3, 2, `server error`},
		{5, sseType, "data: {}\n\n"},
		{6, jsonType, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	} {
		f.Add(seed.status, seed.ctype, []byte(seed.body))
	}
	statuses := []int{200, 202, 204, 400, 404, 500, 301}
	ctypes := []string{"application/json", "text/event-stream", "text/plain", "", "application/json; charset=utf-8", "text/event-stream;q=1", "multipart/x"}
	f.Fuzz(func(t *testing.T, status, ctype uint8, body []byte) {
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch r.Method {
			case http.MethodGet:
				return fakeResponse(r, http.StatusMethodNotAllowed, "", ""), nil
			case http.MethodPost:
				m := readRequestMessage(t, r)
				if req, ok := m.(*jsonrpc.Request); ok && req.Method == "call" {
					return fakeResponse(r, statuses[int(status)%len(statuses)], ctypes[int(ctype)%len(ctypes)], string(body)), nil
				}
			}
			return fakeResponse(r, http.StatusAccepted, "", ""), nil
		})
		tr := &StreamableClientTransport{
			URL:                     "http://mcp.test/mcp",
			HTTPClient:              &http.Client{Transport: rt},
			DisableStandaloneStream: true,
			DisableSSEFallback:      true,
			MaxMessageSize:          256,
			MinRetryDelay:           time.Millisecond,
			MaxRetryDelay:           time.Millisecond,
			RetryFloor:              -1,
		}
		c, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conn := jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				return "ok", nil
			}),
		})
		conn.Start()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = conn.Call(ctx, "call", nil)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the call did not end: status %d, type %q, body %q", statuses[int(status)%len(statuses)], ctypes[int(ctype)%len(ctypes)], body)
		}
		closeWithin(t, conn, 10*time.Second)
	})
}
