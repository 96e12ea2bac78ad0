package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// legacyServer is a small HTTP+SSE (2024-11-05) server: GET opens the
// stream and sends the endpoint event, POSTs to the endpoint are answered
// with 202 and, for requests, a response on the stream echoing the method.
type legacyServer struct {
	t        *testing.T
	endpoint string // the endpoint event's data; "" sends none
	out      chan jsonrpc.Message
	end      chan struct{} // closed to end the stream
	endOnce  sync.Once

	mu    sync.Mutex
	posts []*http.Request // with the decoded message in their context-free copy below
	msgs  []jsonrpc.Message
	gets  int
}

func newLegacyServer(t *testing.T, endpoint string) *legacyServer {
	return &legacyServer{t: t, endpoint: endpoint, out: make(chan jsonrpc.Message, 16), end: make(chan struct{})}
}

// endStream makes the server end the event stream.
func (s *legacyServer) endStream() { s.endOnce.Do(func() { close(s.end) }) }

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.gets++
		s.mu.Unlock()
		if r.Header.Get("Accept") != "text/event-stream" {
			s.t.Errorf("GET with Accept %q", r.Header.Get("Accept"))
		}
		send := startSSE(w, nil)
		if s.endpoint != "" {
			send(sse.Event{Name: "endpoint", Data: []byte(s.endpoint)})
		}
		for {
			select {
			case m := <-s.out:
				send(sse.Event{Name: "message", Data: []byte(encode(s.t, m))})
			case <-s.end:
				return
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
		m := readRequestMessage(s.t, r)
		s.mu.Lock()
		s.posts = append(s.posts, r.Clone(context.Background()))
		s.msgs = append(s.msgs, m)
		s.mu.Unlock()
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "fail" {
			http.Error(w, "bad message", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsNotification() {
			s.out <- resultResponse(req.ID, `{"method":"`+req.Method+`"}`)
		}
	default:
		http.Error(w, "no", http.StatusMethodNotAllowed)
	}
}

func TestSSEClient(t *testing.T) {
	checkLeaks(t)
	s := newLegacyServer(t, "/messages?sessionId=abc")
	srv := serveHTTPTest(t, s.ServeHTTP)
	c := connectConn(t, &SSEClientTransport{URL: srv.URL + "/sse", Header: http.Header{"Authorization": {"Bearer x"}}})
	ctx := WithHTTPHeader(context.Background(), http.Header{"X-Req": {"1"}})
	if err := c.Write(ctx, request(1, "initialize", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":1,"result":{"method":"initialize"}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	// A server-side failure is reported by Write.
	err := c.Write(context.Background(), request(2, "fail", ""))
	var se *HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || se.Body != "bad message\n" {
		t.Errorf("Write: %v, want a 400 HTTPStatusError", err)
	}
	// A server request arrives through Read.
	s.out <- request(9, "ping", "")
	if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":9,"method":"ping"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.posts) != 3 {
		t.Fatalf("%d POSTs, want 3", len(s.posts))
	}
	for i, r := range s.posts {
		if r.URL.Path != "/messages" || r.URL.RawQuery != "sessionId=abc" {
			t.Errorf("POST %d to %s", i, r.URL)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer x" {
			t.Errorf("POST %d headers %v", i, r.Header)
		}
		if want := map[int]string{0: "1"}[i]; r.Header.Get("X-Req") != want {
			t.Errorf("POST %d: X-Req %q, want %q", i, r.Header.Get("X-Req"), want)
		}
	}
}

// TestSSEClientEndOfStream checks that the server ending the stream ends
// the connection: messages sent before are read, then io.EOF.
func TestSSEClientEndOfStream(t *testing.T) {
	checkLeaks(t)
	s := newLegacyServer(t, "/m")
	srv := serveHTTPTest(t, s.ServeHTTP)
	c := connectConn(t, &SSEClientTransport{URL: srv.URL})
	if err := c.Write(context.Background(), request(1, "a", "")); err != nil {
		t.Fatal(err)
	}
	readMessage(t, c)
	s.endStream()
	for range 2 {
		if _, err := c.Read(context.Background()); err != io.EOF {
			t.Fatalf("Read after the end of the stream: %v, want io.EOF", err)
		}
	}
	c.Close()
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	if err := c.Write(context.Background(), request(2, "a", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
}

func TestSSEClientEndpoint(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
		path     string
	}{
		{"/messages", true, "/messages"},
		{"messages?x=1", true, "/base/messages"},
		{" /padded \n", true, "/padded"},
		{"{{origin}}/abs", true, "/abs"},
		{"http://evil.example/messages", false, ""},
		{"//evil.example/messages", false, ""},
		{"https://{{host}}/messages", false, ""},
		{"http://{{hostname}}:1/messages", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			checkLeaks(t)
			s := newLegacyServer(t, "")
			srv := serveHTTPTest(t, s.ServeHTTP)
			host := strings.TrimPrefix(srv.URL, "http://")
			hostname := host[:strings.LastIndex(host, ":")]
			s.endpoint = strings.NewReplacer("{{origin}}", srv.URL, "{{host}}", host, "{{hostname}}", hostname).Replace(tt.endpoint)
			c, err := (&SSEClientTransport{URL: srv.URL + "/base/sse"}).Connect(context.Background())
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "origin") {
					t.Errorf("Connect: %v, want an origin error", err)
				}
				if c != nil {
					c.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.(*sseClientConn).legacy.endpoint; !strings.HasPrefix(got, srv.URL+tt.path) {
				t.Errorf("endpoint %q, want %s%s", got, srv.URL, tt.path)
			}
		})
	}
}

func TestSSEClientConnectErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout bool
		want    string
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, false, "404"},
		{"not an event stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}, false, "content type"},
		{"no endpoint event", func(w http.ResponseWriter, r *http.Request) {
			send := startSSE(w, nil)
			send(sse.Event{Data: []byte(`{"jsonrpc":"2.0","method":"x"}`)})
		}, false, "before its endpoint"},
		{"endpoint never comes", func(w http.ResponseWriter, r *http.Request) {
			startSSE(w, nil)
			<-r.Context().Done()
		}, true, "deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			srv := serveHTTPTest(t, tt.handler)
			ctx := context.Background()
			if tt.timeout {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			}
			c, err := (&SSEClientTransport{URL: srv.URL}).Connect(ctx)
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Connect: %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := (&SSEClientTransport{}).Connect(context.Background()); err == nil {
		t.Error("Connect without URL succeeded")
	}
}

// TestSSEClientCloseUnblocksRead checks that Close ends a pending Read.
func TestSSEClientCloseUnblocksRead(t *testing.T) {
	checkLeaks(t)
	s := newLegacyServer(t, "/m")
	srv := serveHTTPTest(t, s.ServeHTTP)
	c, err := (&SSEClientTransport{URL: srv.URL}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	c.Close()
	if err := waitFor(t, readErr, "Read to return"); !errors.Is(err, ErrClosed) {
		t.Errorf("Read: %v, want ErrClosed", err)
	}
}

// fallbackServer serves the legacy transport at one URL, answering
// POSTs to that URL with status, as a 2024-11-05 server would.
type fallbackServer struct {
	*legacyServer
	status int

	mu        sync.Mutex
	rootPosts int
	deletes   int
}

func (s *fallbackServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/":
		s.mu.Lock()
		s.rootPosts++
		s.mu.Unlock()
		http.Error(w, "not here", s.status)
	case r.Method == http.MethodDelete:
		s.mu.Lock()
		s.deletes++
		s.mu.Unlock()
	default:
		s.legacyServer.ServeHTTP(w, r)
	}
}

func TestStreamableClientFallback(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			checkLeaks(t)
			s := &fallbackServer{legacyServer: newLegacyServer(t, "/messages"), status: status}
			srv := serveHTTPTest(t, s.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{URL: srv.URL + "/"})
			initializeConn(t, c)
			c.(mcplink.ProtocolVersionSetter).SetProtocolVersion("2024-11-05")
			if err := c.Write(context.Background(), request(2, "tools/list", "")); err != nil {
				t.Fatal(err)
			}
			if got, want := readMessageString(t, c), `{"jsonrpc":"2.0","id":2,"result":{"method":"tools/list"}}`; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
			if sid := c.(SessionConn).SessionID(); sid != "" {
				t.Errorf("SessionID %q after fallback", sid)
			}
			c.Close()
			s.mu.Lock()
			defer s.mu.Unlock()
			s.legacyServer.mu.Lock()
			defer s.legacyServer.mu.Unlock()
			if s.rootPosts != 1 || s.legacyServer.gets != 1 || s.deletes != 0 {
				t.Errorf("%d POSTs to the MCP endpoint, %d GETs, %d DELETEs; want 1, 1, 0", s.rootPosts, s.legacyServer.gets, s.deletes)
			}
			var methods []string
			for i, m := range s.msgs {
				methods = append(methods, m.(*jsonrpc.Request).Method)
				if v := s.posts[i].Header.Get(headerProtocolVersion); v != "" {
					t.Errorf("legacy POST %d carried MCP-Protocol-Version %q", i, v)
				}
			}
			if want := []string{"initialize", "notifications/initialized", "tools/list"}; !slices.Equal(methods, want) {
				t.Errorf("legacy endpoint got %q, want %q", methods, want)
			}
		})
	}
}

func TestStreamableClientNoFallback(t *testing.T) {
	tests := []struct {
		name     string
		disable  bool
		first    *jsonrpc.Request
		endpoint string
		want     string
	}{
		{"disabled", true, request(1, "initialize", "{}"), "/messages", "405"},
		{"first message not initialize", false, request(1, "ping", ""), "/messages", "405"},
		{"cross-origin endpoint", false, request(1, "initialize", "{}"), "http://evil.example/messages", "origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			s := &fallbackServer{legacyServer: newLegacyServer(t, tt.endpoint), status: http.StatusMethodNotAllowed}
			srv := serveHTTPTest(t, s.ServeHTTP)
			c := connectConn(t, &StreamableClientTransport{URL: srv.URL + "/", DisableSSEFallback: tt.disable})
			err := c.Write(context.Background(), tt.first)
			var se *HTTPStatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Write: %v, want a 405 HTTPStatusError mentioning %q", err, tt.want)
			}
		})
	}
}
