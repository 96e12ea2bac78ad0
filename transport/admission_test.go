package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// directHarness drives a StreamableHTTPHandler through ServeHTTP, with no
// network, so that it can run in a synctest bubble.
type directHarness struct {
	t *testing.T
	h *StreamableHTTPHandler
	b *testBackend
}

func newDirectHarness(t *testing.T, opts *StreamableHTTPOptions) *directHarness {
	b := newTestBackend()
	h := newStreamableHTTPHandler(b.connect, opts)
	t.Cleanup(func() {
		h.Close()
		b.closeAll()
	})
	return &directHarness{t: t, h: h, b: b}
}

// request builds a request from the peer at addr (an IP address) with the
// usual MCP headers plus extra (name, value pairs).
func (d *directHarness) request(ctx context.Context, method, addr string, body io.Reader, extra ...string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, method, "/mcp", body)
	r.RemoteAddr = net.JoinHostPort(addr, "40000")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(r, extra)
	return r
}

// post sends body from the peer at addr.
func (d *directHarness) post(addr, body string, extra ...string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	d.h.ServeHTTP(w, d.request(context.Background(), http.MethodPost, addr, strings.NewReader(body), extra...))
	return w
}

// initialize opens a session for the peer at addr, returning its ID, or
// "" and the status when refused.
func (d *directHarness) initialize(addr string) (string, int) {
	w := d.post(addr, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	return w.Header().Get("Mcp-Session-Id"), w.Code
}

// conn returns the connection of the i-th session opened.
func (d *directHarness) conn(i int) *jsonrpc.Conn {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	return d.b.conns[i]
}

// closedWith reports how the i-th session's connection ended, or nil
// while it is open.
func (d *directHarness) closedWith(i int) error {
	c := d.conn(i)
	select {
	case <-c.Done():
		return c.Err()
	default:
		return nil
	}
}

// TestStreamableHTTPMaxSessionsHard starts 400 initializes at once with
// MaxSessions 10: exactly 10 sessions open, however they interleave. The
// clients are authenticated, so none is evicted for another.
func TestStreamableHTTPMaxSessionsHard(t *testing.T) {
	checkLeaks(t)
	d := newDirectHarness(t, &StreamableHTTPOptions{MaxSessions: 10})
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	start := make(chan struct{})
	for i := range 400 {
		wg.Go(func() {
			ctx := WithPrincipal(context.Background(), fmt.Sprint("user", i))
			r := d.request(ctx, http.MethodPost, "192.0.2.1",
				strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
			w := httptest.NewRecorder()
			<-start
			d.h.ServeHTTP(w, r)
			mu.Lock()
			codes[w.Code]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if n := len(d.h.SessionIDs()); n != 10 || codes[200] != 10 || codes[503] != 390 {
		t.Fatalf("%d sessions open; statuses %v; want 10 open, 10 × 200, 390 × 503", n, codes)
	}
}

// TestStreamableHTTPHandshakeTimeout checks that a session whose client
// sends nothing after initialize goes after the handshake timeout, while
// one that sent notifications/initialized lives until the idle timeout.
func TestStreamableHTTPHandshakeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, nil) // the defaults: 30s, 10 minutes
		quiet, _ := d.initialize("192.0.2.1")
		polite, _ := d.initialize("192.0.2.2")
		if quiet == "" || polite == "" {
			t.Fatal("initialize failed")
		}
		if w := d.post("192.0.2.2", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", polite); w.Code != 202 {
			t.Fatalf("notifications/initialized: %d", w.Code)
		}
		time.Sleep(defaultHandshakeTimeout + time.Second)
		synctest.Wait()
		if err := d.closedWith(0); !errors.Is(err, ErrHandshakeTimeout) {
			t.Fatalf("the quiet session ended with %v; want ErrHandshakeTimeout", err)
		}
		if err := d.closedWith(1); err != nil {
			t.Fatalf("the session past its handshake ended with %v", err)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if err := d.closedWith(1); !errors.Is(err, ErrSessionIdle) || errors.Is(err, ErrHandshakeTimeout) {
			t.Fatalf("the idle session ended with %v; want ErrSessionIdle", err)
		}
	})
}

// TestStreamableHTTPSessionsPerPeer checks the per-peer bound: a peer
// past it loses its own longest-idle session, or is refused when all its
// sessions are busy, and other peers are not affected.
func TestStreamableHTTPSessionsPerPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, nil)
		for i := range defaultMaxSessionsPerPeer + 1 {
			if id, code := d.initialize("192.0.2.1"); id == "" {
				t.Fatalf("session %d: %d", i, code)
			}
			time.Sleep(time.Millisecond) // distinct idle times
		}
		if n := len(d.h.SessionIDs()); n != defaultMaxSessionsPerPeer {
			t.Fatalf("%d sessions open for one peer; want %d", n, defaultMaxSessionsPerPeer)
		}
		synctest.Wait()
		if err := d.closedWith(0); !errors.Is(err, ErrSessionEvicted) {
			t.Fatalf("the oldest session ended with %v; want ErrSessionEvicted", err)
		}
		// The same /64 is the same peer.
		if id, _ := d.initialize("2001:db8::1"); id == "" {
			t.Fatal("IPv6 peer refused")
		}
		if id, _ := d.initialize("2001:db8::2"); id == "" {
			t.Fatal("IPv6 peer refused")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Loopback addresses are not counted: the local machine, or a
		// reverse proxy on it.
		d := newDirectHarness(t, &StreamableHTTPOptions{MaxSessionsPerPeer: 2})
		for _, addr := range []string{"127.0.0.1", "127.0.0.1", "::1", "::ffff:127.0.0.1"} {
			if id, code := d.initialize(addr); id == "" {
				t.Fatalf("%s: %d", addr, code)
			}
		}
		if n := len(d.h.SessionIDs()); n != 4 {
			t.Fatalf("%d loopback sessions open; want 4", n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, &StreamableHTTPOptions{MaxSessionsPerPeer: 2})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 2 {
			id, _ := d.initialize("192.0.2.1")
			// An open GET stream keeps the session busy.
			r := d.request(ctx, http.MethodGet, "192.0.2.1", nil, "Mcp-Session-Id", id, "Accept", "text/event-stream")
			wg.Go(func() { d.h.ServeHTTP(httptest.NewRecorder(), r) })
		}
		synctest.Wait()
		if id, code := d.initialize("192.0.2.1"); id != "" || code != http.StatusTooManyRequests {
			t.Fatalf("third session of a peer with two busy ones: %q, %d; want 429", id, code)
		}
		if id, code := d.initialize("192.0.2.99"); id == "" {
			t.Fatalf("another peer: %d", code)
		}
		cancel()
		wg.Wait()
	})
}

