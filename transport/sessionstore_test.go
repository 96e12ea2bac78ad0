package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// faultyStore is a memory session store that fails every call while down
// is set, and counts the calls.
type faultyStore struct {
	*transport.MemorySessionStore
	down  atomic.Bool
	calls atomic.Int32
}

var errDown = errors.New("store down")

func (s *faultyStore) check() error {
	s.calls.Add(1)
	if s.down.Load() {
		return errDown
	}
	return nil
}

func (s *faultyStore) Create(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.MemorySessionStore.Create(ctx, rec, lim)
}

func (s *faultyStore) Get(ctx context.Context, id string) (*transport.SessionRecord, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.MemorySessionStore.Get(ctx, id)
}

func (s *faultyStore) Update(ctx context.Context, rec *transport.SessionRecord) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.MemorySessionStore.Update(ctx, rec)
}

func (s *faultyStore) Touch(ctx context.Context, id string, exp time.Time) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.MemorySessionStore.Touch(ctx, id, exp)
}

func (s *faultyStore) Delete(ctx context.Context, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.MemorySessionStore.Delete(ctx, id)
}

// storeReplica is one replica of a server sharing ring and store, whose
// requests carry the principal their X-Principal header names.
// The caller must close it (closing the handler first).
func storeReplica(t *testing.T, ring *mcp.KeyRing, store transport.SessionStore) (srv *httptest.Server, close func()) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring})
	h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store, SessionRecheck: -1})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Principal"); p != "" {
			r = r.WithContext(transport.WithPrincipal(r.Context(), p))
		}
		h.ServeHTTP(w, r)
	}))
	return srv, func() {
		h.Close()
		srv.Close()
	}
}

// storeRequest sends an HTTP request to a replica and returns the
// response's status, Retry-After and session ID headers.
func storeRequest(t *testing.T, method, url, sid, principal, body string) (status int, retry, newSID string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if principal != "" {
		req.Header.Set("X-Principal", principal)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id")
}

const (
	storeInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	storeList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// TestSessionStoreFailures checks what clients see when the session store
// fails or a session is not what the request says: 503 with Retry-After
// when the store cannot be reached (never 404, which would make the
// client drop a live session), 404 for an absent record, a forged ID
// refused without a store call, 403 for another principal's session, and
// a replica holding a session serving it through a failing recheck.
func TestSessionStoreFailures(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) { sessionStoreFailures(t) })
}

func sessionStoreFailures(t *testing.T) {
	ring := mcp.NewRandomKeyRing()
	store := &faultyStore{MemorySessionStore: transport.NewMemorySessionStore(nil)}
	a, closeA := storeReplica(t, ring, store)
	defer closeA()
	b, closeB := storeReplica(t, ring, store)
	defer closeB()
	c, closeC := storeReplica(t, ring, store)
	defer closeC()
	st, _, sid := storeRequest(t, http.MethodPost, a.URL, "", "alice", storeInit)
	if st != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", st, sid)
	}
	if st, _, _ := storeRequest(t, http.MethodPost, c.URL, sid, "alice", storeList); st != http.StatusOK {
		t.Fatalf("tools/list on another replica: %d", st)
	}
	forged := []byte(sid)
	forged[len(forged)-1] ^= 1 // another base64url character: the tag fails
	tests := []struct {
		name      string
		down      bool
		method    string
		url       string
		sid       string
		principal string
		body      string
		status    int
		retry     bool
		noCalls   bool
	}{
		{"initialize, store down", true, http.MethodPost, a.URL, "", "alice", storeInit, http.StatusServiceUnavailable, true, false},
		{"restore, store down", true, http.MethodPost, b.URL, sid, "alice", storeList, http.StatusServiceUnavailable, true, false},
		{"held copy, recheck failing", true, http.MethodPost, c.URL, sid, "alice", storeList, http.StatusOK, false, false},
		{"DELETE, store down", true, http.MethodDelete, b.URL, sid, "alice", "", http.StatusServiceUnavailable, true, false},
		{"absent record", false, http.MethodPost, b.URL, ring.MintSessionID(), "alice", storeList, http.StatusNotFound, false, false},
		{"forged ID", false, http.MethodPost, b.URL, string(forged), "alice", storeList, http.StatusNotFound, false, true},
		{"another principal, restore", false, http.MethodPost, b.URL, sid, "mallory", storeList, http.StatusForbidden, false, false},
		{"another principal, DELETE", false, http.MethodDelete, b.URL, sid, "mallory", "", http.StatusForbidden, false, false},
		{"restore", false, http.MethodPost, b.URL, sid, "alice", storeList, http.StatusOK, false, false},
		{"DELETE elsewhere", false, http.MethodDelete, b.URL, sid, "alice", "", http.StatusNoContent, false, false},
		{"after DELETE, holder", false, http.MethodPost, a.URL, sid, "alice", storeList, http.StatusNotFound, false, false},
		{"after DELETE, other holder", false, http.MethodPost, c.URL, sid, "alice", storeList, http.StatusNotFound, false, false},
		{"DELETE again", false, http.MethodDelete, c.URL, sid, "alice", "", http.StatusNotFound, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.down.Store(tt.down)
			defer store.down.Store(false)
			before := store.calls.Load()
			st, retry, _ := storeRequest(t, tt.method, tt.url, tt.sid, tt.principal, tt.body)
			if st != tt.status {
				t.Errorf("status %d, want %d", st, tt.status)
			}
			if (retry != "") != tt.retry {
				t.Errorf("Retry-After %q, want one: %v", retry, tt.retry)
			}
			if n := store.calls.Load() - before; tt.noCalls && n != 0 {
				t.Errorf("%d store calls, want none", n)
			}
		})
	}
}

