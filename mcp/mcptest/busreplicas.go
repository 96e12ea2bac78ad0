//go:build !mcpkit_nohttp

package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// BusReplicas checks, end to end, that the messages of one session of the
// handshake era cross replicas: three Streamable HTTP handlers of three
// mcp.Servers sharing a key ring, a session store that newStore makes
// and a bus that newBus makes (an [mcp.AddressedBus]), behind a
// round-robin reverse proxy on 127.0.0.1, with an mcp.Client. Each
// scenario is a subtest:
//
//   - Delete: a DELETE on one replica cancels the calls running on all
//     three at once, and every replica answers 404 after.
//   - Cancel: a notifications/cancelled POSTed to one replica cancels
//     the call running on another.
//   - Answer: a sampling request sent by a tool on one replica, answered
//     by a POST that reaches another, resolves on the first, once; a
//     duplicate or unknown answer is dropped.
//   - AnswerBusDown: while the bus refuses messages, a POST carrying an
//     answer for another replica gets 503, never a silent 202.
//   - GetStream: the GET stream held on one replica receives what the
//     others send the session outside a request: log messages at the
//     session's level and sampling requests (answered back to the
//     replica that asked), and each list change once.
//   - StreamRecord: the record names the replica holding the GET stream
//     while it lives, the stream alone keeps the record alive, and the
//     name goes when the stream ends.
//   - LegacySSE: three legacy HTTP+SSE handlers (no store): the POSTs of
//     a client whose event stream one replica holds, reaching the
//     others, are served on the first and answered on its stream; with
//     the bus down such a POST gets 503.
//
// No goroutine outlives a scenario.
func BusReplicas(t *testing.T, newStore func(t *testing.T) transport.SessionStore, newBus func(t *testing.T) mcp.Bus) {
	t.Run("Delete", func(t *testing.T) { busReplicasDelete(t, newStore(t), newBus(t)) })
	t.Run("Cancel", func(t *testing.T) { busReplicasCancel(t, newStore(t), newBus(t)) })
	t.Run("Answer", func(t *testing.T) { busReplicasAnswer(t, newStore(t), newBus(t)) })
	t.Run("AnswerBusDown", func(t *testing.T) { busReplicasBusDown(t, newStore(t), newBus(t)) })
	t.Run("GetStream", func(t *testing.T) { busReplicasGetStream(t, newStore(t), newBus(t)) })
	t.Run("StreamRecord", func(t *testing.T) { busReplicasStreamRecord(t, newStore(t), newBus(t)) })
	t.Run("LegacySSE", func(t *testing.T) { busReplicasLegacySSE(t, newBus(t)) })
}

// busCluster is three replicas sharing a store and a bus, behind a
// round-robin proxy. Their tools: "block" runs until its context ends
// (telling started and cancelled the replica's index), "ask" asks the
// client to sample and returns the replica's index.
type busCluster struct {
	servers   []*mcp.Server
	handlers  []*transport.StreamableHTTPHandler
	https     []*httptest.Server
	proxy     *httptest.Server
	started   chan int
	cancelled chan int

	mu    sync.Mutex
	posts []postSeen // the POSTs each replica served, in order
}

// postSeen is a POST a replica served.
type postSeen struct {
	replica int
	body    string
}

// askOut is what the "ask" tool returns.
type askOut struct {
	Replica int    `json:"replica"`
	Text    string `json:"text"`
}

