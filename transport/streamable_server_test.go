package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// testBackend serves the connections a StreamableHTTPHandler accepts with a
// small JSON-RPC handler:
//
//	initialize      answers {"protocolVersion": <params.protocolVersion>},
//	                or an error when params.fail is true
//	echo            answers its params
//	chatty          sends notifications/progress first, then answers
//	ask             sends a request to the client and answers its result
//	block           waits until its context ends, reports it, answers
//	close_then_echo closes its SSE stream, waits for release, answers
//	headers         answers the X-Test header it saw
type testBackend struct {
	mu      sync.Mutex
	conns   []*jsonrpc.Conn
	stopped chan string   // block: why the handler's context ended
	started chan struct{} // block: the handler is running
	release chan struct{} // close_then_echo: proceed
}

func newTestBackend() *testBackend {
	return &testBackend{stopped: make(chan string, 10), started: make(chan struct{}, 10), release: make(chan struct{})}
}

func (b *testBackend) connect(ctx context.Context, c Conn) error {
	var conn *jsonrpc.Conn
	conn = jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
		AllowBatch: func() bool { return true },
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case "initialize":
				var p struct {
					ProtocolVersion string `json:"protocolVersion"`
					Fail            bool   `json:"fail"`
				}
				json.Unmarshal(req.Params, &p)
				if p.Fail {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused"}
				}
				return map[string]string{"protocolVersion": p.ProtocolVersion}, nil
			case "echo":
				return req.Params, nil
			case "chatty":
				if err := conn.Notify(ctx, "notifications/progress", json.RawMessage(`{"progress":1}`)); err != nil {
					return nil, err
				}
				return req.Params, nil
			case "ask":
				return conn.Call(ctx, "roots/list", nil)
			case "block":
				b.started <- struct{}{}
				<-ctx.Done()
				b.stopped <- context.Cause(ctx).Error()
				return nil, ctx.Err()
			case "close_then_echo":
				HTTPRequestInfoFromContext(ctx).CloseSSEStream()
				<-b.release
				return req.Params, nil
			case "headers":
				info := HTTPRequestInfoFromContext(ctx)
				if info == nil {
					return nil, errors.New("no HTTP request info")
				}
				return map[string]string{"x-test": info.Header.Get("X-Test")}, nil
			}
			if req.IsNotification() {
				return nil, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
		}),
	})
	b.mu.Lock()
	b.conns = append(b.conns, conn)
	b.mu.Unlock()
	conn.Start()
	return nil
}

func (b *testBackend) closeAll() {
	b.mu.Lock()
	conns := b.conns
	b.mu.Unlock()
	for _, c := range conns {
		c.Close()
		c.Wait()
	}
}

// httpHarness is a handler on an httptest server.
type httpHarness struct {
	t       *testing.T
	backend *testBackend
	handler *StreamableHTTPHandler
	srv     *plainServer
}

func newHTTPHarness(t *testing.T, opts *StreamableHTTPOptions) *httpHarness {
	t.Helper()
	b := newTestBackend()
	h := newStreamableHTTPHandler(b.connect, opts)
	h.hijackAfter = 0 // the tests of hijacked streams need not wait for it
	srv := newPlainServer(t, h, nil)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		b.closeAll()
	})
	return &httpHarness{t: t, backend: b, handler: h, srv: srv}
}

