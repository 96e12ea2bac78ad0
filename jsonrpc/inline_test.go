package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// goid returns the current goroutine's id, parsed from its stack header.
// Tests use it to tell which goroutine ran a handler.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(buf[:bytes.IndexByte(buf, ' ')]), 10, 64)
	return id
}

// bufferedPipe is a pipeStream that implements bufferedStream. It fails
// the test if two goroutines ever read at once, and records which
// goroutine made the last Read.
type bufferedPipe struct {
	*pipeStream
	t          *testing.T
	readers    atomic.Int32
	lastReader atomic.Uint64
	buffered   atomic.Bool // report buffered input even when there is none
	slowWrites atomic.Bool // each Write takes a while
}

func (b *bufferedPipe) Write(ctx context.Context, m Message) error {
	if b.slowWrites.Load() {
		time.Sleep(20 * time.Microsecond) // a write that outlasts the handoff period
	}
	return b.pipeStream.Write(ctx, m)
}

func (b *bufferedPipe) Read(ctx context.Context) (Message, error) {
	if b.readers.Add(1) > 1 {
		b.t.Error("two goroutines read the stream at once")
	}
	b.lastReader.Store(goid())
	m, err := b.pipeStream.Read(ctx)
	b.readers.Add(-1)
	return m, err
}

func (b *bufferedPipe) Buffered() bool { return b.buffered.Load() || len(b.in) > 0 }

// inlinePair connects a plain client Conn to a server Conn over a
// bufferedPipe.
func inlinePair(t *testing.T, h Handler, handoff time.Duration) (client, srv *Conn, bp *bufferedPipe) {
	t.Helper()
	a, b := newPipe()
	bp = &bufferedPipe{pipeStream: b, t: t}
	client = NewConn(a, &ConnOptions{Handler: HandlerFunc(echo)})
	srv = NewConn(bp, &ConnOptions{Handler: h, InlineHandoff: handoff})
	client.Start()
	srv.Start()
	t.Cleanup(func() {
		client.Close()
		srv.Close()
		client.Wait()
		srv.Wait()
	})
	return client, srv, bp
}

// failAfter fails the test if done is not closed within a bound far
// beyond anything the code under test needs; it guards against hangs.
func failAfter(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still waiting after 20s", what)
	}
}

func TestConnInlineWhere(t *testing.T) {
	tests := []struct {
		name       string
		handoff    time.Duration
		buffered   bool // the stream reports more input buffered
		busy       bool // another request is being handled
		wantInline bool
	}{
		{name: "idle connection, nothing buffered", wantInline: true},
		{name: "more input buffered", buffered: true},
		{name: "another request in flight", busy: true},
		{name: "inline handling off", handoff: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			var handledBy atomic.Uint64
			holding, release := make(chan struct{}), make(chan struct{})
			h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if req.Method == "hold" {
					close(holding)
					<-release
					return nil, nil
				}
				handledBy.Store(goid())
				return req.Params, nil
			})
			handoff := tt.handoff
			if handoff == 0 {
				handoff = time.Hour // only the cases under test move reading
			}
			client, _, bp := inlinePair(t, h, handoff)
			bp.buffered.Store(tt.buffered)
			ctx := t.Context()
			held := make(chan error, 1)
			if tt.busy {
				// An idle connection would run "hold" inline and stop
				// reading; start it with input reported buffered.
				bp.buffered.Store(true)
				go func() { _, err := client.Call(ctx, "hold", nil); held <- err }()
				<-holding
				bp.buffered.Store(tt.buffered)
			}
			res, err := client.Call(ctx, "x", []byte(`[7]`))
			if err != nil || string(res) != "[7]" {
				t.Fatalf("Call = %s, %v", res, err)
			}
			// An inline handler ran on the goroutine that read its
			// request, which is still the last to have read.
			inline := handledBy.Load() == bp.lastReader.Load()
			if inline != tt.wantInline {
				t.Errorf("handled on the reading goroutine: %v, want %v", inline, tt.wantInline)
			}
			close(release)
			if tt.busy {
				if err := <-held; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestConnInlineSlowHandlerHandsOff(t *testing.T) {
	checkGoroutines(t)
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "block" {
			close(started)
			<-ctx.Done() // until the peer cancels it
			return nil, ctx.Err()
		}
		return req.Params, nil
	})
	client, srv, _ := inlinePair(t, h, time.Millisecond)
	ctx := t.Context()
	blocked := make(chan error, 1)
	go func() { _, err := client.Call(ctx, "block", nil); blocked <- err }()
	<-started

	// The blocked handler holds the reading goroutine; after the handoff
	// period another goroutine reads, so this call is answered.
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if res, err := client.Call(ctx, "echo", []byte(`[1]`)); err != nil || string(res) != "[1]" {
			t.Errorf("Call = %s, %v", res, err)
		}
	}()
	failAfter(t, "a call behind a slow inline handler", answered)

	// And a cancellation reaches the blocked handler.
	if !srv.Cancel(Int64ID(1)) {
		t.Fatal("the blocked request is not in flight")
	}
	client.Close()
	<-blocked
}

func TestConnInlineCallHandsOff(t *testing.T) {
	checkGoroutines(t)
	var srv *Conn
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		// A server-to-client request from an inline handler: its
		// response must be read although the handler holds the
		// reading goroutine and the handoff period is an hour.
		return srv.Call(ctx, "echo", []byte(`["back"]`))
	})
	client, s, _ := inlinePair(t, h, time.Hour)
	srv = s
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := client.Call(t.Context(), "ask", nil)
		if err != nil || string(res) != `["back"]` {
			t.Errorf("Call = %s, %v", res, err)
		}
	}()
	failAfter(t, "a handler's own call", done)
}

func TestConnInlineCloseDoesNotWaitForHandler(t *testing.T) {
	checkGoroutines(t)
	started, release := make(chan struct{}), make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-release // ignores its context
		return nil, nil
	})
	client, srv, _ := inlinePair(t, h, time.Hour)
	go client.Call(context.Background(), "stuck", nil)
	<-started
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	failAfter(t, "Close with an inline handler stuck", closed)
	waited := make(chan struct{})
	go func() { srv.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned before the handler did")
	default:
	}
	close(release)
	failAfter(t, "Wait after the handler returned", waited)
}

// TestConnInlineStress mixes quick and slow handlers, sequential and
// concurrent callers, and a handoff period short enough that reading
// moves between goroutines all the time; bufferedPipe fails the test if
// two goroutines ever read at once.
func TestConnInlineStress(t *testing.T) {
	checkGoroutines(t)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "slow" {
			time.Sleep(50 * time.Microsecond) // work that outlasts the handoff period
		}
		return req.Params, nil
	})
	client, _, bp := inlinePair(t, h, time.Microsecond)
	bp.slowWrites.Store(true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				method := "quick"
				if (g+i)%7 == 0 {
					method = "slow"
				}
				want := fmt.Sprintf("[%d]", g*1000+i)
				res, err := client.Call(t.Context(), method, []byte(want))
				if err != nil || string(res) != want {
					t.Errorf("Call = %s, %v; want %s", res, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
