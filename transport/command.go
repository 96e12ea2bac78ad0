package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultTerminateDuration is the grace period [CommandTransport] gives a
// server subprocess at each step of its shutdown when TerminateDuration is
// zero.
const DefaultTerminateDuration = 5 * time.Second

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
// The connection implements [HalfCloser]: CloseWrite closes the server's
// standard input, which tells it that no more requests will come, while
// its answers can still be read.
//
// Read returns io.EOF once the server closes its standard output, normally
// by exiting. (A grandchild that inherited it can keep it open; Close
// still ends the Read.) The connection keeps one goroutine waiting for the
// server process until it exits.
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
// crashing before Close was called; and an error if the server could not
// be reaped even after the kill.
type CommandTransport struct {
	// Command is the server to run. Required.
	Command *exec.Cmd
	// TerminateDuration is the grace period of each shutdown step; zero
	// means DefaultTerminateDuration.
	TerminateDuration time.Duration
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. Negative values are rejected by Connect.
	MaxMessageSize int

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
	err = cmd.Start()
	// The child has its copies; ours would keep its input from ending
	// and our output from reaching EOF.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("transport: starting %s: %w", cmd.Path, err)
	}

	p := &process{cmd: cmd, stdin: inW, stdout: outR, grace: grace, exited: make(chan struct{})}
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

	exited  chan struct{} // closed when Wait has returned
	waitErr error         // Wait's result, set before exited is closed
}

func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	close(p.exited)
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
