package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lineStream is a Stream of newline-delimited JSON over a pair of
// operating-system pipes, as stdio carries it: writes wait for the peer
// to read once the pipe's buffer is full.
type lineStream struct {
	r   *os.File
	br  *bufio.Reader
	w   *os.File
	wmu sync.Mutex
	buf []byte
}

// rawPeer is the other end of a lineStream, driven with raw lines.
type rawPeer struct {
	w  *os.File
	r  *os.File
	br *bufio.Reader
}

// newLinePipe returns a stream for a Conn and the raw peer at its other
// end.
func newLinePipe(t testing.TB) (*lineStream, *rawPeer) {
	inR, inW, err := os.Pipe() // peer -> conn
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // conn -> peer
	if err != nil {
		t.Fatal(err)
	}
	s := &lineStream{r: inR, br: bufio.NewReaderSize(inR, 64<<10), w: outW}
	p := &rawPeer{w: inW, r: outR, br: bufio.NewReaderSize(outR, 64<<10)}
	return s, p
}

func (s *lineStream) Read(context.Context) (Message, error) {
	line, err := s.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return DecodeMessage(line)
}

func (s *lineStream) Write(ctx context.Context, m Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	if s.buf, err = AppendMessage(s.buf[:0], m); err != nil {
		return err
	}
	s.buf = append(s.buf, '\n')
	_, err = s.w.Write(s.buf)
	return err
}

func (s *lineStream) Close() error {
	s.r.Close()
	s.w.Close()
	return nil
}

// send writes one raw line.
func (p *rawPeer) send(t testing.TB, line string) {
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		t.Errorf("peer write: %v", err)
	}
}

// recv reads one line, or returns an error at the end of the stream.
func (p *rawPeer) recv() (string, error) {
	return p.br.ReadString('\n')
}

// close ends the peer's output and input.
func (p *rawPeer) close() {
	p.w.Close()
	p.r.Close()
}

// notesThenAnswer is a transport for TestConnNotificationsBeforeResponse:
// it connects conn to a peer that answers each request with n
// notifications and then the response.
type notesThenAnswer func(t *testing.T, opts *ConnOptions, n int) *Conn

// channelPeer answers over the channel-backed pipeStream.
func channelPeer(t *testing.T, opts *ConnOptions, n int) *Conn {
	a, b := newPipe()
	c := NewConn(a, opts)
	c.Start()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := b.Read(context.Background())
			if err != nil {
				return
			}
			req, ok := m.(*Request)
			if !ok || req.IsNotification() {
				continue
			}
			for i := range n {
				if b.Write(context.Background(), &Request{Method: "log", Params: fmt.Appendf(nil, `{"n":%d}`, i)}) != nil {
					return
				}
			}
			if b.Write(context.Background(), &Response{ID: req.ID, Result: []byte(`{}`)}) != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.Close(); b.Close(); c.Wait(); <-done })
	return c
}

