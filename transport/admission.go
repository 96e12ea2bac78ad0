//go:build !mcpkit_nohttp

package transport

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Admission control of the HTTP servers: the session table with its
// bounds (MaxSessions, MaxSessionsPerPeer) and evictions, and the reading
// of request bodies bounded in size and time.

// ErrSessionEvicted is the reason a server-side HTTP session's connection
// reports when it was closed, idle, to make room for a new session: its
// peer had opened MaxSessionsPerPeer sessions, or the table was full and
// it was the longest-idle session without credentials.
var ErrSessionEvicted = errors.New("transport: HTTP session evicted for a new one")

// ErrHandshakeTimeout is the reason a server-side HTTP session's
// connection reports when its client sent nothing after initialize within
// the handshake timeout. It is an idle timeout too: errors.Is matches it
// with [ErrSessionIdle].
var ErrHandshakeTimeout error = &idleError{"transport: HTTP session idle timeout: nothing sent after initialize"}

// idleError is an error that errors.Is matches with [ErrSessionIdle]. (It
// is not made with fmt.Errorf, whose first use costs a process microseconds
// at start-up, before it could answer.)
type idleError struct{ msg string }

func (e *idleError) Error() string { return e.msg }

func (e *idleError) Unwrap() error { return ErrSessionIdle }

// Defaults of the admission bounds shared by the HTTP handlers.
const (
	defaultMaxSessions        = 10000
	defaultMaxSessionsPerPeer = 100
	defaultHandshakeTimeout   = 30 * time.Second
	defaultReadBodyTimeout    = 30 * time.Second
	defaultMaxInitializeBytes = 1 << 20
	defaultMaxSessionRequests = 128
	defaultSessionIdleTimeout = 10 * time.Minute
)

