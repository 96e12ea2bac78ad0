package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

// roundTripFunc is an http.RoundTripper made of a function: a server
// without a network, usable in a synctest bubble.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fakeResponse returns a response with the given status, content type
// and body; a body for an event stream has no announced length.
func fakeResponse(r *http.Request, status int, ctype, body string, header ...string) *http.Response {
	resp := &http.Response{
		StatusCode:    status,
		Status:        http.StatusText(status),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
	if ctype != "" {
		resp.Header.Set("Content-Type", ctype)
	}
	if ctype == "text/event-stream" {
		resp.ContentLength = -1
	}
	for i := 0; i+1 < len(header); i += 2 {
		resp.Header.Set(header[i], header[i+1])
	}
	return resp
}

// fakeInitialize answers the POSTs of the initialization exchange as a
// server of session "s1" would, or returns nil for other requests.
func fakeInitialize(t testing.TB, r *http.Request) *http.Response {
	if r.Method != http.MethodPost {
		return nil
	}
	m := readRequestMessage(t, r)
	switch {
	case isInitializeRequest(m):
		return fakeResponse(r, http.StatusOK, "application/json",
			encode(t, resultResponse(m.(*jsonrpc.Request).ID, `{"method":"initialize"}`)), headerSessionID, "s1")
	case isInitializedNote(m):
		return fakeResponse(r, http.StatusAccepted, "", "")
	}
	return nil
}

// A standalone stream that ends at once with "retry: 0" must not make
// the client reconnect in a loop: the reconnection delay has a floor and
// backs off while streams bring no message. Fake time: the test counts
// GETs over a minute.
func TestStreamableClientReconnectStorm(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      func(*StreamableClientTransport)
		min, max int64 // GETs in a minute
	}{
		// 100 ms floor, doubling to 30 s: about ten GETs.
		{"defaults", func(*StreamableClientTransport) {}, 3, 16},
		// 1 s floor, 2 s cap: between 30 and 61 GETs.
		{"floor 1s cap 2s", func(tr *StreamableClientTransport) {
			tr.RetryFloor, tr.MaxRetryDelay = time.Second, 2*time.Second
		}, 30, 61},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var gets atomic.Int64
				storm := make(chan struct{})
				rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if resp := fakeInitialize(t, r); resp != nil {
						return resp, nil
					}
					if r.Method == http.MethodGet {
						if gets.Add(1) == 1000 {
							close(storm)
						}
						return fakeResponse(r, http.StatusOK, "text/event-stream", "retry: 0\nid: 1\n\n"), nil
					}
					return fakeResponse(r, http.StatusOK, "", ""), nil
				})
				tr := &StreamableClientTransport{URL: "http://mcp.test/mcp", HTTPClient: &http.Client{Transport: rt}}
				tc.set(tr)
				c, err := tr.Connect(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				initializeConn(t, c)
				if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
					t.Fatal(err)
				}
				select {
				case <-storm:
					t.Fatalf("1000 GETs at once")
				case <-time.After(time.Minute):
				}
				if n := gets.Load(); n < tc.min || n > tc.max {
					t.Errorf("%d GETs in a minute, want %d to %d", n, tc.min, tc.max)
				}
			})
		})
	}
}

// A server that keeps a POST's event stream open after answering the
// request it carried, or answers a notification with a stream that never
// ends, must not hold the client's goroutine and connection: the client
// stops reading the stream once nothing on it is awaited, which the
// server sees as its request ending. The same for a 202 whose body never
// ends.
func TestStreamableClientEndsStreamsNotAwaited(t *testing.T) {
	for _, tt := range []struct {
		name   string
		msg    jsonrpc.Message
		answer func(w http.ResponseWriter, m jsonrpc.Message)
	}{
		{"answered request", request(2, "call", ""), func(w http.ResponseWriter, m jsonrpc.Message) {
			send := startSSE(w, nil)
			send(messageEvent(t, "", resultResponse(m.(*jsonrpc.Request).ID, `"done"`)))
		}},
		{"notification", &jsonrpc.Request{Method: "notifications/x"}, func(w http.ResponseWriter, m jsonrpc.Message) {
			startSSE(w, nil)
		}},
		{"202 with an endless body", &jsonrpc.Request{Method: "notifications/x"}, func(w http.ResponseWriter, m jsonrpc.Message) {
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(" "))
			w.(http.Flusher).Flush()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			hungUp := make(chan struct{})
			f := newFakeMCPServer(t)
			f.noSession = true
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				tt.answer(w, m)
				<-r.Context().Done() // never ends on its own
				close(hungUp)
				return true
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
			if err := c.Write(context.Background(), tt.msg); err != nil {
				t.Fatal(err)
			}
			if _, ok := tt.msg.(*jsonrpc.Request); ok && !tt.msg.(*jsonrpc.Request).IsNotification() {
				if got := readMessageString(t, c); got != `{"jsonrpc":"2.0","id":2,"result":"done"}` {
					t.Errorf("got %s", got)
				}
			}
			waitFor(t, hungUp, "the client to stop reading the stream")
		})
	}
}