// TestStreamableHTTPSessionFlood floods a server whose table is full:
// a new client initializes at once, as the longest-idle session without
// credentials makes room, and authenticated sessions stay.
func TestStreamableHTTPSessionFlood(t *testing.T) {
	for _, tt := range []struct {
		name string
		addr func(i int) string
	}{
		{"one peer", func(int) string { return "192.0.2.1" }},
		{"many peers", func(i int) string { return fmt.Sprintf("10.0.%d.%d", i/256, i%256) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDirectHarness(t, &StreamableHTTPOptions{MaxSessions: 100})
				r := d.request(WithPrincipal(context.Background(), "alice"), http.MethodPost, "192.0.2.7",
					strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
				w := httptest.NewRecorder()
				d.h.ServeHTTP(w, r)
				alice := w.Header().Get("Mcp-Session-Id")
				if alice == "" {
					t.Fatalf("alice: %d", w.Code)
				}
				refused := 0
				for i := range 1000 {
					if id, _ := d.initialize(tt.addr(i)); id == "" {
						refused++
					}
				}
				if refused > 0 {
					t.Errorf("%d of the flood's sessions refused; want them all to evict older ones", refused)
				}
				if id, code := d.initialize("198.51.100.1"); id == "" {
					t.Fatalf("a new client after the flood: %d", code)
				}
				ids := d.h.SessionIDs()
				if len(ids) != 100 {
					t.Fatalf("%d sessions open; want 100", len(ids))
				}
				if !strings.Contains(strings.Join(ids, " "), alice) {
					t.Fatal("the authenticated session was evicted")
				}
			})
		})
	}
}

