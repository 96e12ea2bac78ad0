package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Blocks of BenchmarkHTTPSessionsPaired, in sessions: about 50 ms each.
const (
	setupPairedBlock = 400
	openPairedBlock  = 800
)

// BenchmarkHTTPSessionsPaired measures sessions set up and sessions opened
// by a target against a base in one run: both servers up in this process,
// the two sides taking turns in blocks of sessions (the side going first
// alternating), until each did b.N. Single runs of HTTPSessionSetup and
// HTTPSessionOpen drift by more than the gaps they are read for; blocks
// taken in turns see the same machine.
//
//   - setup/<target>: as HTTPSessionSetup (one session after another:
//     connect, tools/list, close), against the floor.
//   - open/<target>: as HTTPSessionOpen (sessionOpeners goroutines
//     opening and closing sessions), against mcp-go's default client,
//     which opens no GET stream; floor-stream is the floor's client with
//     one, which tells whether any client opening one could keep up, and
//     floor the floor's without.
//
// Each side reports sessions/s and the process's CPU time a session
// (client and server; base- prefixed for the base), and the ratios
// sessions/base and cpu/base.
func BenchmarkHTTPSessionsPaired(b *testing.B) {
	for _, w := range sessionWorkloads() {
		for _, t := range w.targets {
			b.Run(w.name+"/"+t.name, func(b *testing.B) {
				ctx := context.Background()
				sides := pairSessions(b, w, t, func(target httpTarget) func(int) error {
					s := startHTTP(b, target)
					return func(n int) error { return w.run(ctx, target, s, n) }
				})
				reportSessionSides(b, sides)
			})
		}
	}
}

