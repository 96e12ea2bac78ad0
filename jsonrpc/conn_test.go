package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pipeStream is one end of an in-process stream that encodes and decodes
// every message, so tests exercise the codec too.
type pipeStream struct {
	in     <-chan []byte
	out    chan<- []byte
	closed chan struct{}
	once   sync.Once
	peer   *pipeStream
}

func newPipe() (*pipeStream, *pipeStream) {
	ab, ba := make(chan []byte, 64), make(chan []byte, 64)
	a := &pipeStream{in: ba, out: ab, closed: make(chan struct{})}
	b := &pipeStream{in: ab, out: ba, closed: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

func (p *pipeStream) Read(ctx context.Context) (Message, error) {
	select {
	case data := <-p.in:
		return DecodeMessage(data)
	case <-p.closed:
		return nil, io.ErrClosedPipe
	case <-p.peer.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pipeStream) Write(ctx context.Context, m Message) error {
	data, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	select {
	case p.out <- data:
		return nil
	case <-p.closed:
		return io.ErrClosedPipe
	case <-p.peer.closed:
		return io.ErrClosedPipe
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pipeStream) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// checkGoroutines fails the test if goroutines started during it are still
// running at its end.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		for i := 0; i < 500; i++ {
			if runtime.NumGoroutine() <= before {
				return
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond) // polling for exit, not synchronisation
		}
		buf := make([]byte, 1<<16)
		t.Errorf("goroutine leak: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	})
}

func connPair(t *testing.T, server Handler, opts *ConnOptions) (client, srv *Conn) {
	t.Helper()
	a, b := newPipe()
	if opts == nil {
		opts = &ConnOptions{}
	}
	o := *opts
	o.Handler = server
	client = NewConn(a, nil)
	srv = NewConn(b, &o)
	client.Start()
	srv.Start()
	t.Cleanup(func() {
		client.Close()
		srv.Close()
		client.Wait()
		srv.Wait()
	})
	return client, srv
}

func echo(ctx context.Context, req *Request) (any, error) {
	switch req.Method {
	case "echo":
		return req.Params, nil
	case "fail":
		return nil, &Error{Code: 42, Message: "failed"}
	case "plain":
		return nil, errors.New("plain error")
	case "panic":
		panic("boom")
	case "block":
		<-ctx.Done()
		return nil, ctx.Err()
	case "struct":
		return struct {
			A int `json:"a"`
		}{A: 1}, nil
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
}

func TestConnCall(t *testing.T) {
	checkGoroutines(t)
	client, _ := connPair(t, HandlerFunc(echo), nil)
	ctx := context.Background()
	tests := []struct {
		method, params, want string
		code                 int64
	}{
		{method: "echo", params: `{"x":1}`, want: `{"x":1}`},
		{method: "echo", want: `{}`},
		{method: "struct", want: `{"a":1}`},
		{method: "fail", code: 42},
		{method: "plain", code: CodeInternalError},
		{method: "panic", code: CodeInternalError},
		{method: "nope", code: CodeMethodNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			var params json.RawMessage
			if tt.params != "" {
				params = json.RawMessage(tt.params)
			}
			got, err := client.Call(ctx, tt.method, params)
			if tt.code != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("Call(%s) err = %v; want code %d", tt.method, err, tt.code)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Call(%s) = %s, %v; want %s", tt.method, got, err, tt.want)
			}
		})
	}
}

func TestConnConcurrentCalls(t *testing.T) {
	checkGoroutines(t)
	client, _ := connPair(t, HandlerFunc(echo), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf(`{"i":%d}`, i)
			got, err := client.Call(context.Background(), "echo", json.RawMessage(p))
			if err != nil || string(got) != p {
				errs <- fmt.Errorf("call %d = %s, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestConnCallsReuseReplies makes calls one after another and at once,
// some of them cancelled while their answers may be on their way, some
// answered after a notification (the answer then waits for the client's
// notification handler, which may make a call of its own), some when the
// connection closes under them: a call that received its answer gives its
// reply channel to the next, one that ended otherwise keeps it, so every
// answer reaches its own call.
func TestConnCallsReuseReplies(t *testing.T) {
	checkGoroutines(t)
	for _, tt := range []struct {
		name           string
		callers, calls int
		notify         bool // the server notifies before every other answer
		closeAfter     int  // the client closes after this many answers; 0: never
	}{
		{"one caller", 1, 300, false, 0},
		{"eight callers", 8, 100, false, 0},
		{"answers held behind notifications", 8, 100, true, 0},
		{"closed under the calls", 8, 100, true, 250},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newPipe()
			var server, client *Conn
			server = NewConn(b, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if tt.notify && len(req.Params)%2 == 0 {
					server.Notify(ctx, "note", nil)
				}
				return req.Params, nil
			})})
			var noteCalls atomic.Int64
			client = NewConn(a, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				if n := noteCalls.Add(1); n%4 == 0 {
					p := fmt.Sprintf(`{"note":%d}`, n)
					if got, err := client.Call(ctx, "echo", json.RawMessage(p)); err == nil && string(got) != p {
						t.Errorf("call %s from a notification handler answered %s", p, got)
					}
				}
				return nil, nil
			})})
			server.Start()
			client.Start()
			defer func() {
				client.Close()
				server.Close()
				client.Wait()
				server.Wait()
			}()
			var answered atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, tt.callers*tt.calls)
			for g := range tt.callers {
				wg.Go(func() {
					for i := range tt.calls {
						p := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
						ctx, cancel := context.WithCancel(context.Background())
						if i%3 == 1 {
							go cancel() // while the call is sent, or answered
						}
						got, err := client.Call(ctx, "echo", json.RawMessage(p))
						cancel()
						if err == nil && answered.Add(1) == int64(tt.closeAfter) {
							go client.Close()
						}
						switch {
						case err == nil && string(got) != p:
							errs <- fmt.Errorf("call %s answered %s", p, got)
						case err == nil, errors.Is(err, context.Canceled) && i%3 == 1:
						case errors.Is(err, ErrClosed) && tt.closeAfter > 0:
						default:
							errs <- fmt.Errorf("call %s: %v", p, err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestConnBothDirections(t *testing.T) {
	checkGoroutines(t)
	a, b := newPipe()
	var server *Conn
	client := NewConn(a, &ConnOptions{Handler: HandlerFunc(echo)})
	server = NewConn(b, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		// The server calls back into the client while handling a request.
		return server.Call(ctx, "echo", json.RawMessage(`{"nested":true}`))
	})})
	client.Start()
	server.Start()
	defer func() { client.Close(); server.Close(); client.Wait(); server.Wait() }()
	got, err := client.Call(context.Background(), "anything", nil)
	if err != nil || string(got) != `{"nested":true}` {
		t.Fatalf("got %s, %v", got, err)
	}
}

func TestConnNotificationOrder(t *testing.T) {
	checkGoroutines(t)
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		mu.Lock()
		got = append(got, string(req.Params))
		if len(got) == 200 {
			close(done)
		}
		mu.Unlock()
		return nil, nil
	})
	client, _ := connPair(t, h, nil)
	for i := range 200 {
		if err := client.Notify(context.Background(), "n", json.RawMessage(fmt.Sprintf("[%d]", i))); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	for i, s := range got {
		if s != fmt.Sprintf("[%d]", i) {
			t.Fatalf("notification %d = %s", i, s)
		}
	}
}

func TestConnCallContextCancel(t *testing.T) {
	checkGoroutines(t)
	cancelled := make(chan ID, 1)
	a, b := newPipe()
	server := NewConn(b, &ConnOptions{Handler: HandlerFunc(echo)})
	client := NewConn(a, &ConnOptions{OnCancel: func(id ID, _ error) {
		// What MCP does: tell the server to stop.
		server.Cancel(id)
		cancelled <- id
	}})
	client.Start()
	server.Start()
	defer func() { client.Close(); server.Close(); client.Wait(); server.Wait() }()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := client.Call(ctx, "block", nil)
		errc <- err
	}()
	// Wait until the server is handling the request.
	for {
		server.mu.Lock()
		n := server.incoming.Len()
		server.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if id := <-cancelled; id != Int64ID(1) {
		t.Fatalf("OnCancel id = %v", id)
	}
	// The connection still serves.
	if _, err := client.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
}

func TestConnCloseUnblocks(t *testing.T) {
	checkGoroutines(t)
	client, server := connPair(t, HandlerFunc(echo), nil)
	errc := make(chan error, 1)
	go func() {
		_, err := client.Call(context.Background(), "block", nil)
		errc <- err
	}()
	for {
		server.mu.Lock()
		n := server.incoming.Len()
		server.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	client.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	// The server sees EOF and its blocked handler is cancelled.
	if err := server.Wait(); !errors.Is(err, io.EOF) {
		t.Fatalf("server.Wait() = %v, want EOF", err)
	}
	if _, err := client.Call(context.Background(), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close = %v", err)
	}
}

func TestConnOverload(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		started <- struct{}{}
		<-release
		return nil, nil
	})
	client, _ := connPair(t, h, &ConnOptions{MaxInFlight: 2})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); client.Call(context.Background(), "slow", nil) }()
	}
	<-started
	<-started
	_, err := client.Call(context.Background(), "slow", nil)
	if !errors.Is(err, ErrOverloaded) {
		t.Fatalf("err = %v, want overloaded", err)
	}
	close(release)
	wg.Wait()
}

