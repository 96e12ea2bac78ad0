package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
)

// StdioTransport connects over the process's standard input and output:
// the transport of an MCP server launched by its client. The zero value is
// usable. It never touches standard error, which is left to the program
// (MCP lets servers log there).
//
// Connect may be called once per StdioTransport value.
//
// Closing the connection does not close os.Stdin or os.Stdout: the program
// may still need them, and closing a standard descriptor lets a later open
// reuse its number. A client sees end of input when the server process
// exits, which is what normally follows. Close unblocks a pending Read at
// once. On Linux, standard input is read with blocking system calls that
// wait in ppoll(2) alongside a wake-up pipe, which Close writes to; the
// descriptor's mode is left alone, and requests that arrive one at a time
// are handled on the reading goroutine (see the jsonrpc connection's buffered-stream hook),
// which roughly halves the server's part of a round trip. On other Unix
// systems, standard input is read through a non-blocking duplicate of
// descriptor 0 that the runtime poller serves. Elsewhere, a read of
// os.Stdin already under way cannot be interrupted, so it runs in a
// background goroutine that finishes when input arrives or ends, and its
// data is dropped.
//
// On Linux, when standard output is a pipe, it is written through a new
// open file of that pipe in non-blocking mode (opened through
// /proc/self/fd/1, so descriptor 1 keeps its mode), which the runtime
// poller serves; a terminal or socket is written like standard input is
// read, with blocking system calls of at most 4 KiB, each once ppoll(2)
// reports room. So Close also ends a Write blocked because the client
// stopped reading, and a Write after the client closed its end fails
// with EPIPE. Elsewhere such
// a Write stays blocked until the client reads or exits, and once the
// client has closed its end, a write raises SIGPIPE, which ends the
// program unless it handles that signal (see os/signal).
type StdioTransport struct {
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. Negative values are rejected by Connect.
	MaxMessageSize int

	connected atomic.Bool
}

// Connect returns the connection over os.Stdin and os.Stdout.
func (t *StdioTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, err := maxMessageSize(t.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}
	var w io.Writer = os.Stdout
	closeW := func() error { return nil }
	if pw, closeFn := stdoutWriter(); pw != nil {
		// Close interrupts a write under way.
		w, closeW = pw, closeFn
	}
	if r, closeR, blocking := stdinReader(); r != nil {
		// Close interrupts a read under way.
		c := newLineConn(r, w, limit, func() error { return errors.Join(closeR(), closeW()) })
		if blocking {
			return inlineLineConn{c}, nil
		}
		return c, nil
	}
	return newStdioConn(os.Stdin, w, limit, closeW), nil
}

// newStdioConn returns a connection reading r through a detachedReader and
// writing w, closing neither; closeW is called by Close.
func newStdioConn(r io.Reader, w io.Writer, limit int, closeW func() error) *lineConn {
	dr := newDetachedReader(r)
	return newLineConn(dr, w, limit, func() error {
		dr.close()
		return closeW()
	})
}

// IOTransport connects over a reader and a writer, such as the two ends of
// a pair of pipes or a net.Conn used for both. Messages are framed one per
// line, as on stdio.
//
// Connect may be called once per IOTransport value. Closing the connection
// closes Reader and Writer if they implement io.Closer (once if they are
// the same value). Close unblocks a pending Read or Write only if closing
// the reader or writer does, as it does for io.Pipe, os.Pipe and net.Conn;
// for os.Stdin use [StdioTransport].
//
// The connection implements [HalfCloser]: CloseWrite calls Writer's
// CloseWrite method if it has one (as *net.TCPConn does), or else closes
// Writer if it is an io.Closer other than Reader; otherwise it fails.
type IOTransport struct {
	// Reader supplies incoming messages. Required.
	Reader io.Reader
	// Writer receives outgoing messages, one Write call per message.
	// Required. It is never written to by two goroutines at once.
	Writer io.Writer
	// MaxMessageSize bounds an incoming message, in bytes; zero means
	// DefaultMaxMessageSize. Negative values are rejected by Connect.
	MaxMessageSize int

	connected atomic.Bool
}

// Connect returns the connection over Reader and Writer.
func (t *IOTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("transport: IOTransport needs a Reader and a Writer")
	}
	limit, err := maxMessageSize(t.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}
	r, w := t.Reader, t.Writer
	c := newLineConn(r, w, limit, func() error { return closeBoth(r, w) })
	c.closeWriteFn = closeWriter(r, w)
	return c, nil
}

// closeWriter returns the function that closes w alone, or nil if w
// cannot be closed without r: w's CloseWrite method if it has one (as a
// *net.TCPConn does), else its Close when it is not the same value as r.
func closeWriter(r io.Reader, w io.Writer) func() error {
	if cw, ok := w.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite
	}
	wc, ok := w.(io.Closer)
	if !ok {
		return nil
	}
	if rc, ok := r.(io.Closer); ok && sameValue(rc, wc) {
		return nil
	}
	return wc.Close
}

// closeBoth closes r and w where they are closers, w only if it is not the
// same value as r.
func closeBoth(r io.Reader, w io.Writer) error {
	var errR, errW error
	rc, rok := r.(io.Closer)
	if rok {
		errR = rc.Close()
	}
	if wc, ok := w.(io.Closer); ok && !(rok && sameValue(rc, wc)) {
		errW = wc.Close()
	}
	return errors.Join(errR, errW)
}

// sameValue reports whether a and b are the same comparable value, without
// the panic that == raises on incomparable dynamic types.
func sameValue(a, b io.Closer) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// detachedReader reads from r in a goroutine of its own, so that Read can
// be abandoned by close even when r's Read cannot be interrupted, as with
// os.Stdin. The goroutine starts with the first Read and reads only when
// asked, into a buffer of its own that Read copies from.
type detachedReader struct {
	r      io.Reader
	start  sync.Once
	want   chan struct{}   // Read asks for the next chunk
	got    chan readResult // the goroutine delivers it
	closed chan struct{}
	once   sync.Once

	// Owned by the goroutine calling Read.
	pending []byte // delivered but not yet consumed
	err     error  // delivered with the last chunk, returned once consumed
}

type readResult struct {
	data []byte
	err  error
}

func newDetachedReader(r io.Reader) *detachedReader {
	return &detachedReader{
		r:      r,
		want:   make(chan struct{}),
		got:    make(chan readResult),
		closed: make(chan struct{}),
	}
}

// Read implements io.Reader. After close it returns ErrClosed.
func (d *detachedReader) Read(p []byte) (int, error) {
	if len(d.pending) == 0 && d.err == nil {
		d.start.Do(func() { go d.loop() })
		select {
		case d.want <- struct{}{}:
		case <-d.closed:
			return 0, ErrClosed
		}
		select {
		case res := <-d.got:
			d.pending, d.err = res.data, res.err
		case <-d.closed:
			return 0, ErrClosed
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	if len(d.pending) == 0 && d.err != nil {
		return n, d.err
	}
	return n, nil
}

// loop serves read requests until r fails or the reader is closed. It
// reuses one buffer: a new request comes only once Read consumed the last
// chunk.
func (d *detachedReader) loop() {
	buf := make([]byte, 32<<10)
	for {
		select {
		case <-d.want:
		case <-d.closed:
			return
		}
		n, err := d.r.Read(buf)
		select {
		case d.got <- readResult{buf[:n], err}:
		case <-d.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// close abandons any pending Read and stops the goroutine once its current
// read of r, if any, returns.
func (d *detachedReader) close() {
	d.once.Do(func() { close(d.closed) })
}
