package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// helperEnv selects a helper-process mode; see runHelper.
const helperEnv = "MCPKIT_TRANSPORT_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper runs the test binary as an MCP-ish server over StdioTransport.
//
//	echo     answers each request with its params as the result; method
//	         "crash" exits with status 4; exits 0 at end of input
//	exit3    reads until end of input, then exits with status 3
//	linger   sends a "ready" notification, reads until end of input, then
//	         keeps running (SIGTERM's default action ends it)
//	stubborn like linger, but ignores SIGTERM first, so only SIGKILL ends it
//	die3     reads one message, writes 8 KiB and then "fatal: out of
//	         cheese" to standard error, and exits with status 3
//	bigstdio serves a jsonrpc.Conn with a 50ms drain timeout, answering
//	         every request with a 1 MiB result, and exits 0 once it ends
func runHelper(mode string) int {
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	ctx := context.Background()
	conn, err := (&StdioTransport{}).Connect(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	if mode == "linger" || mode == "stubborn" {
		if err := conn.Write(ctx, &jsonrpc.Request{Method: "ready"}); err != nil {
			return 1
		}
	}
	if mode == "bigstdio" {
		big := json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)
		c := jsonrpc.NewConn(conn, &jsonrpc.ConnOptions{
			DrainTimeout: 50 * time.Millisecond,
			Handler: jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) {
				return big, nil
			}),
		})
		c.Start()
		c.Wait()
		return 0
	}
	if mode == "die3" {
		conn.Read(ctx)
		os.Stderr.WriteString(strings.Repeat("filler line\n", 8<<10/12))
		os.Stderr.WriteString("fatal: out of cheese\n")
		return 3
	}
	for {
		m, err := conn.Read(ctx)
		var de *jsonrpc.DecodeError
		switch {
		case errors.As(err, &de):
			conn.Write(ctx, de)
			continue
		case err == io.EOF:
			switch mode {
			case "exit3":
				return 3
			case "linger", "stubborn":
				time.Sleep(time.Hour)
			}
			return 0
		case err != nil:
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() || mode != "echo" {
			continue
		}
		if req.Method == "crash" {
			return 4
		}
		result := req.Params
		if result == nil {
			result = json.RawMessage("{}")
		}
		if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: result}); err != nil {
			return 1
		}
	}
}

// helperCommand returns a command running this test binary in mode.
func helperCommand(t *testing.T, mode string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// Under -race, a child otherwise sleeps a second before exiting.
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	return cmd
}

// checkLeaks fails the test if, once it and its other cleanups are done,
// goroutines are still running code of this package (outside test files).
// Call it first in a test so its cleanup runs last. Tests using it must
// not run in parallel.
func checkLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			leaked := packageGoroutines()
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines leaked:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			// Polling: goroutines that were told to stop need a moment
			// to be scheduled and return.
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// packageGoroutines returns the stacks of goroutines executing this
// package's non-test code.
func packageGoroutines() []string {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self) + string(filepath.Separator)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			file, ok := strings.CutPrefix(line, "\t")
			if !ok || !strings.HasPrefix(file, dir) {
				continue
			}
			if i := strings.LastIndex(file, ".go:"); i >= 0 && !strings.HasSuffix(file[:i], "_test") {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// request returns a request with an integer id and the given raw params.
func request(id int64, method, params string) *jsonrpc.Request {
	r := &jsonrpc.Request{ID: jsonrpc.Int64ID(id), Method: method}
	if params != "" {
		r.Params = json.RawMessage(params)
	}
	return r
}

// encode returns m's encoding, failing the test on error.
func encode(t testing.TB, m jsonrpc.Message) string {
	t.Helper()
	b, err := jsonrpc.AppendMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcome describes one Read result compactly for comparisons: "msg <json>",
// "too-large <limit>", "decode <code>", "EOF", "closed" or "error <text>".
func outcome(t testing.TB, m jsonrpc.Message, err error) string {
	t.Helper()
	if err == nil {
		return "msg " + encode(t, m)
	}
	if limit, ok := IsMessageTooLarge(err); ok {
		return fmt.Sprintf("too-large %d", limit)
	}
	var de *jsonrpc.DecodeError
	switch {
	case errors.As(err, &de):
		return fmt.Sprintf("decode %d", de.Err.Code)
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrClosed):
		return "closed"
	}
	return "error " + err.Error()
}

// readOutcomes reads c until an error other than a DecodeError, at most
// limit times, and returns the outcomes.
func readOutcomes(t testing.TB, c Conn, limit int) []string {
	t.Helper()
	var out []string
	for range limit {
		m, err := c.Read(context.Background())
		out = append(out, outcome(t, m, err))
		var de *jsonrpc.DecodeError
		if err != nil && !errors.As(err, &de) {
			return out
		}
	}
	t.Fatalf("no end of input after %d reads: %q", limit, out)
	return nil
}