// rawConn drives a Conn with raw lines, for wire-level checks.
func rawConn(t *testing.T, opts *ConnOptions) (send func(string), recv func() string) {
	t.Helper()
	a, b := newPipe()
	c := NewConn(b, opts)
	c.Start()
	t.Cleanup(func() { a.Close(); c.Close(); c.Wait() })
	send = func(s string) { a.out <- []byte(s) }
	recv = func() string {
		select {
		case data := <-a.in:
			return string(data)
		case <-time.After(10 * time.Second):
			t.Fatal("no response")
			return ""
		}
	}
	return send, recv
}

func TestConnBadInput(t *testing.T) {
	checkGoroutines(t)
	send, recv := rawConn(t, &ConnOptions{Handler: HandlerFunc(echo)})
	tests := []struct{ in, want string }{
		{`{bad json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`},
		{`{"jsonrpc":"1.0","id":5,"method":"echo"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,`},
		{`{"jsonrpc":"2.0","id":6,"method":"missing"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32601,`},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not allowed"}}`},
		{`{"jsonrpc":"2.0","id":"s","method":"echo","params":{"ok":1}}`, `{"jsonrpc":"2.0","id":"s","result":{"ok":1}}`},
	}
	for _, tt := range tests {
		send(tt.in)
		if got := recv(); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s\n got %s\nwant prefix %s", tt.in, got, tt.want)
		}
	}
}