// writeCounter is a memory session store that counts the creations
// and updates of records.
type writeCounter struct {
	*transport.MemorySessionStore
	creates, updates atomic.Int32
}

func (s *writeCounter) Create(ctx context.Context, rec *transport.SessionRecord, lim transport.SessionLimits) error {
	s.creates.Add(1)
	return s.MemorySessionStore.Create(ctx, rec, lim)
}

func (s *writeCounter) Update(ctx context.Context, rec *transport.SessionRecord) error {
	s.updates.Add(1)
	return s.MemorySessionStore.Update(ctx, rec)
}

// warnings is a slog.Handler keeping the messages of the records at
// warning level or above.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (h *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnings) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.mu.Unlock()
	return nil
}

func (h *warnings) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *warnings) WithGroup(string) slog.Handler      { return h }

func (h *warnings) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}

// TestSessionStoreInitializeOneWrite checks that an initialize writes
// its session's record once, with the initialize's snapshot in it (the
// revision and what the client said), so that a replica restoring the
// session at once serves it as negotiated; and that a session the store
// refuses (its bound) leaves no record, costs no update and logs no
// warning.
func TestSessionStoreInitializeOneWrite(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		ring := mcp.NewRandomKeyRing()
		store := &writeCounter{MemorySessionStore: transport.NewMemorySessionStore(nil)}
		logs := &warnings{}
		s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring, Logger: slog.New(logs)})
		h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store, MaxSessions: 1, Logger: slog.New(logs)})
		srv := httptest.NewServer(h)
		defer func() {
			h.Close()
			srv.Close()
		}()
		st, _, sid := storeRequest(t, http.MethodPost, srv.URL, "", "", storeInit)
		if st != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %q", st, sid)
		}
		if c, u := store.creates.Load(), store.updates.Load(); c != 1 || u != 0 {
			t.Errorf("initialize: %d creates and %d updates, want 1 and 0", c, u)
		}
		rec, err := store.Get(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.ProtocolVersion != "2025-06-18" || !strings.Contains(string(rec.State), `"raw"`) {
			t.Errorf("record: version %q, state %s; want the initialize's", rec.ProtocolVersion, rec.State)
		}
		st, retry, refusedSID := storeRequest(t, http.MethodPost, srv.URL, "", "", storeInit)
		if st != http.StatusServiceUnavailable || retry == "" || refusedSID != "" {
			t.Errorf("initialize past MaxSessions: %d, Retry-After %q, session %q; want 503, one, none", st, retry, refusedSID)
		}
		if c, u := store.creates.Load(), store.updates.Load(); c != 2 || u != 0 {
			t.Errorf("after the refusal: %d creates and %d updates, want 2 and 0", c, u)
		}
		if n := store.Len(); n != 1 {
			t.Errorf("%d records, want 1", n)
		}
		// A refusal is the client's answer, not a failure to log.
		if got := logs.all(); len(got) > 0 {
			t.Errorf("logged: %q", got)
		}
	})
}

