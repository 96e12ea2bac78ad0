package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
)

// lineStream is a Stream of newline-delimited JSON over a pair of pipes,
// as stdio carries it: writes wait for the peer to read.
type lineStream struct {
	r      *io.PipeReader
	br     *bufio.Reader
	w      *io.PipeWriter
	wmu    sync.Mutex
	closed sync.Once
}

// rawPeer is the other end of a lineStream, driven with raw lines.
type rawPeer struct {
	w  *io.PipeWriter
	r  *io.PipeReader
	br *bufio.Reader
}

// newLinePipe returns a stream for a Conn and the raw peer at its other
// end.
func newLinePipe() (*lineStream, *rawPeer) {
	inR, inW := io.Pipe()   // peer -> conn
	outR, outW := io.Pipe() // conn -> peer
	s := &lineStream{r: inR, br: bufio.NewReaderSize(inR, 64<<10), w: outW}
	p := &rawPeer{w: inW, r: outR, br: bufio.NewReaderSize(outR, 64<<10)}
	return s, p
}

func (s *lineStream) Read(context.Context) (Message, error) {
	line, err := s.br.ReadSlice('\n')
	if err != nil {
		if err == io.ErrClosedPipe {
			return nil, io.EOF
		}
		return nil, err
	}
	return DecodeMessage(line)
}

func (s *lineStream) Write(ctx context.Context, m Message) error {
	data, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.Write(data)
	return err
}

func (s *lineStream) Close() error {
	s.closed.Do(func() {
		s.r.CloseWithError(io.ErrClosedPipe)
		s.w.CloseWithError(io.ErrClosedPipe)
	})
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
	line, err := p.br.ReadString('\n')
	return line, err
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
	s, p := newLinePipe()
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
