package hostile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ErrTimeout is returned by [StdioPeer.ReadLine] when no line arrived in
// time.
var ErrTimeout = errors.New("hostile: no line before the deadline")

// StdioPeer is a raw, scriptable peer of a newline-delimited JSON-RPC
// stream: the test writes exactly the lines it likes, floods, closes its
// side of the stream, and reads lines only when it asks for them, so a
// test that stops calling [StdioPeer.ReadLine] is a peer that stopped
// reading: nothing is read from the stream until a ReadLine asks for a
// line, so the pipe fills and the other side's writes block.
//
// It plays a hostile client when started on a server program with
// [StartCommand], and a hostile server when a test binary re-executed by
// [ScriptCommand] wraps its own standard input and output with
// [NewStdioPeer] (see [RunScript]).
type StdioPeer struct {
	w     io.WriteCloser
	wmu   sync.Mutex
	rmu   sync.Mutex // serialises ReadLine; guards pending
	want  chan struct{}
	lines chan lineOrErr
	// pending is set while readLoop reads a line asked for by a ReadLine
	// that timed out: the next ReadLine takes that line.
	pending bool
	done    chan struct{}
	once    sync.Once
	cmd     *exec.Cmd
	rc      io.Closer // the read side, closed by Close
	exit    chan struct{}
	werr    error // the process's exit status, set before exit closes
}

type lineOrErr struct {
	line string
	err  error
}

// NewStdioPeer returns a peer reading lines from r and writing to w. Lines
// are read by one goroutine that reads only when ReadLine asks for a line
// (what one read of r returns beyond it stays buffered). Close ends that goroutine once r
// returns (closing r if it is an io.Closer).
func NewStdioPeer(r io.Reader, w io.WriteCloser) *StdioPeer {
	p := &StdioPeer{w: w, want: make(chan struct{}), lines: make(chan lineOrErr), done: make(chan struct{})}
	if c, ok := r.(io.Closer); ok {
		p.rc = c
	}
	go p.readLoop(bufio.NewReaderSize(r, 64<<10))
	return p
}

// StartCommand starts cmd with its standard input and output connected to
// a new peer. Its standard error goes where cmd.Stderr says. Close ends
// the process.
func StartCommand(cmd *exec.Cmd) (*StdioPeer, error) {
	// Pipes of our own rather than cmd.StdinPipe and StdoutPipe: Wait
	// closes those, losing output the peer has not read yet.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := NewStdioPeer(outR, inW)
	p.cmd = cmd
	p.exit = make(chan struct{})
	go func() {
		p.werr = cmd.Wait()
		close(p.exit)
	}()
	return p, nil
}

func (p *StdioPeer) readLoop(r *bufio.Reader) {
	defer close(p.lines)
	for {
		select {
		case <-p.want:
		case <-p.done:
			return
		}
		line, err := r.ReadString('\n')
		var l lineOrErr
		if line != "" { // a last line without its newline counts too
			l.line = strings.TrimRight(line, "\r\n")
		} else {
			l.err = err
		}
		select {
		case p.lines <- l:
		case <-p.done:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// WriteLine writes line followed by a newline, as one Write. It blocks
// while the other side does not read and the pipe is full.
func (p *StdioPeer) WriteLine(line string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := io.WriteString(p.w, line+"\n")
	return err
}

// Flood writes line n times, in writes of up to 64 KiB. It blocks while
// the other side does not read.
func (p *StdioPeer) Flood(line string, n int) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	chunk := strings.Repeat(line+"\n", max(1, min(n, (64<<10)/(len(line)+1))))
	per := strings.Count(chunk, "\n")
	for n > 0 {
		c := chunk
		if n < per {
			c = chunk[:n*(len(line)+1)]
		}
		if _, err := io.WriteString(p.w, c); err != nil {
			return err
		}
		n -= strings.Count(c, "\n")
	}
	return nil
}

// CloseInput closes the peer's writing side: the other side reads end of
// input while the peer goes on reading.
func (p *StdioPeer) CloseInput() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.w.Close()
}

// ReadLine returns the next line the other side wrote, without its
// newline. It returns [ErrTimeout] when none arrived within timeout (the
// line, if it comes, is returned by the next call), and io.EOF once the
// other side closed its output.
func (p *StdioPeer) ReadLine(timeout time.Duration) (string, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	if !p.pending {
		select {
		case p.want <- struct{}{}:
			p.pending = true
		case l, ok := <-p.lines: // readLoop ended
			return l.line, lineErr(l, ok)
		case <-t.C:
			return "", ErrTimeout
		}
	}
	select {
	case l, ok := <-p.lines:
		p.pending = false
		return l.line, lineErr(l, ok)
	case <-t.C:
		return "", ErrTimeout
	}
}

func lineErr(l lineOrErr, ok bool) error {
	if !ok {
		return io.EOF
	}
	return l.err
}

// ReadUntil reads lines until one contains substr, or timeout passes in
// all, and returns that line and the lines skipped on the way.
func (p *StdioPeer) ReadUntil(substr string, timeout time.Duration) (string, []string, error) {
	deadline := time.Now().Add(timeout)
	var skipped []string
	for {
		line, err := p.ReadLine(time.Until(deadline))
		if err != nil {
			return "", skipped, err
		}
		if strings.Contains(line, substr) {
			return line, skipped, nil
		}
		skipped = append(skipped, line)
	}
}

// Exited is closed when the process started by [StartCommand] has exited;
// nil for a peer made by [NewStdioPeer].
func (p *StdioPeer) Exited() <-chan struct{} { return p.exit }

// ExitErr is the process's exit status; valid once [StdioPeer.Exited] is
// closed.
func (p *StdioPeer) ExitErr() error {
	<-p.exit
	return p.werr
}

// Close closes both sides, kills the process if there is one and waits for
// it to exit. It is safe to call more than once.
func (p *StdioPeer) Close() error {
	p.once.Do(func() {
		close(p.done)
		p.CloseInput()
		if p.cmd != nil {
			p.cmd.Process.Kill()
			<-p.exit
		}
		if p.rc != nil {
			p.rc.Close()
		}
	})
	return nil
}

// ScriptEnv is the environment variable naming the script a re-executed
// test binary runs (see [ScriptCommand] and [RunScript]).
const ScriptEnv = "MCPKIT_HOSTILE_SCRIPT"

// Script is a hostile program run in a re-executed test binary: p is
// connected to the process's standard input and output, so p plays the
// server of the client that started the process.
type Script func(ctx context.Context, p *StdioPeer) error

// ScriptCommand returns a command that re-executes the running test binary
// to run the script called name; the binary's TestMain must call
// [RunScript]. Hand it to a transport.CommandTransport to point a client
// at the script.
func ScriptCommand(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ScriptEnv+"="+name)
	cmd.Stderr = os.Stderr
	return cmd
}

// RunScript runs the script named by [ScriptEnv], if set, on the process's
// standard input and output, and reports whether it did; the caller (a
// TestMain) then exits with code 0, or 1 when err is not nil. When the
// variable is unset it returns false and the tests run as usual.
func RunScript(scripts map[string]Script) (ran bool, err error) {
	name := os.Getenv(ScriptEnv)
	if name == "" {
		return false, nil
	}
	s, ok := scripts[name]
	if !ok {
		return true, fmt.Errorf("hostile: no script %q", name)
	}
	p := NewStdioPeer(os.Stdin, os.Stdout)
	defer p.Close()
	return true, s(context.Background(), p)
}
