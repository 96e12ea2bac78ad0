package transport

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSSEHandlerPostRightAfterEndpoint checks that a session is ready for
// messages as soon as its endpoint event is out: a client that POSTs the
// moment it reads the endpoint must never find the session missing.
func TestSSEHandlerPostRightAfterEndpoint(t *testing.T) {
	checkLeaks(t)
	b := newTestBackend()
	h := newSSEHandler(b.connect, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		b.closeAll()
	})
	for i := range 100 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		get, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(get.Body)
		ev := readEvent(t, r)
		if ev["event"] != "endpoint" || !strings.Contains(ev["data"], "sessionId=") {
			t.Fatalf("first event %q", ev)
		}
		post, err := srv.Client().Post(srv.URL+ev["data"], "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`))
		if err != nil {
			t.Fatal(err)
		}
		post.Body.Close()
		if post.StatusCode != http.StatusAccepted {
			t.Fatalf("session %d: POST right after the endpoint event: %s", i, post.Status)
		}
		if ev := readEvent(t, r); ev["event"] != "message" || !strings.Contains(ev["data"], `"id":1,"result"`) {
			t.Fatalf("session %d: answer %q", i, ev)
		}
		get.Body.Close()
	}
}

// readEvent reads one SSE event from r.
func readEvent(t *testing.T, r *bufio.Reader) map[string]string {
	t.Helper()
	ev := map[string]string{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, ev)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(ev) > 0 {
				return ev
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		ev[k] += strings.TrimPrefix(v, " ")
	}
}