// TestStreamableHTTPRequestsPerSession checks the bound on the HTTP
// requests in progress on one session.
func TestStreamableHTTPRequestsPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, &StreamableHTTPOptions{MaxRequestsPerSession: 2})
		id, _ := d.initialize("192.0.2.1")
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := range 2 {
			r := d.request(ctx, http.MethodPost, "192.0.2.1",
				strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block"}`, i+1)), "Mcp-Session-Id", id)
			wg.Go(func() { d.h.ServeHTTP(httptest.NewRecorder(), r) })
			<-d.b.started
		}
		if w := d.post("192.0.2.1", `{"jsonrpc":"2.0","id":3,"method":"echo","params":{}}`, "Mcp-Session-Id", id); w.Code != http.StatusTooManyRequests {
			t.Fatalf("third request in progress: %d; want 429", w.Code)
		}
		cancel()
		wg.Wait()
		<-d.b.stopped
		<-d.b.stopped
		if w := d.post("192.0.2.1", `{"jsonrpc":"2.0","id":3,"method":"echo","params":{}}`, "Mcp-Session-Id", id); w.Code != 200 {
			t.Fatalf("a request once the others ended: %d", w.Code)
		}
	})
}

// manyKeys returns a message of about size bytes whose params hold that
// many distinct member names: decoded in full, the duplicate-name check
// would hold ten times the body.
func manyKeys(size int) []byte {
	b := bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `"%x":0`, i)
	}
	b.WriteString("}}")
	return b.Bytes()
}

// TestStreamableHTTPDecodeAmplification sends four bodies of distinct
// member names at once, without a session and then with one, and bounds
// what the server allocates handling them. Four bodies of 14 MiB without
// a session grew the server by 565 MiB; three-MiB ones allocated 213 MiB.
func TestStreamableHTTPDecodeAmplification(t *testing.T) {
	checkLeaks(t)
	// The session, which sends nothing after initialize, must outlive the
	// subtests before its own: under -race on a loaded machine they took
	// longer than the default HandshakeTimeout (30s), and the session's
	// POSTs were answered 404.
	d := newDirectHarness(t, &StreamableHTTPOptions{HandshakeTimeout: -1})
	sid, _ := d.initialize("192.0.2.1")
	const small = 3 << 20
	for _, tt := range []struct {
		name    string
		size    int
		chunked bool     // no Content-Length
		session []string // headers naming the session
		status  int
		bound   uint64
	}{
		// Without a session a POST may only carry initialize: a small
		// body, refused at once when announced larger.
		{"no session", small, false, nil, http.StatusRequestEntityTooLarge, 8 << 20},
		{"no session, chunked", small, true, nil, http.StatusRequestEntityTooLarge, 16 << 20},
		{"no session, 14 MiB", 14 << 20, false, nil, http.StatusRequestEntityTooLarge, 64 << 20},
		// With one, the body is read (about 4/3 of it allocated), and the
		// decoder refuses it for what it would cost to decode.
		{"session", small, false, []string{"Mcp-Session-Id", sid}, http.StatusBadRequest, 2*4*small + 8<<20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.size > small && testing.Short() {
				t.Skip("large bodies")
			}
			body := manyKeys(tt.size)
			reqs := make([]*http.Request, 4)
			for i := range reqs {
				reqs[i] = d.request(context.Background(), http.MethodPost, "192.0.2.1", bytes.NewReader(body), tt.session...)
				if tt.chunked {
					reqs[i].ContentLength = -1
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			codes := make([]int, len(reqs))
			for i, r := range reqs {
				wg.Go(func() {
					w := httptest.NewRecorder()
					d.h.ServeHTTP(w, r)
					codes[i] = w.Code
				})
			}
			wg.Wait()
			runtime.ReadMemStats(&after)
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("handling 4 bodies of %d bytes allocated %.1f MiB", len(body), float64(grew)/(1<<20))
			if grew > tt.bound {
				t.Errorf("handling 4 bodies of %d bytes allocated %d MiB; want at most %d MiB", len(body), grew>>20, tt.bound>>20)
			}
			for _, c := range codes {
				if c != tt.status {
					t.Errorf("status %d; want %d", c, tt.status)
				}
			}
		})
	}
}

// sseDirect opens a legacy SSE session on h for the peer at addr, served
// on its own goroutine until ctx ends; it returns the new session's ID.
func sseDirect(t *testing.T, ctx context.Context, h *SSEHandler, wg *sync.WaitGroup, addr string) string {
	t.Helper()
	before := h.SessionIDs()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/sse", nil)
	r.RemoteAddr = net.JoinHostPort(addr, "40000")
	r.Header.Set("Accept", "text/event-stream")
	wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), r) })
	synctest.Wait()
	for _, id := range h.SessionIDs() {
		if !strings.Contains(strings.Join(before, " "), id) {
			return id
		}
	}
	t.Fatal("no new SSE session")
	return ""
}

