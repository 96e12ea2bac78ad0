package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/mcpkit/mcpkit/bench/internal/floor"
	"github.com/mcpkit/mcpkit/bench/internal/gosdkecho"
	"github.com/mcpkit/mcpkit/bench/internal/mcpgoecho"
	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	"github.com/mcpkit/mcpkit/bench/internal/payload"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpSessions is the number of client sessions, one goroutine each, in
// BenchmarkHTTPConcurrent50.
const httpSessions = 50

// idleSessions is the number of sessions BenchmarkHTTPIdleSessions opens
// and leaves idle.
const idleSessions = 2000

// httpConn is one client session to an HTTP server under test.
type httpConn struct {
	echo  caller                          // calls echo and checks the text
	large caller                          // calls large and checks the length
	list  func(ctx context.Context) error // lists the tools and checks there are two
	close func() error                    // ends the session (DELETE)
}

// httpTarget is one implementation of both sides of Streamable HTTP.
type httpTarget struct {
	name string
	// serve returns the server's http.Handler for the endpoint url (the
	// URL the clients dial, which a server checking tokens needs for
	// their audience) and a function that releases what it holds once
	// the HTTP server has stopped.
	serve func(url string) (http.Handler, func(), error)
	// dial opens a session to url with hc, using the same
	// implementation's client.
	dial func(ctx context.Context, hc *http.Client, url string) (*httpConn, error)
}

// httpTargets are the targets of the HTTP benchmarks. Every server and
// client uses its SDK's defaults except that the clients share one tuned
// http.Client (see newHTTPClient) and speak protocol revision
// 2025-11-25.
var httpTargets = []httpTarget{
	{"floor", floorHTTPServe, floorHTTPDial},
	{"mcpkit", mcpkitHTTPServe, mcpkitHTTPDial},
	{"gosdk", gosdkHTTPServe, gosdkHTTPDial},
	{"mcpgo", mcpgoHTTPServe, mcpgoHTTPDial},
}

// largeCaller returns a caller that runs call, a call of the large tool,
// and checks the text it returns.
func largeCaller(call func(context.Context) (string, error)) caller {
	return func(ctx context.Context) error {
		text, err := call(ctx)
		if err != nil {
			return err
		}
		return checkLarge(text)
	}
}

// listCaller returns a list function that runs list, which lists the
// tools and returns how many there are, and checks the count.
func listCaller(list func(context.Context) (int, error)) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := list(ctx)
		if err != nil {
			return err
		}
		return checkTools(n)
	}
}

// checkLarge returns an error unless text is the large tool's result.
func checkLarge(text string) error {
	if len(text) != payload.LargeSize || text != payload.Large {
		return fmt.Errorf("large returned %d bytes, want %d", len(text), payload.LargeSize)
	}
	return nil
}

// checkTools returns an error unless n is the number of tools every
// server registers.
func checkTools(n int) error {
	if n != 2 {
		return fmt.Errorf("tools/list returned %d tools, want 2", n)
	}
	return nil
}

func floorHTTPServe(string) (http.Handler, func(), error) {
	return floor.NewHTTPHandler(), func() {}, nil
}

func floorHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	c, err := floor.DialHTTP(ctx, hc, url)
	if err != nil {
		return nil, err
	}
	return floorConn(c), nil
}

// floorConn returns the httpConn of the floor's session c.
func floorConn(c *floor.HTTPClient) *httpConn {
	return &httpConn{
		echo: func(ctx context.Context) error {
			text, err := c.CallEcho(ctx, message)
			if err != nil {
				return err
			}
			return checkText(text)
		},
		large: largeCaller(c.CallLarge),
		list:  listCaller(c.ListTools),
		close: func() error { return c.Close(context.Background()) },
	}
}

// floorStream is the floor's target with a client that opens the
// session's standalone GET stream, as mcpkit's does by default: what such
// a stream costs at the least.
var floorStream = httpTarget{"floor-stream", floorHTTPServe, floorHTTPStreamDial}

func floorHTTPStreamDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	c, err := floor.DialHTTPStream(ctx, hc, url)
	if err != nil {
		return nil, err
	}
	return floorConn(c), nil
}

