package bench

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// initializeLine is the first message of a session: an initialize request
// at [pinnedVersion], one line.
const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + pinnedVersion +
	`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

// coldTarget is a stdio server binary for BenchmarkColdStart.
type coldTarget struct {
	name string
	path func(tb testing.TB) string
}

func echoServer(name string) func(tb testing.TB) string {
	return func(tb testing.TB) string { return serverBinary(tb, name) }
}

// coldTargets are the servers of BenchmarkColdStart: the echo servers of
// BenchmarkStdio and mcpkit's example server, which registers every kind
// of feature.
var coldTargets = []coldTarget{
	{"floor", echoServer("floor")},
	{"mcpkit", echoServer("mcpkit")},
	{"mcpkit-example", func(tb testing.TB) string {
		serverBinary(tb, "mcpkit")
		return filepath.Join(binDir, "stdio-server")
	}},
	{"gosdk", echoServer("gosdk")},
	{"mcpgo", echoServer("mcpgo")},
}

// BenchmarkColdStart measures the time from starting a server process to
// reading its answer to initialize, the first request of a session:
// process start, package initialisation, the server's setup and one
// request. Shutting the process down (closing its stdin and waiting for
// it) is outside the timed part. cpu-µs/op is the CPU time (user and
// system) of the whole child process, shutdown included: on a busy
// machine it varies much less than the elapsed time.
//
// BenchmarkColdStart/target runs first: see [benchmarkColdTarget].
func BenchmarkColdStart(b *testing.B) {
	b.Run("target", benchmarkColdTarget)
	for _, t := range coldTargets {
		b.Run(t.name, func(b *testing.B) {
			path := t.path(b)
			coldStart(b, path) // warm the page cache
			b.ResetTimer()
			var cpu time.Duration
			for range b.N {
				_, c := coldStart(b, path)
				cpu += c
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// coldStart starts path, sends initialize, reads the answer and, with the
// timer stopped, shuts the process down. It returns the time from before
// starting the process to the answer, and the CPU time the process used.
func coldStart(b *testing.B, path string) (toAnswer, cpu time.Duration) {
	start := time.Now()
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	stdin, stdout := startPiped(b, cmd)
	line, err := firstAnswer(stdin, stdout)
	toAnswer = time.Since(start)
	b.StopTimer()
	stdin.Close()
	io.Copy(io.Discard, stdout)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(line, []byte(`"result"`)) || !bytes.Contains(line, []byte(`"id":1`)) {
		b.Fatalf("%s answered initialize with %s", path, line)
	}
	b.StartTimer()
	return toAnswer, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// firstAnswer sends initialize and returns the first line read back.
func firstAnswer(stdin io.Writer, stdout io.Reader) ([]byte, error) {
	if _, err := io.WriteString(stdin, initializeLine); err != nil {
		return nil, err
	}
	return bufio.NewReader(stdout).ReadBytes('\n')
}

// benchmarkColdTarget measures, in one run, the three numbers of the cold
// start target: the floor (cmd/floor-echo-server), the floor with
// jsonschema-go linked in (cmd/jsonschema-init) and mcpkit
// (cmd/mcpkit-echo-server). Every iteration starts each of the three once,
// in an order shuffled anew, so that they share the machine's state (load,
// CPU frequency) and none always follows the same one. ns/op is the three
// times to the answer together.
//
// The binaries started are copies of those go build wrote: the linker
// writes its output through a memory mapping, which leaves the file in
// the page cache in small pieces (folios), and a process started from it
// pays for more page faults on its code than one started from a file
// written in one go, as an installed binary is (or one read back from
// disk). On the machine of issue 20 that was worth a few hundred µs for
// the bigger binary: enough to hide what this benchmark measures.
//
// The metrics are medians over the iterations:
//
//   - floor-µs, jsonschema-µs, mcpkit-µs: each server's time to the answer;
//   - jsinit-µs: jsonschema-init minus the floor in the same iteration,
//     jsonschema-go's own initialisation;
//   - ours-µs: mcpkit minus jsonschema-init in the same iteration, that is
//     mcpkit - floor - jsinit: the time that is mcpkit's own. Issue 20's
//     target is at most 400 µs: mcpkit's time to the first answer is at
//     most the floor's, plus jsonschema-go's initialisation (mcpkit keeps
//     that dependency), plus 400 µs.
//   - jsinit-cpu-µs, ours-cpu-µs: the same differences of the CPU time
//     (user and system) of the whole process, exit included, which a busy
//     machine changes much less than the elapsed time. It counts every
//     thread of the process (the runtime's too) and the shutdown after
//     the answer, and not the time spent waiting.
//
// Medians of paired differences, not differences of means: on a shared
// machine a few starts are delayed by milliseconds, which would move a
// mean but not a median.
func benchmarkColdTarget(b *testing.B) {
	paths := [...]string{
		installed(b, serverBinary(b, "floor")),
		installed(b, filepath.Join(binDir, "jsonschema-init")),
		installed(b, serverBinary(b, "mcpkit")),
	}
	for _, p := range paths {
		coldStart(b, p) // warm the page cache
	}
	var times, cpus [len(paths)][]time.Duration
	order := []int{0, 1, 2}
	rnd := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for range b.N {
		rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, j := range order {
			t, cpu := coldStart(b, paths[j])
			times[j] = append(times[j], t)
			cpus[j] = append(cpus[j], cpu)
		}
	}
	b.StopTimer()
	floor, js, mcpkit := times[0], times[1], times[2]
	b.ReportMetric(medianMicros(floor), "floor-µs")
	b.ReportMetric(medianMicros(js), "jsonschema-µs")
	b.ReportMetric(medianMicros(mcpkit), "mcpkit-µs")
	b.ReportMetric(medianMicros(pairDiff(js, floor)), "jsinit-µs")
	b.ReportMetric(medianMicros(pairDiff(mcpkit, js)), "ours-µs")
	b.ReportMetric(medianMicros(pairDiff(cpus[1], cpus[0])), "jsinit-cpu-µs")
	b.ReportMetric(medianMicros(pairDiff(cpus[2], cpus[1])), "ours-cpu-µs")
}

// installed copies the binary at path into a directory of tb's, as an
// installer would (see [benchmarkColdTarget]), and returns the copy's
// path.
func installed(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dst := filepath.Join(tb.TempDir(), filepath.Base(path))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// pairDiff returns a[i] - b[i] for every i.
func pairDiff(a, b []time.Duration) []time.Duration {
	d := make([]time.Duration, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// medianMicros returns the median of ds in microseconds.
func medianMicros(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	return float64(m) / float64(time.Microsecond)
}
