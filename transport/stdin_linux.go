package transport

import (
	"io"
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

// pollReader reads a descriptor with blocking system calls that close can
// still interrupt: each read first waits in ppoll(2) for the descriptor or
// for a wake-up pipe, which close writes to. The descriptor itself is
// never closed, nor switched to non-blocking mode (a mode shared with
// every process holding the same open file, such as a terminal's shell).
type pollReader struct {
	fd           int
	wakeR, wakeW int // the wake-up pipe; closed once no read uses it

	mu      sync.Mutex
	reading bool // a Read is under way and may use the wake-up pipe
	closed  bool
	freed   bool // the wake-up pipe is closed
}

// pollfd is struct pollfd of poll(2).
type pollfd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn   = 0x1
	pollErr  = 0x8
	pollHup  = 0x10
	pollNval = 0x20
)

// newPollReader returns a reader of fd. It makes a pipe of its own, so it
// fails only when the process is out of descriptors.
func newPollReader(fd int) (*pollReader, error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	return &pollReader{fd: fd, wakeR: p[0], wakeW: p[1]}, nil
}

// Read reads from the descriptor, waiting for input unless close has been
// called; after close it returns ErrClosed. End of input is io.EOF.
func (r *pollReader) Read(b []byte) (int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return 0, ErrClosed
	}
	r.reading = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.reading = false
		if r.closed {
			r.free()
		}
		r.mu.Unlock()
	}()
	if len(b) == 0 {
		return 0, nil
	}
	fds := [2]pollfd{{fd: int32(r.fd), events: pollIn}, {fd: int32(r.wakeR), events: pollIn}}
	for {
		fds[0].revents, fds[1].revents = 0, 0
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
		switch errno {
		case 0:
		case syscall.EINTR, syscall.EAGAIN:
			continue
		default:
			return 0, &pollError{op: "ppoll", err: errno}
		}
		if fds[1].revents != 0 {
			return 0, ErrClosed
		}
		if fds[0].revents&pollNval != 0 {
			return 0, &pollError{op: "ppoll", err: syscall.EBADF}
		}
		if fds[0].revents&(pollIn|pollHup|pollErr) == 0 {
			continue
		}
		n, err := syscall.Read(r.fd, b)
		switch {
		case err == syscall.EINTR || err == syscall.EAGAIN:
			// Interrupted, or the descriptor is non-blocking after all
			// and another reader took the input: wait again.
			continue
		case err != nil:
			return 0, &pollError{op: "read", err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// close interrupts a Read under way and makes later ones fail. The
// descriptor read stays open.
func (r *pollReader) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	syscall.Write(r.wakeW, []byte{1})
	if !r.reading {
		r.free()
	}
	return nil
}

// free closes the wake-up pipe once. r.mu must be held.
func (r *pollReader) free() {
	if !r.freed {
		r.freed = true
		syscall.Close(r.wakeR)
		syscall.Close(r.wakeW)
	}
}

// pollError is a failed system call of a pollReader.
type pollError struct {
	op  string
	err error
}

func (e *pollError) Error() string {
	return "transport: " + e.op + " standard input: " + e.err.Error()
}

// Unwrap returns the system call's error, for errors.Is.
func (e *pollError) Unwrap() error { return e.err }