// ssePost posts body to the legacy SSE session id.
func ssePost(h *SSEHandler, addr, id, body string) int {
	r := httptest.NewRequest(http.MethodPost, "/sse?sessionId="+id, strings.NewReader(body))
	r.RemoteAddr = net.JoinHostPort(addr, "40000")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// TestSSEHandshakeTimeoutAndPeers checks the legacy SSE server's share of
// admission control: a session that never posts its second message goes
// after the handshake timeout, and a peer past its bound loses its
// longest-quiet session.
func TestSSEHandshakeTimeoutAndPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBackend()
		h := newSSEHandler(b.connect, &SSEOptions{MaxSessionsPerPeer: 2})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() {
			cancel()
			h.Close()
			wg.Wait()
			b.closeAll()
		}()
		quiet := sseDirect(t, ctx, h, &wg, "192.0.2.1")
		polite := sseDirect(t, ctx, h, &wg, "192.0.2.2")
		for _, m := range []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		} {
			if code := ssePost(h, "192.0.2.2", polite, m); code != http.StatusAccepted {
				t.Fatalf("POST: %d", code)
			}
		}
		time.Sleep(defaultHandshakeTimeout + time.Second)
		synctest.Wait()
		if ids := h.SessionIDs(); len(ids) != 1 || ids[0] != polite {
			t.Fatalf("sessions after the handshake timeout: %q; want only %q (not %q)", ids, polite, quiet)
		}
		if err := b.conns[0].Err(); !errors.Is(err, ErrHandshakeTimeout) {
			t.Fatalf("the quiet session ended with %v", err)
		}

		// A third session of one peer evicts its quietest.
		first := sseDirect(t, ctx, h, &wg, "192.0.2.3")
		time.Sleep(time.Second)
		second := sseDirect(t, ctx, h, &wg, "192.0.2.3")
		time.Sleep(time.Second)
		ssePost(h, "192.0.2.3", first, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		time.Sleep(time.Second)
		third := sseDirect(t, ctx, h, &wg, "192.0.2.3")
		ids := strings.Join(h.SessionIDs(), " ")
		if strings.Contains(ids, second) || !strings.Contains(ids, first) || !strings.Contains(ids, third) {
			t.Fatalf("sessions %q; want the quietest of the peer (%q) evicted", ids, second)
		}
	})
}

// TestHTTPSlowBody sends a POST announcing a large body, sends part of it
// and stalls: the server must give up on it after ReadBodyTimeout,
// answering 408 and closing the connection.
func TestHTTPSlowBody(t *testing.T) {
	checkLeaks(t)
	const timeout = 50 * time.Millisecond
	b := newTestBackend()
	sh := newStreamableHTTPHandler(b.connect, &StreamableHTTPOptions{ReadBodyTimeout: timeout})
	sse := newSSEHandler(b.connect, &SSEOptions{ReadBodyTimeout: timeout})
	mux := http.NewServeMux()
	mux.Handle("/mcp", sh)
	mux.Handle("/sse", sse)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		sh.Close()
		sse.Close()
		srv.Close()
		b.closeAll()
	})
	sid := initializeAt(t, srv, "/mcp")

	// A legacy SSE session.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	get, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	ev := readEvent(t, bufio.NewReader(get.Body))

	for _, tt := range []struct {
		name   string
		target string
		length int
		header string
	}{
		{"session", "/mcp", 16_000_000, "Mcp-Session-Id: " + sid + "\r\n"},
		{"initialize", "/mcp", 1_000_000, ""},
		{"sse", ev["data"], 16_000_000, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkStalledBody(t, srv.Listener.Addr().String(), tt.target, tt.header, tt.length, 60<<10)
		})
	}
}

