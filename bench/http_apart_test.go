//go:build linux

package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
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
	targets := httpTargets
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
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHTTPServeChild$", "-test.count", "1")
	cmd.Env = append(os.Environ(), serveEnv+"="+era+"/"+t.name)
	cmd.Stderr = os.Stderr
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
	done := make(chan error, 1)
	go func() {
		io.Copy(io.Discard, stdout) // the rest of its output
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
	line, err := bufio.NewReader(io.LimitReader(stdout, 4096)).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "serving ")
	if err != nil || !ok {
		stop()
		tb.Fatalf("the server process printed %q: %v", line, err)
	}
	tb.Cleanup(stop)
	pid := cmd.Process.Pid
	return &httpServer{url: url, hc: hc, apart: func() (time.Duration, bool) { return procCPU(pid) }}
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
