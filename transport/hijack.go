//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// A standalone GET stream is open for as long as the session lives, and
// mostly idle. Served like any other response, it holds net/http's request
// goroutine, the background reader net/http runs while a handler waits,
// and the connection's read and write buffers: about 30 KiB and two
// goroutines per session. So once it has been open hijackDelay, an HTTP/1.1
// stream is taken over from net/http (hijacked) and held by one goroutine
// of ours, with a small stack, that blocks reading the connection: a
// client that closes it, or sends anything, ends the stream at once. The
// events that end a stream's connection (release, the session's end, a
// failed write) interrupt that read. Writes frame each event as one
// chunk of the chunked body net/http started. When the server ends the
// stream, the body is finished and the connection is handed back to the
// http.Server that served the GET (through Serve, with a listener that
// yields just this connection), so the client can reuse it as it would
// any kept-alive connection.

// hijackDelay is how long a standalone stream stays on net/http before it
// is hijacked. Hijacking it and handing its connection back cost about
// half as much CPU as the stream's own exchange: a session that ends
// within the delay (a client that connects, calls a tool and leaves)
// spares that, holding net/http's goroutines and buffers meanwhile; an
// idle session, which is what the hijack is for, has its stream hijacked
// once it has lived the delay.
const hijackDelay = 100 * time.Millisecond

// hijackEndTimeout bounds the write of the chunked body's terminator when
// a hijacked stream ends: a client that is not reading loses only the
// news that the stream ended cleanly.
const hijackEndTimeout = time.Second

// errHijackedClosed is returned by writes to a hijacked stream whose
// connection failed or ended.
var errHijackedClosed = errors.New("transport: stream connection closed")

// hijackedStream is the live connection of a stream taken over from
// net/http, as the [http.ResponseWriter] the stream writes to. The
// stream's lock serializes its writes.
type hijackedStream struct {
	conn   net.Conn
	srv    *http.Server // the server to hand conn back to
	failed bool         // a write failed; guarded by the stream's lock
}

// Header implements [http.ResponseWriter]. The headers are out before a
// stream is hijacked, so changes to the returned map have no effect.
func (h *hijackedStream) Header() http.Header { return http.Header{} }

// WriteHeader implements [http.ResponseWriter]; the status is out already.
func (h *hijackedStream) WriteHeader(int) {}

// Write implements [http.ResponseWriter]: p goes out as one chunk, in one
// system call. A failed write ends the stream's connection.
func (h *hijackedStream) Write(p []byte) (int, error) {
	if h.failed {
		return 0, errHijackedClosed
	}
	if len(p) == 0 {
		return 0, nil // a chunk of length zero would end the body
	}
	var size [20]byte
	head := append(strconv.AppendInt(size[:0], int64(len(p)), 16), '\r', '\n')
	bufs := net.Buffers{head, p, crlf}
	if _, err := bufs.WriteTo(h.conn); err != nil {
		h.failed = true
		h.interrupt()
		return 0, err
	}
	return len(p), nil
}

var crlf = []byte("\r\n")

// FlushError lets [http.ResponseController] flush the stream: every write
// is out when Write returns, so it only reports a failed one.
func (h *hijackedStream) FlushError() error {
	if h.failed {
		return errHijackedClosed
	}
	return nil
}

// SetWriteDeadline lets [http.ResponseController] bound writes.
func (h *hijackedStream) SetWriteDeadline(t time.Time) error {
	return h.conn.SetWriteDeadline(t)
}

// interrupt ends the read that holds the connection, now or as soon as it
// starts.
func (h *hijackedStream) interrupt() {
	h.conn.SetReadDeadline(time.Unix(1, 0))
}

// finish writes the chunked body's terminator and reports whether the
// connection can serve another request.
func (h *hijackedStream) finish() bool {
	if h.failed {
		return false
	}
	h.conn.SetWriteDeadline(time.Now().Add(hijackEndTimeout))
	if _, err := h.conn.Write([]byte("0\r\n\r\n")); err != nil {
		return false
	}
	return h.conn.SetDeadline(time.Time{}) == nil
}

// interruptHijackedLocked ends the read holding the live connection, if it
// is a hijacked one.
func (st *httpStream) interruptHijackedLocked() {
	if h, ok := st.w.(*hijackedStream); ok {
		h.interrupt()
	}
}

// handOver hijacks the standalone stream st, answering r through w on
// its connection number conn, once it has been open h.hijackAfter, and
// reports whether it did (then end runs when the stream is done with the
// connection). It returns false at once for a stream that cannot be
// hijacked, and as soon as the stream's connection ends within the
// delay: the caller then waits for the stream as for any other.
func (h *StreamableHTTPHandler) handOver(w http.ResponseWriter, r *http.Request, st *httpStream, conn int, end func()) bool {
	if !h.hijackable(w, r) || !st.outlives(r.Context(), conn, h.hijackAfter) {
		return false
	}
	if !st.hijack(w, r, conn, end) {
		return false
	}
	if h.testHookHijacked != nil {
		h.testHookHijacked()
	}
	return true
}

