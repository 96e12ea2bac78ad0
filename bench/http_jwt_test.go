package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// jwtTokenTTL is the lifetime of the access token of the jwt targets,
// far longer than a benchmark run.
const jwtTokenTTL = time.Hour

// jwtTargets makes the authenticated mcpkit targets: the mcpkit echo
// server behind auth.RequireToken with an auth.JWTVerifier (its defaults:
// key set fetched once and cached, verified-token cache on) trusting an
// authtest authorization server, which jwtTargets starts and tb's cleanup
// stops. Each server's resource is its endpoint URL, and authtest mints
// one ES256 access token for that audience when the server starts; the
// client sends it as "Authorization: Bearer" on every request
// (StreamableClientTransport.Header). handshake is the client of
// 2025-11-25 against the default handler, as the mcpkit target of
// httpTargets; latest is the default client (EraAuto), which finds
// 2026-07-28, as mcpkit-latest.
func jwtTargets(tb testing.TB) (handshake, latest httpTarget) {
	j := &jwtIssuer{is: authtest.NewServer(nil), tokens: make(map[string]string)}
	tb.Cleanup(j.is.Close)
	handshake = httpTarget{"mcpkit-jwt", j.serve, func(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
		tok, err := j.token(url)
		if err != nil {
			return nil, err
		}
		return mcpkitHTTPDialWith(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc, Header: bearer(tok)})
	}}
	latest = httpTarget{"mcpkit-jwt-latest", j.serve, func(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
		tok, err := j.token(url)
		if err != nil {
			return nil, err
		}
		return mcpkitHTTPDialEra(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc, Header: bearer(tok)},
			mcpkit.EraAuto, mcpkit.Version20260728)
	}}
	return handshake, latest
}

// jwtIssuer is the authorization server of the jwt targets and the token
// it minted for each server, by endpoint URL.
type jwtIssuer struct {
	is     *authtest.Server
	mu     sync.Mutex
	tokens map[string]string
}

// serve is an httpTarget's serve: the mcpkit echo server's default
// Streamable HTTP handler behind RequireToken, for the resource url. It
// mints the token the clients of url send.
func (j *jwtIssuer) serve(url string) (http.Handler, func(), error) {
	v, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: j.is.URL, Audience: url})
	if err != nil {
		return nil, nil, err
	}
	guard, err := auth.RequireToken(&auth.ResourceOptions{Verifier: v, Resource: url})
	if err != nil {
		return nil, nil, err
	}
	tok, err := j.is.Token(authtest.TokenRequest{Subject: "bench", Resource: url, TTL: jwtTokenTTL})
	if err != nil {
		return nil, nil, err
	}
	s, err := mcpkitecho.NewServer()
	if err != nil {
		return nil, nil, err
	}
	h := mcpkit.NewStreamableHTTPHandler(s, nil)
	j.mu.Lock()
	j.tokens[url] = tok
	j.mu.Unlock()
	return guard(h), func() { h.Close() }, nil
}

// token returns the token minted for the server at url.
func (j *jwtIssuer) token(url string) (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	tok, ok := j.tokens[url]
	if !ok {
		return "", fmt.Errorf("no token for %s", url)
	}
	return tok, nil
}

// bearer returns the header that sends tok as a bearer token.
func bearer(tok string) http.Header {
	return http.Header{"Authorization": {"Bearer " + tok}}
}

