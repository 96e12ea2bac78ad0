package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// DefaultTerminateDuration is the grace period [CommandTransport] gives a
// server subprocess at each step of its shutdown when TerminateDuration is
// zero.
const DefaultTerminateDuration = 5 * time.Second

// DefaultStderrTail is how many bytes of a server subprocess's standard
// error [CommandTransport] keeps for an [ExitError] when StderrTail is
// zero: the last 4 KiB.
const DefaultStderrTail = 4 << 10

// ExitError reports a server subprocess that failed on its own: it
// exited with a non-zero status, or was killed by a signal that
// [CommandTransport]'s Close did not send. When the server's standard
// output ends that way, Read returns an *ExitError in place of io.EOF, so
// a [jsonrpc.Conn] over the connection fails its pending and later calls
// with an error that wraps it; Close returns it too. Find it with
// errors.As.
type ExitError struct {
	// ExitCode is the exit status, or -1 when a signal ended the process.
	ExitCode int
	// Stderr is the end of what the server wrote to its standard error
	// (at most [CommandTransport].StderrTail bytes), often the reason it
	// failed. Empty when it wrote nothing or StderrTail is negative.
	Stderr []byte
	// Err is the error exec.Cmd.Wait returned, an *exec.ExitError.
	Err error
}

// Error describes the exit status and quotes the end of standard error.
func (e *ExitError) Error() string {
	msg := "transport: server exited with status " + strconv.Itoa(e.ExitCode)
	if e.ExitCode < 0 {
		msg = "transport: server ended: " + e.Err.Error()
	}
	if tail := bytes.TrimSpace(e.Stderr); len(tail) > 0 {
		msg += "; its standard error ends with: " + string(tail)
	}
	return msg
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }

// CommandTransport launches an MCP server as a subprocess and connects to
// its standard input and output: the client side of the stdio transport.
//
// Command must be set and not yet started; Connect starts it, so a
// CommandTransport may be connected once. Command.Stdin and Command.Stdout
// must be nil: the transport supplies them. Command.Stderr is left as the
// caller set it, so by os/exec's rule a nil Stderr discards the server's
// log output; set it to os.Stderr to see it. If Command.WaitDelay is zero,
// it is set to the grace period, so that a grandchild holding the server's
// standard error open cannot stall shutdown.
//
// Unless StderrTail is negative, the transport reads the server's
// standard error itself through a pipe, keeps its last StderrTail bytes
// for an [ExitError], and copies everything to Command.Stderr if that is
// set (so the server's standard error is a pipe even when Command.Stderr
// is a terminal). If writing to Command.Stderr fails, the rest of the
// server's output is still read and only the tail kept, so a server
// never blocks on its standard error.
//
// The connection implements [HalfCloser]: CloseWrite closes the server's
// standard input, which tells it that no more requests will come, while
// its answers can still be read.
//
// Read returns io.EOF once the server closes its standard output, normally
// by exiting, or an [*ExitError] if the server failed: to tell which, Read
// waits up to the grace period for the server to exit once its output
// ends. (A grandchild that inherited the server's standard output can
// keep it open; Close still ends the Read.) The connection keeps one
// goroutine waiting for the server process until it exits.
//
// Close shuts the server down the way MCP prescribes, and never blocks for
// more than about three grace periods:
//
//  1. close the server's standard input and wait up to the grace period
//     for the server to exit;
//  2. if it is still running, send SIGTERM and wait the grace period again
//     (where the platform has no SIGTERM, this step is skipped);
//  3. if it is still running, kill it (SIGKILL) and wait once more;
//  4. close standard output, which ends any pending Read.
//
// Close returns nil when the server exited successfully or because Close
// signalled it. It returns the *exec.ExitError (wrapped) when the server
// exited with a failure on its own, before being signalled, which includes
// crashing before Close was called (as an [*ExitError], which wraps the
// *exec.ExitError); and an error if the server could not be reaped even
// after the kill.
type CommandTransport struct {
	// Command is the server to run. Required.
	Command *exec.Cmd
	// TerminateDuration is the grace period of each shutdown step; zero
	// means DefaultTerminateDuration.
	TerminateDuration time.Duration
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. Negative values are rejected by Connect.
	MaxMessageSize int
	// StderrTail is how many bytes from the end of the server's standard
	// error an [ExitError] reports. Zero means DefaultStderrTail (4 KiB);
	// negative keeps none and leaves Command.Stderr to the server as is.
	StderrTail int

	connected atomic.Bool
}