func mcpkitHTTPServe(string) (http.Handler, func(), error) {
	s, err := mcpkitecho.NewServer()
	if err != nil {
		return nil, nil, err
	}
	h := mcpkit.NewStreamableHTTPHandler(s, nil)
	return h, func() { h.Close() }, nil
}

func mcpkitHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return mcpkitHTTPDialWith(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc})
}

// mcpkitNoStreamHTTPDial is mcpkitHTTPDial with the standalone GET stream
// turned off, so that the client does what the floor's and mcp-go's do.
func mcpkitNoStreamHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return mcpkitHTTPDialWith(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc, DisableStandaloneStream: true})
}

// mcpkitNoStream is the mcpkit target with mcpkitNoStreamHTTPDial: the
// same server, its client without the standalone GET stream.
var mcpkitNoStream = httpTarget{"mcpkit-nostream", mcpkitHTTPServe, mcpkitNoStreamHTTPDial}

func mcpkitHTTPDialWith(ctx context.Context, t *transport.StreamableClientTransport) (*httpConn, error) {
	return mcpkitHTTPDialEra(ctx, t, mcpkit.EraHandshake, pinnedVersion)
}

// mcpkitModernHTTPDial dials with the default client (EraAuto), which
// finds 2026-07-28 with mcpkit's server: every call is a POST of its own,
// with no session.
func mcpkitModernHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return mcpkitHTTPDialEra(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc}, mcpkit.EraAuto, mcpkit.Version20260728)
}

// mcpkitHTTPDialEra dials with a client of era and checks the revision.
func mcpkitHTTPDialEra(ctx context.Context, t *transport.StreamableClientTransport, era mcpkit.Era, want string) (*httpConn, error) {
	c := mcpkit.NewClient(&mcpkit.Implementation{Name: "bench", Version: "1"}, &mcpkit.ClientOptions{Era: era})
	cs, err := c.Connect(ctx, t)
	if err != nil {
		return nil, err
	}
	if v := cs.ProtocolVersion(); v != want {
		cs.Close()
		return nil, fmt.Errorf("mcpkit negotiated protocol %s, want %s", v, want)
	}
	return &httpConn{
		echo: mcpkitEcho(cs, false),
		large: largeCaller(func(ctx context.Context) (string, error) {
			return mcpkitCallText(ctx, cs, "large", nil)
		}),
		list: listCaller(func(ctx context.Context) (int, error) {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return 0, err
			}
			return len(res.Tools), nil
		}),
		close: cs.Close,
	}, nil
}

func gosdkHTTPServe(string) (http.Handler, func(), error) {
	s := gosdkecho.NewServer()
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, nil), func() {}, nil
}

// gosdkHTTPDial dials with go-sdk's client asking for pinnedVersion.
func gosdkHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return gosdkHTTPDialVersion(ctx, hc, url, pinnedVersion)
}

// gosdkHTTPDialVersion dials with go-sdk's client asking for protocol
// revision version, and checks that it got it.
func gosdkHTTPDialVersion(ctx context.Context, hc *http.Client, url, version string) (*httpConn, error) {
	c := gosdk.NewClient(&gosdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc},
		&gosdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		cs.Close()
		return nil, fmt.Errorf("gosdk negotiated protocol %s, want %s", v, version)
	}
	return &httpConn{
		echo: gosdkEcho(cs),
		large: largeCaller(func(ctx context.Context) (string, error) {
			return gosdkCallText(ctx, cs, "large", struct{}{})
		}),
		list: listCaller(func(ctx context.Context) (int, error) {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return 0, err
			}
			return len(res.Tools), nil
		}),
		close: cs.Close,
	}, nil
}

func mcpgoHTTPServe(string) (http.Handler, func(), error) {
	h := mcpgoserver.NewStreamableHTTPServer(mcpgoecho.NewServer())
	return h, func() {}, nil
}

// mcpgoHTTPDial dials with mcp-go's client asking for pinnedVersion.
func mcpgoHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return mcpgoHTTPDialVersion(ctx, hc, url, pinnedVersion)
}

