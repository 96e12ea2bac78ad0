package redisstore

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// needRedisServer skips t when redis-server is not on PATH, or fails it
// with CI=true, where .ci/run installs it.
func needRedisServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redisstore: %v (CI installs it)", err)
		}
		t.Skipf("redisstore: %v", err)
	}
}

// goBuild builds the package pkg of this module into t's temporary
// directory and returns the binary.
func goBuild(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and readers,
// which may wait for what it holds to change.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed by the next Write; nil until waited on
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

// waitFor waits up to d for cond to hold of the buffer's text, and
// reports whether it did.
func (s *syncBuffer) waitFor(d time.Duration, cond func(string) bool) bool {
	timeout := time.After(d)
	for {
		s.mu.Lock()
		if cond(s.b.String()) {
			s.mu.Unlock()
			return true
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			return false
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// childProc is a command a test started.
type childProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startListening starts bin with args, dying with the test binary, and
// waits for its first line on standard output, "listening on URL": it
// returns the process and URL. The process gets SIGTERM, then SIGKILL
// after 10 s, when the test ends.
func startListening(t *testing.T, bin string, args ...string) (*childProc, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &childProc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for first := true; sc.Scan(); first = false {
			if first {
				lines <- sc.Text()
			}
		}
		close(lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case line, ok := <-lines:
		if u, found := strings.CutPrefix(line, "listening on "); ok && found {
			return p, u
		}
		<-p.exited
		t.Fatalf("%s did not announce its URL (first line %q, %v); stderr:\n%s", filepath.Base(bin), line, p.err, p.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start within 60s; stderr:\n%s", filepath.Base(bin), p.stderr)
	}
	return nil, ""
}

// stop sends SIGTERM and waits for the process, killing it after 10 s
// (and failing t).
func (p *childProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not exit within 10s of SIGTERM; stderr:\n%s", p.cmd.Path, p.stderr)
	}
}

// pidLine matches the lines of the replicas example naming a child.
var pidLine = regexp.MustCompile(`pid (\d+)`)

// pids returns the process IDs s names ("pid N").
func pids(s string) []int {
	var res []int
	for _, m := range pidLine.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		res = append(res, n)
	}
	return res
}

// alive reports whether a process with the ID runs (or is a zombie).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// keyFile writes a key file of one key (the -keys flag of the cmd
// servers) in a temporary directory and returns its path.
func keyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(hex.EncodeToString([]byte(strings.Repeat("k", 32)))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
