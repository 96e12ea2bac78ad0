//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkHTTPApart50 is HTTPConcurrent50 (the handshake era) and
// HTTPLatestConcurrent50 (2026-07-28) with each target's server in a
// process of its own: this test binary run again as TestHTTPServeChild.
// Its server-cpu-µs/op is the server process's CPU time per call (user
// and system, from /proc), and client-cpu-µs/op this process's. In the
// one-process benchmarks the server's figure comes from profile samples
// of its goroutines, which the collector also charges with assists for
// the client's heap and goroutine stacks; here nothing of the client
// is in it.
func BenchmarkHTTPApart50(b *testing.B) {
	for _, era := range []struct {
		name    string
		targets []httpTarget
	}{{"handshake", httpTargets}, {"latest", latestHTTPTargets}} {
		for _, t := range era.targets {
			b.Run(era.name+"/"+t.name, func(b *testing.B) {
				runHTTPConcurrent(b, startHTTPChild(b, era.name, t), t)
			})
		}
	}
}

// serveEnv names the server TestHTTPServeChild runs: "<era>/<target>".
const serveEnv = "MCPKIT_BENCH_SERVE"

// childProfileEnv, when set to a directory, makes each server process of
// BenchmarkHTTPApart50 write a CPU profile there, named after its era
// and target (handshake-mcpkit.prof, say): the server's side alone.
const childProfileEnv = "MCPKIT_BENCH_SERVER_PROFILES"