// An event far over the message size limit is skipped as it streams in,
// never held whole: the client's allocations stay far below its size, and
// the call still gets the response that follows it.
func TestStreamableClientHugeEvent(t *testing.T) {
	checkLeaks(t)
	const huge = 64 << 20
	f := newFakeMCPServer(t)
	f.noSession = true
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		send := startSSE(w, nil)
		io.WriteString(w, "data: ")
		for range huge / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return true
			}
		}
		io.WriteString(w, "\n\n")
		send(messageEvent(t, "", resultResponse(m.(*jsonrpc.Request).ID, `"done"`)))
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true, MaxMessageSize: 1 << 20})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := c.Write(context.Background(), request(2, "call", "")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Read(ctx); err == nil {
		t.Fatal("Read returned the huge event")
	} else if _, ok := IsMessageTooLarge(err); !ok {
		t.Fatalf("Read: %v, want a too-large error", err)
	}
	if got := readMessageString(t, c); got != `{"jsonrpc":"2.0","id":2,"result":"done"}` {
		t.Errorf("got %s", got)
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > huge/4 {
		t.Errorf("allocated %d MiB reading a %d MiB event", grown>>20, huge>>20)
	}
}

// A server answering a POST with an error status and a body that never
// ends must not hold the Write: the status is the answer.
func TestStreamableClientErrorStatusEndlessBody(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "trouble")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	errc := make(chan error, 1)
	go func() { errc <- c.Write(context.Background(), request(2, "call", "")) }()
	err := waitFor(t, errc, "Write to return")
	var se *HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError {
		t.Errorf("Write: %v, want an HTTPStatusError for 500", err)
	}
}

// A server that redirects the client to another origin would receive the
// session id and the headers meant for the MCP server: the client refuses
// such redirects, and follows those on the same origin.
func TestStreamableClientRedirects(t *testing.T) {
	checkLeaks(t)
	var foreign atomic.Int64
	other := serveHTTPTest(t, func(w http.ResponseWriter, r *http.Request) { foreign.Add(1) })
	f := newFakeMCPServer(t)
	var srvURL string
	srv := serveHTTPTest(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, srvURL+"/mcp", http.StatusPermanentRedirect)
		default:
			f.ServeHTTP(w, r)
		}
	})
	srvURL = srv.URL
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{"/away", false},
		{"/moved", true},
	} {
		c := connectConn(t, &StreamableClientTransport{
			URL: srv.URL + tt.path, DisableStandaloneStream: true, DisableSSEFallback: true,
			Header: http.Header{"X-Api-Key": {"secret"}},
		})
		err := c.Write(context.Background(), request(1, "initialize", `{}`))
		if tt.ok != (err == nil) {
			t.Errorf("%s: Write = %v", tt.path, err)
		}
		c.Close()
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

// A server that answers the standalone stream's every GET with 500 gets
// MaxRetries+1 of them, spaced by the backoff, and then no more: the
// stream gives up, and Close still returns at once. Fake time: an hour.
func TestStreamableClientGETAlways500(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var gets atomic.Int64
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if resp := fakeInitialize(t, r); resp != nil {
				return resp, nil
			}
			if r.Method == http.MethodGet {
				gets.Add(1)
			}
			return fakeResponse(r, http.StatusInternalServerError, "text/plain", "no"), nil
		})
		c, err := (&StreamableClientTransport{URL: "http://mcp.test/mcp", HTTPClient: &http.Client{Transport: rt}}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		initializeConn(t, c)
		if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		if n := gets.Load(); n != defaultMaxRetries+1 {
			t.Errorf("%d GETs, want %d", n, defaultMaxRetries+1)
		}
		closeWithin(t, c, time.Minute)
	})
}

// A Read loop that answers a server request from its own goroutine while
// the queue of incoming messages is full must not block itself when the
// server answers the POSTed response with a JSON body: what a writer
// reads never waits for room.
func TestStreamableClientReadLoopWriteWhileFull(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	f.noSession = true
	f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
		switch m.(type) {
		case *jsonrpc.Request:
			send := startSSE(w, nil)
			send(messageEvent(t, "", request(50, "ping", "")))
			for range clientInboxSize + 4 {
				send(messageEvent(t, "", &jsonrpc.Request{Method: "notifications/message"}))
			}
			<-r.Context().Done()
			return true
		case *jsonrpc.Response:
			writeJSONMessage(t, w, &jsonrpc.Request{Method: "notifications/after"})
			return true
		}
		return false
	}
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
	if err := c.Write(context.Background(), request(1, "call", "")); err != nil {
		t.Fatal(err)
	}
	if got := readMessageString(t, c); got != `{"jsonrpc":"2.0","id":50,"method":"ping"}` {
		t.Fatalf("got %s", got)
	}
	core := c.(*streamableClientConn).httpClientCore
	deadline := time.Now().Add(10 * time.Second)
	for {
		core.inbox.mu.Lock()
		full := len(core.inbox.q) >= clientInboxSize
		core.inbox.mu.Unlock()
		if full {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue did not fill")
		}
		time.Sleep(time.Millisecond) // polling for the bound to be reached
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Write(context.Background(), resultResponse(jsonrpc.Int64ID(50), `{}`)) }()
	if err := waitFor(t, errc, "the answer's Write to return"); err != nil {
		t.Fatal(err)
	}
}
