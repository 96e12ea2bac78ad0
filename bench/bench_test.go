// Package bench compares mcpkit with the other Go MCP SDKs and with a
// hand-written JSON-RPC floor. See README.md for what each benchmark
// measures and how to run them.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// message is the text every benchmark sends to the echo tool and expects
// back.
const message = "hello, world"

// pinnedVersion is the MCP protocol revision every SDK is asked to speak,
// so that all of them do the same work per call: the initialize-based
// revision that mcpkit implements. The "-latest" targets leave go-sdk and
// mcp-go at their default, the stateless 2026-07-28 revision, which sends
// more per request.
const pinnedVersion = "2025-11-25"

// concurrency is the number of goroutines sharing one client session in
// BenchmarkConcurrent64.
const concurrency = 64

// caller makes one tools/call round trip of the echo tool with [message]
// and checks that the message came back.
type caller func(ctx context.Context) error

// setup connects a client to an echo server, registers the teardown with
// tb.Cleanup (which must leave no goroutine or child process behind) and
// returns the client's caller.
type setup func(tb testing.TB) caller

// target is one thing to benchmark: a name for benchstat and its setup.
type target struct {
	name  string
	setup setup
}

// inProcessTargets are the targets of BenchmarkInProcess and
// BenchmarkConcurrent64: client and server in this process.
var inProcessTargets = []target{
	{"floor", floorPipe},
	{"mcpkit-inmem", mcpkitInMemory},
	{"mcpkit-inmem-struct", mcpkitInMemoryStructured},
	{"mcpkit-pipe", mcpkitPipe},
	{"gosdk-inmem", gosdkInMemory},
	{"gosdk-pipe", gosdkPipe},
	{"mcpgo-inproc", mcpgoInProcess},
	{"mcpgo-pipe", mcpgoPipe},
}

// latestTargets are extra BenchmarkInProcess targets at the stateless
// 2026-07-28 revision: the other SDKs' default, and mcpkit's client
// at its default (EraAuto), which finds that revision, against the same
// servers; the floor's, its client of that revision against its server.
var latestTargets = []target{
	{"floor-latest", floorPipeLatest},
	{"mcpkit-pipe-latest", mcpkitPipeLatest},
	{"gosdk-pipe-latest", gosdkPipeLatest},
	{"mcpgo-pipe-latest", mcpgoPipeLatest},
}

// stdioTargets are the targets of BenchmarkStdio: the server is a child
// process built from cmd/<sdk>-echo-server, spoken to over its stdin and
// stdout.
var stdioTargets = []target{
	{"floor", floorStdio},
	{"mcpkit", mcpkitStdio},
	{"gosdk", gosdkStdio},
	{"mcpgo", mcpgoStdio},
}

// BenchmarkInProcess measures one sequential tools/call round trip with
// client and server in this process.
func BenchmarkInProcess(b *testing.B) {
	for _, t := range append(inProcessTargets[:len(inProcessTargets):len(inProcessTargets)], latestTargets...) {
		b.Run(t.name, func(b *testing.B) { runSequential(b, t.setup) })
	}
}

// BenchmarkStdio measures one sequential tools/call round trip to a server
// running as a child process, over its stdin and stdout, and reports the
// p50 and p99 latency of one call.
func BenchmarkStdio(b *testing.B) {
	for _, t := range stdioTargets {
		b.Run(t.name, func(b *testing.B) { runSequentialLatency(b, t.setup) })
	}
}

// BenchmarkConcurrent64 measures the throughput of 64 goroutines calling
// echo as fast as they can over one shared client session (in-process).
// ns/op is wall time per call across all goroutines.
func BenchmarkConcurrent64(b *testing.B) {
	for _, t := range inProcessTargets {
		b.Run(t.name, func(b *testing.B) { runConcurrent(b, t.setup, concurrency) })
	}
}

// runSequential times back-to-back calls on one session.
func runSequential(b *testing.B, s setup) {
	call := s(b)
	ctx := context.Background()
	if err := call(ctx); err != nil { // warm up outside the timed loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b)
}

// runSequentialLatency is runSequential that also reports the p50 and
// p99 latency of one call (reading the clock twice a call costs well
// under 1% of a call to a child process).
func runSequentialLatency(b *testing.B, s setup) {
	call := s(b)
	ctx := context.Background()
	if err := call(ctx); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportRate(b)
	reportLatency(b, lat)
}

// reportLatency reports the p50 and p99 of lat, which it sorts.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// runConcurrent times b.N calls shared out among n goroutines that use
// one session.
func runConcurrent(b *testing.B, s setup, n int) {
	call := s(b)
	ctx := context.Background()
	if err := call(ctx); err != nil {
		b.Fatal(err)
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	b.ReportAllocs()
	b.ResetTimer()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := call(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := firstErr.Load(); err != nil {
		b.Fatal(*err)
	}
	reportRate(b)
}

// reportRate reports calls per second of timed wall time.
func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "calls/s")
	}
}

// TestEcho checks every target once, so that `go test` (without -bench)
// catches a broken setup.
func TestEcho(t *testing.T) {
	for _, group := range []struct {
		name    string
		targets []target
	}{{"InProcess", inProcessTargets}, {"Latest", latestTargets}, {"Stdio", stdioTargets}} {
		for _, tg := range group.targets {
			t.Run(group.name+"/"+tg.name, func(t *testing.T) {
				call := tg.setup(t)
				for range 3 {
					if err := call(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// TestConcurrentEcho checks that every in-process target survives
// concurrent callers on one session.
func TestConcurrentEcho(t *testing.T) {
	for _, tg := range inProcessTargets {
		t.Run(tg.name, func(t *testing.T) {
			call := tg.setup(t)
			var wg sync.WaitGroup
			errs := make(chan error, concurrency)
			for range concurrency {
				wg.Go(func() {
					for range 10 {
						if err := call(t.Context()); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// checkText returns an error unless got is [message].
func checkText(got string) error {
	if got != message {
		return fmt.Errorf("echo returned %q, want %q", got, message)
	}
	return nil
}

// Server binaries are built once per test process into binDir.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// TestMain removes the built server binaries after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// serverBinary returns the path of the built cmd/<name>-echo-server,
// building all of cmd/... with `go build` on first use.
func serverBinary(tb testing.TB, name string) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "mcpkit-bench-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/...", exampleServer)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/... %s: %v\n%s", exampleServer, err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return filepath.Join(binDir, name+"-echo-server")
}

// exampleServer is mcpkit's example stdio server, built with cmd/... into
// the same directory, as stdio-server.
const exampleServer = "github.com/mcpkit/mcpkit/examples/stdio-server"

// serverCommand returns an unstarted command running the named server
// binary, set up so that it dies with this process (see procattr_*.go) and
// reports its errors on our stderr.
func serverCommand(tb testing.TB, name string) *exec.Cmd {
	cmd := exec.Command(serverBinary(tb, name))
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	return cmd
}