// positiveOr returns n when positive, def when zero, and 0 (no bound)
// when negative.
func positiveOr[T int | int64 | time.Duration](n, def T) T {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// admission is what the session table knows of a session: who opened it
// and whether it is idle, readable without the session's lock (the table's
// lock comes last in the lock order).
type admission struct {
	peer string // see peerOf
	auth bool   // the client presented credentials

	// Guarded by the table's mu.
	state slotState

	idleSince   atomic.Int64 // monoNow when the session last went idle; 0 while busy
	established atomic.Bool  // the client sent something after initialize
	requests    atomic.Int32 // HTTP requests in progress on the session
}

type slotState uint8

const (
	slotFree     slotState = iota // not counted
	slotReserved                  // counted; the session is starting
	slotLive                      // counted and in the table
)

// markIdle records that the session has nothing going on from now.
func (a *admission) markIdle() {
	if a != nil {
		a.idleSince.Store(monoNow())
	}
}

// monoStart is the origin of monoNow's clock.
var monoStart = time.Now()

// monoNow is the time on a monotonic clock, in nanoseconds, never zero:
// for comparing the times sessions went idle, it reads the clock once,
// where time.Now reads both the wall clock and the monotonic one.
func monoNow() int64 { return int64(time.Since(monoStart)) + 1 }

// markBusy records that the session has work in progress.
func (a *admission) markBusy() {
	if a != nil {
		a.idleSince.Store(0)
	}
}

// enter counts an HTTP request on the session, unless max (when
// positive) are in progress already; it reports whether it did.
func (a *admission) enter(max int) bool {
	if n := a.requests.Add(1); max > 0 && int(n) > max {
		a.requests.Add(-1)
		return false
	}
	return true
}

// leave ends what enter began.
func (a *admission) leave() { a.requests.Add(-1) }

// peerOf returns the key a request's sessions are counted under for the
// per-peer bound, and whether it carries credentials: the principal when
// authenticated, else the remote IP address, an IPv6 address by its /64
// prefix (what one subscriber usually holds). A loopback address gives
// "", not counted: the peer is the local machine, or a reverse proxy on
// it that every client would share.
func peerOf(r *http.Request) (key string, auth bool) {
	if p := PrincipalFromContext(r.Context()); p != "" {
		return "principal " + p, true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return "addr " + host, false
	}
	addr = addr.Unmap().WithZone("")
	if addr.IsLoopback() {
		return "", false
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return "addr " + p.String(), false
	}
	return "addr " + addr.String(), false
}

// sessionLimits are a table's bounds; zero means none.
type sessionLimits struct {
	max, perPeer int
}

// tableSession is what a sessionSet holds.
type tableSession interface {
	comparable
	terminate(error)
	admissionOf() *admission
	SessionID() string // the session's key in the table once live
}

// sessionSet is a server-side HTTP handler's table of open sessions. A
// session takes a slot (reserve) before its first request is read, so
// that the bounds hold however many start at once; the slot becomes a
// live entry (promote) when initialize succeeds, or is given back
// (drop).
type sessionSet[S tableSession] struct {
	mu     sync.Mutex
	m      map[string]S
	n      int // live and reserved slots
	peers  map[string]*peerSessions[S]
	closed bool // the handler is closed: no new sessions
}

// peerSessions are one peer's slots.
type peerSessions[S tableSession] struct {
	n    int // live and reserved
	live []S
}

// reserve takes a slot for a new session of peer. When the peer holds
// lim.perPeer slots, its longest-idle session is evicted; when the table
// holds lim.max, the longest-idle session without credentials is. It
// returns the evicted sessions, which the caller must terminate with
// ErrSessionEvicted, or, when it cannot make room, the status to refuse
// with: 429 for the peer's bound, 503 for the table's.
func (t *sessionSet[S]) reserve(peer string, auth bool, lim sessionLimits) (a *admission, evicted []S, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, http.StatusServiceUnavailable
	}
	ps := t.peers[peer]
	if lim.perPeer > 0 && ps != nil && ps.n >= lim.perPeer {
		// ps is nil for the uncounted peer "".
		v, ok := pickVictim(slices.Values(ps.live), false)
		if !ok {
			return nil, nil, http.StatusTooManyRequests
		}
		t.removeLocked(v)
		evicted = append(evicted, v)
	}
	if lim.max > 0 && t.n >= lim.max {
		v, ok := pickVictim(maps.Values(t.m), true)
		if !ok {
			return nil, evicted, http.StatusServiceUnavailable
		}
		t.removeLocked(v)
		evicted = append(evicted, v)
	}
	a = &admission{peer: peer, auth: auth, state: slotReserved}
	a.markIdle()
	t.n++
	if peer != "" {
		if t.peers == nil {
			t.peers = make(map[string]*peerSessions[S])
		}
		if ps = t.peers[peer]; ps == nil {
			ps = &peerSessions[S]{}
			t.peers[peer] = ps
		}
		ps.n++
	}
	return a, evicted, 0
}

// pickVictim returns the session to evict among all: an idle one, those
// that never got past the handshake first, then the longest idle; with
// anonymous, only sessions without credentials.
func pickVictim[S tableSession](all iter.Seq[S], anonymous bool) (S, bool) {
	var (
		best      S
		bestIdle  int64
		bestEstab bool
		found     bool
	)
	for s := range all {
		a := s.admissionOf()
		idle := a.idleSince.Load()
		if idle == 0 || (anonymous && a.auth) {
			continue
		}
		estab := a.established.Load()
		if !found || (!estab && bestEstab) || (estab == bestEstab && idle < bestIdle) {
			best, bestIdle, bestEstab, found = s, idle, estab, true
		}
	}
	return best, found
}

// promote makes the reserved slot of s its live entry, under its session
// ID, reporting false when the slot was given back or the table closed
// meanwhile, or the table holds a session of that ID already.
func (t *sessionSet[S]) promote(s S) bool {
	a := s.admissionOf()
	t.mu.Lock()
	defer t.mu.Unlock()
	if a.state != slotReserved || t.closed {
		return false
	}
	if _, dup := t.m[s.SessionID()]; dup {
		// A session restored from a shared store by two requests at
		// once: the first one's stays.
		return false
	}
	if t.m == nil {
		t.m = make(map[string]S)
	}
	t.m[s.SessionID()] = s
	a.state = slotLive
	if ps := t.peers[a.peer]; ps != nil {
		ps.live = append(ps.live, s)
	}
	return true
}