// TestSessionStorePerPeer checks MaxSessionsPerPeer across replicas: a
// principal's third initialize gets 429 on whichever replica it lands,
// another principal is not held back by it, and a session deleted on one
// replica frees its peer's slot on all.
func TestSessionStorePerPeer(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		ring := mcp.NewRandomKeyRing()
		store := transport.NewMemorySessionStore(nil)
		var urls []string
		for range 3 {
			s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring})
			h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store, MaxSessionsPerPeer: 2})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r.WithContext(transport.WithPrincipal(r.Context(), r.Header.Get("X-Principal"))))
			}))
			defer srv.Close()
			defer h.Close()
			urls = append(urls, srv.URL)
		}
		var sids []string
		steps := []struct {
			url, principal string
			want           int
		}{
			{urls[0], "alice", http.StatusOK},
			{urls[1], "alice", http.StatusOK},
			{urls[2], "alice", http.StatusTooManyRequests},
			{urls[0], "alice", http.StatusTooManyRequests},
			{urls[2], "bob", http.StatusOK},
		}
		for i, s := range steps {
			st, _, sid := storeRequest(t, http.MethodPost, s.url, "", s.principal, storeInit)
			if st != s.want {
				t.Fatalf("step %d: initialize on %s as %s: %d, want %d", i, s.url, s.principal, st, s.want)
			}
			if st == http.StatusOK && s.principal == "alice" {
				sids = append(sids, sid)
			}
		}
		if st, _, _ := storeRequest(t, http.MethodDelete, urls[2], sids[0], "alice", ""); st != http.StatusNoContent {
			t.Fatalf("DELETE: %d", st)
		}
		if st, _, _ := storeRequest(t, http.MethodPost, urls[1], "", "alice", storeInit); st != http.StatusOK {
			t.Fatalf("initialize after DELETE: %d, want 200", st)
		}
	})
}

// sseEvent is one event of an SSE body.
type sseEvent struct{ id, data string }

// readEvent reads the next event of an SSE body; false at its end.
func readEvent(br *bufio.Reader) (sseEvent, bool) {
	var e sseEvent
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return e, false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				return e, true
			}
		case strings.HasPrefix(line, "id:"):
			e.id, seen = strings.TrimSpace(line[3:]), true
		case strings.HasPrefix(line, "data:"):
			e.data, seen = e.data+strings.TrimSpace(line[5:]), true
		default:
			seen = true
		}
	}
}

// waitReplicas is two replicas sharing a key ring, a session store, an
// event log and bus (if not nil), each with a tool "wait" that reports
// progress 1 (when asked to) and returns {"done":true} once release is
// closed, and a session initialized on the first.
type waitReplicas struct {
	t       *testing.T
	ctx     context.Context
	servers []*mcp.Server
	urls    []string
	sid     string
	release chan struct{}
	events  *transport.MemoryEventStore // the replicas' event log
}