func newBusCluster(t *testing.T, store transport.SessionStore, bus mcp.Bus, opts transport.StreamableHTTPOptions) *busCluster {
	t.Helper()
	if _, ok := bus.(mcp.AddressedBus); !ok {
		t.Skip("the bus is no mcp.AddressedBus")
	}
	ring := mcp.NewRandomKeyRing()
	c := &busCluster{started: make(chan int, 16), cancelled: make(chan int, 16)}
	var urls []*url.URL
	for i := range 3 {
		s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring, Bus: bus, ListChangedDelay: -1})
		s.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.started <- i
			<-ctx.Done()
			c.cancelled <- i
			return nil, ctx.Err()
		})
		err := mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (askOut, error) {
			res, err := req.Session.CreateMessage(ctx, sampleParams())
			if err != nil {
				return askOut{}, err
			}
			return askOut{Replica: i, Text: textOf(res)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.SessionStore = store
		h := mcp.NewStreamableHTTPHandler(s, &o)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				c.mu.Lock()
				c.posts = append(c.posts, postSeen{i, string(body)})
				c.mu.Unlock()
			}
			h.ServeHTTP(w, r)
		}))
		c.servers = append(c.servers, s)
		c.handlers = append(c.handlers, h)
		c.https = append(c.https, srv)
		u, _ := url.Parse(srv.URL)
		urls = append(urls, u)
	}
	// A transport of its own: no connection of another test's proxy
	// (to a port since reused) is ever taken.
	tr := &http.Transport{}
	c.proxy = roundRobinProxy(urls, tr)
	t.Cleanup(func() {
		c.proxy.Close()
		tr.CloseIdleConnections()
		for i, h := range c.handlers {
			h.Close()
			c.https[i].Close()
			c.servers[i].Close()
		}
	})
	return c
}

func sampleParams() *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "hi"}}}}}
}

func textOf(res *mcp.CreateMessageResult) string {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// index returns the index of the replica whose ID is id, or -1.
func (c *busCluster) index(id string) int {
	return slices.IndexFunc(c.servers, func(s *mcp.Server) bool { return s.ReplicaID() == id })
}

// postsWhere returns the POSTs whose body f accepts.
func (c *busCluster) postsWhere(f func(body string) bool) []postSeen {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []postSeen
	for _, p := range c.posts {
		if f(p.body) {
			out = append(out, p)
		}
	}
	return out
}

// sessionOf returns the copy of the session sid that s holds.
func sessionOf(t *testing.T, s *mcp.Server, sid string) *mcp.ServerSession {
	t.Helper()
	for _, ss := range s.Sessions() {
		if ss.ID() == sid {
			return ss
		}
	}
	t.Fatalf("replica %s holds no copy of the session", s.ReplicaID())
	return nil
}

// recvWithin waits for a value from ch.
func recvWithin[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(busWait):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// rawRequest sends a request with the session's headers to url and
// returns the response's status and Retry-After header.
func rawRequest(t *testing.T, ctx context.Context, method, url, sid, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// connectClient connects an mcp.Client of the handshake era through the
// proxy, with a GET stream or not.
func (c *busCluster) connectClient(t *testing.T, ctx context.Context, get bool, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	o := mcp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.Era = mcp.EraHandshake
	cl := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &o)
	cs, err := cl.Connect(ctx, &transport.StreamableClientTransport{URL: c.proxy.URL, DisableStandaloneStream: !get, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func busReplicasDelete(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		c := newBusCluster(t, store, bus, transport.StreamableHTTPOptions{})
		cs := c.connectClient(t, ctx, false, nil)
		sid := cs.ID()
		// Three calls at once, one per replica (round robin).
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
				errs <- err
			}()
		}
		on := map[int]bool{}
		for range 3 {
			on[recvWithin(t, c.started, "call started")] = true
		}
		if len(on) != 3 {
			t.Fatalf("the calls run on replicas %v, want all three", on)
		}
		if st, _ := rawRequest(t, ctx, http.MethodDelete, c.https[0].URL, sid, ""); st != http.StatusNoContent {
			t.Fatalf("DELETE on replica 0: status %d, want 204", st)
		}
		// Every replica cancels its call at once: nothing else would
		// (no recheck happens, no request comes).
		cancelled := map[int]bool{}
		for range 3 {
			cancelled[recvWithin(t, c.cancelled, "call cancelled")] = true
		}
		if len(cancelled) != 3 {
			t.Errorf("calls cancelled on %v, want all three", cancelled)
		}
		for range 3 {
			if err := recvWithin(t, errs, "call's end"); err == nil {
				t.Error("a call of the deleted session succeeded")
			}
		}
		for i, srv := range c.https {
			if st, _ := rawRequest(t, ctx, http.MethodPost, srv.URL, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); st != http.StatusNotFound {
				t.Errorf("replica %d after DELETE: status %d, want 404", i, st)
			}
		}
	})
}

func busReplicasCancel(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		// With an event store, a call outlives its client's going away:
		// only the cancellation stops it.
		c := newBusCluster(t, store, bus, transport.StreamableHTTPOptions{EventStore: transport.NewMemoryEventStore(nil)})
		cs := c.connectClient(t, ctx, false, nil)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "block"})
			done <- err
		}()
		on := recvWithin(t, c.started, "call started")
		cancel()
		if err := recvWithin(t, done, "call's end"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v, want context.Canceled", err)
		}
		if got := recvWithin(t, c.cancelled, "cancellation on the replica running the call"); got != on {
			t.Errorf("cancelled on replica %d, want %d", got, on)
		}
		notes := c.postsWhere(func(b string) bool { return strings.Contains(b, "notifications/cancelled") })
		if len(notes) != 1 {
			t.Fatalf("%d notifications/cancelled POSTed, want 1", len(notes))
		}
		if notes[0].replica == on {
			t.Errorf("the cancellation reached the replica running the call (%d): the test proves nothing", on)
		}
	})
}

