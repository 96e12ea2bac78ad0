package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// TestTypeScriptClientAgainstOurHTTPServer runs the scenario of
// TestTypeScriptClientAgainstOurServer with the TypeScript SDK's HTTP
// client transports against the example server serving HTTP: Streamable
// HTTP with each response mode, stateless, and the legacy HTTP+SSE
// transport. With Streamable HTTP the client ends by terminating its
// session (DELETE).
func TestTypeScriptClientAgainstOurHTTPServer(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	server := buildExampleServer(ctx, t)
	for _, tc := range []struct {
		name  string
		flags []string
		mode  string // ts_client.mjs transport flag
		path  string
	}{
		{"streamable auto", nil, "--url", "/mcp"},
		{"streamable json", []string{"-response", "json"}, "--url", "/mcp"},
		{"streamable sse", []string{"-response", "sse"}, "--url", "/mcp"},
		{"streamable stateless", []string{"-stateless"}, "--url", "/mcp"},
		{"legacy sse", nil, "--sse", "/sse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := startExampleHTTPServer(ctx, t, server, tc.flags...)
			start := time.Now()
			sum := runTSClient(ctx, t, modules, exampleClientOptions(), tc.mode, base+tc.path)
			t.Logf("TypeScript client over %s ran in %v", tc.name, time.Since(start).Round(time.Millisecond))
			checkExampleSummary(t, sum, slices.Contains(tc.flags, "-stateless"))
		})
	}
}

// startExampleHTTPServer starts the example server binary serving HTTP on
// a free loopback port and returns its base URL; the server is stopped
// when the test ends.
func startExampleHTTPServer(ctx context.Context, t *testing.T, bin string, flags ...string) string {
	t.Helper()
	args := append([]string{"-http", "127.0.0.1:0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// The first line on stderr names the address:
	// "stdio-server: serving http://127.0.0.1:PORT/mcp (Streamable HTTP) ...".
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("example server banner: %v", err)
	}
	i, j := strings.Index(line, "http://"), strings.Index(line, "/mcp")
	if i < 0 || j < i {
		t.Fatalf("example server banner %q", line)
	}
	go func() { // keep draining, so the server never blocks on stderr
		buf := make([]byte, 4096)
		for {
			if _, err := stderr.Read(buf); err != nil {
				return
			}
		}
	}()
	return line[i:j]
}

// TestOurHTTPClientAgainstServerEverything runs the scenario of
// TestOurClientAgainstServerEverything over HTTP, against
// server-everything's Streamable HTTP server, its legacy HTTP+SSE server,
// and the legacy server again reached through the Streamable HTTP
// client's automatic fallback.
func TestOurHTTPClientAgainstServerEverything(t *testing.T) {
	for _, tc := range []struct {
		name, mode, path string
		legacy           bool // use SSEClientTransport
	}{
		{"streamable", "streamableHttp", "/mcp", false},
		{"legacy sse", "sse", "/sse", true},
		{"legacy sse by fallback", "sse", "/sse", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runServerEverything(t, !tc.legacy && tc.mode == "streamableHttp", func(t *testing.T, pkgDir string, stderr *syncBuffer) transport.Transport {
				base := startNodeHTTPServer(t, pkgDir, tc.mode, stderr)
				if tc.legacy {
					return &transport.SSEClientTransport{URL: base + tc.path}
				}
				return &transport.StreamableClientTransport{URL: base + tc.path}
			})
		})
	}
}

// startNodeHTTPServer runs server-everything in the given HTTP mode on a
// free loopback port (a preloaded shim keeps it off other interfaces),
// waits until it accepts connections, and returns its base URL. The
// process group is killed when the test ends.
func startNodeHTTPServer(t *testing.T, pkgDir, mode string, stderr *syncBuffer) string {
	t.Helper()
	port := freePort(t)
	preload, err := filepath.Abs("loopback.cjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "--require", preload, filepath.Join(pkgDir, "dist", "index.js"), mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), envMarkerName+"="+envMarkerValue)
	cmd.Stderr = stderr
	cmd.Stdout = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s: %v\nstderr:\n%s", mode, addr, err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for a process to listen
	}
	return fmt.Sprintf("http://%s", addr)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
