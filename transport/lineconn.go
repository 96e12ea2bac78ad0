package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// lineConn is a [Conn] over a byte stream framed one message per line. The
// stdio, io and command transports are lineConns that differ in how they
// are closed.
//
// Read decodes straight from the frame reader's buffer. It checks ctx
// before each message but does not interrupt a blocked read of the
// underlying reader: Close does, by closing it. Write encodes into one
// buffer reused under a channel semaphore, so a writer waiting its turn
// gives up when its ctx ends or the connection closes, and issues one
// Write call per message.
// writeWithin writes buf, ending the write when ctx ends first. A peer
// that stops reading fills the pipe and would hold the writer, and the
// caller, past its context: then the connection is closed, which ends the
// write (part of the line may be out, so the stream could not go on
// anyway). A write still in progress writeGrace after ctx ended counts as
// held: the grace keeps a write that was just finishing (the peer had read
// it) from closing a connection that is fine.
func (c *lineConn) writeWithin(ctx context.Context, buf []byte) (int, error) {
	if ctx.Done() == nil {
		return c.w.Write(buf) // the context never ends: nothing to watch
	}
	var writing atomic.Bool
	var grace atomic.Pointer[time.Timer]
	writing.Store(true)
	stop := context.AfterFunc(ctx, func() {
		if writing.Load() {
			grace.Store(time.AfterFunc(writeGrace, func() {
				if writing.Load() {
					c.Close()
				}
			}))
		}
	})
	n, err := c.w.Write(buf)
	writing.Store(false)
	stop()
	if t := grace.Load(); t != nil {
		t.Stop()
	}
	return n, err
}

// writeGrace is how long a write may go on after its context ended before
// the connection is closed to end it.
const writeGrace = 100 * time.Millisecond

type lineConn struct {
	fr   *frameReader  // owned by the reading goroutine
	memo jsonscan.Memo // the params._meta of the messages read

	w    io.Writer
	sem  chan struct{} // capacity 1: held while writing
	wbuf []byte        // guarded by sem
	// werr, guarded by sem, is what later Writes return: a failed write
	// breaks the framing, and CloseWrite ends writing.
	werr error

	// closeWriteFn, if set, closes the writing side alone (see
	// CloseWrite). Set before the connection is used.
	closeWriteFn func() error

	closed    chan struct{} // closed when Close begins
	closeOnce sync.Once
	closeErr  error
	closeFn   func() error // releases the underlying reader and writer
}

// newLineConn returns a connection reading frames of at most limit bytes from
// r and writing frames to w. closeFn is called once, by the first Close.
func newLineConn(r io.Reader, w io.Writer, limit int, closeFn func() error) *lineConn {
	return &lineConn{
		fr:      newFrameReader(r, limit, readBufferSize),
		w:       w,
		sem:     make(chan struct{}, 1),
		closed:  make(chan struct{}),
		closeFn: closeFn,
	}
}

func (c *lineConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Read returns the next message. See [Conn].
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := c.fr.next()
	if err != nil {
		if c.isClosed() {
			return nil, ErrClosed
		}
		if err == io.EOF {
			return nil, io.EOF
		}
		if _, ok := err.(*jsonrpc.DecodeError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("transport: reading: %w", err)
	}
	// Not owned: the decoder copies what it keeps, so line may be reused.
	return decodeMemo(nil, line, false, &c.memo)
}

// inlineLineConn is a lineConn whose requests the jsonrpc.Conn may handle
// on the reading goroutine (see the jsonrpc connection's buffered-stream hook): the stdio
// server's connection where standard input is read with blocking system
// calls, so that handing a request to another goroutine costs more than
// handling it.
type inlineLineConn struct {
	*lineConn
}

// Buffered reports whether the next Read can return without waiting for
// input. It is called by the reading goroutine.
func (c inlineLineConn) Buffered() bool { return c.fr.br.Buffered() > 0 }

// Write sends one message as one line. See [Conn].
func (c *lineConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case c.sem <- struct{}{}: // the usual case, without a wait: a cheap non-blocking send
	default:
		select {
		case c.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return ErrClosed
		}
	}
	defer func() { <-c.sem }()
	if c.isClosed() {
		return ErrClosed
	}
	if c.werr != nil {
		return c.werr
	}
	buf, err := appendFrame(c.wbuf[:0], m)
	if cap(buf) <= maxRetainedBuffer {
		c.wbuf = buf[:0]
	} else {
		c.wbuf = nil
	}
	if err != nil {
		return fmt.Errorf("transport: encoding: %w", err)
	}
	if _, err := c.writeWithin(ctx, buf); err != nil {
		if c.isClosed() {
			if ctx.Err() != nil {
				return fmt.Errorf("transport: write abandoned, connection closed: %w", context.Cause(ctx))
			}
			return ErrClosed
		}
		// Part of the line may have gone out; later messages would be
		// misframed, so the failure sticks.
		c.werr = fmt.Errorf("transport: writing: %w", err)
		return c.werr
	}
	return nil
}

// CloseWrite closes the writing side once a Write under way has
// finished; see [HalfCloser]. Later Writes return ErrClosed.
func (c *lineConn) CloseWrite() error {
	if c.closeWriteFn == nil {
		return fmt.Errorf("transport: closing the writing side alone: %w", errors.ErrUnsupported)
	}
	select {
	case c.sem <- struct{}{}:
	case <-c.closed:
		return ErrClosed
	}
	defer func() { <-c.sem }()
	if c.werr == ErrClosed {
		return nil
	}
	c.werr = ErrClosed
	return c.closeWriteFn()
}

// Close closes the connection once; later calls return the first call's
// result.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.closeFn != nil {
			c.closeErr = c.closeFn()
		}
	})
	return c.closeErr
}
