package bench

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
func BenchmarkColdStart(b *testing.B) {
	for _, t := range coldTargets {
		b.Run(t.name, func(b *testing.B) {
			path := t.path(b)
			coldStart(b, path) // warm the page cache
			b.ResetTimer()
			var cpu time.Duration
			for range b.N {
				cpu += coldStart(b, path)
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// coldStart starts path, sends initialize, reads the answer and, with the
// timer stopped, shuts the process down. It returns the CPU time the
// process used.
func coldStart(b *testing.B, path string) time.Duration {
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := firstAnswer(stdin, stdout)
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
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// firstAnswer sends initialize and returns the first line read back.
func firstAnswer(stdin io.Writer, stdout io.Reader) ([]byte, error) {
	if _, err := io.WriteString(stdin, initializeLine); err != nil {
		return nil, err
	}
	return bufio.NewReader(stdout).ReadBytes('\n')
}
