package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// halfStream is a stream whose input the test feeds and ends (as a peer
// that closes its sending side but keeps reading), and whose output the
// test reads from out. With block set, Write waits until Close: a peer
// that never reads.
type halfStream struct {
	in     chan []byte // closed by the test: end of input
	out    chan Message
	block  bool
	gate   chan struct{} // if not nil, Write waits until it is closed
	writes atomic.Int64
	closed chan struct{}
	once   sync.Once
}

func newHalfStream(block bool) *halfStream {
	return &halfStream{
		in:     make(chan []byte, 256),
		out:    make(chan Message, 256),
		block:  block,
		closed: make(chan struct{}),
	}
}

func (h *halfStream) Read(ctx context.Context) (Message, error) {
	select {
	case data, ok := <-h.in:
		if !ok {
			return nil, io.EOF
		}
		return DecodeMessage(data)
	case <-h.closed:
		return nil, io.ErrClosedPipe
	}
}

func (h *halfStream) Write(ctx context.Context, m Message) error {
	h.writes.Add(1)
	if h.block {
		<-h.closed
		return io.ErrClosedPipe
	}
	if h.gate != nil {
		select {
		case <-h.gate:
		case <-h.closed:
			return io.ErrClosedPipe
		}
	}
	select {
	case h.out <- m:
		return nil
	case <-h.closed:
		return io.ErrClosedPipe
	}
}

func (h *halfStream) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

// TestConnDrainAtEndOfInput checks that when the peer ends its input,
// the requests already read are answered and the notifications already
// read delivered before the connection shuts down.
func TestConnDrainAtEndOfInput(t *testing.T) {
	tests := []struct {
		name   string
		method string
	}{
		{"quick handlers", "echo"},
		// The handler asks the peer something: the call fails at the
		// end of input, and the handler's own answer is still sent.
		{"handlers that call the peer", "ask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			s := newHalfStream(false)
			var (
				c        *Conn
				notified = make(chan string, 1)
			)
			c = NewConn(s, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				switch req.Method {
				case "note":
					notified <- req.Method
					return nil, nil
				case "ask":
					_, err := c.Call(ctx, "question", nil)
					if !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
						return nil, fmt.Errorf("call at end of input: %v", err)
					}
					return "asked", nil
				}
				return echo(ctx, req)
			})})
			const n = 10
			s.in <- []byte(`{"jsonrpc":"2.0","method":"note"}`)
			for i := range n {
				s.in <- fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":[%d]}`, i, tt.method, i)
			}
			close(s.in)
			c.Start()
			if err := c.Wait(); err != io.EOF {
				t.Errorf("Wait = %v, want io.EOF", err)
			}
			// Everything written is in out's buffer by now.
			got := map[string]bool{}
			for len(s.out) > 0 {
				m := <-s.out
				if _, ok := m.(*Request); ok {
					continue // a handler's question
				}
				r, ok := m.(*Response)
				if !ok || r.Error != nil {
					t.Fatalf("got %v, want a result", m)
				}
				if got[r.ID.String()] {
					t.Fatalf("two answers for id %s", r.ID)
				}
				got[r.ID.String()] = true
			}
			if len(got) != n {
				t.Errorf("%d of %d requests answered", len(got), n)
			}
			select {
			case <-notified:
			default:
				t.Error("the notification was not delivered")
			}
		})
	}
}

// TestConnDrainTimeout checks that handlers still running when the drain
// timeout passes are cancelled and the connection shuts down, and that a
// negative timeout shuts down at once.
func TestConnDrainTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Second, -1} {
		t.Run(fmt.Sprint(timeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHalfStream(false)
				started := make(chan struct{})
				c := NewConn(s, &ConnOptions{DrainTimeout: timeout, Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					close(started)
					<-ctx.Done()
					return nil, ctx.Err()
				})})
				s.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
				c.Start()
				<-started
				start := time.Now()
				close(s.in)
				<-c.Done()
				want := timeout
				switch {
				case timeout == 0:
					want = DefaultDrainTimeout
				case timeout < 0:
					want = 0
				}
				if d := time.Since(start); d != want {
					t.Errorf("shut down after %v, want %v", d, want)
				}
				if err := c.Wait(); err != io.EOF {
					t.Errorf("Wait = %v, want io.EOF", err)
				}
			})
		})
	}
}