// outlives reports whether the stream's connection number conn is still
// live after d, waiting at most that long: false as soon as the stream is
// finished, detached or over with its session, or the client went away
// (the events wait waits for, which then returns at once).
func (st *httpStream) outlives(ctx context.Context, conn int, d time.Duration) bool {
	st.mu.Lock()
	live := st.w != nil && st.conns == conn
	if !live || d <= 0 {
		st.mu.Unlock()
		return live
	}
	finished, detached := st.finishedLocked(), st.detachedLocked()
	st.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-finished:
	case <-detached:
	case <-st.s.done:
	case <-ctx.Done():
	}
	return false
}

// hijackable reports whether the stream answering r through w can be
// taken over from net/http (see the top of this file). Only net/http's
// own HTTP/1.1 writers qualify: a middleware's wrapper may need to see
// what is written (it may compress it, or count it), and HTTP/2 streams
// cannot be hijacked. The connection must have a server to go back to.
func (h *StreamableHTTPHandler) hijackable(w http.ResponseWriter, r *http.Request) bool {
	if _, ok := w.(http.Hijacker); !ok || h.opts.DisableHijack || r.ProtoMajor != 1 || r.ProtoMinor < 1 {
		return false
	}
	// A server with a ConnState hook tracks its connections (httptest's
	// does, and waits for them): one that went away hijacked and came back
	// would confuse it, so its streams stay on net/http.
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); !ok || srv.ConnState != nil {
		return false
	}
	hdr := w.Header()
	// The body must be plainly chunked.
	return hdr.Get("Transfer-Encoding") == "" && hdr.Get("Content-Length") == "" && hdr.Get("Content-Encoding") == ""
}

// hijack takes w, the live connection number conn of a standalone stream
// whose SSE headers are out and which was found hijackable, over from
// net/http, and reports whether it did; then end runs when the stream no
// longer needs the connection, instead of when the HTTP handler returns.
func (st *httpStream) hijack(w http.ResponseWriter, r *http.Request, conn int, end func()) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.w != w || st.conns != conn || st.released || !st.wrote {
		return false // the connection is already over
	}
	if !st.s.h.holders.add() {
		return false // the handler is closing
	}
	nc, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		st.s.h.holders.done()
		return false
	}
	h := &hijackedStream{conn: nc, srv: r.Context().Value(http.ServerContextKey).(*http.Server)}
	if brw.Reader.Buffered() > 0 {
		h.interrupt() // the client sent something after its GET
	}
	st.w = h
	st.deadline = false // Hijack cleared the connection's deadlines
	if st.s.isClosed() {
		h.interrupt() // the session ended; its Close may have missed h
	}
	go st.holdHijacked(h, end)
	return true
}

// holdHijacked holds the hijacked connection h until the client closes
// it or sends anything, or the stream is done with it. In the last case
// the connection goes back to its server.
func (st *httpStream) holdHijacked(h *hijackedStream, end func()) {
	var b [1]byte
	n, err := h.conn.Read(b[:])
	st.mu.Lock()
	if st.w == h {
		st.w = nil
	}
	st.mu.Unlock()
	end()
	defer st.s.h.holders.done()
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && h.finish() && !st.s.h.holders.isClosing() {
		l := &handBack{conn: h.conn}
		h.srv.Serve(l) // returns once the connection is taken, or at once when the server is shutting down
		if l.taken {
			return
		}
	}
	h.conn.Close()
}

// holderSet counts the goroutines holding hijacked streams, so that the
// handler's Close can wait for them.
type holderSet struct {
	mu      sync.Mutex
	n       int
	closing bool
	zero    chan struct{} // closed when n drops to zero while closing
}

// add counts a new holder, unless the handler is closing.
func (hs *holderSet) add() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closing {
		return false
	}
	hs.n++
	return true
}

func (hs *holderSet) done() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.n--
	if hs.n == 0 && hs.zero != nil {
		close(hs.zero)
		hs.zero = nil
	}
}

func (hs *holderSet) isClosing() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.closing
}

// refuse refuses new holders, and tells the current ones that the
// handler is closing.
func (hs *holderSet) refuse() {
	hs.mu.Lock()
	hs.closing = true
	hs.mu.Unlock()
}

// close refuses new holders and waits for the last one to end. The
// streams were told to end before (their sessions were closed), so the
// wait is bounded by hijackEndTimeout.
func (hs *holderSet) close() {
	hs.mu.Lock()
	hs.closing = true
	var zero chan struct{}
	if hs.n > 0 {
		if hs.zero == nil {
			hs.zero = make(chan struct{})
		}
		zero = hs.zero
	}
	hs.mu.Unlock()
	if zero != nil {
		<-zero
	}
}

// handBack is a listener that yields one connection, then ends: serving
// it makes an [http.Server] take back a connection that was hijacked.
type handBack struct {
	conn  net.Conn
	taken bool
}

// errHandedBack ends the Serve of a [handBack] once its connection is
// taken.
var errHandedBack = errors.New("transport: connection handed back")

func (l *handBack) Accept() (net.Conn, error) {
	if l.taken {
		return nil, errHandedBack
	}
	l.taken = true
	return l.conn, nil
}

func (l *handBack) Close() error   { return nil }
func (l *handBack) Addr() net.Addr { return l.conn.LocalAddr() }