// mcpgoHTTPDialVersion dials with mcp-go's client asking for protocol
// revision version, and checks that it got it.
func mcpgoHTTPDialVersion(ctx context.Context, hc *http.Client, url, version string) (*httpConn, error) {
	c, err := mcpgoclient.NewStreamableHttpClient(url, mcpgotransport.WithHTTPBasicClient(hc))
	if err != nil {
		return nil, err
	}
	if err := mcpgoStart(ctx, c, version); err != nil {
		c.Close()
		return nil, err
	}
	return &httpConn{
		echo: mcpgoEcho(c),
		large: largeCaller(func(ctx context.Context) (string, error) {
			return mcpgoCallText(ctx, c, "large", map[string]any{})
		}),
		list: listCaller(func(ctx context.Context) (int, error) {
			res, err := c.ListTools(ctx, mcpgomcp.ListToolsRequest{})
			if err != nil {
				return 0, err
			}
			return len(res.Tools), nil
		}),
		close: c.Close,
	}, nil
}

// newHTTPClient returns the http.Client every target's client uses: the
// default transport with a keep-alive pool large enough for 50 sessions
// that each hold a standalone GET stream and make calls, so that no
// implementation pays for new connections.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 512
	return &http.Client{Transport: t}
}

// httpServer is a running server under test.
type httpServer struct {
	url     string
	hc      *http.Client
	handler http.Handler
	// apart reads the CPU time of the server's process when it runs in
	// one of its own (see BenchmarkHTTPApart50); nil when it runs here.
	apart func() (time.Duration, bool)
}

// startHTTP serves t's handler on 127.0.0.1 and registers its shutdown
// with tb.Cleanup. Cleanups run last-in first-out, so sessions a caller
// registers afterwards are closed before the server stops.
func startHTTP(tb testing.TB, t httpTarget) *httpServer {
	return startHTTPWrapped(tb, t, nil)
}

// startHTTPWrapped is startHTTP serving wrap(h) instead of t's handler h,
// for example to watch the requests; a nil wrap serves h.
func startHTTPWrapped(tb testing.TB, t httpTarget, wrap func(http.Handler) http.Handler) *httpServer {
	srv, h, release, err := serveHTTP(t, wrap)
	if err != nil {
		tb.Fatal(err)
	}
	hc := newHTTPClient()
	tb.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.close()
		release()
	})
	return &httpServer{url: srv.url + "/mcp", hc: hc, handler: h}
}

// plainHTTPServer is an http.Server on 127.0.0.1, configured as in
// production: httptest's server installs a ConnState hook, under which
// mcpkit keeps GET streams on net/http instead of hijacking them.
type plainHTTPServer struct {
	url, addr string
	srv       *http.Server
	served    chan struct{}
}

// serveHTTP listens on 127.0.0.1, makes t's handler for the endpoint
// (the listener's URL followed by /mcp), wraps it with wrap unless wrap
// is nil, and serves it on a new plainHTTPServer. It returns the server,
// the handler it serves and the function that releases what t's handler
// holds, to be called after the server's close.
//
// The goroutine that serves carries the pprof label serverLabels(t.name), and
// so do the goroutines it starts (the connections' and the handler's), so
// that a CPU profile tells the server's CPU time from the client's (see
// cpuMeter).
func serveHTTP(t httpTarget, wrap func(http.Handler) http.Handler) (*plainHTTPServer, http.Handler, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, err
	}
	base := "http://" + l.Addr().String()
	h, release, err := t.serve(base + "/mcp")
	if err != nil {
		l.Close()
		return nil, nil, nil, err
	}
	if wrap != nil {
		h = wrap(h)
	}
	s := &plainHTTPServer{url: base, addr: l.Addr().String(), srv: &http.Server{Handler: h}, served: make(chan struct{})}
	go func() {
		defer close(s.served)
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), serverLabels(t.name)))
		s.srv.Serve(l)
	}()
	return s, h, release, nil
}

// close closes the server and its connections, but for hijacked ones.
func (s *plainHTTPServer) close() {
	s.srv.Close()
	<-s.served
}