func busReplicasAnswer(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		c := newBusCluster(t, store, bus, transport.StreamableHTTPOptions{})
		var samplings atomic.Int32
		cs := c.connectClient(t, ctx, false, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				samplings.Add(1)
				return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Contents{&mcp.TextContent{Text: "sampled"}}, Model: "m"}, nil
			},
		})
		sid := cs.ID()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError {
			t.Fatalf("ask: %v %+v", err, res)
		}
		var out askOut
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		if out.Text != "sampled" || samplings.Load() != 1 {
			t.Errorf("ask returned %+v after %d samplings, want \"sampled\" after 1", out, samplings.Load())
		}
		answers := c.postsWhere(func(b string) bool { return strings.Contains(b, `"result"`) && !strings.Contains(b, `"method"`) })
		if len(answers) != 1 {
			t.Fatalf("%d answers POSTed, want 1", len(answers))
		}
		if answers[0].replica == out.Replica {
			t.Fatalf("the answer reached the replica that asked (%d): the test proves nothing", out.Replica)
		}
		// The same answer again, and one to a request never sent: each
		// is accepted and dropped by the replica its ID names.
		other := (out.Replica + 1) % 3
		if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[other].URL, sid, answers[0].body); st != http.StatusAccepted {
			t.Errorf("a duplicate answer: status %d, want 202", st)
		}
		unknown := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s:999","result":{}}`, c.servers[out.Replica].ReplicaID())
		if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[other].URL, sid, unknown); st != http.StatusAccepted {
			t.Errorf("an answer to an unknown request: status %d, want 202", st)
		}
		// The session still serves, on every replica.
		for range 3 {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := samplings.Load(); n != 1 {
			t.Errorf("%d samplings, want 1", n)
		}
	})
}

// failingBus is a bus whose PublishTo fails while fail is set.
type failingBus struct {
	mcp.AddressedBus
	fail atomic.Bool
}

func (b *failingBus) PublishTo(ctx context.Context, replica string, msg []byte) error {
	if b.fail.Load() {
		return errors.New("bus down (test)")
	}
	return b.AddressedBus.PublishTo(ctx, replica, msg)
}

func busReplicasBusDown(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		ab, ok := bus.(mcp.AddressedBus)
		if !ok {
			t.Skip("the bus is no mcp.AddressedBus")
		}
		fb := &failingBus{AddressedBus: ab}
		c := newBusCluster(t, store, fb, transport.StreamableHTTPOptions{})
		cs := c.connectClient(t, ctx, false, nil)
		sid := cs.ID()
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s:1","result":{}}`, c.servers[1].ReplicaID())
		fb.fail.Store(true)
		st, retry := rawRequest(t, ctx, http.MethodPost, c.https[0].URL, sid, answer)
		if st != http.StatusServiceUnavailable || retry == "" {
			t.Errorf("an answer for another replica with the bus down: status %d, Retry-After %q; want 503 with Retry-After", st, retry)
		}
		fb.fail.Store(false)
		if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[0].URL, sid, answer); st != http.StatusAccepted {
			t.Errorf("the same answer with the bus up: status %d, want 202", st)
		}
	})
}