// TestConnCloseWhileDraining checks that Close ends the drain at once.
func TestConnCloseWhileDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHalfStream(false)
		started := make(chan struct{})
		c := NewConn(s, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})})
		s.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
		c.Start()
		<-started
		close(s.in)
		synctest.Wait() // draining
		start := time.Now()
		c.Close()
		if err := c.Wait(); !errors.Is(err, ErrClosed) {
			t.Errorf("Wait = %v, want ErrClosed", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v", d)
		}
	})
}

// TestConnReadWaitsForPeerToRead checks that a peer that sends input
// needing error answers but does not read loses none of them: the Conn
// stops reading once MaxQueuedErrors answers wait to be written, and
// once the peer reads, every message is answered and the notification
// sent after the flood is delivered. With SkipUndecodable, messages
// without an id need no answer and reading never waits.
func TestConnReadWaitsForPeerToRead(t *testing.T) {
	const n = 1000
	tests := []struct {
		name      string
		skip      bool
		flood     string
		maxWrites int64 // answers the Conn may attempt while the peer does not read: the queue bound, plus the one being written
		answers   int   // answers owed once the peer reads
		logged    string
	}{
		{"not JSON", false, `not json %d`, 64 + 1, n, "queue full"},
		{"invalid requests", false, `{"jsonrpc":"1.0","id":%d,"method":"x"}`, 64 + 1, n, "queue full"},
		// The first request blocks until the connection closes; the
		// others are refused.
		{"overload", false, `{"jsonrpc":"2.0","id":%d,"method":"block"}`, 64 + 1, n - 1, "queue full"},
		{"not JSON, skipped", true, `not json %d`, 0, 0, "skipping an undecodable message"},
		// With an id the message is answered even when skipping.
		{"invalid requests, skipping", true, `{"jsonrpc":"1.0","id":%d,"method":"x"}`, 64 + 1, n, "queue full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			s := newHalfStream(false)
			s.gate = make(chan struct{})
			var logs bytes.Buffer
			var logMu sync.Mutex
			notified := make(chan struct{})
			c := NewConn(s, &ConnOptions{
				MaxInFlight:     1,
				SkipUndecodable: tt.skip,
				Logger:          slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					switch req.Method {
					case "done":
						close(notified)
					case "block":
						<-ctx.Done()
					}
					return nil, nil
				}),
			})
			c.Start()
			var written atomic.Int64
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				for i := range n {
					select {
					case s.in <- fmt.Appendf(nil, tt.flood, i+1):
						written.Add(1)
					case <-s.closed:
						return
					}
				}
				select {
				case s.in <- []byte(`{"jsonrpc":"2.0","method":"done"}`):
				case <-s.closed:
				}
			}()
			<-whenStalled(&written, finished)
			if w := s.writes.Load(); w > tt.maxWrites {
				t.Errorf("%d writes attempted while the peer did not read, want at most %d", w, tt.maxWrites)
			}
			close(s.gate) // the peer reads
			ids := map[string]int{}
			for range tt.answers {
				select {
				case m := <-s.out:
					if id := m.(*Response).ID; id.IsValid() {
						ids[id.String()]++
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("%d of %d answers after 20s", len(ids), tt.answers)
				}
			}
			failAfter(t, "the notification after the flood", notified)
			for id, k := range ids {
				if k != 1 {
					t.Errorf("id %s answered %d times", id, k)
				}
			}
			c.Close()
			c.Wait()
			logMu.Lock()
			defer logMu.Unlock()
			if !strings.Contains(logs.String(), tt.logged) {
				t.Errorf("log lacks %q:\n%.2000s", tt.logged, logs.String())
			}
		})
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestConnNoteHandoff checks when notifications waiting behind a
// notification handler that does not return are handed to a new worker:
// once the handler has run for the hand-off time, whether they arrived
// before that (the timer set when they arrived hands them over) or after
// (they are handed over on arrival), and not sooner. Fake time.
func TestConnNoteHandoff(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after time.Duration // when the second notification arrives
		want  time.Duration // when it is handled
	}{
		{"arrives at once", 0, defaultNoteHandoff},
		{"arrives within the hand-off time", defaultNoteHandoff / 4, defaultNoteHandoff},
		{"arrives after it", 3 * defaultNoteHandoff, 3 * defaultNoteHandoff},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHalfStream(false)
				release := make(chan struct{})
				second := make(chan time.Time, 1)
				c := NewConn(s, &ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
					switch req.Method {
					case "first":
						<-release
					case "second":
						second <- time.Now()
					}
					return nil, nil
				})})
				start := time.Now()
				s.in <- []byte(`{"jsonrpc":"2.0","method":"first"}`)
				c.Start()
				time.Sleep(tt.after)
				s.in <- []byte(`{"jsonrpc":"2.0","method":"second"}`)
				if got := (<-second).Sub(start); got != tt.want {
					t.Errorf("second handled after %v, want %v", got, tt.want)
				}
				close(release)
				close(s.in)
				<-c.Done()
				c.Wait()
			})
		})
	}
}

