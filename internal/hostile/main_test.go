package hostile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// binDir holds the example binaries built for this run.
var binDir string

func TestMain(m *testing.M) {
	if ran, err := hostile.RunScript(scripts); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "hostile")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var builds sync.Map // package path -> func() (string, error)

// binary builds the command at pkg (such as "./examples/stdio-server",
// relative to the module root) once per run and returns its path.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	f, _ := builds.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		out := filepath.Join(binDir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = "../.."
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
		return out, nil
	}))
	path, err := f.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// startServer starts the stdio-server example under a hostile client.
func startServer(t *testing.T) *hostile.StdioPeer {
	t.Helper()
	p, err := hostile.StartCommand(exec.Command(binary(t, "./examples/stdio-server")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// message is a JSON-RPC message as the tests look at it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parse decodes one message or a batch of them.
func parse(t *testing.T, s string) []message {
	t.Helper()
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var ms []message
		if err := json.Unmarshal([]byte(s), &ms); err != nil {
			t.Fatalf("answer %q: %v", s, err)
		}
		return ms
	}
	var m message
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("answer %q: %v", s, err)
	}
	return []message{m}
}

// answers reads a whole POST answer, JSON or SSE, and returns its messages.
func answers(t *testing.T, resp *http.Response) []message {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if len(b) == 0 {
			return nil
		}
		return parse(t, string(b))
	}
	var ms []message
	for _, line := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
			ms = append(ms, parse(t, d)...)
		}
	}
	return ms
}

// ids lists the ids of ms, as JSON text.
func ids(ms []message) string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m.ID))
	}
	return strings.Join(s, ",")
}

// serveHTTP serves s over Streamable HTTP for the test.
func serveHTTP(t *testing.T, s *mcp.Server, opts *transport.StreamableHTTPOptions) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(s, opts)
	url, closeServer := startHTTPServer(t, h)
	t.Cleanup(func() {
		h.Close()
		closeServer()
	})
	return url
}

// startHTTPServer serves h on 127.0.0.1 with a plain http.Server, as in
// production: httptest's server has a ConnState hook, under which the
// handler keeps GET streams on net/http rather than hijack them (see
// transport.StreamableHTTPOptions.DisableHijack). It returns the URL and a
// function that closes the server.
func startHTTPServer(t testing.TB, h http.Handler) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	return "http://" + l.Addr().String(), func() {
		srv.Close()
		<-served
	}
}

// serveHostile serves a scripted hostile HTTP server for the test.
func serveHostile(t *testing.T, script func(*hostile.Request) hostile.Answer) (*hostile.HTTPServer, string) {
	t.Helper()
	h := &hostile.HTTPServer{Script: script}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return h, srv.URL
}

// checkGoroutines fails the test if, after it, the goroutines do not come
// back to their number before it within a few seconds. Only for tests
// that do not run in parallel.
func checkGoroutines(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("goroutines: %d after the test, %d before\n%s", n, base, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(20 * time.Millisecond) // polling for a bound, not synchronising
		}
	})
}

// newClient is our client, pinned to the handshake era: the attacks here
// go after sessions (initialize, session IDs, expiry, resumption).
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "hostile-test", Version: "0"}, &mcp.ClientOptions{Era: mcp.EraHandshake})
}

// ctxFor is a context bounding one step of a test.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