func TestConnBatch(t *testing.T) {
	checkGoroutines(t)
	send, recv := rawConn(t, &ConnOptions{Handler: HandlerFunc(echo), AllowBatch: func() bool { return true }})
	send(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]},{"x":1}]`)
	m, err := DecodeMessage([]byte(recv()))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := m.(Batch)
	if !ok || len(b) != 3 {
		t.Fatalf("got %#v, want a batch of 3 responses", m)
	}
	seen := map[string]string{}
	for _, e := range b {
		r := e.(*Response)
		if r.Error != nil {
			seen[r.ID.Raw()] = fmt.Sprint(r.Error.Code)
		} else {
			seen[r.ID.Raw()] = string(r.Result)
		}
	}
	want := map[string]string{"1": "[1]", "2": "[2]", "": "-32600"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("batch answers %v, want %v", seen, want)
	}
}

func BenchmarkConnCall(b *testing.B) {
	a, s := newPipe()
	client := NewConn(a, nil)
	server := NewConn(s, &ConnOptions{Handler: HandlerFunc(echo)})
	client.Start()
	server.Start()
	defer func() { client.Close(); server.Close() }()
	params := json.RawMessage(`{"name":"echo","arguments":{"message":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Call(context.Background(), "echo", params); err != nil {
			b.Fatal(err)
		}
	}
}

// pushStream is a PushStream whose messages the test pushes by hand; what
// the Conn writes goes to out.
type pushStream struct {
	receive func(Message)
	end     func(error)
	out     chan Message
	closed  chan struct{}
	once    sync.Once
}

func (p *pushStream) Push(receive func(Message), end func(error)) { p.receive, p.end = receive, end }
func (p *pushStream) Read(context.Context) (Message, error) {
	panic("Read called on a PushStream")
}
func (p *pushStream) Write(ctx context.Context, m Message) error {
	select {
	case p.out <- m:
		return nil
	case <-p.closed:
		return io.ErrClosedPipe
	}
}
func (p *pushStream) Close() error { p.once.Do(func() { close(p.closed) }); return nil }

// binder, in a request's Extra, is found by the contextBinder of
// bindingStream: handlers find it in their context, and find their
// context cancelled by the binder's cancel function.
type binder struct{ released chan struct{} }