// watchStore is a session store that reports its successful updates and
// touches.
type watchStore struct {
	transport.SessionStore
	updates chan transport.SessionRecord
	touches chan string
}

func newWatchStore(s transport.SessionStore) *watchStore {
	return &watchStore{SessionStore: s, updates: make(chan transport.SessionRecord, 1024), touches: make(chan string, 1024)}
}

func (w *watchStore) Update(ctx context.Context, rec *transport.SessionRecord) error {
	err := w.SessionStore.Update(ctx, rec)
	if err == nil {
		select {
		case w.updates <- *rec.Clone():
		default:
		}
	}
	return err
}

func (w *watchStore) Touch(ctx context.Context, id string, expires time.Time) (int64, error) {
	v, err := w.SessionStore.Touch(ctx, id, expires)
	if err == nil {
		select {
		case w.touches <- id:
		default:
		}
	}
	return v, err
}

// replicaNamed waits for an update of the record that names a replica
// that want accepts, and returns the name.
func (w *watchStore) replicaNamed(t *testing.T, want func(string) bool) string {
	t.Helper()
	timeout := time.After(busWait)
	for {
		select {
		case rec := <-w.updates:
			if want(rec.Replica) {
				return rec.Replica
			}
		case <-timeout:
			t.Fatal("the record never named the replica expected")
		}
	}
}

// logSeen is a log message the client received.
type logSeen struct {
	level mcp.LoggingLevel
	msg   string
}

func busReplicasGetStream(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		ws := newWatchStore(store)
		// Each request rechecks the record: a request on a replica makes
		// its copy current, which the test needs to know when it is.
		c := newBusCluster(t, ws, bus, transport.StreamableHTTPOptions{SessionRecheck: -1})
		logs := make(chan logSeen, 64)
		changed := make(chan struct{}, 16)
		var samplings atomic.Int32
		cs := c.connectClient(t, ctx, true, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, n *mcp.LoggingMessageNotification) {
				m, _ := n.Params.Data.(map[string]any)
				logs <- logSeen{n.Params.Level, fmt.Sprint(m["message"])}
			},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedNotification) { changed <- struct{}{} },
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				samplings.Add(1)
				return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Contents{&mcp.TextContent{Text: "sampled"}}, Model: "m"}, nil
			},
		})
		sid := cs.ID()
		holder := c.index(ws.replicaNamed(t, func(r string) bool { return r != "" }))
		if holder < 0 {
			t.Fatal("the record names no replica of the test")
		}
		if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelWarning); err != nil {
			t.Fatal(err)
		}
		for range 3 { // one request on each replica: every copy is current
			if err := cs.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for x := range 3 {
			if x == holder {
				continue
			}
			ss := sessionOf(t, c.servers[x], sid)
			lg := slog.New(mcp.NewLoggingHandler(ss, nil))
			lg.Info(fmt.Sprintf("below the level, from %d", x))
			lg.Error(fmt.Sprintf("from %d", x))
			if got := recvWithin(t, logs, "log message"); got != (logSeen{mcp.LoggingLevelError, fmt.Sprintf("from %d", x)}) {
				t.Errorf("the client received %+v, want the error from %d alone", got, x)
			}
			// A request outside any request, answered by a POST that
			// may reach any replica.
			res, err := ss.CreateMessage(ctx, sampleParams())
			if err != nil || textOf(res) != "sampled" {
				t.Fatalf("sampling from replica %d, outside a request: %v, %+v", x, err, res)
			}
		}
		if n := samplings.Load(); n != 2 {
			t.Errorf("%d samplings, want 2", n)
		}
		// A list change made on a replica reaches the client once: every
		// replica holding a copy hears of it, and only the holder of the
		// GET stream sends it. A log message queued after it on each
		// copy goes after it, were it relayed.
		maker := (holder + 1) % 3
		c.servers[maker].AddTool(&mcp.Tool{Name: "new", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		recvWithin(t, changed, "tools/list_changed")
		for x := range 3 {
			if x == holder {
				continue
			}
			slog.New(mcp.NewLoggingHandler(sessionOf(t, c.servers[x], sid), nil)).Error("barrier")
			if got := recvWithin(t, logs, "barrier"); got.msg != "barrier" {
				t.Errorf("received %+v, want the barrier", got)
			}
		}
		select {
		case <-changed:
			t.Error("tools/list_changed received twice")
		default:
		}
	})
}