// post sends body with the usual MCP headers plus extra (name, value
// pairs; an empty value deletes the header).
func (hh *httpHarness) post(body string, extra ...string) *http.Response {
	hh.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, hh.srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, extra)
	resp, err := hh.srv.Client().Do(req)
	if err != nil {
		hh.t.Fatal(err)
	}
	hh.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (hh *httpHarness) do(method string, extra ...string) *http.Response {
	hh.t.Helper()
	req, _ := http.NewRequest(method, hh.srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	setHeaders(req, extra)
	resp, err := hh.srv.Client().Do(req)
	if err != nil {
		hh.t.Fatal(err)
	}
	hh.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func setHeaders(req *http.Request, kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "Host" {
			req.Host = kv[i+1]
			continue
		}
		if kv[i+1] == "" {
			req.Header.Del(kv[i])
		} else {
			req.Header.Set(kv[i], kv[i+1])
		}
	}
}

// initialize opens a session and returns its ID.
func (hh *httpHarness) initialize(version string) string {
	hh.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, hh.srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hh.srv.Client().Do(req)
	if err != nil {
		hh.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		hh.t.Fatalf("initialize: status %d", resp.StatusCode)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		hh.t.Fatal("initialize: no Mcp-Session-Id")
	}
	io.Copy(io.Discard, resp.Body)
	return id
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// sseEvents reads events from an SSE body until n have arrived.
func sseEvents(t *testing.T, r io.Reader, n int) []map[string]string {
	t.Helper()
	sc := bufio.NewScanner(r)
	var out []map[string]string
	cur := map[string]string{}
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		if line == "" {
			out = append(out, cur)
			cur = map[string]string{}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		cur[k] += strings.TrimPrefix(v, " ")
	}
	if len(out) < n {
		t.Fatalf("got %d SSE events, want %d (err %v)", len(out), n, sc.Err())
	}
	return out
}

func TestStreamableHTTPStatusCodes(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, &StreamableHTTPOptions{MaxBodyBytes: 1024, SupportedVersions: []string{"2025-03-26", "2025-06-18", "2025-11-25"}})
	sid := hh.initialize("2025-11-25")
	echo := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`
	tests := []struct {
		name   string
		resp   func() *http.Response
		status int
		body   string // substring of the body
	}{
		{"no accept", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Accept", "") }, 406, "Not Acceptable"},
		{"accept json only", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Accept", "application/json") }, 406, ""},
		{"accept wildcard", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Accept", "*/*") }, 200, `"result":{}`},
		{"content type", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Content-Type", "text/plain") }, 415, ""},
		{"too large", func() *http.Response { return hh.post(strings.Repeat(" ", 2000)+echo, "Mcp-Session-Id", sid) }, 413, ""},
		{"not json", func() *http.Response { return hh.post(`{"jsonrpc":`, "Mcp-Session-Id", sid) }, 400, `"code":-32700`},
		{"not json-rpc", func() *http.Response { return hh.post(`{"jsonrpc":"1.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid) }, 400, `"code":-32600`},
		{"duplicate key", func() *http.Response {
			return hh.post(`{"jsonrpc":"2.0","id":1,"method":"echo","method":"x"}`, "Mcp-Session-Id", sid)
		}, 400, `"error"`},
		{"no session", func() *http.Response { return hh.post(echo) }, 400, "Mcp-Session-Id"},
		{"unknown session", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", "nope") }, 404, ""},
		{"bad version", func() *http.Response {
			return hh.post(echo, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "1999-01-01")
		}, 400, "MCP-Protocol-Version"},
		{"missing version means 2025-03-26", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid) }, 200, `"result":{}`},
		{"batch outside 2025-03-26", func() *http.Response {
			return hh.post("["+echo+"]", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
		}, 400, "batches"},
		{"initialize in batch", func() *http.Response {
			return hh.post(`[{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}]`)
		}, 400, "alone"},
		{"notification", func() *http.Response {
			return hh.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)
		}, 202, ""},
		{"put", func() *http.Response { return hh.do(http.MethodPut) }, 405, ""},
		{"get without accept", func() *http.Response {
			return hh.do(http.MethodGet, "Mcp-Session-Id", sid, "Accept", "application/json")
		}, 406, ""},
		{"get unknown session", func() *http.Response { return hh.do(http.MethodGet, "Mcp-Session-Id", "nope") }, 404, ""},
		{"evil origin", func() *http.Response {
			return hh.post(echo, "Mcp-Session-Id", sid, "Origin", "http://evil.example.com")
		}, 403, "origin"},
		{"evil host", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Host", "evil.example.com") }, 403, "host"},
		{"same origin", func() *http.Response { return hh.post(echo, "Mcp-Session-Id", sid, "Origin", hh.srv.URL) }, 200, ""},
		{"localhost host", func() *http.Response {
			return hh.post(echo, "Mcp-Session-Id", sid, "Host", "localhost:1234", "Origin", "http://localhost:1234")
		}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.resp()
			body := readBody(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %q", resp.StatusCode, tt.status, body)
			}
			if !strings.Contains(body, tt.body) {
				t.Errorf("body %q does not contain %q", body, tt.body)
			}
		})
	}
}

func TestStreamableHTTPSessionLifecycle(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, nil)

	// A failed initialize creates no session.
	resp := hh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"fail":true}}`)
	if body := readBody(t, resp); resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, "refused") {
		t.Fatalf("failed initialize: status %d, session %q, body %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	if ids := hh.handler.SessionIDs(); len(ids) != 0 {
		t.Fatalf("sessions after failed initialize: %v", ids)
	}

	sid := hh.initialize("2025-06-18")
	if ids := hh.handler.SessionIDs(); len(ids) != 1 || ids[0] != sid {
		t.Fatalf("SessionIDs = %v, want [%s]", ids, sid)
	}
	if len(sid) < 22 {
		t.Errorf("session ID %q is too short to be unguessable", sid)
	}
	resp = hh.post(`{"jsonrpc":"2.0","id":"a","method":"echo","params":{"x":1}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if body := readBody(t, resp); resp.Header.Get("Content-Type") != "application/json" || body != `{"jsonrpc":"2.0","id":"a","result":{"x":1}}` {
		t.Fatalf("echo: %s %q", resp.Header.Get("Content-Type"), body)
	}
	resp = hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	resp = hh.post(`{"jsonrpc":"2.0","id":2,"method":"echo"}`, "Mcp-Session-Id", sid)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after DELETE: %d, want 404", resp.StatusCode)
	}
	resp = hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("second DELETE: %d, want 404", resp.StatusCode)
	}

	// CloseSession ends a session from the server side.
	sid = hh.initialize("2025-11-25")
	if !hh.handler.CloseSession(sid) || hh.handler.CloseSession(sid) {
		t.Fatal("CloseSession: want true then false")
	}
	if resp := hh.post(`{"jsonrpc":"2.0","id":2,"method":"echo"}`, "Mcp-Session-Id", sid); resp.StatusCode != 404 {
		t.Fatalf("after CloseSession: %d", resp.StatusCode)
	}
}