// release gives back a reserved slot that never became a session entry.
func (t *sessionSet[S]) release(a *admission) {
	if a == nil {
		return
	}
	t.mu.Lock()
	if a.state == slotReserved {
		t.freeLocked(a)
	}
	t.mu.Unlock()
}

// drop forgets s, live or still reserved.
func (t *sessionSet[S]) drop(s S) {
	a := s.admissionOf()
	if a == nil {
		return
	}
	t.mu.Lock()
	switch a.state {
	case slotLive:
		t.removeLocked(s)
	case slotReserved:
		t.freeLocked(a)
	}
	t.mu.Unlock()
}

// removeLocked removes the live session s.
func (t *sessionSet[S]) removeLocked(s S) {
	a := s.admissionOf()
	if id := s.SessionID(); t.m[id] == s {
		delete(t.m, id)
	}
	if ps := t.peers[a.peer]; ps != nil {
		if i := slices.Index(ps.live, s); i >= 0 {
			last := len(ps.live) - 1
			ps.live[i] = ps.live[last]
			var zero S
			ps.live[last] = zero
			ps.live = ps.live[:last]
		}
	}
	t.freeLocked(a)
}

// freeLocked gives back a's slot.
func (t *sessionSet[S]) freeLocked(a *admission) {
	a.state = slotFree
	t.n--
	if ps := t.peers[a.peer]; ps != nil {
		if ps.n--; ps.n <= 0 {
			delete(t.peers, a.peer)
		}
	}
}

func (t *sessionSet[S]) lookup(id string) (S, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	return s, ok
}

func (t *sessionSet[S]) ids() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.m))
	for id := range t.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// closeOne terminates the session id, reporting whether it existed.
func (t *sessionSet[S]) closeOne(id string) bool {
	s, ok := t.lookup(id)
	if ok {
		s.terminate(ErrSessionTerminated)
	}
	return ok
}

// closeAll refuses new sessions and terminates the open ones.
func (t *sessionSet[S]) closeAll() {
	t.mu.Lock()
	t.closed = true
	all := make([]S, 0, len(t.m))
	for _, s := range t.m {
		all = append(all, s)
	}
	t.mu.Unlock()
	for _, s := range all {
		s.terminate(ErrSessionTerminated)
	}
}

// bodyWatch bounds the time the reads of POST bodies take, timeout from
// each read's start, without a read deadline for every request: setting
// one and lifting it again cost the runtime's timers about 0.7 µs a
// request, for bodies that are nearly all in as soon as their headers
// are. Reads register with begin and end; a timer, running only while
// some are in progress, goes off at an interval (the field every: a
// quarter of the timeout, at most bodyWatchEvery, at least a
// millisecond) and sets, on the connection of each read that has been
// in progress for that long, the read deadline it would have had,
// timeout after the read's start. The zero bodyWatch, or one with a
// timeout of zero, bounds nothing.
type bodyWatch struct {
	timeout time.Duration
	every   time.Duration

	mu    sync.Mutex
	reads *bodyRead // in progress, newest first
	free  *bodyRead // for reuse, at most maxFreeBodyReads
	nfree int
	timer *time.Timer
	set   bool // timer is set to go off
}

// bodyWatchEvery is the longest interval between two looks of a
// bodyWatch at the reads in progress.
const bodyWatchEvery = 100 * time.Millisecond

// maxFreeBodyReads bounds the entries a bodyWatch keeps for reuse.
const maxFreeBodyReads = 64

// bodyRead is a read of a POST body in progress, in its bodyWatch's list.
type bodyRead struct {
	w          http.ResponseWriter
	start      int64 // monoNow when the read started
	armed      bool  // its connection's read deadline is set
	prev, next *bodyRead
}

// init sets the watch's timeout (0: none).
func (bw *bodyWatch) init(timeout time.Duration) {
	bw.timeout = timeout
	// Not under a millisecond, whatever the timeout: the timer goes off
	// this often while reads are in progress.
	bw.every = max(min(bodyWatchEvery, timeout/4), time.Millisecond)
}