// bindingStream is a pushStream that is a contextBinder.
type bindingStream struct{ *pushStream }

type binderKey struct{}

var errBinderCancel = errors.New("cancelled by the binder")

func (bindingStream) BindContext(ctx context.Context, cancel context.CancelCauseFunc, req *Request) context.Context {
	b, ok := req.Extra.(*binder)
	if !ok {
		return ctx
	}
	if cancel != nil {
		cancel(errBinderCancel)
	}
	return context.WithValue(ctx, binderKey{}, b)
}

func (bindingStream) ReleaseContext(ctx context.Context) {
	if b, ok := ctx.Value(binderKey{}).(*binder); ok {
		close(b.released)
	}
}

func TestConnPushStream(t *testing.T) {
	checkGoroutines(t)
	p := &pushStream{out: make(chan Message, 8), closed: make(chan struct{})}
	c := NewConn(bindingStream{p}, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if _, ok := ctx.Value(binderKey{}).(*binder); !ok {
			return nil, errors.New("no bound context")
		}
		if !errors.Is(context.Cause(ctx), errBinderCancel) {
			return nil, fmt.Errorf("context not cancelled by the binder: %v", context.Cause(ctx))
		}
		return req.Params, nil
	})})
	c.Start()
	if p.receive == nil {
		t.Fatal("Start did not call Push")
	}
	b := &binder{released: make(chan struct{})}
	p.receive(&Request{ID: Int64ID(1), Method: "echo", Params: []byte(`[1]`), Extra: b})
	r := (<-p.out).(*Response)
	if r.Error != nil || string(r.Result) != "[1]" {
		t.Fatalf("response %+v", r)
	}
	<-b.released // the binder's release ran after the handler
	p.receive(&DecodeError{ID: Int64ID(2), Err: &Error{Code: CodeInvalidRequest, Message: "bad"}})
	if r := (<-p.out).(*Response); r.Error == nil || r.Error.Code != CodeInvalidRequest {
		t.Fatalf("decode error answered with %+v", r)
	}
	p.end(io.EOF) // the stream is over
	<-c.Done()
	if err := c.Wait(); !errors.Is(err, io.EOF) {
		t.Fatalf("Wait = %v, want io.EOF", err)
	}
	select {
	case <-p.closed:
	default:
		t.Fatal("the stream was not closed")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close after end: %v", err)
	}
}

// runnerStream is a pushStream that is also a handlerRunner: it takes the
// handlers of requests whose method is "mine" and leaves the others to
// the Conn.
type runnerStream struct {
	pushStream
	taken chan func()
}

func (r *runnerStream) RunHandler(req *Request, f func()) bool {
	if req.Method != "mine" {
		return false
	}
	r.taken <- f
	return true
}

func TestConnHandlerRunner(t *testing.T) {
	checkGoroutines(t)
	p := &runnerStream{
		pushStream: pushStream{out: make(chan Message, 8), closed: make(chan struct{})},
		taken:      make(chan func(), 1),
	}
	c := NewConn(p, &ConnOptions{
		Handler:    HandlerFunc(func(ctx context.Context, req *Request) (any, error) { return req.Params, nil }),
		AllowBatch: func() bool { return true },
	})
	c.Start()

	// A request the stream does not take runs on the Conn's goroutine.
	p.receive(&Request{ID: Int64ID(1), Method: "theirs", Params: []byte(`1`)})
	if r := (<-p.out).(*Response); string(r.Result) != "1" {
		t.Fatalf("response %+v", r)
	}

	// A request the stream takes runs only when the stream calls f, on
	// the stream's goroutine, and Wait waits for it.
	p.receive(&Request{ID: Int64ID(2), Method: "mine", Params: []byte(`2`)})
	f := <-p.taken
	select {
	case m := <-p.out:
		t.Fatalf("answered %+v before the stream ran the handler", m)
	default:
	}
	f()
	if r := (<-p.out).(*Response); string(r.Result) != "2" {
		t.Fatalf("response %+v", r)
	}

	// A batch's requests are never offered to the stream.
	p.receive(Batch{
		&Request{ID: Int64ID(3), Method: "mine", Params: []byte(`3`)},
		&Request{ID: Int64ID(4), Method: "mine", Params: []byte(`4`)},
	})
	if b, ok := (<-p.out).(Batch); !ok || len(b) != 2 {
		t.Fatalf("batch answered with %+v", b)
	}
	select {
	case <-p.taken:
		t.Fatal("a batched request was offered to the stream")
	default:
	}

	// Close waits for a taken handler that has not run yet.
	p.receive(&Request{ID: Int64ID(5), Method: "mine"})
	f = <-p.taken
	c.Close()
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()
	select {
	case <-waited:
		t.Fatal("Wait returned before the taken handler ran")
	default:
	}
	f()
	<-waited
}