func TestStreamableHTTPResponseModes(t *testing.T) {
	checkLeaks(t)
	for _, tt := range []struct {
		name     string
		mode     ResponseMode
		method   string
		wantType string
	}{
		{"auto plain", ResponseAuto, "echo", "application/json"},
		{"auto chatty", ResponseAuto, "chatty", "text/event-stream"},
		{"sse plain", ResponseSSE, "echo", "text/event-stream"},
		{"json chatty", ResponseJSON, "chatty", "application/json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hh := newHTTPHarness(t, &StreamableHTTPOptions{ResponseMode: tt.mode})
			sid := hh.initialize("2025-06-18")
			resp := hh.post(`{"jsonrpc":"2.0","id":7,"method":"`+tt.method+`","params":{"v":true}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
			if ct := resp.Header.Get("Content-Type"); ct != tt.wantType {
				t.Fatalf("Content-Type %q, want %q", ct, tt.wantType)
			}
			want := `{"jsonrpc":"2.0","id":7,"result":{"v":true}}`
			if tt.wantType == "application/json" {
				if body := readBody(t, resp); body != want {
					t.Fatalf("body %q", body)
				}
				return
			}
			n := 1
			if tt.method == "chatty" {
				n = 2
			}
			evs := sseEvents(t, resp.Body, n)
			if got := evs[n-1]["data"]; got != want {
				t.Fatalf("last event %q, want %q", got, want)
			}
			if n == 2 && !strings.Contains(evs[0]["data"], "notifications/progress") {
				t.Fatalf("first event %q", evs[0]["data"])
			}
		})
	}
}

func TestStreamableHTTPBatch(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, nil)
	sid := hh.initialize("2025-03-26")
	resp := hh.post(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}]`,
		"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26")
	body := readBody(t, resp)
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got) != 2 {
		t.Fatalf("batch answer %q: %v", body, err)
	}
}

func TestStreamableHTTPServerToClientRequest(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, nil)
	sid := hh.initialize("2025-06-18")
	resp := hh.post(`{"jsonrpc":"2.0","id":1,"method":"ask"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	ev := sseEvents(t, br, 1)[0]
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(ev["data"]), &req); err != nil || req.Method != "roots/list" {
		t.Fatalf("event %q: %v", ev["data"], err)
	}
	answer := hh.post(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"roots":[]}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if answer.StatusCode != http.StatusAccepted {
		t.Fatalf("answer POST: %d", answer.StatusCode)
	}
	ev = sseEvents(t, br, 1)[0]
	if ev["data"] != `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}` {
		t.Fatalf("final event %q", ev["data"])
	}
}

func TestStreamableHTTPStandaloneStream(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, nil)
	sid := hh.initialize("2025-06-18")
	get := hh.do(http.MethodGet, "Mcp-Session-Id", sid)
	if get.StatusCode != 200 || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", get.StatusCode, get.Header.Get("Content-Type"))
	}
	if second := hh.do(http.MethodGet, "Mcp-Session-Id", sid); second.StatusCode != http.StatusConflict {
		t.Fatalf("second GET: %d, want 409", second.StatusCode)
	}
	// A notification unrelated to any request goes to the GET stream.
	hh.backend.mu.Lock()
	conn := hh.backend.conns[len(hh.backend.conns)-1]
	hh.backend.mu.Unlock()
	if err := conn.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	ev := sseEvents(t, get.Body, 1)[0]
	if !strings.Contains(ev["data"], "list_changed") {
		t.Fatalf("GET event %q", ev["data"])
	}
	// DELETE ends the GET stream.
	hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
	if _, err := io.ReadAll(get.Body); err != nil {
		t.Fatalf("GET stream after DELETE: %v", err)
	}
}

func TestStreamableHTTPResumption(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil), RetryInterval: 250 * time.Millisecond})
	sid := hh.initialize("2025-11-25")
	resp := hh.post(`{"jsonrpc":"2.0","id":3,"method":"close_then_echo","params":{"r":1}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	body, err := io.ReadAll(resp.Body) // the server closes the stream
	if err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, bytes.NewReader(body), 1)
	prime := evs[0]
	if prime["id"] == "" || prime["data"] != "" || prime["retry"] != "250" {
		t.Fatalf("priming event %q", prime)
	}
	close(hh.backend.release)
	get := hh.do(http.MethodGet, "Mcp-Session-Id", sid, "Last-Event-ID", prime["id"], "MCP-Protocol-Version", "2025-11-25")
	if get.StatusCode != 200 {
		t.Fatalf("resume GET: %d", get.StatusCode)
	}
	// Perhaps a new priming event (if the stream was still live), then the
	// response.
	for {
		ev := sseEvents(t, get.Body, 1)[0]
		if ev["data"] == "" {
			continue
		}
		if ev["data"] != `{"jsonrpc":"2.0","id":3,"result":{"r":1}}` || ev["id"] == "" {
			t.Fatalf("resumed event %q", ev)
		}
		break
	}
	// Replaying again from the priming event gives the same response.
	again := hh.do(http.MethodGet, "Mcp-Session-Id", sid, "Last-Event-ID", prime["id"])
	body2 := readBody(t, again)
	if !strings.Contains(body2, `"id":3`) {
		t.Fatalf("second replay %q", body2)
	}
	if bad := hh.do(http.MethodGet, "Mcp-Session-Id", sid, "Last-Event-ID", "nonsense"); bad.StatusCode != 400 {
		t.Fatalf("unknown Last-Event-ID: %d", bad.StatusCode)
	}
}