// dial opens a session to s with t's client and closes it at cleanup.
func (s *httpServer) dial(tb testing.TB, t httpTarget) *httpConn {
	c, err := t.dial(context.Background(), s.hc, s.url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.close(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// BenchmarkHTTPConcurrent50 measures echo throughput and latency over
// Streamable HTTP on loopback: 50 client sessions, each driven by its own
// goroutine, call echo until b.N calls are done in total. ns/op is wall
// time per call across all sessions; p50-µs and p99-µs are the latency
// of one call.
func BenchmarkHTTPConcurrent50(b *testing.B) {
	// mcpkit-latest: the client of 2026-07-28 against the same handler
	// (its requests served statelessly, each a POST of its own).
	// mcpkit-jwt and mcpkit-jwt-latest: the same behind RequireToken with
	// a JWT verifier, each right after its unauthenticated row so that
	// the two run close together in time (see jwtTargets).
	jwt, jwtLatest := jwtTargets(b)
	targets := slices.Insert(slices.Clone(httpTargets), 2,
		jwt, httpTarget{"mcpkit-latest", mcpkitHTTPServe, mcpkitModernHTTPDial}, jwtLatest)
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			runHTTPConcurrent(b, startHTTP(b, t), t)
		})
	}
}

// runHTTPConcurrent opens httpSessions clients of t to s, makes one echo
// call on each, then times b.N echo calls shared out among them, one
// goroutine per client, and reports calls/s, the p50 and p99 latency
// of one call, and the CPU time per call of the process and of the
// server (see cpuMeter).
func runHTTPConcurrent(b *testing.B, s *httpServer, t httpTarget) {
	conns := make([]*httpConn, httpSessions)
	for i := range conns {
		conns[i] = s.dial(b, t)
		if err := conns[i].echo(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([][]time.Duration, httpSessions)
	for i := range lat {
		lat[i] = make([]time.Duration, 0, b.N/httpSessions+1)
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	ctx := context.Background()
	b.ReportAllocs()
	cpu := startCPU(s.apart)
	b.ResetTimer()
	for i, c := range conns {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				if err := c.echo(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = append(lat[i], time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpu.stop(b, b.N, t.name)
	if err := firstErr.Load(); err != nil {
		b.Fatal(*err)
	}
	reportRate(b)
	reportLatency(b, slices.Concat(lat...))
}

// BenchmarkHTTPSessionSetup measures the rate of whole sessions with
// each implementation's client: connect (initialize and
// notifications/initialized, plus whatever else the client does, such
// as opening its standalone GET stream), tools/list, and close (DELETE).
func BenchmarkHTTPSessionSetup(b *testing.B) {
	targets := slices.Insert(slices.Clone(httpTargets), 2, mcpkitNoStream)
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := startHTTP(b, t)
			b.ReportAllocs()
			b.ResetTimer()
			if err := setupSessions(context.Background(), t, s, b.N); err != nil {
				b.Fatal(err)
			}
			if sec := b.Elapsed().Seconds(); sec > 0 {
				b.ReportMetric(float64(b.N)/sec, "sessions/s")
			}
		})
	}
}

// setupSessions sets up n whole sessions with s, one after another: dial,
// tools/list, close.
func setupSessions(ctx context.Context, t httpTarget, s *httpServer, n int) error {
	for range n {
		c, err := t.dial(ctx, s.hc, s.url)
		if err != nil {
			return err
		}
		if err := c.list(ctx); err != nil {
			c.close()
			return err
		}
		if err := c.close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkHTTPLargeResult measures the throughput of a tool whose result
// is 1 MiB of text, called sequentially on one session (MB/s counts the
// text only, not the JSON around it).
func BenchmarkHTTPLargeResult(b *testing.B) {
	for _, t := range httpTargets {
		b.Run(t.name, func(b *testing.B) {
			s := startHTTP(b, t)
			c := s.dial(b, t)
			ctx := context.Background()
			if err := c.large(ctx); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(payload.LargeSize)
			b.ReportAllocs()
			for b.Loop() {
				if err := c.large(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHTTPIdleSessions measures what an idle session costs a server:
// it opens 2,000 sessions (initialize and notifications/initialized,
// nothing else: no standalone GET stream) and reports the growth of the
// live heap and of the number of goroutines, per session. The sessions
// are opened by the floor's minimal client for every server, and the
// client keeps nothing of them but their IDs, in memory allocated before
// the first measurement, so the figures are the server's.
func BenchmarkHTTPIdleSessions(b *testing.B) {
	for _, t := range httpTargets {
		b.Run(t.name, func(b *testing.B) {
			var heap, goroutines float64
			for b.Loop() {
				h, g, err := measureIdle(t, idleSessions)
				if err != nil {
					b.Fatal(err)
				}
				heap += h
				goroutines += g
			}
			b.ReportMetric(heap/float64(b.N), "B/session")
			b.ReportMetric(goroutines/float64(b.N), "goroutines/session")
		})
	}
}

// maxSessionID bounds the session IDs measureIdle records.
const maxSessionID = 128

// measureIdle opens n idle sessions on a fresh server of t and returns
// the growth of the live heap and of the goroutine count per session. It
// ends every session with DELETE before it returns.
func measureIdle(t httpTarget, n int) (heapPerSession, goroutinesPerSession float64, err error) {
	srv, _, release, err := serveHTTP(t, nil)
	if err != nil {
		return 0, 0, err
	}
	hc := newHTTPClient()
	url := srv.url + "/mcp"
	defer func() {
		hc.CloseIdleConnections()
		srv.close()
		release()
	}()

	ids := make([]byte, n*maxSessionID) // session i's ID is ids[i*maxSessionID:], NUL-padded
	ctx := context.Background()
	// One session first, so that the connection and the server's lazily
	// built state are in the baseline.
	warm, err := floor.DialHTTP(ctx, hc, url)
	if err != nil {
		return 0, 0, err
	}
	defer warm.Close(ctx)
	heap0, g0 := liveHeap(), runtime.NumGoroutine()
	for i := range n {
		c, err := floor.DialHTTP(ctx, hc, url)
		if err != nil {
			return 0, 0, fmt.Errorf("session %d: %w", i, err)
		}
		id := c.SessionID()
		if len(id) > maxSessionID {
			return 0, 0, fmt.Errorf("session ID of %d bytes", len(id))
		}
		copy(ids[i*maxSessionID:], id)
	}
	heap1, g1 := liveHeap(), runtime.NumGoroutine()

	var errs []error
	for i := range n {
		id := ids[i*maxSessionID : (i+1)*maxSessionID]
		if end := slices.Index(id, 0); end >= 0 {
			id = id[:end]
		}
		if err := floor.NewHTTPClient(hc, url, string(id)).Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, 0, fmt.Errorf("closing sessions: %w", err)
	}
	return float64(int64(heap1)-int64(heap0)) / float64(n), float64(g1-g0) / float64(n), nil
}

// liveHeap returns the bytes of live heap objects after a full
// collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestHTTP checks every HTTP target once: echo, large, tools/list and
// close, so that `go test` (without -bench) catches a broken setup.
// The variants (floor-stream, mcpkit-nostream) share their servers with
// targets checked already and only dial.
func TestHTTP(t *testing.T) {
	for _, tg := range append(slices.Clone(httpTargets), floorStream, mcpkitNoStream) {
		t.Run(tg.name, func(t *testing.T) {
			s := startHTTP(t, tg)
			c := s.dial(t, tg)
			for _, f := range []caller{c.echo, c.echo, c.large, c.list} {
				if err := f(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.ContainsFunc(httpTargets, func(h httpTarget) bool { return h.name == tg.name }) {
				return
			}
			if _, _, err := measureIdle(tg, 10); err != nil {
				t.Fatal(err)
			}
			if _, _, err := measureIdleStreams(tg, 10); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// idleStreams is the number of sessions BenchmarkHTTPIdleStreams opens,
// each holding its standalone GET stream.
const idleStreams = 1000

// BenchmarkHTTPIdleStreams measures what an idle session whose client
// holds the standalone GET stream (as mcpkit's and go-sdk's default
// clients do) costs a server: it opens 1,000 sessions as
// BenchmarkHTTPIdleSessions does, then one GET stream each, and reports
// the growth of the live heap plus goroutine stacks (B/session) and of
// the number of goroutines per session. Each GET is sent on a raw TCP
// connection that the benchmark holds without a goroutine or a buffer,
// so the figures are the server's, plus the client's end of each TCP
// connection (a few hundred bytes).
func BenchmarkHTTPIdleStreams(b *testing.B) {
	for _, t := range httpTargets {
		b.Run(t.name, func(b *testing.B) {
			var mem, goroutines float64
			for b.Loop() {
				m, g, err := measureIdleStreams(t, idleStreams)
				if err != nil {
					b.Fatal(err)
				}
				mem += m
				goroutines += g
			}
			b.ReportMetric(mem/float64(b.N), "B/session")
			b.ReportMetric(goroutines/float64(b.N), "goroutines/session")
		})
	}
}

// measureIdleStreams opens n sessions on a fresh server of t, each with a
// standalone GET stream, and returns the growth of the live heap and
// goroutine stacks and of the goroutine count per session.
func measureIdleStreams(t httpTarget, n int) (bytesPerSession, goroutinesPerSession float64, err error) {
	srv, _, release, err := serveHTTP(t, nil)
	if err != nil {
		return 0, 0, err
	}
	hc := newHTTPClient()
	url := srv.url + "/mcp"
	conns := make([]net.Conn, 0, n+1)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		hc.CloseIdleConnections()
		srv.close()
		release()
	}()
	ctx := context.Background()
	var buf [512]byte
	open := func() error {
		c, err := floor.DialHTTP(ctx, hc, url)
		if err != nil {
			return err
		}
		conn, err := net.Dial("tcp", srv.addr)
		if err != nil {
			return err
		}
		conns = append(conns, conn)
		req := "GET /mcp HTTP/1.1\r\nHost: " + srv.addr +
			"\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + c.SessionID() +
			"\r\nMcp-Protocol-Version: " + pinnedVersion + "\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			return err
		}
		// Read up to the end of the headers (and whatever came with them).
		var head []byte
		for !bytes.Contains(head, []byte("\r\n\r\n")) {
			k, err := conn.Read(buf[:])
			if err != nil {
				return fmt.Errorf("reading the GET response: %w", err)
			}
			head = append(head, buf[:k]...)
		}
		if !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
			return fmt.Errorf("GET answered %q", head)
		}
		return nil
	}
	// One stream first, so that the server's lazily built state is in the
	// baseline.
	if err := open(); err != nil {
		return 0, 0, err
	}
	time.Sleep(idleSettle)
	mem0, g0 := liveMemory(), runtime.NumGoroutine()
	for i := range n {
		if err := open(); err != nil {
			return 0, 0, fmt.Errorf("session %d: %w", i, err)
		}
	}
	time.Sleep(idleSettle)
	mem1, g1 := liveMemory(), runtime.NumGoroutine()
	return float64(int64(mem1)-int64(mem0)) / float64(n), float64(g1-g0) / float64(n), nil
}

// idleSettle is how long measureIdleStreams leaves the streams idle
// before it measures them: a server may hold a stream differently once
// it has been idle a while (mcpkit's takes a GET stream over from
// net/http after a tenth of a second; see
// transport.StreamableHTTPOptions.DisableHijack), and the benchmark
// measures what an idle session costs for as long as it stays idle. A
// measurement condition, not a synchronisation.
const idleSettle = 2 * time.Second

// liveMemory returns the bytes of live heap objects and goroutine stacks
// after a full collection.
func liveMemory() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// sessionOpeners is the number of goroutines opening sessions at once in
// BenchmarkHTTPSessionOpen.
const sessionOpeners = 8

// BenchmarkHTTPSessionOpen measures how many sessions per second each
// implementation's client, with its default options, opens and closes
// against its own server when sessionOpeners goroutines do so at once:
// connect (initialize, notifications/initialized and whatever else the
// client does on its own, such as mcpkit's standalone GET stream) and
// close. Nothing is called in between. mcpkit-nostream turns the GET
// stream off, so that the difference between the two rows is the
// stream's cost; floor-stream is the floor with one, what a stream costs
// at the least. Every client asks for the handshake era (2025-11-25).
func BenchmarkHTTPSessionOpen(b *testing.B) {
	targets := slices.Insert(slices.Clone(httpTargets), 1, floorStream)
	targets = slices.Insert(targets, 3, mcpkitNoStream)
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := startHTTP(b, t)
			b.ReportAllocs()
			b.ResetTimer()
			if err := openSessions(context.Background(), t, s, b.N); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sec := b.Elapsed().Seconds(); sec > 0 {
				b.ReportMetric(float64(b.N)/sec, "sessions/s")
			}
		})
	}
}

// openSessions opens and closes n sessions with s, sessionOpeners
// goroutines at once, and returns the first error.
func openSessions(ctx context.Context, t httpTarget, s *httpServer, n int) error {
	return shareOut(sessionOpeners, n, func(int) error {
		c, err := t.dial(ctx, s.hc, s.url)
		if err == nil {
			err = c.close()
		}
		return err
	})
}
