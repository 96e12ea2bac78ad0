package transport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Helpers shared by the tests of the HTTP client transports.

// serveHTTPTest starts a test server on 127.0.0.1 and closes it when the test
// ends. Register it after checkLeaks and before the connection, so that
// the connection closes first and the server's handlers see their
// requests end.
func serveHTTPTest(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// startSSE begins an event stream response and returns a function that
// sends one event and flushes it.
func startSSE(w http.ResponseWriter, header http.Header) func(sse.Event) {
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return func(e sse.Event) {
		w.Write(sse.AppendEvent(nil, &e))
		w.(http.Flusher).Flush()
	}
}

// messageEvent returns a message event carrying m.
func messageEvent(t testing.TB, id string, m jsonrpc.Message) sse.Event {
	return sse.Event{ID: id, Data: []byte(encode(t, m))}
}

// readRequestMessage decodes a request body as one message.
func readRequestMessage(t testing.TB, r *http.Request) jsonrpc.Message {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("reading request body: %v", err)
		return nil
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		t.Errorf("decoding request body %q: %v", data, err)
		return nil
	}
	return m
}

// writeJSONMessage answers with m as a JSON body.
func writeJSONMessage(t testing.TB, w http.ResponseWriter, m jsonrpc.Message) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, encode(t, m))
}

// resultResponse returns a successful response to id with the given raw result.
func resultResponse(id jsonrpc.ID, result string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Result: json.RawMessage(result)}
}

// readMessage reads one message, failing the test on an error or after ten
// seconds.
func readMessage(t testing.TB, c Conn) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return m
}

// readMessageString reads one message and returns its encoding.
func readMessageString(t testing.TB, c Conn) string {
	t.Helper()
	return encode(t, readMessage(t, c))
}

// waitFor waits for a value on ch, failing the test after ten seconds.
func waitFor[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// seenRequest is one request a fake server received.
type seenRequest struct {
	method string // HTTP method
	header http.Header
	msg    jsonrpc.Message // POST body, decoded
}

// fakeMCPServer is a small Streamable HTTP server for the client tests. By
// default it answers initialize with a JSON response and a session id,
// other requests with a JSON response echoing the method, notifications
// and responses with 202, GET with 405 and DELETE with 200. Hooks replace
// parts of that.
type fakeMCPServer struct {
	t *testing.T

	mu      sync.Mutex
	session string // the current session; "" before initialize
	nextSID int
	seen    []seenRequest

	// noSession makes the server assign no session id.
	noSession bool
	// post, if set, handles a POST first; it returns false to let the
	// default handling go on. Its message is already decoded.
	post func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool
	// get handles GET; nil answers 405.
	get func(w http.ResponseWriter, r *http.Request)
	// del handles DELETE; nil answers 200.
	del func(w http.ResponseWriter, r *http.Request)
}

func newFakeMCPServer(t *testing.T) *fakeMCPServer { return &fakeMCPServer{t: t} }

// expire ends the current session, so requests naming it get 404.
func (f *fakeMCPServer) expire() {
	f.mu.Lock()
	f.session = "expired-" + f.session
	f.mu.Unlock()
}

// requests returns what the server received so far.
func (f *fakeMCPServer) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

// methods returns the HTTP method, and for POSTs the JSON-RPC method (or
// "response"), of each request received.
func (f *fakeMCPServer) methods() []string {
	var out []string
	for _, s := range f.requests() {
		name := s.method
		switch m := s.msg.(type) {
		case *jsonrpc.Request:
			name += " " + m.Method
		case *jsonrpc.Response:
			name += " response"
		case jsonrpc.Batch:
			name += " batch"
		}
		out = append(out, name)
	}
	return out
}

func (f *fakeMCPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m jsonrpc.Message
	if r.Method == http.MethodPost {
		m = readRequestMessage(f.t, r)
	}
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{method: r.Method, header: r.Header.Clone(), msg: m})
	session := f.session
	f.mu.Unlock()
	isInit := isInitializeRequest(m)
	if !isInit && session != "" && r.Header.Get(headerSessionID) != session {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if f.get == nil {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		f.get(w, r)
		return
	case http.MethodDelete:
		if f.del != nil {
			f.del(w, r)
		}
		return
	}
	if f.post != nil && f.post(w, r, m) {
		return
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		if m.IsNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if isInit && !f.noSession {
			f.mu.Lock()
			f.nextSID++
			f.session = "session-" + string(rune('0'+f.nextSID))
			w.Header().Set(headerSessionID, f.session)
			f.mu.Unlock()
		}
		writeJSONMessage(f.t, w, resultResponse(m.ID, `{"method":"`+m.Method+`"}`))
	case jsonrpc.Batch:
		var out jsonrpc.Batch
		for _, e := range m {
			if r, ok := e.(*jsonrpc.Request); ok && !r.IsNotification() {
				out = append(out, resultResponse(r.ID, `{"method":"`+r.Method+`"}`))
			}
		}
		writeJSONMessage(f.t, w, out)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// initializeConn runs the initialization exchange on c.
func initializeConn(t *testing.T, c Conn) {
	t.Helper()
	ctx := context.Background()
	if err := c.Write(ctx, request(1, "initialize", `{"protocolVersion":"2025-11-25"}`)); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":1,"result":{"method":"initialize"}}`; got != want {
		t.Fatalf("initialize response %s, want %s", got, want)
	}
	if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
}

// connectConn connects tr and closes the connection when the test ends.
func connectConn(t *testing.T, tr Transport) Conn {
	t.Helper()
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