// checkStalledBody sends to addr a POST for target with the extra header
// lines header, announcing a body of length bytes, sends the first sent
// bytes of it and stalls: the server must answer 408 and close the
// connection.
func checkStalledBody(t *testing.T, addr, target, header string, length, sent int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n",
		target, addr, header, length)
	c.Write(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":"`), bytes.Repeat([]byte("a"), sent)...))
	// Then nothing. The bound is far above the timeout: it only tells a
	// server that gives up from one that waits forever.
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d; want 408", resp.StatusCode)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection stayed open: %v", err)
	}
}

// TestHTTPSlowBodyServerTimeout is TestHTTPSlowBody with the bound given
// by the http.Server's ReadTimeout, shorter than ReadBodyTimeout: the
// handler sets no deadline of its own then, and net/http's for the whole
// request must still end the stalled body with 408.
func TestHTTPSlowBodyServerTimeout(t *testing.T) {
	checkLeaks(t)
	b := newTestBackend()
	sh := newStreamableHTTPHandler(b.connect, &StreamableHTTPOptions{ReadBodyTimeout: time.Hour})
	srv := httptest.NewUnstartedServer(sh)
	// Long enough for initialize to be read on a loaded machine; the
	// stalled body below waits for it.
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(func() {
		sh.Close()
		srv.Close()
		b.closeAll()
	})
	sid := initializeAt(t, srv, "/mcp")
	checkStalledBody(t, srv.Listener.Addr().String(), "/mcp", "Mcp-Session-Id: "+sid+"\r\n", 1_000_000, 0)
}

// TestHTTPBodyDeadlineLifted checks that the read deadline bounding a POST
// body does not outlive the body: a handler that runs for several times
// ReadBodyTimeout after its body was read keeps its context (were the
// deadline left on the connection, net/http's read watching for the
// client's going away would fail at it and cancel the request).
//
// In the slow case the body comes in two parts, a pause apart that is
// longer than the interval at which the handler sets the deadline of the
// reads in progress (see bodyWatch) and shorter than the timeout: the
// deadline is set while the body is read, and must be lifted.
func TestHTTPBodyDeadlineLifted(t *testing.T) {
	checkLeaks(t)
	plain := func(h http.Handler) http.Handler { return h }
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		pause   time.Duration // between the two parts of the body
		wrap    func(http.Handler) http.Handler
	}{
		{"net/http's body", 50 * time.Millisecond, 0, plain},
		{"a slow body", 200 * time.Millisecond, 100 * time.Millisecond, plain},
		// The body of a middleware that lingers once net/http's is read to
		// its end: the deadline is set after that end, once net/http's
		// read watching for the client's going away has started.
		{"a slow middleware's body", 200 * time.Millisecond, 0, func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Body = &lingeringBody{ReadCloser: r.Body, linger: 100 * time.Millisecond}
				h.ServeHTTP(w, r)
			})
		}},
		{"a middleware's body", 50 * time.Millisecond, 0, func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				data, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(data))
				h.ServeHTTP(w, r)
			})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newTestBackend()
			timeout := tt.timeout
			sh := newStreamableHTTPHandler(b.connect, &StreamableHTTPOptions{ReadBodyTimeout: timeout})
			srv := httptest.NewServer(tt.wrap(sh))
			t.Cleanup(func() {
				sh.Close()
				srv.Close()
				b.closeAll()
			})
			sid := initializeAt(t, srv, "/")
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"block"}`
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
				srv.Listener.Addr(), sid, len(body), body[:10])
			// The client's slowness, not a wait for something to happen.
			time.Sleep(tt.pause)
			io.WriteString(c, body[10:])
			<-b.started
			// Not a wait for something to happen: the time in which a
			// deadline left behind would have ended the request.
			select {
			case cause := <-b.stopped:
				t.Fatalf("the handler's context ended %v after its body was read: %s", 4*timeout, cause)
			case <-time.After(4 * timeout):
			}
			c.Close() // the client goes away: now the handler stops
			<-b.stopped
		})
	}
}

// lingeringBody is a request body that waits for linger once the body it
// wraps is read to its end, before it reports the end.
type lingeringBody struct {
	io.ReadCloser
	linger time.Duration
}

func (b *lingeringBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		// The middleware's slowness, not a wait for something to happen.
		time.Sleep(b.linger)
	}
	return n, err
}

