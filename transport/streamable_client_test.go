package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Compile-time checks of the optional interfaces.
var (
	_ SessionConn                   = (*streamableClientConn)(nil)
	_ mcplink.ProtocolVersionSetter = (*streamableClientConn)(nil)
)

func TestStreamableClientJSON(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	initializeConn(t, c)
	if got := c.(SessionConn).SessionID(); got != "session-1" {
		t.Errorf("SessionID = %q, want session-1", got)
	}
	ctx := context.Background()
	if err := c.Write(ctx, request(2, "tools/list", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":2,"result":{"method":"tools/list"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// A response to a server request, and a notification: 202, no body.
	if err := c.Write(ctx, resultResponse(jsonrpc.StringID("s1"), `{}`)); err != nil {
		t.Errorf("writing a response: %v", err)
	}
	if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{}`)}); err != nil {
		t.Errorf("writing a notification: %v", err)
	}
	// A batch, answered with a batch.
	batch := jsonrpc.Batch{request(3, "a", ""), &jsonrpc.Request{Method: "n"}, request(4, "b", "")}
	if err := c.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	want := `[{"jsonrpc":"2.0","id":3,"result":{"method":"a"}},{"jsonrpc":"2.0","id":4,"result":{"method":"b"}}]`
	if got := readMessageString(t, c); got != want {
		t.Errorf("batch: got %s, want %s", got, want)
	}

	seen := f.requests()
	if got, want := f.methods(), []string{"POST initialize", "POST notifications/initialized",
		"POST tools/list", "POST response", "POST notifications/progress", "POST batch"}; !slices.Equal(got, want) {
		t.Errorf("server saw %q, want %q", got, want)
	}
	for i, s := range seen {
		if ct := s.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("request %d: Content-Type %q", i, ct)
		}
		if a := s.header.Get("Accept"); a != "application/json, text/event-stream" {
			t.Errorf("request %d: Accept %q", i, a)
		}
		wantSID := "session-1"
		if i == 0 {
			wantSID = ""
		}
		if sid := s.header.Get("Mcp-Session-Id"); sid != wantSID {
			t.Errorf("request %d: Mcp-Session-Id %q, want %q", i, sid, wantSID)
		}
	}
}

// TestStreamableClientSSEResponse has the server answer a call with an
// event stream that interleaves notifications and a request of its own,
// which the client answers with a second POST before the final response.
func TestStreamableClientSSEResponse(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	answered := make(chan jsonrpc.Message, 1)
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		switch m := m.(type) {
		case *jsonrpc.Response:
			answered <- m
			w.WriteHeader(http.StatusAccepted)
			return true
		case *jsonrpc.Request:
			if m.Method != "tools/call" {
				return false
			}
			send := startSSE(w, nil)
			send(sse.Event{ID: "1"}) // priming
			send(messageEvent(t, "2", &jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{"progress":1}`)}))
			send(messageEvent(t, "3", request(100, "sampling/createMessage", `{}`)))
			select {
			case <-answered:
			case <-r.Context().Done():
				return true
			}
			send(messageEvent(t, "4", &jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{"progress":2}`)}))
			send(messageEvent(t, "5", resultResponse(m.ID, `{"content":[]}`)))
			return true
		}
		return false
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	initializeConn(t, c)
	ctx := context.Background()
	if err := c.Write(ctx, request(2, "tools/call", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":100,"method":"sampling/createMessage","params":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if err := c.Write(ctx, resultResponse(jsonrpc.Int64ID(100), `{"role":"assistant"}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestStreamableClientBadMessage checks that a malformed message in a
// stream is reported by Read without ending the connection, and that an
// oversized one is recognisable.
func TestStreamableClientBadMessage(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != "x" {
			return false
		}
		send := startSSE(w, nil)
		send(sse.Event{Data: []byte("{not json")})
		send(sse.Event{Data: []byte(`{"jsonrpc":"2.0","method":"` + strings.Repeat("y", 200) + `"}`)})
		send(sse.Event{Name: "other", Data: []byte("ignored")})
		send(messageEvent(t, "", resultResponse(req.ID, `{}`)))
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true, MaxMessageSize: 100})
	if err := c.Write(context.Background(), request(1, "x", "")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		m, err := c.Read(ctx)
		cancel()
		got = append(got, outcome(t, m, err))
	}
	want := []string{"decode -32700", "too-large 100", `msg {"jsonrpc":"2.0","id":1,"result":{}}`}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %q, want %q", got, want)
	}
}

func TestStreamableClientHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		check   func(t *testing.T, err error)
	}{
		{"500", func(w http.ResponseWriter) {
			http.Error(w, strings.Repeat("e", 1000), http.StatusInternalServerError)
		}, func(t *testing.T, err error) {
			var se *HTTPStatusError
			if !errors.As(err, &se) {
				t.Fatalf("err %v, want an HTTPStatusError", err)
			}
			if se.StatusCode != 500 || se.Status != "500 Internal Server Error" || se.Body != strings.Repeat("e", 512) {
				t.Errorf("got %d %q with %d bytes of body", se.StatusCode, se.Status, len(se.Body))
			}
		}},
		{"403", func(w http.ResponseWriter) {
			http.Error(w, "forbidden", http.StatusForbidden)
		}, func(t *testing.T, err error) {
			var se *HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != 403 || se.Body != "forbidden\n" {
				t.Fatalf("err %v, want a 403 HTTPStatusError", err)
			}
		}},
		{"request answered 202", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
		}, func(t *testing.T, err error) {
			if err == nil || !strings.Contains(err.Error(), "no body") {
				t.Fatalf("err %v", err)
			}
		}},
		{"unknown content type", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello")
		}, func(t *testing.T, err error) {
			if err == nil || !strings.Contains(err.Error(), "content type") {
				t.Fatalf("err %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			f := newFakeMCPServer(t)
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				if isInitializeRequest(m) || isInitializedNote(m) {
					return false
				}
				tt.handler(w)
				return true
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
			initializeConn(t, c)
			err := c.Write(context.Background(), request(2, "x", ""))
			tt.check(t, err)
		})
	}
}

// TestStreamableClientSessionExpired has the server forget the session,
// found by a POST or by the standalone stream's GET. Without
// ReinitializeOnSessionExpired the connection ends: the Write that met
// the 404 and Read both return the *SessionExpiredError, so the session
// using the connection ends too instead of failing every call.
func TestStreamableClientSessionExpired(t *testing.T) {
	for _, tt := range []struct {
		name       string
		standalone bool
	}{
		{"POST", false},
		{"standalone GET", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			f := newFakeMCPServer(t)
			release := make(chan struct{})
			f.get = func(w http.ResponseWriter, r *http.Request) {
				// The stream ends when the test says; its reconnection
				// meets the expired session.
				startSSE(w, nil)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{
				URL: srv.URL, DisableStandaloneStream: !tt.standalone, MinRetryDelay: time.Millisecond, RetryFloor: -1,
			})
			initializeConn(t, c)
			if tt.standalone {
				if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
					t.Fatal(err)
				}
				f.expire()
				close(release)
			} else {
				f.expire()
				err := c.Write(context.Background(), request(2, "tools/list", ""))
				var se *SessionExpiredError
				if !errors.As(err, &se) || se.SessionID != "session-1" {
					t.Fatalf("err %v, want a SessionExpiredError for session-1", err)
				}
				if !errors.Is(err, ErrSessionExpired) {
					t.Errorf("errors.Is(err, ErrSessionExpired) = false for %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := c.Read(ctx)
			var se *SessionExpiredError
			if !errors.As(err, &se) || se.SessionID != "session-1" {
				t.Fatalf("Read: %v, want a SessionExpiredError for session-1", err)
			}
		})
	}
}

func TestStreamableClientReinitialize(t *testing.T) {
	for _, sseInit := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sseInit), func(t *testing.T) {
			checkLeaks(t)
			f := newFakeMCPServer(t)
			inits := 0
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				if !isInitializeRequest(m) {
					return false
				}
				f.mu.Lock()
				inits++
				f.session = fmt.Sprintf("session-%d", inits)
				w.Header().Set(headerSessionID, f.session)
				n := inits
				f.mu.Unlock()
				resp := resultResponse(m.(*jsonrpc.Request).ID, `{"method":"initialize"}`)
				if !sseInit || n == 1 {
					writeJSONMessage(t, w, resp)
					return true
				}
				send := startSSE(w, nil)
				send(messageEvent(t, "", &jsonrpc.Request{Method: "notifications/message", Params: []byte(`{"n":1}`)}))
				send(messageEvent(t, "", resp))
				return true
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{
				URL: srv.URL, DisableStandaloneStream: true, ReinitializeOnSessionExpired: true,
			})
			initializeConn(t, c)
			c.(mcplink.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
			f.expire()
			if err := c.Write(context.Background(), request(2, "tools/list", "")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if sseInit {
				if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":1}}`; got != want {
					t.Errorf("got %s, want %s", got, want)
				}
			}
			// The repeated initialize's response is swallowed.
			if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":2,"result":{"method":"tools/list"}}`; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
			if got := c.(SessionConn).SessionID(); got != "session-2" {
				t.Errorf("SessionID = %q, want session-2", got)
			}
			want := []string{"POST initialize", "POST notifications/initialized", "POST tools/list",
				"POST initialize", "POST notifications/initialized", "POST tools/list"}
			if got := f.methods(); !slices.Equal(got, want) {
				t.Errorf("server saw %q, want %q", got, want)
			}
			seen := f.requests()
			for i, wantSID := range []string{"", "session-1", "session-1", "", "session-2", "session-2"} {
				if sid := seen[i].header.Get(headerSessionID); sid != wantSID {
					t.Errorf("request %d (%s): session %q, want %q", i, want[i], sid, wantSID)
				}
			}
			if v := seen[3].header.Get(headerProtocolVersion); v != "" {
				t.Errorf("repeated initialize carried MCP-Protocol-Version %q", v)
			}
		})
	}
}

