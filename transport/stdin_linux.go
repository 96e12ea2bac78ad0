package transport

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// stdinReader returns standard input as a reader that its close function
// interrupts, or nil where that cannot be arranged. blocking reports
// whether reads wait in a blocking system call rather than in the
// runtime's poller.
//
// On Linux it is a pollReader on descriptor 0, which is left in the mode
// it has (normally blocking): the goroutine reading waits in the kernel,
// which wakes it as soon as input arrives, with no help from the Go
// scheduler. For a server answering one request at a time this roughly
// halves the server's part of a round trip compared with the runtime's
// poller, whose wake-ups cross threads.
func stdinReader() (r io.Reader, closeFn func() error, blocking bool) {
	pr, err := newPollReader(syscall.Stdin)
	if err != nil {
		return nil, nil, false
	}
	return pr, pr.close, true
}

// stdoutWriter returns standard output as a writer that its close
// function interrupts, or nil where that cannot be arranged (or is not
// needed).
//
// On Linux, where standard output is a pipe (as under an MCP client), it
// is a new open file of that pipe, opened through /proc/self/fd/1 in
// non-blocking mode for the runtime's poller: the mode belongs to the new
// open file only, so descriptor 1 and whoever shares it are unaffected,
// and a write costs what a write to os.Stdout does. Where that open fails,
// or standard output is another kind of file that can block (a terminal,
// a socket), it is a pollWriter on descriptor 1. A regular file never
// makes a write wait, so it is written directly. Either way a write
// waiting for a client that stopped reading ends when the connection
// closes, instead of holding its goroutine for good.
func stdoutWriter() (w io.Writer, closeFn func() error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(syscall.Stdout, &st); err != nil {
		return nil, nil
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil, nil
	case syscall.S_IFIFO:
		// O_NONBLOCK also makes the open fail at once, with ENXIO,
		// rather than wait when the pipe has no reader.
		fd, err := syscall.Open("/proc/self/fd/1", syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			f := os.NewFile(uintptr(fd), "/dev/stdout")
			return f, f.Close
		}
	}
	pw, err := newPollWriter(syscall.Stdout)
	if err != nil {
		return nil, nil
	}
	return pw, pw.close
}

// pollFD is a descriptor used with blocking system calls that close can
// still interrupt: each call first waits in ppoll(2) for the descriptor
// or for a wake-up pipe, which close writes to. The descriptor itself is
// never closed, nor switched to non-blocking mode (a mode shared with
// every process holding the same open file, such as a terminal's shell).
type pollFD struct {
	fd           int
	wakeR, wakeW int // the wake-up pipe; closed once no call uses it

	mu     sync.Mutex
	busy   bool // a call is under way and may use the wake-up pipe
	closed bool
	freed  bool // the wake-up pipe is closed
}

// pollfd is struct pollfd of poll(2).
type pollfd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn   = 0x1
	pollOut  = 0x4
	pollErr  = 0x8
	pollHup  = 0x10
	pollNval = 0x20
)

// newPollFD returns a pollFD for fd. It makes a pipe of its own, so it
// fails only when the process is out of descriptors.
func newPollFD(fd int) (*pollFD, error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	return &pollFD{fd: fd, wakeR: p[0], wakeW: p[1]}, nil
}

// begin marks a call under way, or returns ErrClosed after close. A
// successful begin must be followed by end.
func (p *pollFD) begin() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.busy = true
	return nil
}

func (p *pollFD) end() {
	p.mu.Lock()
	p.busy = false
	if p.closed {
		p.free()
	}
	p.mu.Unlock()
}