func busReplicasStreamRecord(t *testing.T, store transport.SessionStore, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		ws := newWatchStore(store)
		// Each request rechecks the record; a GET stream touches it
		// every SessionIdleTimeout/10.
		c := newBusCluster(t, ws, bus, transport.StreamableHTTPOptions{SessionRecheck: -1, SessionIdleTimeout: 5 * time.Second, EventStore: transport.NewMemoryEventStore(nil)})
		cs := c.connectClient(t, ctx, false, nil)
		sid := cs.ID()
		// A GET stream on replica 1, with no other request from now on.
		g := openGET(t, ctx, c.https[1].URL, sid, "")
		first := g.firstID(t)
		one := c.servers[1].ReplicaID()
		ws.replicaNamed(t, func(r string) bool { return r == one })
		// Only the stream's keeper touches the record now.
		for len(ws.touches) > 0 {
			<-ws.touches
		}
		before, err := store.Get(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if id := recvWithin(t, ws.touches, "touch from the GET stream's keeper"); id != sid {
			t.Fatalf("touched %q", id)
		}
		after, err := store.Get(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if !after.Expires.After(before.Expires) {
			t.Errorf("the touch left the expiry at %v (was %v)", after.Expires, before.Expires)
		}
		g.stop()
		ws.replicaNamed(t, func(r string) bool { return r == "" })
		// The client resumes the stream (Last-Event-ID) where it was:
		// the record names the replica again while it lives.
		g = openGET(t, ctx, c.https[1].URL, sid, first)
		ws.replicaNamed(t, func(r string) bool { return r == one })
		g.stop()
		ws.replicaNamed(t, func(r string) bool { return r == "" })
		// Resumed on replica 2, the stream goes on there: the record
		// names replica 2, and what replica 0 sends the session outside
		// a request reaches it.
		g = openGET(t, ctx, c.https[2].URL, sid, first)
		two := c.servers[2].ReplicaID()
		ws.replicaNamed(t, func(r string) bool { return r == two })
		// A request on replica 0 makes its copy current (it may be
		// already, from the record's change on the bus).
		if st, _ := rawRequest(t, ctx, http.MethodPost, c.https[0].URL, sid, `{"jsonrpc":"2.0","id":"p","method":"ping"}`); st != http.StatusOK {
			t.Fatalf("ping on replica 0: status %d", st)
		}
		slog.New(mcp.NewLoggingHandler(sessionOf(t, c.servers[0], sid), nil)).Error("from 0")
		if data := recvWithin(t, g.data, "the message from replica 0"); !strings.Contains(data, "from 0") {
			t.Fatalf("the resumed stream received %q", data)
		}
		g.stop()
		ws.replicaNamed(t, func(r string) bool { return r == "" })
	})
}

// getStream is a GET stream opened by openGET.
type getStream struct {
	ids  chan string // the ID of its first event ("" when it had none)
	data chan string // the data of its message events
	stop func()      // ends the stream and waits for its end
}

func (g *getStream) firstID(t *testing.T) string {
	t.Helper()
	id := recvWithin(t, g.ids, "the GET stream's first event")
	if id == "" {
		t.Fatal("the GET stream sent no event ID to resume from")
	}
	return id
}