func newWaitReplicas(ctx context.Context, t *testing.T, bus mcp.Bus) *waitReplicas {
	t.Helper()
	ring := mcp.NewRandomKeyRing()
	store := transport.NewMemorySessionStore(nil)
	events := transport.NewMemoryEventStore(nil)
	wr := &waitReplicas{t: t, ctx: ctx, release: make(chan struct{}), events: events}
	for range 2 {
		s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring, Bus: bus})
		t.Cleanup(func() { s.Close() })
		type in struct{}
		type out struct {
			Done bool `json:"done"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (out, error) {
			if err := req.ReportProgress(ctx, 1, 0, "started"); err != nil {
				return out{}, err
			}
			select {
			case <-wr.release:
				return out{Done: true}, nil
			case <-ctx.Done():
				return out{}, ctx.Err()
			}
		})
		h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store, EventStore: events, SessionRecheck: -1})
		srv := httptest.NewServer(h)
		t.Cleanup(func() {
			srv.Close()
			h.Close()
		})
		wr.servers = append(wr.servers, s)
		wr.urls = append(wr.urls, srv.URL)
	}
	resp := wr.send(http.MethodPost, wr.urls[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	wr.sid = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || wr.sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	return wr
}

// send sends a request of the session (none before initialize) to url,
// resuming from last if not "".
func (wr *waitReplicas) send(method, url, last, body string) *http.Response {
	wr.t.Helper()
	req, err := http.NewRequestWithContext(wr.ctx, method, url, strings.NewReader(body))
	if err != nil {
		wr.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if wr.sid != "" {
		req.Header.Set("Mcp-Session-Id", wr.sid)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		wr.t.Fatal(err)
	}
	return resp
}

// call starts tools/call "wait" with id on replica i and returns its
// response stream's priming event, the client going away after it.
func (wr *waitReplicas) call(i, id int) sseEvent {
	wr.t.Helper()
	return wr.callRaw(i, fmt.Sprint(id), false)[0]
}

// callRaw starts tools/call "wait" with the JSON id on replica i and
// returns its response stream's priming event and, with progress, the
// progress event after it, the client going away after them.
func (wr *waitReplicas) callRaw(i int, id string, progress bool) []sseEvent {
	wr.t.Helper()
	meta := ""
	if progress {
		meta = `,"_meta":{"progressToken":"p"}`
	}
	resp := wr.send(http.MethodPost, wr.urls[i], "", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"wait","arguments":{}`+meta+`}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		wr.t.Fatalf("tools/call: %d %s", resp.StatusCode, ct)
	}
	br := bufio.NewReader(resp.Body)
	prime, ok := readEvent(br)
	if !ok || prime.id == "" {
		wr.t.Fatalf("no priming event: %+v", prime)
	}
	events := []sseEvent{prime}
	if progress {
		e, ok := readEvent(br)
		if !ok || e.id == "" || !strings.Contains(e.data, "notifications/progress") {
			wr.t.Fatalf("no progress event: %+v", e)
		}
		events = append(events, e)
	}
	return events
}

// resume resumes, on replica i, the stream from event last and returns
// the messages it carries until it ends.
func (wr *waitReplicas) resume(i int, last string) []string {
	wr.t.Helper()
	resp := wr.send(http.MethodGet, wr.urls[i], last, "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		wr.t.Errorf("resume on replica %d: %d %s", i, resp.StatusCode, b)
		return nil
	}
	var msgs []string
	br := bufio.NewReader(resp.Body)
	for {
		e, ok := readEvent(br)
		if !ok {
			return msgs
		}
		if e.data != "" {
			msgs = append(msgs, e.data)
		}
	}
}

// TestSessionStoreResumeElsewhere resumes, on one replica, the response
// stream of a call that another replica is running: the replica that
// gets the GET with Last-Event-ID (sharing the session store and an
// event log) replays and follows the stream until the response.
func TestSessionStoreResumeElsewhere(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		wr := newWaitReplicas(ctx, t, nil)
		prime := wr.call(0, 2) // runs on replica 0, whose client goes away
		var msgs []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			msgs = wr.resume(1, prime.id) // on replica 1, which never saw the session
		}()
		close(wr.release)
		<-done
		if len(msgs) != 1 || !strings.Contains(msgs[0], `"id":2`) || !strings.Contains(msgs[0], `"done":true`) {
			t.Fatalf("the resumed stream carried %q, want the response to 2", msgs)
		}
	})
}

// TestSessionStoreStreamsOfTwoReplicas runs one call of a session on each
// of two replicas at once: their response streams are two streams of the
// shared event log, each resumed with its own messages only (two
// replicas numbering a session's streams alike would write one stream,
// and a resumption would carry the other call's response).
func TestSessionStoreStreamsOfTwoReplicas(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		wr := newWaitReplicas(ctx, t, nil)
		first, second := wr.call(0, 2), wr.call(1, 3)
		if first.id == second.id {
			t.Fatalf("both streams start at event %q", first.id)
		}
		close(wr.release)
		for _, c := range []struct {
			on   int
			from sseEvent
			id   string
		}{{1, first, `"id":2`}, {0, second, `"id":3`}, {0, first, `"id":2`}, {1, second, `"id":3`}} {
			msgs := wr.resume(c.on, c.from.id)
			if len(msgs) != 1 || !strings.Contains(msgs[0], c.id) {
				t.Errorf("resuming from %s on replica %d: %q, want the response %s only", c.from.id, c.on, msgs, c.id)
			}
		}
	})
}

// deadBus is a MemoryBus that says a replica is not subscribed once it is
// declared dead, as Redis does of a replica whose process ended.
type deadBus struct {
	mcp.MemoryBus
	dead atomic.Value // string: the dead replica
}

// PublishTo drops what it is given for the dead replica, as Redis does
// for a channel no one subscribes to, and says so.
func (b *deadBus) PublishTo(ctx context.Context, replica string, msg []byte) error {
	if d, _ := b.dead.Load().(string); d == replica {
		return mcp.ErrNoSubscriber
	}
	return b.MemoryBus.PublishTo(ctx, replica, msg)
}

func (b *deadBus) Subscribed(ctx context.Context, replica string) (bool, error) {
	if d, _ := b.dead.Load().(string); d == replica {
		return false, nil
	}
	return b.MemoryBus.Subscribed(ctx, replica)
}

// TestSessionStoreWriterGone resumes, on replica 1, the response stream
// of a call whose replica (0) ends before answering: the client gets what
// the stream stored, once, in order, then an error answer to its request
// (code -32001) within a bound, for an integer or a string request ID; a
// request ID that cannot name the stream gets the stored events and the
// stream's end.
func TestSessionStoreWriterGone(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		bus := new(deadBus)
		wr := newWaitReplicas(ctx, t, bus)
		calls := map[string][]sseEvent{}
		for _, id := range []string{`7`, `"call-8"`, `"an id with spaces"`} {
			calls[id] = wr.callRaw(0, id, true)
		}
		bus.dead.Store(wr.servers[0].ReplicaID())
		var wg sync.WaitGroup
		for _, c := range []struct {
			id     string
			from   int // the event resumed from: 0 the priming, 1 the progress
			answer bool
		}{{`7`, 0, true}, {`7`, 1, true}, {`"call-8"`, 0, true}, {`"an id with spaces"`, 0, false}} {
			wg.Go(func() {
				msgs := wr.resume(1, calls[c.id][c.from].id)
				want := 1 - c.from
				if c.answer {
					want++
				}
				if len(msgs) != want {
					t.Errorf("resuming %s from event %d: %q, want %d messages", c.id, c.from, msgs, want)
					return
				}
				if c.from == 0 && !strings.Contains(msgs[0], "notifications/progress") {
					t.Errorf("resuming %s: %q, want the progress first", c.id, msgs)
				}
				if last := msgs[len(msgs)-1]; c.answer && (!strings.Contains(last, `"id":`+c.id) || !strings.Contains(last, `"code":-32001`)) {
					t.Errorf("resuming %s: %q, want an error answer -32001 to it last", c.id, msgs)
				}
			})
		}
		wg.Wait()
		close(wr.release)
	})
}

// holdGET opens the session's GET stream on replica 0 and reads its
// priming event, then has replica 1 restore the session, reading the
// record that names replica 0 as the stream's holder. It returns the
// stream, its priming event and replica 1's copy of the session.
func (wr *waitReplicas) holdGET() (*http.Response, sseEvent, *mcp.ServerSession) {
	t := wr.t
	t.Helper()
	resp := wr.send(http.MethodPost, wr.urls[0], "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	get := wr.send(http.MethodGet, wr.urls[0], "", "")
	if get.StatusCode != http.StatusOK {
		get.Body.Close()
		t.Fatalf("GET: %d", get.StatusCode)
	}
	prime, ok := readEvent(bufio.NewReader(get.Body))
	if !ok || prime.id == "" {
		get.Body.Close()
		t.Fatal("no priming event with an ID on the GET stream")
	}
	resp = wr.send(http.MethodPost, wr.urls[1], "", `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		get.Body.Close()
		t.Fatalf("ping on replica 1: %d", resp.StatusCode)
	}
	sessions := wr.servers[1].Sessions()
	if len(sessions) != 1 {
		get.Body.Close()
		t.Fatalf("replica 1 holds %d sessions, want 1", len(sessions))
	}
	return get, prime, sessions[0]
}