// begin registers a read of the body of the request w answers.
func (bw *bodyWatch) begin(w http.ResponseWriter) *bodyRead {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	e := bw.free
	if e != nil {
		bw.free = e.next
		bw.nfree--
	} else {
		e = new(bodyRead)
	}
	*e = bodyRead{w: w, start: monoNow(), next: bw.reads}
	if bw.reads != nil {
		bw.reads.prev = e
	}
	bw.reads = e
	if !bw.set {
		bw.set = true
		if bw.timer == nil {
			bw.timer = time.AfterFunc(bw.every, bw.look)
		} else {
			bw.timer.Reset(bw.every)
		}
	}
	return e
}

// end unregisters e and reports whether its connection's read deadline
// was set meanwhile.
func (bw *bodyWatch) end(e *bodyRead) bool {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	armed := e.armed
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		bw.reads = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	*e = bodyRead{}
	if bw.nfree < maxFreeBodyReads {
		e.next = bw.free
		bw.free = e
		bw.nfree++
	}
	return armed
}

// look sets the read deadline of the reads in progress for every or
// longer, and sets the timer again while any is in progress.
func (bw *bodyWatch) look() {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	bw.set = false
	now := monoNow()
	for e := bw.reads; e != nil; e = e.next {
		if e.armed || now-e.start < int64(bw.every) {
			continue
		}
		e.armed = true
		// An error means no read deadline on this connection (HTTP/2):
		// the http.Server's own timeouts apply, as to any request.
		http.NewResponseController(e.w).SetReadDeadline(time.Now().Add(bw.timeout - time.Duration(now-e.start)))
	}
	if bw.reads != nil {
		bw.set = true
		bw.timer.Reset(bw.every)
	}
}

// stop stops the timer, when the handler closes.
func (bw *bodyWatch) stop() {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if bw.timer != nil {
		bw.timer.Stop()
		bw.set = false
	}
}

// readRequestBody reads r's body, bounded in size by limit and in time by
// bw (nil: no bound), unless the http.Server's ReadTimeout, no longer than
// bw's timeout, bounds the whole request already. The read deadline bw
// sets on the connection of a read that takes long is lifted once the
// body is in, so that a response stream may outlive it. When it cannot
// read the body, it returns the status and reason to refuse the request
// with: 413 past limit (at once when the announced length is), 408 past
// the deadline, 400 when reading fails otherwise.
func readRequestBody(w http.ResponseWriter, r *http.Request, limit int64, bw *bodyWatch) ([]byte, int, string) {
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", limit)
	}
	if bw != nil && bw.timeout <= 0 {
		bw = nil
	}
	if bw != nil {
		if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 && srv.ReadTimeout <= bw.timeout {
			// net/http's own deadline for the whole request, set when its
			// headers were read, bounds the body already, and more
			// tightly: no deadline of ours.
			bw = nil
		}
	}
	var read *bodyRead
	if bw != nil {
		read = bw.begin(w)
	}
	size := r.ContentLength
	if size < 0 {
		size = limit // unannounced: grow toward the limit, fourfold
	}
	body, err := readSized(r.Body, size, readBodyPrealloc, limit)
	if read != nil && bw.end(read) {
		// Lifted, so that it does not outlive the body: set after the body
		// was in (while net/http's read of the connection that watches for
		// the client's going away was under way), it would end that read,
		// and the request with it (TestHTTPBodyDeadlineLifted).
		http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	if err == nil && int64(len(body)) > limit {
		// The rest of the body stays unread: the connection goes with the
		// answer, as with http.MaxBytesReader.
		w.Header().Set("Connection", "close")
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", limit)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe): // a limit of the server's own around the body
			return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes", limit)
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			return nil, http.StatusRequestTimeout, "Request Timeout: the body did not arrive in time"
		}
		return nil, http.StatusBadRequest, "Bad Request: cannot read body"
	}
	return body, 0, ""
}
