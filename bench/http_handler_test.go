package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkHTTPHandler measures what the server's handler costs for one
// tools/call POST, without the network, the kernel or the client: the
// target's own client makes one echo call over loopback, the POST it sent
// is recorded (method, URL, headers, body), and the timed loop hands that
// same request to the handler's ServeHTTP again and again, as net/http
// would (a request of its own with a cancellable context each time), with
// a ResponseWriter that keeps the answer in memory and accepts deadlines.
// The handshake-era targets replay a call of their live session; the
// -latest targets a session-less 2026-07-28 POST with its _meta and its
// mirrored headers. ns/op, B/op and allocs/op are the handler's alone: the
// part of HTTPConcurrent50's server CPU that the server's own code decides.
func BenchmarkHTTPHandler(b *testing.B) {
	targets := []httpTarget{
		httpTargets[0], // floor
		httpTargets[1], // mcpkit
		{"floor-latest", latestHTTPTargets[0].serve, latestHTTPTargets[0].dial},
		{"mcpkit-latest", mcpkitHTTPServe, mcpkitModernHTTPDial},
	}
	if targets[0].name != "floor" || targets[1].name != "mcpkit" || latestHTTPTargets[0].name != "floor" {
		b.Fatal("httpTargets or latestHTTPTargets changed order")
	}
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			h, rec := recordedCall(b, t)
			w := &memoryResponse{header: http.Header{}}
			body := &replayBody{}
			base := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ctx, cancel := context.WithCancel(base)
				r := rec.WithContext(ctx)
				body.r.Reset(rec.body)
				r.Body = body
				w.reset()
				h.ServeHTTP(w, r)
				cancel()
			}
			b.StopTimer()
			if err := w.check(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestHTTPHandler checks that every target of BenchmarkHTTPHandler
// answers the replayed call, twice (a session's second use of one
// request ID included).
func TestHTTPHandler(t *testing.T) {
	for _, tgt := range []httpTarget{httpTargets[0], httpTargets[1],
		{"floor-latest", latestHTTPTargets[0].serve, latestHTTPTargets[0].dial},
		{"mcpkit-latest", mcpkitHTTPServe, mcpkitModernHTTPDial}} {
		t.Run(tgt.name, func(t *testing.T) {
			h, rec := recordedCall(t, tgt)
			for range 2 {
				w := &memoryResponse{header: http.Header{}}
				r := rec.WithContext(context.Background())
				r.Body = io.NopCloser(strings.NewReader(rec.body))
				h.ServeHTTP(w, r)
				if err := w.check(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// recordedPOST is a request the client sent, with its body kept aside.
type recordedPOST struct {
	*http.Request
	body string
}

// recordedCall serves t's handler on loopback behind a recorder, dials
// it with t's client and makes one echo call, and returns the handler and
// the tools/call POST the client sent. The session stays open until the
// benchmark ends.
func recordedCall(tb testing.TB, t httpTarget) (http.Handler, recordedPOST) {
	tb.Helper()
	var (
		mu   sync.Mutex
		last recordedPOST
	)
	var inner http.Handler
	s := startHTTPWrapped(tb, t, func(h http.Handler) http.Handler {
		inner = h
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				data, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				if bytes.Contains(data, []byte(`"tools/call"`)) {
					mu.Lock()
					last = recordedPOST{r.Clone(context.Background()), string(data)}
					mu.Unlock()
				}
				r.Body = io.NopCloser(bytes.NewReader(data))
			}
			h.ServeHTTP(w, r)
		})
	})
	c := s.dial(tb, t)
	if err := c.echo(context.Background()); err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if last.Request == nil {
		tb.Fatal("the client sent no tools/call POST")
	}
	last.RemoteAddr = "127.0.0.1:40000"
	last.ContentLength = int64(len(last.body))
	return inner, last
}

// replayBody is a request body read from a string, reset for each
// request.
type replayBody struct{ r strings.Reader }

func (b *replayBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *replayBody) Close() error               { return nil }

// memoryResponse is an http.ResponseWriter that keeps the answer in
// memory and accepts flushes and deadlines, as net/http's does.
type memoryResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *memoryResponse) Header() http.Header { return w.header }
func (w *memoryResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *memoryResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
func (w *memoryResponse) Flush()                           {}
func (w *memoryResponse) SetReadDeadline(time.Time) error  { return nil }
func (w *memoryResponse) SetWriteDeadline(time.Time) error { return nil }
func (w *memoryResponse) reset()                           { clear(w.header); w.status = 0; w.body.Reset() }
func (w *memoryResponse) check() error {
	if w.status != http.StatusOK || !bytes.Contains(w.body.Bytes(), []byte(`"content"`)) || bytes.Contains(w.body.Bytes(), []byte(`"error"`)) {
		return &answerError{w.status, w.body.String()}
	}
	return nil
}

// answerError is a replayed call's answer that is not the tool's result.
type answerError struct {
	status int
	body   string
}

func (e *answerError) Error() string {
	return "replayed tools/call: HTTP " + http.StatusText(e.status) + ": " + e.body
}
