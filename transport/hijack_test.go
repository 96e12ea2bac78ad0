package transport

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawGET opens the session's standalone GET stream on a TCP connection of
// its own and returns the connection, its reader and the response, whose
// headers are read.
func (hh *httpHarness) rawGET(sid string) (net.Conn, *bufio.Reader, *http.Response) {
	hh.t.Helper()
	conn, err := net.Dial("tcp", hh.srv.Listener.Addr().String())
	if err != nil {
		hh.t.Fatal(err)
	}
	hh.t.Cleanup(func() { conn.Close() })
	req := "GET / HTTP/1.1\r\nHost: " + hh.srv.Listener.Addr().String() +
		"\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
		"\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		hh.t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		hh.t.Fatal(err)
	}
	return conn, br, resp
}

// settle waits until cond holds, polling: the server notices some ends
// (a client's close) on goroutines of its own.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestHijackedStreamCost checks that an idle session holding its
// standalone GET stream costs the server at most one goroutine: net/http
// holds two per open request (its request goroutine and its background
// reader).
func TestHijackedStreamCost(t *testing.T) {
	checkLeaks(t)
	hh := newHTTPHarness(t, nil)
	const streams = 20
	sids := make([]string, streams)
	for i := range sids {
		sids[i] = hh.initialize("2025-11-25")
	}
	before := runtime.NumGoroutine()
	for _, sid := range sids {
		_, _, resp := hh.rawGET(sid)
		if resp.StatusCode != 200 {
			t.Fatalf("GET: status %d", resp.StatusCode)
		}
	}
	// Settle: net/http's request goroutines end after the handover.
	var n int
	deadline := time.Now().Add(5 * time.Second)
	for {
		n = runtime.NumGoroutine() - before
		if n <= streams || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if n > streams {
		t.Errorf("%d idle GET streams hold %d goroutines, want at most one each", streams, n)
	}
}

// TestHijackedStreamEnds checks a hijacked GET stream from headers to
// end: it is chunked and carries events; it ends cleanly when the session
// ends (a terminating chunk, and the connection serves the next request),
// and at once when its client closes the connection or sends anything on
// it, freeing the session's stream for a new GET.
func TestHijackedStreamEnds(t *testing.T) {
	tests := []struct {
		name string
		opts *StreamableHTTPOptions
		// end ends the stream; clean reports whether the server ends it
		// (and the client reads the body to its end).
		end   func(hh *httpHarness, sid string, conn net.Conn)
		clean bool
		// reused reports whether the connection serves another request
		// after a clean end: not when the handler is closing.
		reused bool
	}{
		{"DELETE", nil, func(hh *httpHarness, sid string, _ net.Conn) {
			hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
		}, true, true},
		{"CloseSession", nil, func(hh *httpHarness, sid string, _ net.Conn) {
			hh.handler.CloseSession(sid)
		}, true, true},
		{"handler Close", nil, func(hh *httpHarness, _ string, _ net.Conn) {
			hh.handler.Close()
		}, true, false},
		{"client closes", nil, func(_ *httpHarness, _ string, conn net.Conn) {
			conn.Close()
		}, false, false},
		{"client sends", nil, func(_ *httpHarness, _ string, conn net.Conn) {
			io.WriteString(conn, "GET / HTTP/1.1\r\n\r\n")
		}, false, false},
		{"DisableHijack, DELETE", &StreamableHTTPOptions{DisableHijack: true}, func(hh *httpHarness, sid string, _ net.Conn) {
			hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
		}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			hh := newHTTPHarness(t, tt.opts)
			hijacked := make(chan struct{})
			hh.handler.testHookHijacked = func() { close(hijacked) }
			sid := hh.initialize("2025-11-25")
			conn, br, resp := hh.rawGET(sid)
			if resp.StatusCode != 200 || resp.Close || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
				t.Fatalf("GET: status %d, Connection: close %v, Transfer-Encoding %q", resp.StatusCode, resp.Close, resp.TransferEncoding)
			}
			if tt.opts == nil || !tt.opts.DisableHijack {
				// The headers go out before the handler takes the stream
				// over: what follows tests the stream it holds.
				select {
				case <-hijacked:
				case <-time.After(10 * time.Second):
					t.Fatal("the stream was not taken over")
				}
			}
			if got := resp.Header.Get("Mcp-Session-Id"); got != sid {
				t.Fatalf("GET: Mcp-Session-Id %q", got)
			}
			hh.backend.mu.Lock()
			sc := hh.backend.conns[0]
			hh.backend.mu.Unlock()
			for i := range 3 {
				if err := sc.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
					t.Fatal(err)
				}
				if ev := sseEvents(t, resp.Body, 1)[0]; !strings.Contains(ev["data"], "list_changed") {
					t.Fatalf("event %d: %q", i, ev)
				}
			}
			tt.end(hh, sid, conn)
			if !tt.clean {
				// The stream is free for a new GET once the server noticed.
				settle(t, "the stream to be released", func() bool {
					return hh.do(http.MethodGet, "Mcp-Session-Id", sid).StatusCode == 200
				})
				return
			}
			if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
				t.Fatalf("the stream's end: %q, %v; want a clean end", rest, err)
			}
			if !tt.reused {
				// A bound, so that a connection left open fails the test
				// rather than hang it.
				conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				var b [1]byte
				if n, err := conn.Read(b[:]); err != io.EOF {
					t.Fatalf("after the stream's end: %d bytes, %v; want EOF", n, err)
				}
				return
			}
			// The connection serves the next request.
			if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+hh.srv.Listener.Addr().String()+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			next, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("a request after the stream's end: %v", err)
			}
			if next.StatusCode != http.StatusBadRequest {
				t.Fatalf("a request without session after the stream's end: status %d", next.StatusCode)
			}
		})
	}
}