// TestStreamableClientResume has the server close a POST's event stream
// after a priming event with a retry field; the client must resume it
// with a GET carrying Last-Event-ID after the server's delay, not its own
// (an hour).
func TestStreamableClientResume(t *testing.T) {
	checkLeaks(t)
	const retry = 30 * time.Millisecond
	f := newFakeMCPServer(t)
	var closedAt time.Time
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != "slow" {
			return false
		}
		send := startSSE(w, nil)
		send(sse.Event{ID: "e1", Retry: retry})
		send(messageEvent(t, "e2", &jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{}`)}))
		f.mu.Lock()
		closedAt = time.Now()
		f.mu.Unlock()
		return true // the connection closes, the stream does not end
	}
	gets := 0
	f.get = func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		gets++
		n, elapsed := gets, time.Since(closedAt)
		f.mu.Unlock()
		if r.Header.Get(headerLastEventID) != "e2" {
			t.Errorf("GET %d: Last-Event-ID %q, want e2", n, r.Header.Get(headerLastEventID))
		}
		if elapsed < retry {
			t.Errorf("GET %d came %v after the stream closed, before the retry delay of %v", n, elapsed, retry)
		}
		send := startSSE(w, nil)
		if n == 1 {
			// A poll that ends with nothing new.
			return
		}
		send(messageEvent(t, "e3", resultResponse(jsonrpc.Int64ID(2), `{"done":true}`)))
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{
		URL: srv.URL, DisableStandaloneStream: true, MinRetryDelay: time.Hour,
	})
	initializeConn(t, c)
	c.(mcplink.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
	if err := c.Write(context.Background(), request(2, "slow", "")); err != nil {
		t.Fatal(err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":2,"result":{"done":true}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, s := range f.requests() {
		if s.method == http.MethodGet {
			if s.header.Get(headerSessionID) != "session-1" || s.header.Get(headerProtocolVersion) != "2025-11-25" ||
				s.header.Get("Accept") != "text/event-stream" {
				t.Errorf("GET headers %v", s.header)
			}
		}
	}
}

// TestStreamableClientUnresumable checks that requests whose stream broke
// for good get an error response made up by the transport.
func TestStreamableClientUnresumable(t *testing.T) {
	tests := []struct {
		name   string
		ids    bool // the stream has event ids
		get    int  // status of the resuming GET
		errMsg string
	}{
		{"no event ids", false, 0, "cannot be resumed"},
		{"GET 405", true, http.StatusMethodNotAllowed, "does not resume"},
		{"GET 500", true, http.StatusInternalServerError, "could not be resumed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			f := newFakeMCPServer(t)
			f.noSession = true
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				req, ok := m.(*jsonrpc.Request)
				if !ok || req.Method != "x" {
					return false
				}
				send := startSSE(w, nil)
				id := ""
				if tt.ids {
					id = "1"
				}
				send(sse.Event{ID: id, Data: []byte(encode(t, &jsonrpc.Request{Method: "n"}))})
				return true
			}
			gets := 0
			f.get = func(w http.ResponseWriter, r *http.Request) {
				f.mu.Lock()
				gets++
				f.mu.Unlock()
				w.WriteHeader(tt.get)
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{
				URL: srv.URL, DisableStandaloneStream: true, MinRetryDelay: time.Millisecond, MaxRetries: 2,
			})
			if err := c.Write(context.Background(), request(7, "x", "")); err != nil {
				t.Fatal(err)
			}
			readMessage(t, c) // the notification
			r, ok := readMessage(t, c).(*jsonrpc.Response)
			if !ok || r.ID != jsonrpc.Int64ID(7) || r.Error == nil || r.Error.Code != jsonrpc.CodeConnectionClosed ||
				!strings.Contains(r.Error.Message, tt.errMsg) {
				t.Fatalf("got %+v, want an error response to 7 mentioning %q", r, tt.errMsg)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			wantGets := map[int]int{0: 0, http.StatusMethodNotAllowed: 1, http.StatusInternalServerError: 2}[tt.get]
			if gets != wantGets {
				t.Errorf("%d GETs, want %d", gets, wantGets)
			}
		})
	}
}

// TestStreamableClientStandalone checks the GET stream: opened after
// initialization, delivering messages, reconnected with Last-Event-ID.
func TestStreamableClientStandalone(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	gets := make(chan http.Header, 10)
	f.get = func(w http.ResponseWriter, r *http.Request) {
		gets <- r.Header.Clone()
		send := startSSE(w, nil)
		switch r.Header.Get(headerLastEventID) {
		case "":
			send(messageEvent(t, "g1", &jsonrpc.Request{Method: "notifications/tools/list_changed"}))
			// The stream ends; the client reconnects.
		case "g1":
			send(messageEvent(t, "g2", request(50, "ping", "")))
			<-r.Context().Done()
		default:
			t.Errorf("unexpected Last-Event-ID %q", r.Header.Get(headerLastEventID))
		}
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, MinRetryDelay: time.Millisecond})
	initializeConn(t, c)
	h := waitFor(t, gets, "the GET stream")
	if h.Get("Accept") != "text/event-stream" || h.Get(headerSessionID) != "session-1" {
		t.Errorf("GET headers %v", h)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":50,"method":"ping"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if h := waitFor(t, gets, "the second GET"); h.Get(headerLastEventID) != "g1" {
		t.Errorf("second GET: Last-Event-ID %q", h.Get(headerLastEventID))
	}
}

// TestStreamableClientStandalone405 checks that a 405 answer to the GET
// stops the client from trying again.
func TestStreamableClientStandalone405(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, MinRetryDelay: time.Millisecond})
	sc := c.(*streamableClientConn)
	exited := make(chan struct{})
	sc.testHookStandaloneExit = func() { close(exited) }
	initializeConn(t, c)
	waitFor(t, exited, "the standalone stream to give up")
	sc.mu.Lock()
	status := sc.standaloneStatus
	sc.mu.Unlock()
	if status != standaloneUnsupported {
		t.Errorf("standalone status %d, want unsupported", status)
	}
	// Later POSTs do not bring the stream back.
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// The GET goes out alongside the first notifications/initialized, in
	// either order.
	got := f.methods()
	if len(got) == 5 && got[1] == "GET" {
		got[1], got[2] = got[2], got[1]
	}
	want := []string{"POST initialize", "POST notifications/initialized", "GET", "POST notifications/initialized", "DELETE"}
	if !slices.Equal(got, want) {
		t.Errorf("server saw %q, want %q (GET and the first initialized in either order)", f.methods(), want)
	}
}

func TestStreamableClientClose(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	deleted := make(chan http.Header, 1)
	f.del = func(w http.ResponseWriter, r *http.Request) {
		deleted <- r.Header.Clone()
		w.WriteHeader(http.StatusMethodNotAllowed) // allowed, and ignored
	}
	streamOpen := make(chan struct{})
	f.get = func(w http.ResponseWriter, r *http.Request) {
		startSSE(w, nil)
		close(streamOpen)
		<-r.Context().Done()
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	tr := &StreamableClientTransport{URL: srv.URL}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	initializeConn(t, c)
	c.(mcplink.ProtocolVersionSetter).SetProtocolVersion("2025-06-18")
	waitFor(t, streamOpen, "the GET stream")

	readErr := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := waitFor(t, readErr, "Read to return"); !errors.Is(err, ErrClosed) {
		t.Errorf("pending Read: %v, want ErrClosed", err)
	}
	select {
	case h := <-deleted:
		if h.Get(headerSessionID) != "session-1" || h.Get(headerProtocolVersion) != "2025-06-18" {
			t.Errorf("DELETE headers %v", h)
		}
	default:
		t.Error("no DELETE before Close returned")
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := c.Write(context.Background(), request(9, "x", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The transport is single-use.
	if _, err := tr.Connect(context.Background()); err == nil {
		t.Error("second Connect succeeded")
	}
}

// TestStreamableClientCloseTimeout checks that Close returns in bounded
// time when the server never answers the DELETE, and that a pending
// Write is ended by Close.
func TestStreamableClientCloseTimeout(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.del = func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	hanging := make(chan struct{})
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "hang" {
			close(hanging)
			<-r.Context().Done()
			return true
		}
		return false
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c, err := (&StreamableClientTransport{URL: srv.URL, CloseTimeout: 50 * time.Millisecond}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	initializeConn(t, c)
	writeErr := make(chan error, 1)
	go func() { writeErr <- c.Write(context.Background(), request(5, "hang", "")) }()
	waitFor(t, hanging, "the hanging POST")
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := waitFor(t, writeErr, "Write to return"); !errors.Is(err, ErrClosed) {
		t.Errorf("pending Write: %v, want ErrClosed", err)
	}
}

func TestStreamableClientHeaders(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{
		URL:                     srv.URL,
		DisableStandaloneStream: true,
		Header: http.Header{
			"X-Static":       {"s"},
			"Mcp-Session-Id": {"overridden by the transport"},
		},
	})
	initializeConn(t, c)
	ctx := WithHTTPHeader(context.Background(), http.Header{"X-Outer": {"o"}, "X-Req": {"outer"}})
	ctx = WithHTTPHeader(ctx, http.Header{"X-Req": {"r1", "r2"}})
	if err := c.Write(ctx, request(2, "a", "")); err != nil {
		t.Fatal(err)
	}
	readMessage(t, c)
	c.(mcplink.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
	if err := c.Write(context.Background(), request(3, "b", "")); err != nil {
		t.Fatal(err)
	}
	readMessage(t, c)
	seen := f.requests()
	if len(seen) != 4 {
		t.Fatalf("server saw %q", f.methods())
	}
	for i, s := range seen {
		if s.header.Get("X-Static") != "s" {
			t.Errorf("request %d: X-Static %q", i, s.header.Get("X-Static"))
		}
		if wantSID := map[bool]string{true: "session-1"}[i > 0]; s.header.Get(headerSessionID) != wantSID {
			t.Errorf("request %d: session %q, want %q", i, s.header.Get(headerSessionID), wantSID)
		}
		wantReq, wantOuter := []string(nil), ""
		if i == 2 {
			wantReq, wantOuter = []string{"r1", "r2"}, "o"
		}
		if got := s.header.Values("X-Req"); !slices.Equal(got, wantReq) || s.header.Get("X-Outer") != wantOuter {
			t.Errorf("request %d: X-Req %q, X-Outer %q", i, got, s.header.Get("X-Outer"))
		}
		wantVersion := ""
		if i == 3 {
			wantVersion = "2025-11-25"
		}
		if v := s.header.Get(headerProtocolVersion); v != wantVersion {
			t.Errorf("request %d: MCP-Protocol-Version %q, want %q", i, v, wantVersion)
		}
	}
}

// TestStreamableClientCancelMidEvent cancels a call's context while its
// event stream is in the middle of an event: the stream must be dropped
// at once, without waiting for the rest of the event.
func TestStreamableClientCancelMidEvent(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	partial := make(chan struct{})
	gone := make(chan struct{})
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != "x" {
			return false
		}
		startSSE(w, nil)
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",")
		w.(http.Flusher).Flush()
		close(partial)
		<-r.Context().Done()
		close(gone)
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Write(ctx, request(1, "x", "")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, partial, "the partial event")
	cancel()
	waitFor(t, gone, "the server to see the stream closed")
	// Nothing was delivered, not even an error response: the caller gave up.
	rctx, rcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer rcancel()
	if m, err := c.Read(rctx); err == nil {
		t.Errorf("Read returned %s", encode(t, m))
	}
}

// stallingRoundTripper answers requests for the method "x" itself, with
// an application/json body that sends its first bytes and then blocks
// until closed, whatever the request's context: it stands for
// RoundTrippers that do not stop a body read when the context ends. Other
// requests go to next.
type stallingRoundTripper struct {
	next    http.RoundTripper
	partial chan struct{} // closed once the body's first bytes were read
}

func (rt *stallingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil {
		return rt.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(body), `"method":"x"`) {
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		return rt.next.RoundTrip(r2)
	}
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, `{"jsonrpc":"2.0",`)
		close(rt.partial)
	}()
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"application/json"}},
		ContentLength: 100,
		Body:          pr,
		Request:       r,
	}, nil
}

// TestStreamableClientCancelMidJSON cancels a call's context while its
// application/json answer is half read: Write must return at once,
// whether the client's RoundTripper is an *http.Transport (which ends the
// body read itself) or one that ignores the context once it returned the
// response (the transport then closes the body).
func TestStreamableClientCancelMidJSON(t *testing.T) {
	for _, tt := range []struct {
		name     string
		stalling bool
	}{
		{"http.Transport", false},
		{"ignores the context", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			partial := make(chan struct{})
			var hc *http.Client
			stalling := &stallingRoundTripper{partial: partial}
			if tt.stalling {
				hc = &http.Client{Transport: stalling}
			}
			f := newFakeMCPServer(t)
			f.noSession = true
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				req, ok := m.(*jsonrpc.Request)
				if !ok || req.Method != "x" {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "100")
				io.WriteString(w, `{"jsonrpc":"2.0",`)
				w.(http.Flusher).Flush()
				close(partial)
				<-r.Context().Done()
				return true
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			stalling.next = srv.Client().Transport
			c := connectConn(t, &StreamableClientTransport{URL: srv.URL, HTTPClient: hc, DisableStandaloneStream: true})
			ctx, cancel := context.WithCancel(context.Background())
			written := make(chan error, 1)
			go func() { written <- c.Write(ctx, request(1, "x", "")) }()
			waitFor(t, partial, "the partial body")
			cancel()
			waitFor(t, written, "Write to return")
		})
	}
}

// TestStreamableClientConcurrent runs many calls at once, for the race
// detector and the connection pool.
func TestStreamableClientConcurrent(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != "sse" {
			return false
		}
		send := startSSE(w, nil)
		send(messageEvent(t, "", resultResponse(req.ID, `{}`)))
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	initializeConn(t, c)
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			method := "json"
			if i%2 == 0 {
				method = "sse"
			}
			if err := c.Write(context.Background(), request(int64(100+i), method, "")); err != nil {
				t.Error(err)
			}
		})
	}
	got := map[jsonrpc.ID]bool{}
	for range n {
		r, ok := readMessage(t, c).(*jsonrpc.Response)
		if !ok {
			t.Fatal("not a response")
		}
		got[r.ID] = true
	}
	wg.Wait()
	if len(got) != n {
		t.Errorf("%d distinct responses, want %d", len(got), n)
	}
}

func TestStreamableClientConnectErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := (&StreamableClientTransport{}).Connect(ctx); err == nil {
		t.Error("Connect without URL succeeded")
	}
	if _, err := (&StreamableClientTransport{URL: "http://127.0.0.1:1", MaxMessageSize: -1}).Connect(ctx); err == nil {
		t.Error("Connect with a negative MaxMessageSize succeeded")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&StreamableClientTransport{URL: "http://127.0.0.1:1"}).Connect(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context: %v", err)
	}
}

func TestRetryDelay(t *testing.T) {
	c := &streamableClientConn{minDelay: 10 * time.Millisecond, maxDelay: 100 * time.Millisecond}
	for failures, max := range []time.Duration{10, 20, 40, 80, 100, 100} {
		max *= time.Millisecond
		for range 20 {
			d := c.retryDelay(&clientStream{}, failures)
			if d < max/2 || d > max {
				t.Fatalf("failures %d: delay %v outside [%v, %v]", failures, d, max/2, max)
			}
		}
	}
	if d := c.retryDelay(&clientStream{}, 1000); d < 50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("huge failure count: %v", d)
	}
	st := &clientStream{retry: 70 * time.Millisecond, hasRetry: true}
	if d := c.retryDelay(st, 0); d != 70*time.Millisecond {
		t.Errorf("server retry: %v, want 70ms", d)
	}
	if d := c.retryDelay(st, 1); d < 70*time.Millisecond {
		t.Errorf("server retry after a failure: %v, want at least 70ms", d)
	}
	if d := c.retryDelay(&clientStream{retry: time.Hour, hasRetry: true}, 0); d != 100*time.Millisecond {
		t.Errorf("server retry above the cap: %v, want 100ms", d)
	}
	// The floor holds whatever the server asks.
	c.floor = 30 * time.Millisecond
	for n := range 3 {
		if d := c.retryDelay(&clientStream{hasRetry: true}, n); d < 30*time.Millisecond {
			t.Errorf("retry 0 after %d attempts: %v, want at least the 30ms floor", n, d)
		}
	}
}

// slowCloseTransport wraps event stream bodies so that closing them
// blocks until release is closed, and signals closing when it starts.
type slowCloseTransport struct {
	base    http.RoundTripper
	closing chan struct{}
	release chan struct{}
	once    sync.Once
}

func (tr *slowCloseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := tr.base.RoundTrip(r)
	if err == nil && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		resp.Body = &slowCloseBody{resp.Body, tr}
	}
	return resp, err
}

type slowCloseBody struct {
	io.ReadCloser
	tr *slowCloseTransport
}

func (b *slowCloseBody) Close() error {
	b.tr.once.Do(func() { close(b.tr.closing) })
	<-b.tr.release
	return b.ReadCloser.Close()
}

// TestStreamableClientCloseWaits checks that Close returns only once the
// goroutines reading streams are done, even when closing a body is slow.
func TestStreamableClientCloseWaits(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	open := make(chan struct{})
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		send := startSSE(w, nil)
		send(sse.Event{ID: "1"})
		close(open)
		<-r.Context().Done()
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	slow := &slowCloseTransport{base: base, closing: make(chan struct{}), release: make(chan struct{})}
	c, err := (&StreamableClientTransport{URL: srv.URL, HTTPClient: &http.Client{Transport: slow}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(context.Background(), request(1, "hold", "")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, open, "the stream")
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	waitFor(t, slow.closing, "the body to be closed")
	select {
	case <-closed:
		t.Fatal("Close returned while a stream's body was still being closed")
	default:
	}
	close(slow.release)
	waitFor(t, closed, "Close to return")
}

// TestStreamableClientNotificationStream checks a notification answered
// with an event stream, where the specification asks for 202: the stream
// answers nothing awaited, so it is neither read nor resumed (a server
// could keep it open forever; see TestStreamableClientEndsStreamsNotAwaited).
func TestStreamableClientNotificationStream(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		send := startSSE(w, nil)
		send(messageEvent(t, "1", &jsonrpc.Request{Method: "notifications/message"}))
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true, MinRetryDelay: time.Millisecond})
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/roots/list_changed"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got, want := f.methods(), []string{"POST notifications/roots/list_changed"}; !slices.Equal(got, want) {
		t.Errorf("server saw %q, want %q", got, want)
	}
}

// TestStreamableClientCloseReusesConnections checks that Close lets the
// server end the standalone stream (after the DELETE) rather than tearing
// its connection down: sessions opened one after another on one
// http.Client then reuse the pool's connections instead of dialing one
// per session. (The pool learns of a freed connection asynchronously, so
// the check allows for the odd dial.)
func TestStreamableClientCloseReusesConnections(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts *StreamableHTTPOptions
		now  bool // hijack GET streams at once
	}{
		{"GET streams hijacked at once", nil, true},
		{"default (sessions ending within the hijack delay)", nil, false},
		{"DisableHijack", &StreamableHTTPOptions{DisableHijack: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			b := newTestBackend()
			h := newStreamableHTTPHandler(b.connect, tt.opts)
			if tt.now {
				h.hijackAfter = 0
			}
			// Dials are counted where they are accepted: a hijacked
			// connection handed back to the server is not a new one.
			var l *countingListener
			srv := newPlainServer(t, h, func(inner net.Listener) net.Listener {
				l = &countingListener{Listener: inner}
				return l
			})
			t.Cleanup(func() {
				h.Close()
				srv.Close()
				b.closeAll()
			})
			const sessions = 20
			ctx := context.Background()
			for i := range sessions {
				c, err := (&StreamableClientTransport{URL: srv.URL, HTTPClient: srv.Client()}).Connect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Write(ctx, request(1, "initialize", `{"protocolVersion":"2025-11-25"}`)); err != nil {
					t.Fatalf("session %d: initialize: %v", i, err)
				}
				readMessageString(t, c)
				if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
					t.Fatalf("session %d: initialized: %v", i, err)
				}
				if err := c.Write(ctx, request(2, "echo", `{"i":1}`)); err != nil {
					t.Fatalf("session %d: echo: %v", i, err)
				}
				if got := readMessageString(t, c); got != `{"jsonrpc":"2.0","id":2,"result":{"i":1}}` {
					t.Fatalf("session %d: echo answered %s", i, got)
				}
				c.Close()
			}
			if n := l.accepted.Load(); n > sessions/2 {
				t.Errorf("%d sessions dialed %d connections; Close should leave them to the pool", sessions, n)
			}
		})
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestStreamableClientReinitializeRestoresState checks that a connection
// reinitializing an expired session repeats, on the new session, the
// logging level and the resource subscriptions the client had set, and
// that their responses are not delivered.
func TestStreamableClientReinitializeRestoresState(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{
		URL: srv.URL, DisableStandaloneStream: true, ReinitializeOnSessionExpired: true,
	})
	initializeConn(t, c)
	ctx := context.Background()
	for i, r := range []*jsonrpc.Request{
		request(2, "logging/setLevel", `{"level":"info"}`),
		request(3, "logging/setLevel", `{"level":"debug"}`),
		request(4, "resources/subscribe", `{"uri":"file:///a"}`),
		request(5, "resources/subscribe", `{"uri":"file:///b"}`),
		request(6, "resources/unsubscribe", `{"uri":"file:///a"}`),
	} {
		if err := c.Write(ctx, r); err != nil {
			t.Fatalf("Write %d: %v", i, err)
		}
		readMessage(t, c)
	}
	before := len(f.requests())
	f.expire()
	if err := c.Write(ctx, request(7, "tools/list", "")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":7,"result":{"method":"tools/list"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var got []string
	for _, s := range f.requests()[before:] {
		line := s.method + " " + s.header.Get(headerSessionID)
		if r, ok := s.msg.(*jsonrpc.Request); ok {
			line += " " + r.Method + " " + string(r.Params)
		}
		got = append(got, line)
	}
	want := []string{
		"POST session-1 tools/list ",
		"POST  initialize {\"protocolVersion\":\"2025-11-25\"}",
		"POST session-2 notifications/initialized ",
		"POST session-2 logging/setLevel {\"level\":\"debug\"}",
		"POST session-2 resources/subscribe {\"uri\":\"file:///b\"}",
		"POST session-2 tools/list ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("server saw\n%q\nwant\n%q", got, want)
	}
}