// Connect starts the server. ctx bounds only the start: unlike
// exec.CommandContext, ending ctx later does not kill the server; close
// the connection instead.
func (t *CommandTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := t.Command
	switch {
	case cmd == nil:
		return nil, errors.New("transport: CommandTransport needs a Command")
	case cmd.Stdin != nil || cmd.Stdout != nil:
		return nil, errors.New("transport: CommandTransport sets Command.Stdin and Command.Stdout itself; leave them nil")
	case t.TerminateDuration < 0:
		return nil, fmt.Errorf("transport: TerminateDuration %v is negative", t.TerminateDuration)
	}
	limit, err := maxMessageSize(t.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	grace := t.TerminateDuration
	if grace == 0 {
		grace = DefaultTerminateDuration
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}

	// Our own pipes rather than StdinPipe/StdoutPipe: Wait closes those,
	// which could lose the server's last output, and we close ours when
	// we choose.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: creating pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("transport: creating pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = grace
	}
	var tail *tailBuffer
	if t.StderrTail >= 0 {
		n := t.StderrTail
		if n == 0 {
			n = DefaultStderrTail
		}
		tail = &tailBuffer{max: n}
		// Not an *os.File, so exec copies it from a pipe and Wait
		// returns once the copy is done (or WaitDelay passed).
		cmd.Stderr = &stderrTee{tail: tail, w: cmd.Stderr}
	}
	err = cmd.Start()
	// The child has its copies; ours would keep its input from ending
	// and our output from reaching EOF.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		if tee, ok := cmd.Stderr.(*stderrTee); ok {
			cmd.Stderr = tee.w // as the caller set it
		}
		return nil, fmt.Errorf("transport: starting %s: %w", cmd.Path, err)
	}

	p := &process{cmd: cmd, stdin: inW, stdout: outR, grace: grace, tail: tail, exited: make(chan struct{})}
	go p.wait()
	p.lineConn = newLineConn(outR, inW, limit, p.shutdown)
	p.lineConn.closeWriteFn = inW.Close
	return p, nil
}

// process is a connection to a server subprocess.
type process struct {
	*lineConn
	cmd    *exec.Cmd
	stdin  *os.File // our end of the server's standard input
	stdout *os.File // our end of the server's standard output
	grace  time.Duration

	tail *tailBuffer // the end of standard error, or nil

	exited  chan struct{} // closed when Wait has returned
	waitErr error         // Wait's result, set before exited is closed
	failure *ExitError    // set before exited is closed if the server failed
}

func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		p.failure = &ExitError{ExitCode: ee.ExitCode(), Err: ee}
		if p.tail != nil {
			p.failure.Stderr = p.tail.bytes()
		}
	}
	close(p.exited)
}

// Read returns the next message; see [CommandTransport]. When the
// server's output ends, it waits up to the grace period for the server
// to exit, to report a failure as an [*ExitError] rather than io.EOF.
func (p *process) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := p.lineConn.Read(ctx)
	if err != io.EOF {
		return m, err
	}
	timer := time.NewTimer(p.grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		if p.failure != nil && !p.isClosed() {
			return nil, p.failure
		}
	case <-p.closed:
		return nil, ErrClosed
	case <-timer.C:
	}
	return nil, io.EOF
}

// shutdown is the lineConn's close function; see CommandTransport.
func (p *process) shutdown() error {
	p.stdin.Close()
	defer p.stdout.Close()

	timer := time.NewTimer(p.grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		// It exited on its own, so a failure status is meaningful. An
		// ErrWaitDelay only says a grandchild kept its output open.
		if p.failure != nil {
			return p.failure
		}
		if p.waitErr != nil && !errors.Is(p.waitErr, exec.ErrWaitDelay) {
			return fmt.Errorf("transport: server exited: %w", p.waitErr)
		}
		return nil
	case <-timer.C:
	}

	if p.cmd.Process.Signal(syscall.SIGTERM) == nil {
		timer.Reset(p.grace)
		select {
		case <-p.exited:
			return nil
		case <-timer.C:
		}
	}

	// Kill fails only if the process is already gone, which the wait
	// below sees.
	_ = p.cmd.Process.Kill()
	timer.Reset(p.grace)
	select {
	case <-p.exited:
		return nil
	case <-timer.C:
		return fmt.Errorf("transport: server process %d did not exit after being killed", p.cmd.Process.Pid)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int

	mu  sync.Mutex
	buf []byte
}

// Write keeps the end of p; it never fails.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[over:])]
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// bytes returns a copy of what is kept.
func (b *tailBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

// stderrTee is the server's standard error: it feeds tail and copies to
// w, the caller's Command.Stderr, until a write to w fails.
type stderrTee struct {
	tail   *tailBuffer
	w      io.Writer // may be nil
	failed bool      // used by exec's copying goroutine only
}

// Write never fails, so the server never blocks on standard error.
func (t *stderrTee) Write(p []byte) (int, error) {
	t.tail.Write(p)
	if t.w != nil && !t.failed {
		if _, err := t.w.Write(p); err != nil {
			t.failed = true
		}
	}
	return len(p), nil
}