// plainServer is an http.Server on 127.0.0.1 without the ConnState hook
// that httptest installs, so that GET streams are hijacked as they are in
// production (see [StreamableHTTPOptions.DisableHijack]).
type plainServer struct {
	URL      string
	Listener net.Listener
	srv      *http.Server
	client   *http.Client
	served   chan struct{}
}

// newPlainServer starts h on a plainServer; the caller closes it. A
// non-nil wrap wraps its listener.
func newPlainServer(t testing.TB, h http.Handler, wrap func(net.Listener) net.Listener) *plainServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &plainServer{
		URL:      "http://" + l.Addr().String(),
		Listener: l,
		srv:      &http.Server{Handler: h},
		client:   &http.Client{Transport: &http.Transport{}},
		served:   make(chan struct{}),
	}
	if wrap != nil {
		l = wrap(l)
	}
	go func() {
		defer close(p.served)
		p.srv.Serve(l)
	}()
	return p
}

// Client returns a client for the server, whose idle connections Close
// closes.
func (p *plainServer) Client() *http.Client { return p.client }

// Close closes the server's listener and connections (but for hijacked
// ones) and the client's idle connections.
func (p *plainServer) Close() {
	p.srv.Close()
	<-p.served
	p.client.CloseIdleConnections()
}

// TestHijackDelay checks when a standalone stream is hijacked: not when
// its session ends within the handler's delay (the stream ends on
// net/http, cleanly, and its connection serves the next request), and
// once it has been open that long (it then carries events and ends as a
// hijacked stream does).
func TestHijackDelay(t *testing.T) {
	for _, tt := range []struct {
		name   string
		after  time.Duration
		hijack bool
	}{
		{"session ends first", time.Hour, false},
		{"stream outlives the delay", 10 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			hh := newHTTPHarness(t, nil)
			hh.handler.hijackAfter = tt.after
			hijacked := make(chan struct{}, 1)
			hh.handler.testHookHijacked = func() { hijacked <- struct{}{} }
			sid := hh.initialize("2025-11-25")
			conn, br, resp := hh.rawGET(sid)
			if resp.StatusCode != 200 {
				t.Fatalf("GET: status %d", resp.StatusCode)
			}
			if tt.hijack {
				select {
				case <-hijacked:
				case <-time.After(10 * time.Second):
					t.Fatal("the stream was not hijacked")
				}
			}
			hh.backend.mu.Lock()
			sc := hh.backend.conns[0]
			hh.backend.mu.Unlock()
			if err := sc.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
				t.Fatal(err)
			}
			if ev := sseEvents(t, resp.Body, 1)[0]; !strings.Contains(ev["data"], "list_changed") {
				t.Fatalf("event: %q", ev)
			}
			hh.do(http.MethodDelete, "Mcp-Session-Id", sid)
			if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
				t.Fatalf("the stream's end: %q, %v; want a clean end", rest, err)
			}
			if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+hh.srv.Listener.Addr().String()+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			if next, err := http.ReadResponse(br, nil); err != nil || next.StatusCode != http.StatusBadRequest {
				t.Fatalf("a request after the stream's end: %v, %v; want status 400", next, err)
			}
			select {
			case <-hijacked:
				if !tt.hijack {
					t.Fatal("a stream that ended within the delay was hijacked")
				}
			default:
			}
		})
	}
}
