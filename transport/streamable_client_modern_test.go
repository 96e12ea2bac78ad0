package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// logRecorder is a slog.Handler that keeps the records it gets, each as
// its message followed by its attributes.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, b.String())
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

func (h *logRecorder) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

// TestStreamableClientModernDropsResponses checks that a connection of
// 2026-07-28, whose server pushes requests on a response stream, POSTs
// no response to them (a client of that revision sends none) and
// reports what it drops to its logger: at warning level, by request id
// and never content, a bounded number of lines however many it drops,
// and the count of all of them by the time it closes; and that a response
// written after Close is dropped too, without an error.
func TestStreamableClientModernDropsResponses(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name     string
		pushed   int
		batch    bool   // answer the pushed requests in one batch
		id       string // the id of the first pushed request
		maxLines int
		want     []string // in the lines, in this order
	}{
		{"one", 1, false, "push-0", 1, []string{
			"WARN transport: not sending a response to a request the server pushed: a client of 2026-07-28 sends none, " +
				"as a server of that revision sends no requests (it asks for input within a result) id=push-0 dropped=1"}},
		{"flood", 2000, false, "push-0", droppedLogMax + 1, []string{
			"id=push-0 dropped=1",
			"id=push-1 dropped=2",
			"WARN transport: more responses to requests the server pushed were not sent, and not shown responses=" +
				fmt.Sprint(2000-droppedLogMax) + " dropped=2000"}},
		{"batch", 3, true, "push-0", 1, []string{"id=push-0 dropped=3 batch=3"}},
		{"long id", 1, false, long, 1, []string{"id=" + long[:droppedIDMax] + "... dropped=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			var posts, responsePOSTs atomic.Int64
			srv := serveHTTPTest(t, func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				m := readRequestMessage(t, r)
				req, ok := m.(*jsonrpc.Request)
				if !ok {
					responsePOSTs.Add(1)
					w.WriteHeader(http.StatusAccepted)
					return
				}
				send := startSSE(w, nil)
				for i := range tt.pushed {
					id := fmt.Sprintf("push-%d", i)
					if i == 0 {
						id = tt.id
					}
					send(messageEvent(t, "", &jsonrpc.Request{ID: jsonrpc.StringID(id), Method: "sampling/createMessage",
						Params: []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"secret"}}],"maxTokens":5}`)}))
				}
				send(messageEvent(t, "", resultResponse(req.ID, `{"resultType":"complete","content":[]}`)))
			})
			logs := &logRecorder{}
			tr := &StreamableClientTransport{URL: srv.URL}
			c := connectConn(t, tr)
			c.(interface{ SetProtocolVersion(string) }).SetProtocolVersion("2026-07-28") // as the mcp client does
			ls, ok := c.(interface{ SetLogger(*slog.Logger) })
			if !ok {
				t.Fatal("the connection takes no logger")
			}
			ls.SetLogger(slog.New(logs))
			ctx := t.Context()
			if err := c.Write(ctx, request(1, "tools/call", `{"name":"t"}`)); err != nil {
				t.Fatal(err)
			}
			var answers jsonrpc.Batch
			for range tt.pushed + 1 {
				switch m := readMessage(t, c).(type) {
				case *jsonrpc.Request:
					answers = append(answers, &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}})
				case *jsonrpc.Response:
					if m.ID != jsonrpc.Int64ID(1) {
						t.Errorf("response to %s", m.ID)
					}
				}
			}
			if tt.batch {
				if err := c.Write(ctx, answers); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, a := range answers {
					if err := c.Write(ctx, a); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			// A response written after Close is dropped as well, with no
			// error (a write error would be logged for each by the caller)
			// and no report.
			if err := c.Write(ctx, answers[0]); err != nil {
				t.Errorf("Write of a response after Close: %v", err)
			}
			if n := responsePOSTs.Load(); n != 0 {
				t.Errorf("%d POSTs of responses (of %d POSTs) for %d requests pushed", n, posts.Load(), tt.pushed)
			}
			lines := logs.all()
			if len(lines) > tt.maxLines {
				t.Errorf("%d lines logged, more than %d:\n%s", len(lines), tt.maxLines, strings.Join(lines, "\n"))
			}
			text := strings.Join(lines, "\n")
			if strings.Contains(text, "secret") || strings.Contains(text, "sampling") {
				t.Errorf("a line shows what the server sent:\n%s", text)
			}
			rest := text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("the lines lack %q (or have it out of order):\n%s", w, text)
					break
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