// TestConnQuickNotification checks notifications the handler declares
// quick (ConnOptions.QuickNotification): one arriving while none waits
// is handled on the goroutine that read it, before the next message is
// read; one arriving while another is handled waits behind it, and
// notifications are handled in arrival order. Fake time.
func TestConnQuickNotification(t *testing.T) {
	tests := []struct {
		name  string
		msgs  []string // methods of the notifications sent, in order; "call" is a request
		hold  string   // the method whose handler waits until the test releases it
		ready []string // handled (in any order) when all goroutines wait, before the release
		want  []string // the notifications handled in the end, in order
	}{
		// The quick one holds up reading: the request behind it is not
		// read, so not handled, until it returns.
		{"quick is inline", []string{"quick", "call"}, "quick", []string{"quick"}, []string{"quick"}},
		// A worker runs the slow one; the quick ones queue behind it,
		// and reading goes on (the request is handled meanwhile).
		{"quick waits behind slow", []string{"slow", "quick", "quick2", "call"}, "slow", []string{"call", "slow"}, []string{"slow", "quick", "quick2"}},
		{"slow behind quick", []string{"quick", "slow"}, "", nil, []string{"quick", "slow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHalfStream(false)
				release := make(chan struct{})
				var mu sync.Mutex
				var handled []string
				c := NewConn(s, &ConnOptions{
					QuickNotification: func(req *Request) bool { return strings.HasPrefix(req.Method, "quick") },
					Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
						mu.Lock()
						handled = append(handled, req.Method)
						mu.Unlock()
						if req.Method == tt.hold {
							<-release
						}
						return nil, nil
					}),
				})
				for _, m := range tt.msgs {
					if m == "call" {
						s.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"call"}`)
					} else {
						s.in <- []byte(`{"jsonrpc":"2.0","method":"` + m + `"}`)
					}
				}
				c.Start()
				synctest.Wait()
				if tt.ready != nil {
					mu.Lock()
					got := slices.Sorted(slices.Values(handled))
					mu.Unlock()
					if !slices.Equal(got, tt.ready) {
						t.Errorf("handled while %s waits: %q, want %q", tt.hold, got, tt.ready)
					}
				}
				close(release)
				close(s.in)
				<-c.Done()
				c.Wait()
				notes := slices.DeleteFunc(handled, func(m string) bool { return m == "call" })
				if !slices.Equal(notes, tt.want) {
					t.Errorf("notifications handled %q, want %q", notes, tt.want)
				}
			})
		})
	}
}