// linePeer answers with raw lines over a pipe, as a stdio server does.
func linePeer(t *testing.T, opts *ConnOptions, n int) *Conn {
	s, p := newLinePipe(t)
	c := NewConn(s, opts)
	c.Start()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			line, err := p.recv()
			if err != nil {
				return
			}
			m, err := DecodeMessage([]byte(line))
			if err != nil {
				continue
			}
			req, ok := m.(*Request)
			if !ok || req.IsNotification() {
				continue
			}
			var buf []byte
			for i := range n {
				buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"log","params":{"n":%d}}`+"\n", i)
			}
			buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
			if _, err := p.w.Write(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.Close(); p.close(); c.Wait(); <-done })
	return c
}

// pushPeer answers through a PushStream, as the client side of
// Streamable HTTP delivers a POST's event stream.
func pushPeer(t *testing.T, opts *ConnOptions, n int) *Conn {
	ps := &hookPush{closed: make(chan struct{})}
	var wg sync.WaitGroup
	ps.write = func(m Message) {
		req, ok := m.(*Request)
		if !ok || req.IsNotification() {
			return
		}
		// The answer is delivered on a goroutine of its own, one message at a
		// time and in order, as the HTTP client's inbox does.
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				ps.receive(&Request{Method: "log", Params: fmt.Appendf(nil, `{"n":%d}`, i)})
			}
			ps.receive(&Response{ID: req.ID, Result: []byte(`{}`)})
		}()
	}
	c := NewConn(ps, opts)
	c.Start()
	t.Cleanup(func() { c.Close(); c.Wait(); wg.Wait() })
	return c
}

// TestConnNotificationsBeforeResponse checks that the notifications a
// peer sends before a response have been handled when the call it
// answers returns, over every kind of stream.
func TestConnNotificationsBeforeResponse(t *testing.T) {
	const n = 2000
	peers := []struct {
		name string
		peer notesThenAnswer
	}{
		{"channel", channelPeer},
		{"line pipe", linePeer},
		{"push", pushPeer},
	}
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			checkGoroutines(t)
			var handled atomic.Int64
			c := p.peer(t, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if req.Method == "log" {
					handled.Add(1)
				}
				return nil, nil
			})}, n)
			for round := int64(1); round <= 3; round++ {
				if _, err := c.Call(context.Background(), "tools/call", nil); err != nil {
					t.Fatalf("Call: %v", err)
				}
				if got := handled.Load(); got != round*n {
					t.Fatalf("round %d: %d notifications handled when the call returned, want %d", round, got, round*n)
				}
			}
		})
	}
}

// hookPush is a PushStream that passes what the Conn writes to write.
type hookPush struct {
	receive func(Message)
	end     func(error)
	write   func(Message)
	closed  chan struct{}
	once    sync.Once
}

func (p *hookPush) Push(receive func(Message), end func(error)) { p.receive, p.end = receive, end }
func (p *hookPush) Read(context.Context) (Message, error) {
	panic("Read called on a PushStream")
}
func (p *hookPush) Write(ctx context.Context, m Message) error {
	select {
	case <-p.closed:
		return io.ErrClosedPipe
	default:
	}
	p.write(m)
	return nil
}
func (p *hookPush) Close() error { p.once.Do(func() { close(p.closed) }); return nil }

// TestConnNotificationHandlerCalls checks that a notification handler
// that calls the peer and waits for the answer gets it, while more
// notifications wait behind it and the queue is full: with the context
// it was given (its answer is not held behind the notifications), or
// with another (the handler is left behind after a while, and the
// notifications after it go on).
func TestConnNotificationHandlerCalls(t *testing.T) {
	tests := []struct {
		name    string
		ownCtx  bool
		maxNote int
	}{
		{"own context", true, 0},
		{"own context, queue full", true, 2},
		{"other context", false, 0},
		{"other context, queue full", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			const n = 50
			a, b := newPipe()
			var handled atomic.Int64
			answered := make(chan struct{})
			var client *Conn
			client = NewConn(a, &ConnOptions{
				MaxQueuedNotifications: tt.maxNote,
				Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					if req.Method != "note" {
						return nil, nil
					}
					if handled.Add(1) == 1 {
						callCtx := ctx
						if !tt.ownCtx {
							callCtx = context.Background()
						}
						if _, err := client.Call(callCtx, "echo", []byte(`[1]`)); err != nil {
							t.Errorf("call from the notification handler: %v", err)
						}
						close(answered)
					}
					return nil, nil
				}),
			})
			peer := NewConn(b, &ConnOptions{Handler: HandlerFunc(echo)})
			client.Start()
			peer.Start()
			t.Cleanup(func() { client.Close(); peer.Close(); client.Wait(); peer.Wait() })
			for range n {
				if err := peer.Notify(context.Background(), "note", nil); err != nil {
					t.Fatal(err)
				}
			}
			failAfter(t, "the answer to the handler's call", answered)
			// A call after the notifications returns once all are handled.
			if _, err := client.Call(context.Background(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			if got := handled.Load(); got != n {
				t.Errorf("%d of %d notifications handled", got, n)
			}
		})
	}
}

// TestConnCancelFreesID checks that once the peer has cancelled a
// request, it may reuse its id at once, even while the cancelled
// handler is still running: the new request is served and answered, and
// the cancelled one is not.
func TestConnCancelFreesID(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	started := make(chan struct{})
	var c *Conn
	a, b := newPipe()
	c = NewConn(b, &ConnOptions{
		// Cancellations are applied on arrival, as MCP does.
		OnReceive: func(req *Request) {
			if req.Method == "cancel" {
				c.Cancel(Int64ID(1))
			}
		},
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "stubborn": // ignores its cancellation
				close(started)
				<-release
				return "stubborn", nil
			case "echo":
				return req.Params, nil
			}
			return nil, nil
		}),
	})
	c.Start()
	t.Cleanup(func() { a.Close(); c.Close(); c.Wait() })
	a.out <- []byte(`{"jsonrpc":"2.0","id":1,"method":"stubborn"}`)
	<-started
	a.out <- []byte(`{"jsonrpc":"2.0","method":"cancel"}`)
	a.out <- []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":["again"]}`)
	want := `{"jsonrpc":"2.0","id":1,"result":["again"]}`
	select {
	case got := <-a.in:
		if string(got) != want {
			t.Fatalf("answer = %s, want %s", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request that reused the id was not answered")
	}
	close(release)
	// The cancelled request's answer is suppressed: the next answer is
	// to the next request.
	a.out <- []byte(`{"jsonrpc":"2.0","id":2,"method":"echo","params":["next"]}`)
	if got, want := string(<-a.in), `{"jsonrpc":"2.0","id":2,"result":["next"]}`; got != want {
		t.Fatalf("answer = %s, want %s", got, want)
	}
}