// TestHTTPServeChild is the server process of BenchmarkHTTPApart50: it
// serves the target serveEnv names, prints "serving URL" on its standard
// output, and stops when its standard input ends. It is skipped when
// serveEnv is not set.
func TestHTTPServeChild(t *testing.T) {
	spec := os.Getenv(serveEnv)
	if spec == "" {
		t.Skip("the server process of BenchmarkHTTPApart50")
	}
	era, name, _ := strings.Cut(spec, "/")
	targets := append(slices.Clone(httpTargets), mcpkitNoStream)
	if era == "latest" {
		targets = latestHTTPTargets
	}
	var target *httpTarget
	for i := range targets {
		if targets[i].name == name {
			target = &targets[i]
		}
	}
	if target == nil {
		t.Fatalf("%s=%q: no such target", serveEnv, spec)
	}
	if dir := os.Getenv(childProfileEnv); dir != "" {
		f, err := os.Create(filepath.Join(dir, era+"-"+name+".prof"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	srv, _, release, err := serveHTTP(*target, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("serving %s/mcp\n", srv.url)
	io.Copy(io.Discard, os.Stdin)
	srv.close()
	release()
}

// startHTTPChild starts the server of t (of era) in a process of its
// own and returns it, with the reader of its CPU time; tb.Cleanup stops
// it.
func startHTTPChild(tb testing.TB, era string, t httpTarget) *httpServer {
	tb.Helper()
	cmd, stdin, stdout := startTestChild(tb, "TestHTTPServeChild", serveEnv+"="+era+"/"+t.name)
	// The first line is read before anything else reads the output: a
	// goroutine discarding it from the start could swallow that line and
	// leave this read waiting for the process to end (which it does only
	// when its standard input closes).
	out := bufio.NewReader(stdout)
	first, err := out.ReadSlice('\n') // at most the reader's 4096 bytes
	line := string(first)
	done := make(chan error, 1)
	go func() {
		io.Copy(io.Discard, out) // the rest of its output
		done <- cmd.Wait()
	}()
	hc := newHTTPClient()
	stop := func() {
		hc.CloseIdleConnections()
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "serving ")
	if err != nil || !ok {
		stop()
		tb.Fatalf("the server process printed %q: %v", line, err)
	}
	tb.Cleanup(stop)
	pid := cmd.Process.Pid
	return &httpServer{url: url, hc: hc, apart: func() (time.Duration, bool) { return procCPU(pid) }}
}

// startTestChild starts this test binary again, running the test named
// test alone with env added to its environment, its standard error this
// process's, and returns it with its standard input and output.
func startTestChild(tb testing.TB, test, env string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$", "-test.count", "1")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, stdout := startPiped(tb, cmd)
	return cmd, stdin, stdout
}

// startPiped starts cmd with pipes to its standard input and from its
// standard output, and returns them.
func startPiped(tb testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return stdin, stdout
}

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// 100 on Linux everywhere this runs.
const clockTick = 10 * time.Millisecond

// procCPU returns the user and system CPU time of process pid so far,
// from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * clockTick, true
}

// apartPairedBlock is the number of calls one side makes before the
// other side's turn in BenchmarkHTTPPaired50.
const apartPairedBlock = 4000

// BenchmarkHTTPPaired50 compares mcpkit with the floor over Streamable
// HTTP, 50 sessions, both servers in processes of their own (as in
// BenchmarkHTTPApart50) and both up at once: "handshake" pairs the
// targets of httpTargets, "latest" those of latestHTTPTargets. The sides
// take turns, a block of apartPairedBlock calls on one (shared out among
// its 50 sessions as in HTTPConcurrent50), then a block on the other, the
// side that goes first alternating from turn to turn, until each has made
// b.N calls. A shared machine's drift, which moves runs a few seconds
// apart by a tenth or more, so falls on both sides alike, and the ratios
// it reports are what the targets of the performance issue compare.
//
// It reports, for mcpkit and (with the prefix floor-) for the floor: the
// calls per second of the time spent in its blocks, its server process's
// CPU time per call (server-cpu-µs/op) and this process's during its
// blocks (client-cpu-µs/op); then calls/floor, the ratio of the calls/s,
// and server-cpu/floor, the ratio of server CPU per call.
func BenchmarkHTTPPaired50(b *testing.B) {
	for _, era := range []struct {
		name    string
		targets []httpTarget
		more    []httpTarget // targets that neither list has
	}{{"handshake", httpTargets, []httpTarget{mcpkitNoStream}}, {"latest", latestHTTPTargets, nil}} {
		floor := era.targets[0]
		for _, t := range append([]httpTarget{era.targets[1]}, era.more...) {
			b.Run(era.name+"/"+t.name, func(b *testing.B) {
				runHTTPPairedApart(b, era.name, floor, t)
			})
		}
	}
}

// runHTTPPairedApart is BenchmarkHTTPPaired50 for the targets floor and t
// of era.
func runHTTPPairedApart(b *testing.B, era string, floor, t httpTarget) {
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	type side struct {
		pairedSide
		server    *httpServer
		serverCPU time.Duration
	}
	sides := [2]*side{{pairedSide: pairedSide{name: floor.name}}, {pairedSide: pairedSide{name: t.name}}}
	for i, target := range []httpTarget{floor, t} {
		s := startHTTPChild(b, era, target)
		sides[i].server = s
		for range httpSessions {
			c := s.dial(b, target)
			if err := c.echo(context.Background()); err != nil {
				b.Fatal(err)
			}
			sides[i].conns = append(sides[i].conns, c)
		}
	}
	var server0 [2]time.Duration
	for i, sd := range sides {
		cpu, ok := sd.server.apart()
		if !ok {
			b.Skip("no CPU time of the server process")
		}
		server0[i] = cpu
	}
	b.ResetTimer()
	alternate(b, [2]*pairedSide{&sides[0].pairedSide, &sides[1].pairedSide}, apartPairedBlock)
	b.StopTimer()
	// A server is idle while the other side's blocks run, so its CPU
	// time over the whole run is that of its own blocks.
	for i, sd := range sides {
		cpu, _ := sd.server.apart()
		sd.serverCPU = cpu - server0[i]
	}
	for i, sd := range sides {
		prefix := [2]string{"floor-", ""}[i]
		b.ReportMetric(float64(sd.calls)/sd.wall.Seconds(), prefix+"calls/s")
		b.ReportMetric(float64(sd.serverCPU.Microseconds())/float64(sd.calls), prefix+"server-cpu-µs/op")
		b.ReportMetric(float64(sd.cpu.Microseconds())/float64(sd.calls), prefix+"client-cpu-µs/op")
	}
	f, m := sides[0], sides[1]
	b.ReportMetric((float64(m.calls)/m.wall.Seconds())/(float64(f.calls)/f.wall.Seconds()), "calls/floor")
	if f.serverCPU > 0 {
		b.ReportMetric((float64(m.serverCPU)/float64(m.calls))/(float64(f.serverCPU)/float64(f.calls)), "server-cpu/floor")
	}
}
