package transport

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// memBuffer is how many messages each direction of an in-memory pair
// holds before Write blocks.
const memBuffer = 64

// NewInMemoryTransports returns two transports connected to each other,
// for tests and for running a client and server in one process. Messages
// pass as values through buffered channels, with no encoding: both sides
// must treat them as immutable, as [jsonrpc.Message] requires. The only
// conversion is of a [*jsonrpc.DecodeError] written as a message, which
// arrives as the error response it would be encoded as.
//
// Each transport may be connected once; the two may be connected in
// either order, and messages written before the peer connects wait in the
// buffer.
//
// Write blocks while the peer's buffer (64 messages) is full, until the
// peer reads, ctx ends, or either side closes. Writes cannot deadlock as
// long as each side keeps a goroutine reading, as [jsonrpc.Conn] does.
//
// Close on one side is seen by the other at once: its pending and later
// Writes return [ErrClosed], and its Read returns the messages already
// written to it, then io.EOF. On the side that closed, Read and Write
// return ErrClosed. The connections also implement [HalfCloser]:
// CloseWrite ends one direction only, so the peer reads what was written,
// then io.EOF, and can still answer.
func NewInMemoryTransports() (client, server Transport) {
	a := &memEnd{in: make(chan jsonrpc.Message, memBuffer), closed: make(chan struct{}), wclosed: make(chan struct{})}
	b := &memEnd{in: make(chan jsonrpc.Message, memBuffer), closed: make(chan struct{}), wclosed: make(chan struct{})}
	a.peer, b.peer = b, a
	return &memTransport{end: a}, &memTransport{end: b}
}

// memTransport hands out its end of the pair once.
type memTransport struct {
	end       *memEnd
	connected atomic.Bool
}

// Connect returns this transport's end of the pair, once.
func (t *memTransport) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !t.connected.CompareAndSwap(false, true) {
		return nil, errConnected
	}
	return t.end, nil
}

// memEnd is one side of an in-memory pair. Its in channel is written by
// the peer and never closed, since writers may race with Close; closure
// travels on the closed channels instead.
type memEnd struct {
	in      chan jsonrpc.Message
	peer    *memEnd
	closed  chan struct{} // closed by Close
	wclosed chan struct{} // closed by CloseWrite and by Close
	once    sync.Once
	wonce   sync.Once
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Read returns the next message from the peer. See NewInMemoryTransports.
func (e *memEnd) Read(ctx context.Context) (jsonrpc.Message, error) {
	if isDone(e.closed) {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case m := <-e.in:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.closed:
		return nil, ErrClosed
	case <-e.peer.wclosed:
		// Drain what the peer wrote before closing.
		select {
		case m := <-e.in:
			return m, nil
		default:
			return nil, io.EOF
		}
	}
}

// Write delivers m to the peer. See NewInMemoryTransports.
func (e *memEnd) Write(ctx context.Context, m jsonrpc.Message) error {
	m, err := wireEquivalent(m)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if isDone(e.wclosed) || isDone(e.peer.closed) {
		return ErrClosed
	}
	select {
	case e.peer.in <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.wclosed:
		return ErrClosed
	case <-e.peer.closed:
		return ErrClosed
	}
}

// CloseWrite ends what this side sends; see [HalfCloser]. It always
// returns nil.
func (e *memEnd) CloseWrite() error {
	e.wonce.Do(func() { close(e.wclosed) })
	return nil
}

// Close closes this side. It always returns nil.
func (e *memEnd) Close() error {
	e.CloseWrite()
	e.once.Do(func() { close(e.closed) })
	return nil
}

// errNilMessage rejects a nil message.
var errNilMessage = errors.New("transport: cannot send a nil message")

// wireEquivalent returns the message the peer would decode from m's
// encoding, as far as the message's type goes: decode errors become error
// responses. It rejects what the encoder rejects.
func wireEquivalent(m jsonrpc.Message) (jsonrpc.Message, error) {
	switch m := m.(type) {
	case *jsonrpc.Request:
		if m == nil {
			return nil, errNilMessage
		}
		return m, nil
	case *jsonrpc.Response:
		if m == nil {
			return nil, errNilMessage
		}
		return m, nil
	case *jsonrpc.DecodeError:
		if m == nil || m.Err == nil {
			return nil, errNilMessage
		}
		return &jsonrpc.Response{ID: m.ID, Error: m.Err}, nil
	case jsonrpc.Batch:
		if len(m) == 0 {
			return nil, errors.New("transport: cannot send an empty batch")
		}
		var out jsonrpc.Batch // a copy, made only if an element changes
		for i, e := range m {
			if _, ok := e.(jsonrpc.Batch); ok {
				return nil, errors.New("transport: cannot send a nested batch")
			}
			w, err := wireEquivalent(e)
			if err != nil {
				return nil, err
			}
			if _, changed := e.(*jsonrpc.DecodeError); changed && out == nil {
				out = append(jsonrpc.Batch(nil), m...)
			}
			if out != nil {
				out[i] = w
			}
		}
		if out != nil {
			return out, nil
		}
		return m, nil
	case nil:
		return nil, errNilMessage
	}
	return nil, errors.New("transport: unknown message type")
}
