package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/bench/internal/floor"
	"github.com/mcpkit/mcpkit/bench/internal/gosdkecho"
	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// latestVersion is the stateless MCP revision of the latestHTTPTargets:
// no initialize handshake and no session, every request one POST that
// names the revision in its MCP-Protocol-Version header and its _meta.
const latestVersion = "2026-07-28"

// latestHTTPTargets are the targets of BenchmarkHTTPLatestConcurrent50:
// a server and its SDK's client, both speaking revision 2026-07-28 over
// Streamable HTTP. Every client asks for that revision and its dial fails
// if it gets another; the benchmark also checks every HTTP request (see
// wireCheck).
var latestHTTPTargets = []httpTarget{
	// The floor's stateless handler and client (internal/floor/modern.go):
	// one POST, one application/json answer.
	{"floor", floorModernHTTPServe, floorModernHTTPDial},
	// mcpkit's default handler, which serves both eras on one endpoint: a
	// POST with no session ID and a 2026-07-28 MCP-Protocol-Version is
	// served statelessly. The client is mcpkit's default (EraAuto), which
	// finds 2026-07-28 with server/discover and fails the dial otherwise.
	{"mcpkit", mcpkitHTTPServe, mcpkitModernHTTPDial},
	// The same with the handler in its Stateless mode, which serves
	// 2026-07-28 requests on the same path but takes no per-peer slot.
	{"mcpkit-stateless", mcpkitStatelessHTTPServe, mcpkitModernHTTPDial},
	// go-sdk's handler with StreamableHTTPOptions.Stateless and its client
	// asking for 2026-07-28, which it reaches with server/discover.
	{"gosdk", gosdkStatelessHTTPServe, gosdkLatestHTTPDial},
	// mcp-go's default handler, which decides the era per request, and its
	// client asking for 2026-07-28, which it reaches with server/discover.
	{"mcpgo", mcpgoHTTPServe, mcpgoLatestHTTPDial},
}

// floorModernHTTPServe serves the floor's stateless 2026-07-28 handler.
func floorModernHTTPServe(string) (http.Handler, func(), error) {
	return floor.NewModernHTTPHandler(), func() {}, nil
}

// floorModernHTTPDial returns the floor's 2026-07-28 client, which sends
// nothing until it is called and has no session to close.
func floorModernHTTPDial(_ context.Context, hc *http.Client, url string) (*httpConn, error) {
	c := floor.NewModernHTTPClient(hc, url)
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
		close: func() error { return nil },
	}, nil
}

// mcpkitStatelessHTTPServe serves the mcpkit echo server with the
// handler in its Stateless mode.
func mcpkitStatelessHTTPServe(string) (http.Handler, func(), error) {
	s, err := mcpkitecho.NewServer()
	if err != nil {
		return nil, nil, err
	}
	h := mcpkit.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{Stateless: true})
	return h, func() { h.Close() }, nil
}

// gosdkStatelessHTTPServe serves the go-sdk echo server with
// StreamableHTTPOptions.Stateless, go-sdk's sessionless mode (each POST
// gets a temporary session; GET and DELETE are refused). Everything else
// is the default, so each response is an SSE stream.
func gosdkStatelessHTTPServe(string) (http.Handler, func(), error) {
	s := gosdkecho.NewServer()
	return gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true}), func() {}, nil
}

// gosdkLatestHTTPDial dials with go-sdk's client asking for 2026-07-28
// (also its default).
func gosdkLatestHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return gosdkHTTPDialVersion(ctx, hc, url, latestVersion)
}

// mcpgoLatestHTTPDial dials with mcp-go's client asking for 2026-07-28
// (also its default).
func mcpgoLatestHTTPDial(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
	return mcpgoHTTPDialVersion(ctx, hc, url, latestVersion)
}

// wireCheck is an http.Handler that passes every request on to next and
// checks that it is one of revision 2026-07-28: a POST whose
// MCP-Protocol-Version header is 2026-07-28, with an Mcp-Method header
// (and Mcp-Name for tools/call), and with no Mcp-Session-Id header in
// either direction. It serves a request that fails the check all the
// same, and remembers the first such failure for err. It also counts the
// tools/call requests, so that err can tell whether the calls were made
// over HTTP at all.
type wireCheck struct {
	next  http.Handler
	calls atomic.Int64
	bad   atomic.Pointer[string]
}

// wrap makes next the handler that c checks the requests of, and returns
// c; it is for startHTTPWrapped.
func (c *wireCheck) wrap(next http.Handler) http.Handler {
	c.next = next
	return c
}