// TestHTTPJWT checks the jwt targets once: echo, large, tools/list and
// close with the token, and that the server refuses a request without
// it or with a token minted for another audience.
func TestHTTPJWT(t *testing.T) {
	handshake, latest := jwtTargets(t)
	for _, tg := range []httpTarget{handshake, latest} {
		t.Run(tg.name, func(t *testing.T) {
			s := startHTTP(t, tg)
			c := s.dial(t, tg)
			for _, f := range []caller{c.echo, c.echo, c.large, c.list} {
				if err := f(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			o := authtest.NewServer(nil)
			defer o.Close()
			other, err := o.Token(authtest.TokenRequest{Subject: "bench", Resource: s.url, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				auth string
			}{
				{"no token", ""},
				{"another issuer's token", "Bearer " + other},
			} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url,
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", latestVersion)
				req.Header.Set("Mcp-Method", "ping")
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				resp, err := s.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401", tc.name, resp.StatusCode)
				}
			}
		})
	}
}

// jwtPairedBlock is the number of calls one side makes before the other
// side's turn in BenchmarkHTTPJWTPaired.
const jwtPairedBlock = 2000

// BenchmarkHTTPJWTPaired compares, in one process and close together in
// time, an unauthenticated mcpkit target with its jwt counterpart:
// "handshake" pairs mcpkit with mcpkit-jwt, "latest" mcpkit-latest with
// mcpkit-jwt-latest (see BenchmarkHTTPConcurrent50). Both servers run at
// once, each with 50 client sessions, and the sides take turns: a block
// of jwtPairedBlock calls on one, shared out among its 50 sessions as in
// BenchmarkHTTPConcurrent50, then a block on the other, the side that
// goes first alternating from turn to turn, until each side has made b.N
// calls. So a shared machine's drift, which moves the throughput of
// runs a few seconds apart by a third, falls on both sides alike.
//
// It reports for each side (plain-, jwt-) the calls per second of the
// time spent in its blocks, the process's CPU time per call (cpu-µs) and
// the server's (server-cpu-µs, see cpuMeter), and the ratios jwt/plain of
// the time per call (the inverse of the ratio of calls/s), of process CPU
// and of server CPU.
func BenchmarkHTTPJWTPaired(b *testing.B) {
	jwt, jwtLatest := jwtTargets(b)
	plainLatest := httpTarget{"mcpkit-latest", mcpkitHTTPServe, mcpkitModernHTTPDial}
	for _, pair := range []struct {
		name         string
		plain, authd httpTarget
	}{
		{"handshake", httpTarget{"mcpkit", mcpkitHTTPServe, mcpkitHTTPDial}, jwt},
		{"latest", plainLatest, jwtLatest},
	} {
		b.Run(pair.name, func(b *testing.B) {
			runHTTPPaired(b, pair.plain, pair.authd)
		})
	}
}

// pairedSide is one side of BenchmarkHTTPJWTPaired: its sessions and what
// its blocks took.
type pairedSide struct {
	name  string
	conns []*httpConn
	// run, if not nil, does a block of n in place of n echo calls
	// shared out among conns.
	run   func(n int) error
	calls int
	wall  time.Duration
	cpu   time.Duration
}

// runHTTPPaired is BenchmarkHTTPJWTPaired for the targets plain and
// authd.
func runHTTPPaired(b *testing.B, plain, authd httpTarget) {
	sides := [2]*pairedSide{{name: plain.name}, {name: authd.name}}
	for i, t := range []httpTarget{plain, authd} {
		s := startHTTP(b, t)
		for range httpSessions {
			c := s.dial(b, t)
			if err := c.echo(context.Background()); err != nil {
				b.Fatal(err)
			}
			sides[i].conns = append(sides[i].conns, c)
		}
	}
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	var prof bytes.Buffer
	profiling := pprof.StartCPUProfile(&prof) == nil
	b.ResetTimer()
	alternate(b, sides, jwtPairedBlock)
	b.StopTimer()
	if profiling {
		pprof.StopCPUProfile()
	}
	var server [2]time.Duration
	for i, side := range sides {
		prefix := [2]string{"plain-", "jwt-"}[i]
		b.ReportMetric(float64(side.calls)/side.wall.Seconds(), prefix+"calls/s")
		b.ReportMetric(float64(side.cpu.Microseconds())/float64(side.calls), prefix+"cpu-µs/op")
		if profiling {
			d, _, err := labelledCPU(prof.Bytes(), serverLabelKey, side.name)
			if err != nil {
				b.Fatalf("reading the CPU profile: %v", err)
			}
			server[i] = d
			b.ReportMetric(float64(d.Microseconds())/float64(side.calls), prefix+"server-cpu-µs/op")
		}
	}
	b.ReportMetric(float64(sides[1].wall)/float64(sides[0].wall), "jwt/plain-time")
	b.ReportMetric(float64(sides[1].cpu)/float64(sides[0].cpu), "jwt/plain-cpu")
	if profiling && server[0] > 0 {
		b.ReportMetric(float64(server[1])/float64(server[0]), "jwt/plain-server-cpu")
	}
}

// alternate makes b.N calls (or whatever each side's run does b.N of) on
// each side in turns of block calls (the side that goes first
// alternating from turn to turn), adding to each side the wall and
// process CPU time of its blocks.
func alternate(b *testing.B, sides [2]*pairedSide, block int) {
	for turn := 0; sides[0].calls < b.N || sides[1].calls < b.N; turn++ {
		for k := range 2 {
			side := sides[(turn+k)%2]
			n := min(block, b.N-side.calls)
			if n <= 0 {
				continue
			}
			cpu0, _ := processCPU()
			start := time.Now()
			run := side.run
			if run == nil {
				run = func(n int) error { return callBlock(side.conns, n) }
			}
			if err := run(n); err != nil {
				b.Fatal(err)
			}
			side.wall += time.Since(start)
			cpu1, _ := processCPU()
			side.cpu += cpu1 - cpu0
			side.calls += n
		}
	}
}

// callBlock makes n echo calls shared out among conns, one goroutine
// each, and returns the first error.
func callBlock(conns []*httpConn, n int) error {
	ctx := context.Background()
	return shareOut(len(conns), n, func(i int) error { return conns[i].echo(ctx) })
}

// shareOut runs do n times in all on workers goroutines, worker i
// passing i, and returns the first error; a worker stops at its first.
func shareOut(workers, n int, do func(worker int) error) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	for i := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := do(i); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := firstErr.Load(); err != nil {
		return *err
	}
	return nil
}