// Without an EventStore there is nothing to resume from: CloseSSEStream
// leaves the stream open and the response arrives on it.
func TestStreamableHTTPCloseSSEStreamNotResumable(t *testing.T) {
	checkLeaks(t)
	for _, mode := range []ResponseMode{ResponseAuto, ResponseSSE, ResponseJSON} {
		hh := newHTTPHarness(t, &StreamableHTTPOptions{ResponseMode: mode})
		sid := hh.initialize("2025-11-25")
		close(hh.backend.release)
		resp := hh.post(`{"jsonrpc":"2.0","id":3,"method":"close_then_echo","params":{"r":1}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
		if body := readBody(t, resp); !strings.Contains(body, `{"jsonrpc":"2.0","id":3,"result":{"r":1}}`) {
			t.Fatalf("mode %d: body %q", mode, body)
		}
	}
}

func TestStreamableHTTPClientGoneCancels(t *testing.T) {
	checkLeaks(t)
	// Before anything was sent (auto mode), and in the middle of an SSE
	// stream (whose headers went out at once).
	for _, mode := range []ResponseMode{ResponseAuto, ResponseSSE} {
		hh := newHTTPHarness(t, &StreamableHTTPOptions{ResponseMode: mode})
		sid := hh.initialize("2025-06-18")
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hh.srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"block"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		errc := make(chan error, 1)
		go func() {
			resp, err := hh.srv.Client().Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errc <- err
		}()
		<-hh.backend.started
		cancel()
		if why := <-hh.backend.stopped; !strings.Contains(why, "abandoned") {
			t.Fatalf("mode %d: handler stopped because %q", mode, why)
		}
		<-errc
		// The session survives its client's impatience.
		if resp := hh.post(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}`, "Mcp-Session-Id", sid); resp.StatusCode != 200 {
			t.Fatalf("mode %d: session after an abandoned request: %d", mode, resp.StatusCode)
		}
	}
}

