package transport

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestClientInbox checks the delivery queue of the HTTP clients: a
// delivery from within receive (the answer to a write receive made)
// queues and returns instead of waiting for itself; stream readers wait
// for room once clientInboxSize messages are queued; everything arrives
// once, in order; and Close releases a reader waiting for room.
func TestClientInbox(t *testing.T) {
	c := newHTTPClientCore(context.Background(), nil, nil, 1<<20)
	defer func() {
		c.shutdown()
		c.wait()
	}()
	note := func(n int) jsonrpc.Message {
		return &jsonrpc.Request{Method: "n", Params: []byte{byte('0' + n%10)}}
	}
	var (
		mu     sync.Mutex
		got    []string
		block  = make(chan struct{})
		inside = make(chan struct{})
		last   = make(chan struct{})
	)
	c.Push(func(m jsonrpc.Message) {
		r := m.(*jsonrpc.Request)
		mu.Lock()
		got = append(got, r.Method+string(r.Params))
		first := len(got) == 1
		mu.Unlock()
		if r.Method == "last" {
			close(last)
		}
		if first {
			// The answer to a write made from within receive.
			if !c.deliver(&jsonrpc.Request{Method: "nested"}, nil, false) {
				t.Error("nested deliver failed")
			}
			close(inside)
			<-block
		}
	}, func(error) {})

	go c.deliver(note(0), nil, true) // becomes the drainer, then blocks in receive
	waitFor(t, inside, "the first receive")
	// A stream reader delivers 30 messages while receive is blocked: it
	// must stop at the bound.
	delivered := make(chan int, 1)
	go func() {
		n := 0
		for i := 1; i <= 30; i++ {
			if !c.deliver(note(i), nil, true) {
				break
			}
			n++
		}
		delivered <- n
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.inbox.mu.Lock()
		queued, waiting := len(c.inbox.q), c.inbox.room != nil
		c.inbox.mu.Unlock()
		if queued > clientInboxSize {
			t.Fatalf("%d messages queued, bound %d", queued, clientInboxSize)
		}
		if waiting && queued == clientInboxSize {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader did not wait for room: %d queued", queued)
		}
		time.Sleep(time.Millisecond) // polling for the bound to be reached
	}
	close(block)
	if n := waitFor(t, delivered, "the reader to finish"); n != 30 {
		t.Fatalf("delivered %d of 30", n)
	}
	// The drainer pushes what is queued, then the last message.
	c.deliver(&jsonrpc.Request{Method: "last"}, nil, true)
	waitFor(t, last, "the last message")
	mu.Lock()
	defer mu.Unlock()
	want := []string{"n0", "nested"}
	for i := 1; i <= 30; i++ {
		want = append(want, "n"+string(rune('0'+i%10)))
	}
	want = append(want, "last")
	if len(got) != len(want) {
		t.Fatalf("got %d messages %q, want %q", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d = %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}
}