// ServeHTTP implements [http.Handler].
func (c *wireCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.Header.Get("Mcp-Method")
	var bad string
	switch v := r.Header.Get("Mcp-Protocol-Version"); {
	case r.Method != http.MethodPost:
		bad = "a " + r.Method + " request"
	case v != latestVersion:
		bad = fmt.Sprintf("a POST (Mcp-Method %q) with MCP-Protocol-Version %q", method, v)
	case r.Header.Get("Mcp-Session-Id") != "":
		bad = fmt.Sprintf("a POST (Mcp-Method %q) with an Mcp-Session-Id", method)
	case method == "":
		bad = "a POST with no Mcp-Method header"
	case method == "tools/call" && r.Header.Get("Mcp-Name") == "":
		bad = "a tools/call POST with no Mcp-Name header"
	}
	if method == "tools/call" {
		c.calls.Add(1)
	}
	c.next.ServeHTTP(w, r)
	if bad == "" && w.Header().Get("Mcp-Session-Id") != "" {
		bad = fmt.Sprintf("a response to a POST (Mcp-Method %q) with an Mcp-Session-Id", method)
	}
	if bad != "" {
		c.bad.CompareAndSwap(nil, &bad)
	}
}

// err reports the first request that failed the check, or else whether
// fewer than calls tools/call requests came.
func (c *wireCheck) err(calls int64) error {
	if bad := c.bad.Load(); bad != nil {
		return fmt.Errorf("not a %s exchange: the server got %s", latestVersion, *bad)
	}
	if n := c.calls.Load(); n < calls {
		return fmt.Errorf("the server got %d tools/call requests, want at least %d", n, calls)
	}
	return nil
}

// checkWire returns a new wireCheck and registers with tb.Cleanup a check
// that tb has not failed already and that chk.err(calls) is nil. Called
// before the server starts, so that its cleanup runs last, the check also
// covers the requests the clients make when they close.
func checkWire(tb testing.TB, calls int64) *wireCheck {
	c := new(wireCheck)
	tb.Cleanup(func() {
		if err := c.err(calls); err != nil && !tb.Failed() {
			tb.Error(err)
		}
	})
	return c
}

// BenchmarkHTTPLatestConcurrent50 is BenchmarkHTTPConcurrent50 at
// protocol revision 2026-07-28, stateless: 50 clients, each driven by its
// own goroutine, call echo until b.N calls are done in total, every call
// one POST with no session. It reports calls/s and the p50 and p99
// latency of one call. Each server is watched by a wireCheck, and the
// benchmark fails unless every HTTP request it got, setup included, was
// of that revision and there were at least as many tools/call requests as
// calls.
//
// Its row mcpkit-jwt is the mcpkit target behind RequireToken with a JWT
// verifier (see jwtTargets), right after the mcpkit row.
func BenchmarkHTTPLatestConcurrent50(b *testing.B) {
	for _, t := range withJWT(b, latestHTTPTargets) {
		b.Run(t.name, func(b *testing.B) {
			calls := int64(b.N) + httpSessions // with one warm-up call per client
			chk := checkWire(b, calls)
			runHTTPConcurrent(b, startHTTPWrapped(b, t, chk.wrap), t)
			if err := chk.err(calls); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestHTTPLatest checks every 2026-07-28 HTTP target once: echo, large
// and tools/list, each request checked by a wireCheck, so that `go test`
// (without -bench) catches a broken setup or a client that falls back to
// the handshake era.
func TestHTTPLatest(t *testing.T) {
	for _, tg := range withJWT(t, latestHTTPTargets) {
		t.Run(tg.name, func(t *testing.T) {
			chk := checkWire(t, 3)
			s := startHTTPWrapped(t, tg, chk.wrap)
			c := s.dial(t, tg)
			for _, f := range []caller{c.echo, c.echo, c.large, c.list} {
				if err := f(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// withJWT returns targets with mcpkit-jwt inserted after mcpkit: the
// latest jwt target of jwtTargets, named as the rows of
// BenchmarkHTTPLatestConcurrent50 are, without "-latest".
func withJWT(tb testing.TB, targets []httpTarget) []httpTarget {
	_, jwt := jwtTargets(tb)
	jwt.name = "mcpkit-jwt"
	i := slices.IndexFunc(targets, func(t httpTarget) bool { return t.name == "mcpkit" })
	return slices.Insert(slices.Clone(targets), i+1, jwt)
}