// TestSessionStoreHolderGone sends a server-to-client request, outside
// any request, from a replica whose session's GET stream the record says
// another replica holds, once that replica is gone (the bus says it is
// not subscribed): the request fails at once, where it would have been
// sent there and waited for an answer that cannot come.
func TestSessionStoreHolderGone(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		bus := new(deadBus)
		wr := newWaitReplicas(ctx, t, bus)
		get, _, session := wr.holdGET()
		defer get.Body.Close()
		bus.dead.Store(wr.servers[0].ReplicaID())
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := session.Ping(pctx)
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ping to a client whose GET stream a gone replica held: %v, want a failure at once", err)
		}
	})
}

// TestSessionStoreHolderGoneNotification sends, from replica 1, log
// messages outside any request of a session whose GET stream replica 0
// held and which the bus says is gone: they go into that stream's event
// log, so that the client, resuming the stream on replica 1, gets each
// once, in order, after what the stream had; the stream then goes on on
// replica 1, which the record names, and later messages reach it live.
func TestSessionStoreHolderGoneNotification(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		bus := new(deadBus)
		wr := newWaitReplicas(ctx, t, bus)
		get, prime, session := wr.holdGET()
		bus.dead.Store(wr.servers[0].ReplicaID())
		for k := range 3 {
			if err := session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: json.RawMessage(strconv.Itoa(k))}); err != nil {
				t.Fatalf("log message %d: %v", k, err)
			}
		}
		// The connection broke with its replica. (Replica 0, which lives
		// on in this test, then clears the record's holder, as a dead
		// one would not: hence the close only now.)
		get.Body.Close()
		again := wr.send(http.MethodGet, wr.urls[1], prime.id, "")
		defer again.Body.Close()
		if again.StatusCode != http.StatusOK {
			t.Fatalf("GET resuming on replica 1: %d", again.StatusCode)
		}
		// Replica 1 holds the stream now: a message sent there comes
		// live, after the replay. A message another replica appends to
		// replica 0's stream after the replay (a sender that read the
		// record before the takeover) comes too, as an event of replica
		// 1's stream.
		if err := session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: json.RawMessage(`"live"`)}); err != nil {
			t.Fatal(err)
		}
		late := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}`
		if _, err := wr.events.Write(ctx, wr.sid, "get."+wr.servers[0].ReplicaID(), transport.LogEvent{Data: []byte(late)}); err != nil {
			t.Fatal(err)
		}
		// A message that never comes ends the read, not the test's run.
		stop := time.AfterFunc(10*time.Second, func() { again.Body.Close() })
		defer stop.Stop()
		br := bufio.NewReader(again.Body)
		var logs []string
		for len(logs) < 5 {
			e, ok := readEvent(br)
			if !ok {
				t.Fatalf("the resumed GET stream ended; log messages: %q", logs)
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					Data json.RawMessage `json:"data"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(e.data), &m) != nil || m.Method != "notifications/message" {
				continue // a priming event, or a list change
			}
			logs = append(logs, string(m.Params.Data))
			if string(m.Params.Data) == `"late"` && !strings.Contains(e.id, "get."+wr.servers[1].ReplicaID()) {
				t.Errorf("the late message came as event %q, want an event of replica 1's stream", e.id)
			}
		}
		// The replay first, in order; then the other two, in either order.
		if want := []string{"0", "1", "2"}; !slices.Equal(logs[:3], want) {
			t.Errorf("log messages on the resumed GET stream: %q, want %q first (each once, in order)", logs, want)
		}
		if rest := slices.Sorted(slices.Values(logs[3:])); !slices.Equal(rest, []string{`"late"`, `"live"`}) {
			t.Errorf("log messages on the resumed GET stream: %q, want the live and the late one after the replay", logs)
		}
	})
}

