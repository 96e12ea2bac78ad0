package transport

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

func TestCommandTransportEcho(t *testing.T) {
	checkLeaks(t)
	var stderr bytes.Buffer
	cmd := helperCommand(t, "echo")
	cmd.Stderr = &stderr
	ct := &CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}
	ctx := context.Background()
	c, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(3) {
		if err := c.Write(ctx, request(i, "echo", `{"n":"ü\n"}`)); err != nil {
			t.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := encode(t, m), encode(t, &jsonrpc.Response{ID: jsonrpc.Int64ID(i), Result: []byte(`{"n":"ü\n"}`)}); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// Raw JSON with a line break inside a string cannot be framed.
	if err := c.Write(ctx, request(9, "m", "{\"s\":\"raw\nnewline\"}")); err == nil {
		t.Error("Write of invalid JSON succeeded")
	}

	read := make(chan error)
	go func() {
		_, err := c.Read(ctx)
		read <- err
	}()
	// Closing stdin makes the echo server exit at once, long before the
	// grace period.
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v (stderr %q)", err, stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-read; !errors.Is(err, ErrClosed) {
		t.Errorf("Read pending at Close: %v, want ErrClosed", err)
	}
	if !cmd.ProcessState.Success() {
		t.Errorf("server exited with %v", cmd.ProcessState)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCommandTransportServerExits(t *testing.T) {
	checkLeaks(t)
	cmd := helperCommand(t, "echo")
	c, err := (&CommandTransport{Command: cmd}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Write(ctx, request(1, "crash", "")); err != nil {
		t.Fatal(err)
	}
	// The server's exit ends our input, with its status.
	_, err = c.Read(ctx)
	var xe *ExitError
	if !errors.As(err, &xe) || xe.ExitCode != 4 {
		t.Errorf("Read: %v, want an *ExitError with status 4", err)
	}
	// It failed on its own: Close reports it.
	err = c.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("Close: %v, want exit status 4", err)
	}
}

func TestCommandTransportExitStatusAtClose(t *testing.T) {
	checkLeaks(t)
	c, err := (&CommandTransport{Command: helperCommand(t, "exit3")}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = c.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Close: %v, want exit status 3", err)
	}
}

func TestCommandTransportConnectErrors(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	withStdin := exec.Command("true")
	withStdin.Stdin = bytes.NewReader(nil)
	for name, ct := range map[string]*CommandTransport{
		"no command":         {},
		"stdin set":          {Command: withStdin},
		"negative grace":     {Command: exec.Command("true"), TerminateDuration: -1},
		"negative max":       {Command: exec.Command("true"), MaxMessageSize: -1},
		"missing executable": {Command: exec.Command("/nonexistent/mcp-server")},
	} {
		if c, err := ct.Connect(ctx); err == nil {
			c.Close()
			t.Errorf("%s: Connect succeeded", name)
		}
	}

	ct := &CommandTransport{Command: helperCommand(t, "echo")}
	c, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := ct.Connect(ctx); err == nil {
		t.Error("second Connect succeeded")
	}
}

// TestCommandTransportEscalation checks the shutdown steps with a server
// that ignores the end of its input (linger) and one that also ignores
// SIGTERM (stubborn): the signal that ended it and the time Close took
// show which steps ran.
func TestCommandTransportEscalation(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGTERM")
	}
	const grace = 300 * time.Millisecond
	tests := []struct {
		mode     string
		signal   syscall.Signal
		minGrace time.Duration // Close waits at least this many grace periods
	}{
		{"linger", syscall.SIGTERM, 1},
		{"stubborn", syscall.SIGKILL, 2},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			checkLeaks(t)
			cmd := helperCommand(t, tt.mode)
			c, err := (&CommandTransport{Command: cmd, TerminateDuration: grace}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The server says when its signal handling is set up.
			m, err := c.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "ready" {
				t.Fatalf("first message %v", encode(t, m))
			}
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			d := time.Since(start)
			if d < tt.minGrace*grace || d > 3*grace+2*time.Second {
				t.Errorf("Close took %v, want at least %v and at most about %v", d, tt.minGrace*grace, 3*grace)
			}
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != tt.signal {
				t.Errorf("server ended with %v, want signal %v", cmd.ProcessState, tt.signal)
			}
		})
	}
}

// TestCommandTransportExitError checks that a server that dies is
// reported with its exit status and the end of its standard error, both
// by Read and to the calls of a jsonrpc.Conn over the connection, and
// that a Command.Stderr set by the caller still gets everything.
func TestCommandTransportExitError(t *testing.T) {
	tests := []struct {
		name       string
		tail       int
		wantTail   int // bytes of standard error in the ExitError
		userStderr bool
	}{
		{"default tail", 0, DefaultStderrTail, false},
		{"with Command.Stderr", 0, DefaultStderrTail, true},
		{"small tail", 100, 100, false},
		{"no tail", -1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			cmd := helperCommand(t, "die3")
			var user bytes.Buffer
			if tt.userStderr {
				cmd.Stderr = &user
			}
			tc, err := (&CommandTransport{Command: cmd, StderrTail: tt.tail}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			conn := jsonrpc.NewConn(tc, nil)
			conn.Start()
			defer conn.Wait()
			defer conn.Close()
			_, err = conn.Call(context.Background(), "tools/list", nil)
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("Call: %v, want an *ExitError", err)
			}
			if !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Call: %v, want it to match jsonrpc.ErrClosed", err)
			}
			if ee.ExitCode != 3 {
				t.Errorf("ExitCode = %d, want 3", ee.ExitCode)
			}
			if len(ee.Stderr) != tt.wantTail {
				t.Errorf("len(Stderr) = %d, want %d", len(ee.Stderr), tt.wantTail)
			}
			if tt.wantTail > 0 {
				if !bytes.HasSuffix(ee.Stderr, []byte("fatal: out of cheese\n")) {
					t.Errorf("Stderr ends with %q", ee.Stderr[max(0, len(ee.Stderr)-40):])
				}
				if !strings.Contains(err.Error(), "status 3") || !strings.Contains(err.Error(), "out of cheese") {
					t.Errorf("error text %q lacks the status or the stderr tail", err)
				}
			}
			var xe *exec.ExitError
			if !errors.As(err, &xe) {
				t.Errorf("%v does not wrap the *exec.ExitError", err)
			}
			if tt.userStderr && (user.Len() < 8<<10 || !strings.HasSuffix(user.String(), "fatal: out of cheese\n")) {
				t.Errorf("Command.Stderr got %d bytes ending %q", user.Len(), user.String()[max(0, user.Len()-40):])
			}
			if err := conn.Wait(); !errors.As(err, &ee) {
				t.Errorf("the connection ended with %v, want the *ExitError", err)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, tt := range []struct{ write, want string }{
		{"abc", "abc"},
		{"defgh", "abcdefgh"},
		{"ij", "cdefghij"},
		{"0123456789", "23456789"},
		{"", "23456789"},
		{"x", "3456789x"},
	} {
		b.Write([]byte(tt.write))
		if got := string(b.bytes()); got != tt.want {
			t.Errorf("after %q: %q, want %q", tt.write, got, tt.want)
		}
	}
}