// TestStreamableHTTPIdleTimeout checks, on fake time, that a session
// expires after exactly its idle timeout (the 10-minute default), that any
// request restarts the clock, and that an expired session is gone (404).
func TestStreamableHTTPIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, nil)
		sid, code := d.initialize("192.0.2.1")
		if sid == "" {
			t.Fatalf("initialize: %d", code)
		}
		if w := d.post("192.0.2.1", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid); w.Code != 202 {
			t.Fatalf("notifications/initialized: %d", w.Code)
		}
		time.Sleep(defaultSessionIdleTimeout - time.Second)
		synctest.Wait()
		if err := d.closedWith(0); err != nil {
			t.Fatalf("closed before its idle timeout: %v", err)
		}
		// A request restarts the clock.
		if w := d.post("192.0.2.1", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid); w.Code != 202 {
			t.Fatalf("request: %d", w.Code)
		}
		time.Sleep(defaultSessionIdleTimeout - time.Second)
		synctest.Wait()
		if err := d.closedWith(0); err != nil {
			t.Fatalf("closed before its idle timeout after a request: %v", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if err := d.closedWith(0); !errors.Is(err, ErrSessionIdle) {
			t.Fatalf("conn ended with %v; want ErrSessionIdle", err)
		}
		if w := d.post("192.0.2.1", `{"jsonrpc":"2.0","id":1,"method":"echo"}`, "Mcp-Session-Id", sid); w.Code != 404 {
			t.Fatalf("expired session: %d", w.Code)
		}
	})
}

func TestStreamableHTTPLimitsAndPrincipal(t *testing.T) {
	checkLeaks(t)
	b := newTestBackend()
	h := newStreamableHTTPHandler(b.connect, &StreamableHTTPOptions{MaxSessions: 1})
	// A middleware that authenticates by a header.
	srv := newPlainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), r.Header.Get("X-User"))))
	}), nil)
	defer func() { h.Close(); srv.Close(); b.closeAll() }()
	hh := &httpHarness{t: t, backend: b, handler: h, srv: srv}
	resp := hh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "X-User", "alice")
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	if resp := hh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "X-User", "bob"); resp.StatusCode != 503 {
		t.Fatalf("second session over MaxSessions: %d", resp.StatusCode)
	}
	if resp := hh.post(`{"jsonrpc":"2.0","id":1,"method":"echo"}`, "Mcp-Session-Id", sid, "X-User", "bob"); resp.StatusCode != 403 {
		t.Fatalf("bob using alice's session: %d", resp.StatusCode)
	}
	if resp := hh.post(`{"jsonrpc":"2.0","id":1,"method":"echo"}`, "Mcp-Session-Id", sid, "X-User", "alice"); resp.StatusCode != 200 {
		t.Fatalf("alice: %d", resp.StatusCode)
	}
}

func TestStreamableHTTPStateless(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, &StreamableHTTPOptions{Stateless: true})
	resp := hh.post(`{"jsonrpc":"2.0","id":1,"method":"headers"}`, "X-Test", "yes", "MCP-Protocol-Version", "2025-11-25")
	if body := readBody(t, resp); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":1,"result":{"x-test":"yes"}}` {
		t.Fatalf("stateless call: %d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatal("stateless mode sent a session ID")
	}
	resp = hh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless initialize: %d, session %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	if resp := hh.do(http.MethodGet); resp.StatusCode != 405 {
		t.Fatalf("stateless GET: %d", resp.StatusCode)
	}
	if resp := hh.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		t.Fatalf("stateless notification: %d", resp.StatusCode)
	}
	if ids := hh.handler.SessionIDs(); len(ids) != 0 {
		t.Fatalf("stateless sessions: %v", ids)
	}
}