// TestSessionStoreConcurrentChanges makes two replicas holding copies of
// one session change its state one after the other, the second from a
// stale copy (no recheck in between): the second save meets the first
// one's version, takes its snapshot, makes its change on it and saves
// again, so the record holds both changes.
func TestSessionStoreConcurrentChanges(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		ring := mcp.NewRandomKeyRing()
		store := transport.NewMemorySessionStore(nil)
		var urls []string
		for range 3 {
			s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring})
			if err := s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			// The default recheck (a minute): the copies stay stale.
			h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: store})
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.Close()
			urls = append(urls, srv.URL)
		}
		st, _, sid := storeRequest(t, http.MethodPost, urls[0], "", "", storeInit)
		if st != http.StatusOK {
			t.Fatalf("initialize: %d", st)
		}
		steps := []struct{ url, body string }{
			{urls[1], `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, // copies on 1 and 2
			{urls[2], `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
			{urls[2], `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"file:///a"}}`},
			{urls[1], `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"error"}}`},
		}
		for i, s := range steps {
			if st, _, _ := storeRequest(t, http.MethodPost, s.url, sid, "", s.body); st != http.StatusOK {
				t.Fatalf("step %d: %d", i, st)
			}
		}
		rec, err := store.Get(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		var snap struct {
			LogLevel      string   `json:"logLevel"`
			Subscriptions []string `json:"subscriptions"`
		}
		if err := json.Unmarshal(rec.State, &snap); err != nil {
			t.Fatal(err)
		}
		if snap.LogLevel != "error" || len(snap.Subscriptions) != 1 || snap.Subscriptions[0] != "file:///a" {
			t.Errorf("record's state %s: want both the level and the subscription", rec.State)
		}
	})
}