// stallingWriter is a stream whose writes of requests wait until their
// context ends, as an HTTP POST waiting for its answer does.
type stallingWriter struct {
	*pipeStream
}

func (s stallingWriter) Write(ctx context.Context, m Message) error {
	if r, ok := m.(*Request); ok && !r.IsNotification() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.pipeStream.Write(ctx, m)
}

// TestCallCancelledDuringWrite checks that a call whose context ends while
// its request is still being written reports the cancellation, so that MCP
// tells the peer, which may have the request already.
func TestCallCancelledDuringWrite(t *testing.T) {
	checkGoroutines(t)
	a, b := newPipe()
	cancelled := make(chan ID, 1)
	client := NewConn(stallingWriter{a}, &ConnOptions{OnCancel: func(id ID, _ error) { cancelled <- id }})
	server := NewConn(b, nil)
	client.Start()
	server.Start()
	defer func() { client.Close(); server.Close(); client.Wait(); server.Wait() }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := client.Call(ctx, "slow", nil)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v; want context.Canceled", err)
	}
	select {
	case id := <-cancelled:
		if !id.IsValid() {
			t.Fatalf("OnCancel with an invalid id")
		}
	default:
		t.Fatal("OnCancel was not called for a call cancelled during its write")
	}
}

// TestOnReceiveOrder checks that OnReceive sees requests, notifications
// and batch elements in arrival order, before they are handled.
func TestOnReceiveOrder(t *testing.T) {
	checkGoroutines(t)
	a, b := newPipe()
	var got []string
	handled := make(chan struct{}, 8)
	server := NewConn(b, &ConnOptions{
		AllowBatch: func() bool { return true },
		OnReceive:  func(r *Request) { got = append(got, r.Method) },
		Handler: HandlerFunc(func(ctx context.Context, r *Request) (any, error) {
			handled <- struct{}{}
			return nil, nil
		}),
	})
	server.Start()
	defer func() { server.Close(); server.Wait() }()
	ctx := context.Background()
	for _, m := range []Message{
		&Request{ID: Int64ID(1), Method: "a"},
		&Request{Method: "b"},
		Batch{&Request{ID: Int64ID(2), Method: "c"}, &Request{Method: "d"}},
		&Request{ID: Int64ID(3), Method: "e"},
	} {
		if err := a.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		<-handled
	}
	server.Close()
	server.Wait() // OnReceive runs on the reading goroutine, which has returned
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("OnReceive saw %v; want %v", got, want)
	}
}

// baseStream is a pushStream that is a BaseContexter.
type baseStream struct {
	*pushStream
	base context.Context
}

func (b baseStream) BaseContext() context.Context { return b.base }

type baseKey struct{}

// TestConnBaseContext checks a stream's BaseContext: a handler's context
// carries its values and ends with it, and still ends when the
// connection shuts down while the base lives on.
func TestConnBaseContext(t *testing.T) {
	checkGoroutines(t)
	for _, end := range []string{"base", "close"} {
		t.Run(end, func(t *testing.T) {
			base, cancelBase := context.WithCancel(context.WithValue(context.Background(), baseKey{}, "v"))
			defer cancelBase()
			p := &pushStream{out: make(chan Message, 8), closed: make(chan struct{})}
			started := make(chan context.Context, 1)
			c := NewConn(baseStream{p, base}, &ConnOptions{DrainTimeout: -1, Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				started <- ctx
				<-ctx.Done()
				return nil, ctx.Err()
			})})
			c.Start()
			go p.receive(&Request{ID: Int64ID(1), Method: "wait"})
			ctx := <-started
			if ctx.Value(baseKey{}) != "v" {
				t.Error("the handler's context lacks the base's value")
			}
			if end == "base" {
				cancelBase()
			} else {
				c.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("the handler's context did not end with the %s", end)
			}
			c.Close()
			c.Wait()
		})
	}
}