func TestMemoryEventStoreBounds(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryEventStore(&MemoryEventStoreOptions{MaxBytes: 10, MaxAge: time.Minute})
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	first, _ := s.Append(ctx, "s", "1", []byte("aaaa"))
	second, _ := s.Append(ctx, "s", "1", []byte("bbbb"))
	if _, evs, err := s.After(ctx, "s", first); err != nil || len(evs) != 1 || string(evs[0].Data) != "bbbb" || evs[0].ID != second {
		t.Fatalf("After(first) = %v, %v", evs, err)
	}
	s.Append(ctx, "s", "1", []byte("cccc")) // 12 bytes > 10: "aaaa" goes
	if _, _, err := s.After(ctx, "s", "1_-1"); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("negative sequence: %v", err)
	}
	if _, evs, err := s.After(ctx, "s", first); err != nil || len(evs) != 2 {
		t.Fatalf("After(first) after eviction of it = %v, %v; want the 2 later events", evs, err)
	}
	s.Append(ctx, "s", "1", []byte("dddd")) // "bbbb" goes: resuming from first would skip it
	if _, _, err := s.After(ctx, "s", first); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After(first) with a gap: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, _, err := s.After(ctx, "s", second); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After past MaxAge: %v", err)
	}
	s.Append(ctx, "t", "x", []byte("1"))
	s.DeleteSession(ctx, "t")
	if _, _, err := s.After(ctx, "t", "x_0"); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After on a deleted session: %v", err)
	}
}

func TestStreamableHTTPSlowReader(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, &StreamableHTTPOptions{WriteTimeout: 20 * time.Millisecond})
	sid := hh.initialize("2025-06-18")
	get := hh.do(http.MethodGet, "Mcp-Session-Id", sid) // never read
	if get.StatusCode != 200 {
		t.Fatalf("GET: %d", get.StatusCode)
	}
	hh.backend.mu.Lock()
	conn := hh.backend.conns[0]
	hh.backend.mu.Unlock()
	big := json.RawMessage(`{"data":"` + strings.Repeat("x", 256<<10) + `"}`)
	// Notifications pile up in the socket buffers until a write times out
	// and the server drops the stream; then a new GET may attach. The
	// session itself keeps serving throughout.
	for i := 0; ; i++ {
		if i == 2000 {
			t.Fatal("the server never gave up on the stalled stream")
		}
		if err := conn.Notify(context.Background(), "notifications/message", big); err != nil {
			t.Fatal(err)
		}
		if i%8 != 7 {
			continue
		}
		second := hh.do(http.MethodGet, "Mcp-Session-Id", sid)
		if second.StatusCode == 200 {
			break
		}
		if second.StatusCode != http.StatusConflict {
			t.Fatalf("second GET: %d", second.StatusCode)
		}
	}
	resp := hh.post(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`, "Mcp-Session-Id", sid)
	if resp.StatusCode != 200 {
		t.Fatalf("session after a stalled stream: %d", resp.StatusCode)
	}
}

func TestStreamableHTTPAbandonedSessions(t *testing.T) {
	checkLeaks(t)
	const n = 1000
	hh := newHTTPHarness(t, &StreamableHTTPOptions{SessionIdleTimeout: 50 * time.Millisecond})
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // a second cycle empties the sync.Pools' victim caches
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Warm up (lazy initialisation in net/http and the JSON caches), then
	// measure.
	hh.initialize("2025-11-25")
	hh.srv.Client().CloseIdleConnections()
	before := heap()
	for i := 1; i < n; i++ {
		hh.initialize("2025-11-25")
	}
	hh.srv.Client().CloseIdleConnections()
	hh.backend.mu.Lock()
	conns := hh.backend.conns
	hh.backend.mu.Unlock()
	if len(conns) != n {
		t.Fatalf("%d connections", len(conns))
	}
	for _, c := range conns {
		<-c.Done() // each closes itself after the idle timeout
	}
	if ids := hh.handler.SessionIDs(); len(ids) != 0 {
		t.Fatalf("%d sessions left", len(ids))
	}
	hh.backend.mu.Lock()
	hh.backend.conns = nil // the test's own references
	hh.backend.mu.Unlock()
	conns = nil
	after := heap()
	// What is left is noise: less than 100 bytes per abandoned session.
	if after > before && after-before > n*100 {
		t.Errorf("heap grew by %d bytes after %d sessions expired", after-before, n)
	}
}