// initializeAt opens a Streamable HTTP session at path and returns its ID.
func initializeAt(t *testing.T, srv *httptest.Server, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: %s", resp.Status)
	}
	return id
}

// TestStreamableHTTPStatelessBound checks that in stateless mode
// MaxSessions bounds the exchanges in progress.
func TestStreamableHTTPStatelessBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDirectHarness(t, &StreamableHTTPOptions{Stateless: true, MaxSessions: 1})
		ctx, cancel := context.WithCancel(context.Background())
		r := d.request(ctx, http.MethodPost, "192.0.2.1", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"block"}`))
		var wg sync.WaitGroup
		wg.Go(func() { d.h.ServeHTTP(httptest.NewRecorder(), r) })
		<-d.b.started
		if w := d.post("192.0.2.2", `{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}`); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("a second exchange past MaxSessions: %d; want 503", w.Code)
		}
		cancel()
		wg.Wait()
		<-d.b.stopped
		if w := d.post("192.0.2.2", `{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}`); w.Code != 200 {
			t.Fatalf("an exchange once the other ended: %d", w.Code)
		}
	})
}

// TestAccepts checks the Accept header matching, and that a long header
// costs no allocation (it cost 28 MiB for a header of 1 MB, twice per
// POST).
func TestAccepts(t *testing.T) {
	for _, tt := range []struct {
		header []string
		want   bool
	}{
		{[]string{"application/json"}, true},
		{[]string{"text/html, application/json; charset=utf-8"}, true},
		{[]string{"APPLICATION/JSON"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/*"}, true},
		{[]string{"application/json;q=0.5"}, true},
		{[]string{"application/json;q=0"}, false},
		{[]string{"application/json; q=0.000"}, false},
		{[]string{`application/*;q="0"`}, false},
		{[]string{"text/html", "application/json"}, true},
		{[]string{"text/html", "text/*"}, false},
		{[]string{"application/jsonx"}, false},
		{[]string{"app/*"}, false},
		{nil, false},
	} {
		if got := accepts(tt.header, "application/json"); got != tt.want {
			t.Errorf("accepts(%q, application/json) = %v; want %v", tt.header, got, tt.want)
		}
	}
	for _, tt := range []struct {
		header []string
		want   bool
	}{
		{[]string{acceptJSONOrSSE}, true},
		{[]string{"text/event-stream,application/json"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/json;q=0, text/event-stream"}, false},
		{[]string{"application/json, text/event-stream;q=0"}, false},
		{[]string{"application/json"}, false},
		{[]string{"text/event-stream"}, false},
		{[]string{"application/json, text/event-streams"}, false},
		{nil, false},
	} {
		if got := acceptsJSONAndSSE(tt.header); got != tt.want {
			t.Errorf("acceptsJSONAndSSE(%q) = %v; want %v", tt.header, got, tt.want)
		}
	}
	long := []string{strings.Repeat("text/x;q=1,", 90000) + "application/json"}
	if n := testing.AllocsPerRun(3, func() {
		if !accepts(long, "application/json") {
			t.Fatal("not accepted")
		}
	}); n != 0 {
		t.Fatalf("matching a %d-byte Accept header made %.0f allocations", len(long[0]), n)
	}
}

// TestReadRequestBodyLimit checks readRequestBody at its size limit: a
// body of unannounced length one byte past it is refused with 413 and the
// connection is closed after the answer (the rest of the body is never
// read), one at the limit is read whole, and one announced past it is
// refused before a byte is read.
func TestReadRequestBodyLimit(t *testing.T) {
	const limit = 1000
	for _, tt := range []struct {
		name      string
		size      int
		announced bool
		status    int  // 0: read
		closes    bool // Connection: close set
	}{
		{"at the limit, unannounced", limit, false, 0, false},
		{"at the limit, announced", limit, true, 0, false},
		{"past the limit, unannounced", limit + 1, false, http.StatusRequestEntityTooLarge, true},
		{"far past the limit, unannounced", 64 * limit, false, http.StatusRequestEntityTooLarge, true},
		{"past the limit, announced", limit + 1, true, http.StatusRequestEntityTooLarge, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingReader{r: strings.NewReader(strings.Repeat("x", tt.size))}
			r := httptest.NewRequest(http.MethodPost, "/mcp", body)
			r.ContentLength = -1
			if tt.announced {
				r.ContentLength = int64(tt.size)
			}
			w := httptest.NewRecorder()
			got, status, _ := readRequestBody(w, r, limit, nil)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if status == 0 && len(got) != tt.size {
				t.Fatalf("read %d bytes, want %d", len(got), tt.size)
			}
			if closes := w.Header().Get("Connection") == "close"; closes != tt.closes {
				t.Errorf("Connection: close set: %v, want %v", closes, tt.closes)
			}
			if body.n > limit+1 {
				t.Errorf("read %d bytes of the body, more than limit+1", body.n)
			}
			if tt.announced && status != 0 && body.n != 0 {
				t.Errorf("read %d bytes of a body announced too large", body.n)
			}
		})
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// deadlineWriter is a ResponseWriter that records the read deadlines set
// through a ResponseController.
type deadlineWriter struct {
	httptest.ResponseRecorder
	mu  sync.Mutex
	set []time.Time
}

func (w *deadlineWriter) SetReadDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set = append(w.set, t)
	return nil
}

func (w *deadlineWriter) deadlines() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.set)
}

// TestBodyWatch checks, on fake time, that a bodyWatch sets the read
// deadline of a read in progress for a quarter of the timeout or longer
// (at most bodyWatchEvery) to the timeout after the read's start, sets
// none on a read that ends sooner, reports which it set, and stops its
// timer once no read is in progress.
func TestBodyWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bw bodyWatch
		bw.init(time.Second) // looks every 100ms
		start := time.Now()
		a, b, c := new(deadlineWriter), new(deadlineWriter), new(deadlineWriter)
		ra := bw.begin(a)
		time.Sleep(50 * time.Millisecond)
		rb := bw.begin(b)
		time.Sleep(60 * time.Millisecond) // the look at 100ms: a's deadline
		if !bw.end(ra) {
			t.Error("a's deadline not reported set")
		}
		time.Sleep(100 * time.Millisecond) // the look at 200ms: b's
		rc := bw.begin(c)
		if bw.end(rc) {
			t.Error("c's deadline reported set")
		}
		if !bw.end(rb) {
			t.Error("b's deadline not reported set")
		}
		for _, tt := range []struct {
			name string
			w    *deadlineWriter
			want []time.Time
		}{
			{"a", a, []time.Time{start.Add(time.Second)}},
			{"b", b, []time.Time{start.Add(50*time.Millisecond + time.Second)}},
			{"c", c, nil},
		} {
			if got := tt.w.deadlines(); !slices.EqualFunc(got, tt.want, time.Time.Equal) {
				t.Errorf("%s: deadlines %v, want %v", tt.name, got, tt.want)
			}
		}
		time.Sleep(100 * time.Millisecond) // the look at 300ms finds none
		synctest.Wait()
		bw.mu.Lock()
		set, reads := bw.set, bw.reads
		bw.mu.Unlock()
		if set || reads != nil {
			t.Errorf("timer set %v, reads %v once none is in progress", set, reads)
		}
		// Entries are reused, at most maxFreeBodyReads of them, and the
		// list stays whole whatever the order of the ends.
		var in []*bodyRead
		for range 2 * maxFreeBodyReads {
			in = append(in, bw.begin(a))
		}
		for i := len(in) - 1; i >= 0; i -= 2 {
			bw.end(in[i])
		}
		for i := 0; i < len(in); i += 2 {
			bw.end(in[i])
		}
		if bw.reads != nil || bw.nfree != maxFreeBodyReads {
			t.Errorf("after every end: reads %v, %d entries kept, want none and %d", bw.reads, bw.nfree, maxFreeBodyReads)
		}
		bw.stop()
		for _, tt := range []struct{ timeout, every time.Duration }{
			{time.Hour, bodyWatchEvery}, {time.Second, bodyWatchEvery}, {200 * time.Millisecond, 50 * time.Millisecond}, {time.Microsecond, time.Millisecond},
		} {
			var w bodyWatch
			if w.init(tt.timeout); w.every != tt.every {
				t.Errorf("timeout %v: looks every %v, want %v", tt.timeout, w.every, tt.every)
			}
		}
	})
}
