package redisstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// failingLog is an event log whose writes of data matching fail fail, as
// a Redis out of memory would refuse them.
type failingLog struct {
	*EventStore
	fail *regexp.Regexp
}

func (l *failingLog) Write(ctx context.Context, sessionID, streamID string, e transport.LogEvent) (string, error) {
	if l.fail.Match(e.Data) {
		return "", errors.New("OOM command not allowed when used memory > 'maxmemory'")
	}
	return l.EventStore.Write(ctx, sessionID, streamID, e)
}

// sseReader reads the events of an SSE body.
type sseReader struct{ sc *bufio.Scanner }

// next returns the next event's fields, or nil at the body's end.
func (r *sseReader) next() map[string]string {
	ev := map[string]string{}
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if len(ev) > 0 {
				return ev
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		ev[k] = strings.TrimPrefix(v, " ")
	}
	return nil
}

var progressRE = regexp.MustCompile(`"progress":(\d+)`)

// progressOf returns the progress an event carries, or -1.
func progressOf(ev map[string]string) int {
	m := progressRE.FindStringSubmatch(ev["data"])
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// eventServer serves an mcp server with a tool "count" that reports the
// progress it reads from tokens until tokens is closed, on store.
type eventServer struct {
	t      *testing.T
	url    string
	tokens chan int
	client *http.Client
}

func newEventServer(t *testing.T, store transport.EventStore) *eventServer {
	t.Helper()
	es := &eventServer{t: t, tokens: make(chan int)}
	s := mcp.NewServer(&mcp.Implementation{Name: "events", Version: "1"}, nil)
	err := s.AddTool(&mcp.Tool{Name: "count", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case k, ok := <-es.tokens:
				if !ok {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				}
				if err := req.ReportProgress(ctx, float64(k), 0, ""); err != nil {
					return nil, err
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{EventStore: store})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	es.url = srv.URL
	es.client = srv.Client()
	return es
}

// do sends a request with the headers kv and returns the response.
func (es *eventServer) do(ctx context.Context, method, body string, kv ...string) *http.Response {
	es.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, es.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := es.client.Do(req)
	if err != nil {
		es.t.Fatal(err)
	}
	es.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// initialize opens a session and returns its ID.
func (es *eventServer) initialize() string {
	es.t.Helper()
	ctx := es.t.Context()
	resp := es.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	io.Copy(io.Discard, resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		es.t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp = es.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)
	io.Copy(io.Discard, resp.Body)
	return sid
}

// TestServerResumesFromRedis runs a Streamable HTTP server on the Redis
// event store, in one process: an event whose write fails (Redis out of
// memory) still reaches the client live, a resumption across it is
// refused, one from after it gets the stored events then the live ones
// exactly once and in order, up to the response.
func TestServerResumesFromRedis(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			store := newTestEventStore(t, b.client(t), testPrefix(), mcptest.EventStoreSuiteOptions{})
			es := newEventServer(t, &failingLog{EventStore: store, fail: regexp.MustCompile(`"progress":3[,}]`)})
			sid := es.initialize()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			post := es.do(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{},"_meta":{"progressToken":"p"}}}`, "Mcp-Session-Id", sid)
			if ct := post.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("tools/call: %d %q", post.StatusCode, ct)
			}
			events := &sseReader{bufio.NewScanner(post.Body)}
			if prime := events.next(); prime == nil || prime["id"] == "" || prime["data"] != "" {
				t.Fatalf("priming event %q", prime)
			}
			ids := map[int]string{}
			for k := 1; k <= 5; k++ {
				es.tokens <- k
				ev := events.next()
				if progressOf(ev) != k || (ev["id"] == "") != (k == 3) {
					t.Fatalf("event %d: %q (only event 3 was not stored)", k, ev)
				}
				ids[k] = ev["id"]
			}
			// The client loses the stream; the call goes on.
			cancel()
			for k := 6; k <= 10; k++ {
				es.tokens <- k
			}
			if resp := es.do(t.Context(), http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", ids[2]); resp.StatusCode != 400 {
				t.Fatalf("resume across the lost event: %d, want 400", resp.StatusCode)
			}
			get := es.do(t.Context(), http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", ids[4])
			if get.StatusCode != 200 {
				t.Fatalf("resume after the lost event: %d", get.StatusCode)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				for k := 11; k <= 30; k++ {
					es.tokens <- k
				}
				close(es.tokens)
			})
			r := &sseReader{bufio.NewScanner(get.Body)}
			for want := 5; ; want++ {
				ev := r.next()
				if ev == nil {
					t.Fatalf("the resumed stream ended before the response (next progress %d)", want)
				}
				if strings.Contains(ev["data"], `"id":1`) {
					if want != 31 || !strings.Contains(ev["data"], "done") {
						t.Fatalf("response %q after progress %d", ev["data"], want-1)
					}
					break
				}
				if got := progressOf(ev); got != want || ev["id"] == "" {
					t.Fatalf("resumed event %q, want progress %d with an ID", ev, want)
				}
			}
			wg.Wait()
		})
	}
}

// TestServerTailsStreamWrittenElsewhere: a stream of the session written
// by another process (another store sharing Redis) is
// followed by a resumption on this server until its end, every event
// exactly once and in order, while it is written.
func TestServerTailsStreamWrittenElsewhere(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			// Two stores, as two processes have (on one client: each
			// miniredis client of the harness has a server of its own).
			prefix, c := testPrefix(), b.client(t)
			here := newTestEventStore(t, c, prefix, mcptest.EventStoreSuiteOptions{})
			elsewhere := newTestEventStore(t, c, prefix, mcptest.EventStoreSuiteOptions{})
			es := newEventServer(t, here)
			sid := es.initialize()
			const stream, n = "r2-7", 200
			data := func(k int) []byte {
				return []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":` + strconv.Itoa(k) + `}}`)
			}
			write := func(k int) {
				if _, err := elsewhere.Write(t.Context(), sid, stream, transport.LogEvent{Seq: int64(k), Data: data(k), End: k == n}); err != nil {
					t.Error(err)
				}
			}
			for k := 1; k <= 20; k++ {
				write(k)
			}
			get := es.do(t.Context(), http.MethodGet, "", "Mcp-Session-Id", sid, "Last-Event-ID", elsewhere.StreamStart(sid, stream))
			if get.StatusCode != 200 {
				t.Fatalf("resume: %d", get.StatusCode)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				for k := 21; k <= n; k++ {
					write(k)
				}
			})
			body, err := io.ReadAll(get.Body)
			wg.Wait()
			if err != nil {
				t.Fatalf("the resumed stream did not end: %v", err)
			}
			r := &sseReader{bufio.NewScanner(bytes.NewReader(body))}
			for k := 1; k <= n; k++ {
				if ev := r.next(); progressOf(ev) != k || ev["id"] == "" {
					t.Fatalf("event %d: %q", k, ev)
				}
			}
			if ev := r.next(); ev != nil {
				t.Fatalf("after the end: %q", ev)
			}
		})
	}
}