// pairSessions runs b.N sessions of workload w on each of its base and
// t, in turns of w.block: each side's blocks are run by what start
// returns for its target, warmed with one session first. It returns the
// two sides, the base first.
func pairSessions(b *testing.B, w sessionWorkload, t httpTarget, start func(httpTarget) func(int) error) [2]*pairedSide {
	if _, ok := processCPU(); !ok {
		b.Skip("no process CPU time on this system")
	}
	var sides [2]*pairedSide
	for i, target := range []httpTarget{w.base, t} {
		sides[i] = &pairedSide{name: target.name, run: start(target)}
		if err := sides[i].run(1); err != nil { // warm the connections
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	alternate(b, sides, w.block)
	b.StopTimer()
	return sides
}

// sessionWorkload is a workload of the paired session benchmarks: the
// targets it pits against its base, in blocks of block sessions.
type sessionWorkload struct {
	name    string
	base    httpTarget
	targets []httpTarget
	block   int
	run     func(context.Context, httpTarget, *httpServer, int) error
}

// sessionWorkloads are the workloads of BenchmarkHTTPSessionsPaired and
// BenchmarkHTTPSessionsApart.
func sessionWorkloads() []sessionWorkload {
	floor, mcpkit, mcpgo := httpTargets[0], httpTargets[1], httpTargets[3]
	return []sessionWorkload{
		{"setup", floor, []httpTarget{mcpkitNoStream, mcpkit}, setupPairedBlock, setupSessions},
		{"open", mcpgo, []httpTarget{mcpkit, mcpkitNoStream, floorStream, floor}, openPairedBlock, openSessions},
	}
}

// sessionsEnv names what TestHTTPSessionsChild runs: "<workload>/<target>".
const sessionsEnv = "MCPKIT_BENCH_SESSIONS"

// BenchmarkHTTPSessionsApart is BenchmarkHTTPSessionsPaired with each
// side, client and server, in a process of its own, as a program using
// one SDK is: neither side's collector scans the other's heap (which,
// measured, moves the ratios by no more than their spread). The two
// processes take turns in the same blocks; each reports the wall and CPU
// time of its blocks, and the metrics are BenchmarkHTTPSessionsPaired's.
func BenchmarkHTTPSessionsApart(b *testing.B) {
	for _, w := range sessionWorkloads() {
		for _, t := range w.targets {
			b.Run(w.name+"/"+t.name, func(b *testing.B) {
				var children []*sessionsChild
				sides := pairSessions(b, w, t, func(target httpTarget) func(int) error {
					c := startSessionsChild(b, w.name, target)
					children = append(children, c)
					return c.run
				})
				// The children's own wall and CPU time of their timed
				// blocks (the warm-up session left out), not the parent's.
				for i, c := range children {
					sides[i].wall, sides[i].cpu = c.wall-c.warm[0], c.cpu-c.warm[1]
				}
				reportSessionSides(b, sides)
			})
		}
	}
}

// reportSessionSides reports the metrics of BenchmarkHTTPSessionsPaired
// for its two sides, the base first.
func reportSessionSides(b *testing.B, sides [2]*pairedSide) {
	for i, sd := range sides {
		prefix := [2]string{"base-", ""}[i]
		b.ReportMetric(float64(sd.calls)/sd.wall.Seconds(), prefix+"sessions/s")
		b.ReportMetric(float64(sd.cpu.Microseconds())/float64(sd.calls), prefix+"cpu-µs/session")
	}
	f, m := sides[0], sides[1]
	b.ReportMetric((float64(m.calls)/m.wall.Seconds())/(float64(f.calls)/f.wall.Seconds()), "sessions/base")
	if f.cpu > 0 {
		b.ReportMetric((float64(m.cpu)/float64(m.calls))/(float64(f.cpu)/float64(f.calls)), "cpu/base")
	}
}

// sessionsChild is a process running TestHTTPSessionsChild.
type sessionsChild struct {
	in        io.Writer
	out       *bufio.Reader
	wall, cpu time.Duration    // of its blocks so far, as it measured them
	warm      [2]time.Duration // wall and cpu of its first block, the warm-up
	blocks    int
}

// run has the child run a block of n sessions and adds its times.
func (c *sessionsChild) run(n int) error {
	if _, err := fmt.Fprintf(c.in, "%d\n", n); err != nil {
		return err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("the sessions process: %w", err)
	}
	var wall, cpu int64
	if _, err := fmt.Sscanf(line, "ok %d %d", &wall, &cpu); err != nil {
		return fmt.Errorf("the sessions process: %s", strings.TrimSpace(line))
	}
	if c.blocks == 0 {
		c.warm = [2]time.Duration{time.Duration(wall), time.Duration(cpu)}
	}
	c.blocks++
	c.wall += time.Duration(wall)
	c.cpu += time.Duration(cpu)
	return nil
}

// startSessionsChild starts TestHTTPSessionsChild for workload and t in a
// process of its own; tb.Cleanup ends it.
func startSessionsChild(tb testing.TB, workload string, t httpTarget) *sessionsChild {
	tb.Helper()
	cmd, stdin, stdout := startTestChild(tb, "TestHTTPSessionsChild", sessionsEnv+"="+workload+"/"+t.name)
	tb.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &sessionsChild{in: stdin, out: bufio.NewReader(stdout)}
}

// TestHTTPSessionsChild is a process of BenchmarkHTTPSessionsApart: it
// serves the target sessionsEnv names and, for each line "N" on its
// standard input, runs N sessions of the workload with that target's
// client, then prints "ok <wall ns> <cpu ns>" (or the error), until its
// standard input ends. It is skipped when sessionsEnv is not set.
func TestHTTPSessionsChild(t *testing.T) {
	spec := os.Getenv(sessionsEnv)
	if spec == "" {
		t.Skip("a process of BenchmarkHTTPSessionsApart")
	}
	workload, name, _ := strings.Cut(spec, "/")
	var run func(context.Context, httpTarget, *httpServer, int) error
	for _, w := range sessionWorkloads() {
		if w.name == workload {
			run = w.run
		}
	}
	var target *httpTarget
	for _, tg := range append(slices.Clone(httpTargets), mcpkitNoStream, floorStream) {
		if tg.name == name {
			target = &tg
		}
	}
	if run == nil || target == nil {
		t.Fatalf("%s=%q: no such workload or target", sessionsEnv, spec)
	}
	s := startHTTP(t, *target)
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		n, err := strconv.Atoi(strings.TrimSpace(in.Text()))
		if err != nil {
			fmt.Printf("err %v\n", err)
			continue
		}
		cpu0, _ := processCPU()
		start := time.Now()
		err = run(ctx, *target, s, n)
		wall := time.Since(start)
		cpu1, _ := processCPU()
		if err != nil {
			fmt.Printf("err %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Printf("ok %d %d\n", wall.Nanoseconds(), (cpu1 - cpu0).Nanoseconds())
	}
}