// wait waits until the descriptor is ready for events (or has an error
// or hang-up to report, which the next system call returns), or close
// is called, which makes it return ErrClosed. op names the call in
// errors.
func (p *pollFD) wait(events int16, op string) error {
	fds := [2]pollfd{{fd: int32(p.fd), events: events}, {fd: int32(p.wakeR), events: pollIn}}
	for {
		fds[0].revents, fds[1].revents = 0, 0
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
		switch errno {
		case 0:
		case syscall.EINTR, syscall.EAGAIN:
			continue
		default:
			return &pollError{op: "ppoll", what: op, err: errno}
		}
		if fds[1].revents != 0 {
			return ErrClosed
		}
		if fds[0].revents&pollNval != 0 {
			return &pollError{op: "ppoll", what: op, err: syscall.EBADF}
		}
		if fds[0].revents&(events|pollHup|pollErr) != 0 {
			return nil
		}
	}
}

// close interrupts a call under way and makes later ones fail. The
// descriptor stays open.
func (p *pollFD) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	syscall.Write(p.wakeW, []byte{1})
	if !p.busy {
		p.free()
	}
	return nil
}

// free closes the wake-up pipe once. p.mu must be held.
func (p *pollFD) free() {
	if !p.freed {
		p.freed = true
		syscall.Close(p.wakeR)
		syscall.Close(p.wakeW)
	}
}

// pollReader reads a descriptor through a pollFD.
type pollReader struct{ *pollFD }

// newPollReader returns a reader of fd.
func newPollReader(fd int) (*pollReader, error) {
	p, err := newPollFD(fd)
	if err != nil {
		return nil, err
	}
	return &pollReader{p}, nil
}

// Read reads from the descriptor, waiting for input unless close has been
// called; after close it returns ErrClosed. End of input is io.EOF.
func (r *pollReader) Read(b []byte) (int, error) {
	if err := r.begin(); err != nil {
		return 0, err
	}
	defer r.end()
	if len(b) == 0 {
		return 0, nil
	}
	for {
		if err := r.wait(pollIn, "standard input"); err != nil {
			return 0, err
		}
		n, err := syscall.Read(r.fd, b)
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			// Interrupted, or the descriptor is non-blocking after all
			// and another reader took the input: wait again.
			continue
		case err != nil:
			return 0, &pollError{op: "read", what: "standard input", err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// pollWriteChunk is the most a pollWriter writes in one system call:
// PIPE_BUF, which a pipe that ppoll(2) reports writable takes at once, so
// that a write never blocks for long once close is called.
const pollWriteChunk = 4096

// pollWriter writes a descriptor through a pollFD, in chunks of at most
// pollWriteChunk bytes, each once ppoll(2) reports room for it. A write
// waiting for a peer that does not read ends when close is called.
type pollWriter struct{ *pollFD }

// newPollWriter returns a writer to fd.
func newPollWriter(fd int) (*pollWriter, error) {
	p, err := newPollFD(fd)
	if err != nil {
		return nil, err
	}
	return &pollWriter{p}, nil
}

// Write writes all of b unless close is called first (then it returns
// ErrClosed) or the descriptor fails.
func (w *pollWriter) Write(b []byte) (int, error) {
	if err := w.begin(); err != nil {
		return 0, err
	}
	defer w.end()
	written := 0
	for written < len(b) {
		if err := w.wait(pollOut, "standard output"); err != nil {
			return written, err
		}
		chunk := b[written:]
		if len(chunk) > pollWriteChunk {
			chunk = chunk[:pollWriteChunk]
		}
		n, err := syscall.Write(w.fd, chunk)
		if n > 0 {
			written += n
		}
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			continue
		case err != nil:
			return written, &pollError{op: "write", what: "standard output", err: err}
		case n == 0:
			return written, io.ErrShortWrite
		}
	}
	return written, nil
}

// pollError is a failed system call of a pollFD.
type pollError struct {
	op   string
	what string // "standard input" or "standard output"
	err  error
}

func (e *pollError) Error() string {
	return "transport: " + e.op + " " + e.what + ": " + e.err.Error()
}

// Unwrap returns the system call's error, for errors.Is.
func (e *pollError) Unwrap() error { return e.err }