// openGET opens a GET stream of the session at url, resuming after last
// when not "".
func openGET(t *testing.T, ctx context.Context, url, sid, last string) *getStream {
	t.Helper()
	gctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
	g := &getStream{ids: make(chan string, 1), data: make(chan string, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		buf := make([]byte, 4096)
		var pending []byte
		sent := false
		for {
			n, err := resp.Body.Read(buf)
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				line := string(pending[:i])
				pending = pending[i+1:]
				switch {
				case strings.HasPrefix(line, "id: ") && !sent:
					g.ids <- line[4:]
					sent = true
				case strings.HasPrefix(line, "data: "):
					select {
					case g.data <- line[6:]:
					default:
					}
				}
			}
			if err != nil {
				if !sent {
					g.ids <- ""
				}
				return
			}
		}
	}()
	g.stop = func() {
		cancel()
		<-done
	}
	return g
}

func busReplicasLegacySSE(t *testing.T, bus mcp.Bus) {
	CheckGoroutines(t, func(ctx context.Context) {
		ab, ok := bus.(mcp.AddressedBus)
		if !ok {
			t.Skip("the bus is no mcp.AddressedBus")
		}
		fb := &failingBus{AddressedBus: ab}
		ring := mcp.NewRandomKeyRing()
		var (
			mu      sync.Mutex
			posts   []int // the replica of each POST
			urls    []*url.URL
			https   []*httptest.Server
			servers []*mcp.Server
		)
		for i := range 3 {
			s := mcp.NewServer(&mcp.Implementation{Name: "replica", Version: "1"}, &mcp.ServerOptions{Keys: ring, Bus: fb})
			err := mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (askOut, error) {
				res, err := req.Session.CreateMessage(ctx, sampleParams())
				if err != nil {
					return askOut{}, err
				}
				return askOut{Replica: i, Text: textOf(res)}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			servers = append(servers, s)
			h := mcp.NewSSEHandler(s, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					mu.Lock()
					posts = append(posts, i)
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			}))
			https = append(https, srv)
			u, _ := url.Parse(srv.URL)
			urls = append(urls, u)
			t.Cleanup(func() {
				h.Close()
				srv.Close()
				s.Close()
			})
		}
		tr := &http.Transport{}
		proxy := roundRobinProxy(urls, tr)
		t.Cleanup(func() {
			proxy.Close()
			tr.CloseIdleConnections()
		})
		var samplings atomic.Int32
		cl := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				samplings.Add(1)
				return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Contents{&mcp.TextContent{Text: "sampled"}}, Model: "m"}, nil
			},
		})
		cs, err := cl.Connect(ctx, &transport.SSEClientTransport{URL: proxy.URL})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for range 3 {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError {
			t.Fatalf("ask: %v %+v", err, res)
		}
		var out askOut
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		if out.Text != "sampled" || samplings.Load() != 1 {
			t.Errorf("ask returned %+v after %d samplings", out, samplings.Load())
		}
		mu.Lock()
		elsewhere := 0
		for _, p := range posts {
			if p != out.Replica {
				elsewhere++
			}
		}
		mu.Unlock()
		if elsewhere == 0 {
			t.Errorf("every POST reached the replica holding the stream (%d): the test proves nothing", out.Replica)
		}
		// The bus down: a POST for the session on another replica is
		// refused, never accepted and lost.
		held := servers[out.Replica].Sessions()
		if len(held) != 1 {
			t.Fatalf("the replica holding the stream has %d sessions, want 1", len(held))
		}
		sid := held[0].ID()
		target := https[(out.Replica+1)%3].URL + "/?sessionId=" + url.QueryEscape(sid) + "&replica=" + servers[out.Replica].ReplicaID()
		note := `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
		for _, c := range []struct {
			fail bool
			want int
		}{{true, http.StatusServiceUnavailable}, {false, http.StatusAccepted}} {
			fb.fail.Store(c.fail)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(note))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("a POST for another replica's session, bus down %v: status %d, want %d", c.fail, resp.StatusCode, c.want)
			}
		}
	})
}
