package transport

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Tests of the HTTP client transports against servers that misbehave on
// purpose. Each asserts a bound: the call ends, Close returns, no
// goroutine is left.

// closeWithin closes c and fails the test if Close has not returned after
// d: Close must always return in bounded time.
func closeWithin(t *testing.T, c interface{ Close() error }, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

// A server sends a batch of requests on a call's response stream, which
// the client refuses (batches are not allowed), and answers the POSTed
// refusal with a JSON body instead of 202. The refusal is written from the
// goroutine delivering the stream's messages; the JSON answer must not
// wait for that goroutine, or the call never gets its response and Close
// never returns.
func TestStreamableClientRefusalAnsweredWithJSON(t *testing.T) {
	checkLeaks(t)
	refused := make(chan struct{})
	f := newFakeMCPServer(t)
	f.noSession = true
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		switch m := m.(type) {
		case *jsonrpc.Request:
			if m.Method != "call" {
				return false
			}
			send := startSSE(w, nil)
			send(messageEvent(t, "", jsonrpc.Batch{request(7, "ping", ""), request(8, "ping", "")}))
			select {
			case <-refused:
			case <-r.Context().Done():
				return true
			}
			send(messageEvent(t, "", resultResponse(m.ID, `"done"`)))
			return true
		case *jsonrpc.Response:
			// The refusal, answered with a message in a JSON body.
			writeJSONMessage(t, w, &jsonrpc.Request{Method: "notifications/message"})
			close(refused)
			return true
		}
		return false
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c, err := (&StreamableClientTransport{URL: srv.URL, HTTPClient: srv.Client()}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn := jsonrpc.NewConn(c, nil)
	conn.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := conn.Call(ctx, "call", nil)
	if err != nil || string(res) != `"done"` {
		t.Errorf("Call = %s, %v; want \"done\"", res, err)
	}
	closeWithin(t, conn, 10*time.Second)
}
