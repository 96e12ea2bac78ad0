//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// clientInboxSize is how many incoming messages may wait, for Read or for
// the receive call under way, before the goroutines reading event streams
// wait for room. Messages read on a writer's goroutine never wait (see
// deliver).
const clientInboxSize = 16

// clientInbound is one result for Read or receive.
type clientInbound struct {
	m   jsonrpc.Message
	err error
}

// clientInbox is the queue between the goroutines that read response
// bodies and the consumer: Read, or once Push is called, the receive
// function of a [jsonrpc.PushStream].
//
// No lock is held while receive runs. receive may write (a jsonrpc.Conn
// answers a refused batch or an undecodable message from within it), and
// the answer to that write can be read on the same goroutine: a delivery
// that found the lock held, or a receive under way, would wait for
// itself. Instead, whichever goroutine delivers while no receive runs
// becomes the drainer: it calls receive for its message and then for
// every message queued meanwhile, in order, one at a time. A delivery
// while a drainer runs (from another stream, or from a write within
// receive) queues its message and returns.
type clientInbox struct {
	mu       sync.Mutex
	q        []clientInbound // waiting messages, oldest first
	draining bool            // a goroutine is calling receive
	receive  func(jsonrpc.Message)
	end      func(error)
	ended    bool          // end was called; the drainer's alone
	ready    chan struct{} // signalled when q gains a message for Read
	// room, when not nil, is closed (and cleared) when q shrinks, for
	// deliveries waiting until it is shorter than clientInboxSize.
	room chan struct{}

	readErr error // the error that ended the stream; Read's goroutine only
}

// Push implements [jsonrpc.PushStream]. Messages that arrived before it
// was called are pushed first.
func (c *httpClientCore) Push(receive func(jsonrpc.Message), end func(error)) {
	b := &c.inbox
	b.mu.Lock()
	b.receive, b.end = receive, end
	if b.draining || len(b.q) == 0 {
		b.mu.Unlock()
		return
	}
	c.drainLocked(b.pop())
}

// deliver passes a result to the connection: pushed to receive, or queued
// for Read. It reports false if the connection closed first.
//
// wait says whether the caller may wait for room when clientInboxSize
// messages are waiting already. Goroutines reading event streams pass
// true, so that a server cannot make the queue grow faster than the
// consumer takes from it. A writer's goroutine reading the answer to its
// own POST passes false: it may run within receive, and the queue then
// cannot shrink before it returns. What it queues is bounded by the body
// of one response.
func (c *httpClientCore) deliver(m jsonrpc.Message, err error, wait bool) bool {
	b := &c.inbox
	b.mu.Lock()
	for {
		if c.isClosed() {
			b.mu.Unlock()
			return false
		}
		if b.receive != nil && !b.draining {
			c.drainLocked(clientInbound{m, err})
			return true
		}
		if !wait || len(b.q) < clientInboxSize {
			break
		}
		if b.room == nil {
			b.room = make(chan struct{})
		}
		room := b.room
		b.mu.Unlock()
		select {
		case <-room:
		case <-c.done:
		}
		b.mu.Lock()
	}
	b.q = append(b.q, clientInbound{m, err})
	if b.receive == nil {
		select {
		case b.ready <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
	return true
}

// pop removes and returns the oldest waiting message. b.mu is held and q
// is not empty.
func (b *clientInbox) pop() clientInbound {
	in := b.q[0]
	b.q[0] = clientInbound{}
	b.q = b.q[1:]
	if len(b.q) == 0 {
		b.q = b.q[:0:0] // let a burst's backing array go
	}
	if b.room != nil {
		close(b.room)
		b.room = nil
	}
	return in
}

// drainLocked makes the calling goroutine the drainer: it pushes in, then
// every message queued meanwhile, until the queue is empty or the
// connection closed. b.mu is held on entry and released on return.
func (c *httpClientCore) drainLocked(in clientInbound) {
	b := &c.inbox
	b.draining = true
	for {
		b.mu.Unlock()
		c.pushOne(in)
		b.mu.Lock()
		if len(b.q) == 0 || c.isClosed() {
			break
		}
		in = b.pop()
	}
	b.draining = false
	b.mu.Unlock()
}

// pushOne passes one result to receive, or to end when it is an error
// that ends the stream. Only the drainer calls it.
func (c *httpClientCore) pushOne(in clientInbound) {
	b := &c.inbox
	if b.ended {
		return
	}
	m := in.m
	if in.err != nil {
		var de *jsonrpc.DecodeError
		if !errors.As(in.err, &de) {
			b.ended = true
			// end closes the connection, which waits for the goroutine
			// that is delivering: end must run on another.
			go b.end(in.err)
			return
		}
		m = de
	}
	// A *jsonrpc.DecodeError too is passed to receive here, in order: the
	// connection answers it with a Write, which cannot block delivery
	// (see clientInbox).
	b.receive(m)
}

// read implements Conn.Read.
func (c *httpClientCore) read(ctx context.Context) (jsonrpc.Message, error) {
	b := &c.inbox
	if c.isClosed() {
		return nil, ErrClosed
	}
	if b.readErr != nil {
		return nil, b.readErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		b.mu.Lock()
		if len(b.q) > 0 {
			in := b.pop()
			b.mu.Unlock()
			var de *jsonrpc.DecodeError
			if in.err != nil && !errors.As(in.err, &de) {
				b.readErr = in.err
			}
			return in.m, in.err
		}
		b.mu.Unlock()
		select {
		case <-b.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, ErrClosed
		}
	}
}
