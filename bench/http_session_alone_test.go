package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The session setup of HTTPSessionSetup taken apart, as HTTPHandler and
// HTTPClient take a call apart: each side alone, with no network, no
// kernel and no peer, so that ns/op, B/op and allocs/op are the side's
// own work for a whole session (initialize, notifications/initialized,
// tools/list, DELETE), steady from run to run. The targets are the floor
// and mcpkit-nostream, which make the same four exchanges.

// sessionAloneTargets are the targets of the session benchmarks taken
// apart.
func sessionAloneTargets() []httpTarget { return []httpTarget{httpTargets[0], mcpkitNoStream} }

// exchange is one HTTP exchange of a recorded session.
type exchange struct {
	req     *http.Request // its body in reqBody
	reqBody string
	status  int
	header  http.Header
	body    []byte
}

// recordSession serves t's handler on loopback behind a recorder, sets
// up one session with t's client (connect, tools/list, close), and
// returns the handler and the session's exchanges in order.
func recordSession(tb testing.TB, t httpTarget) (http.Handler, []exchange) {
	tb.Helper()
	var (
		mu        sync.Mutex
		exchanges []exchange
		inner     http.Handler
	)
	s := startHTTPWrapped(tb, t, func(h http.Handler) http.Handler {
		inner = h
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
			rec := &recordingWriter{ResponseWriter: w}
			h.ServeHTTP(rec, r)
			mu.Lock()
			defer mu.Unlock()
			exchanges = append(exchanges, exchange{
				req: r.Clone(context.Background()), reqBody: string(data),
				status: rec.status, header: w.Header().Clone(), body: rec.body.Bytes(),
			})
		})
	})
	if err := setupSessions(context.Background(), t, s, 1); err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(exchanges) != 4 {
		tb.Fatalf("%s: a session of %d exchanges, want 4", t.name, len(exchanges))
	}
	for i := range exchanges {
		exchanges[i].req.RemoteAddr = "127.0.0.1:40000"
		exchanges[i].req.ContentLength = int64(len(exchanges[i].reqBody))
	}
	return inner, exchanges
}

// recordingWriter keeps a copy of the status and body written through it.
type recordingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

// BenchmarkHTTPSessionHandler replays a recorded session's four requests
// to the server's handler, as net/http would hand them to it, with the
// session ID each new initialize answered with: the server's side of a
// session alone.
func BenchmarkHTTPSessionHandler(b *testing.B) {
	for _, t := range sessionAloneTargets() {
		b.Run(t.name, func(b *testing.B) {
			h, ex := recordSession(b, t)
			w := &memoryResponse{header: http.Header{}}
			body := &replayBody{}
			headers := make([]http.Header, len(ex))
			for i, e := range ex {
				headers[i] = e.req.Header.Clone()
			}
			base := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := replaySession(base, h, ex, headers, w, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// replaySession hands the exchanges' requests to h in order, each with
// the session ID the first one's answer gave, and checks each status.
func replaySession(base context.Context, h http.Handler, ex []exchange, headers []http.Header, w *memoryResponse, body *replayBody) error {
	sid := ""
	for i, e := range ex {
		ctx, cancel := context.WithCancel(base)
		r := e.req.WithContext(ctx)
		r.Header = headers[i]
		if sid != "" {
			r.Header["Mcp-Session-Id"] = []string{sid}
		}
		body.r.Reset(e.reqBody)
		r.Body = body
		w.reset()
		h.ServeHTTP(w, r)
		cancel()
		if w.status != e.status {
			return fmt.Errorf("request %d (%s): HTTP %d, want %d: %s", i, e.req.Method, w.status, e.status, w.body.String())
		}
		if i == 0 {
			if sid = w.header.Get("Mcp-Session-Id"); sid == "" {
				return fmt.Errorf("initialize answered with no session ID")
			}
		}
	}
	return nil
}

// TestHTTPSessionHandler checks that every target of
// BenchmarkHTTPSessionHandler answers a replayed session, twice.
func TestHTTPSessionHandler(t *testing.T) {
	for _, tgt := range sessionAloneTargets() {
		t.Run(tgt.name, func(t *testing.T) {
			h, ex := recordSession(t, tgt)
			for range 2 {
				headers := make([]http.Header, len(ex))
				for i, e := range ex {
					headers[i] = e.req.Header.Clone()
				}
				if err := replaySession(context.Background(), h, ex, headers, &memoryResponse{header: http.Header{}}, &replayBody{}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// sessionReplayer is an http.RoundTripper that answers the requests of
// sessions set up one after another with the answers of a recorded
// session, in order.
type sessionReplayer struct {
	ex       []exchange
	next     int // the exchange the next request is
	replayed atomic.Int64
}

func (s *sessionReplayer) RoundTrip(r *http.Request) (*http.Response, error) {
	e := s.ex[s.next]
	s.next = (s.next + 1) % len(s.ex)
	if r.Method != e.req.Method {
		return nil, fmt.Errorf("request %s, want %s", r.Method, e.req.Method)
	}
	if r.Body != nil {
		data, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		if e.reqBody != "" && !strings.Contains(string(data), `"method"`) {
			return nil, fmt.Errorf("a POST of no JSON-RPC message: %q", data)
		}
	}
	s.replayed.Add(1)
	return &http.Response{
		Status: http.StatusText(e.status), StatusCode: e.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: e.header, Body: io.NopCloser(bytes.NewReader(e.body)),
		ContentLength: int64(len(e.body)), Request: r,
	}, nil
}

// BenchmarkHTTPSessionClient sets up sessions with the client alone: its
// http.Client answers every request with the answer the server gave in a
// recorded session. What is left is the client's work for a session
// (making the client and its session, encoding, net/http's client,
// decoding, closing) in a deterministic loop.
func BenchmarkHTTPSessionClient(b *testing.B) {
	for _, t := range sessionAloneTargets() {
		b.Run(t.name, func(b *testing.B) {
			_, ex := recordSession(b, t)
			rt := &sessionReplayer{ex: ex}
			hc := &http.Client{Transport: rt}
			s := &httpServer{url: "http://127.0.0.1:1/mcp", hc: hc}
			b.ReportAllocs()
			b.ResetTimer()
			if err := setupSessions(context.Background(), t, s, b.N); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if n := rt.replayed.Load(); n != int64(4*b.N) {
				b.Fatalf("%d sessions, %d exchanges replayed", b.N, n)
			}
		})
	}
}

// TestHTTPSessionClient checks that every target of
// BenchmarkHTTPSessionClient sets up sessions on the replay alone.
func TestHTTPSessionClient(t *testing.T) {
	for _, tgt := range sessionAloneTargets() {
		t.Run(tgt.name, func(t *testing.T) {
			_, ex := recordSession(t, tgt)
			rt := &sessionReplayer{ex: ex}
			s := &httpServer{url: "http://127.0.0.1:1/mcp", hc: &http.Client{Transport: rt}}
			if err := setupSessions(context.Background(), tgt, s, 3); err != nil {
				t.Fatal(err)
			}
			if n := rt.replayed.Load(); n != 12 {
				t.Fatalf("%d exchanges replayed, want 12", n)
			}
		})
	}
}
