package redisstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// The bounds the fault tests hold the stores to (issue 23, "Failure
// behaviour"), with the default Timeout and Breaker.
const (
	requestBound  = time.Second     // a request's answer, or its 503, with Redis failing
	recoveryBound = 2 * time.Second // from Redis' return to a request served again
)

// fleet is three replicas of one server in one process, each its own
// mcp.Server and Streamable HTTP handler on 127.0.0.1, sharing a key ring
// and, on one client of a private redis-server, a session store, an
// event store, a bus and a state claimer, with one breaker. Records are
// rechecked on every request (SessionRecheck -1), so that each replica
// sees at once what Redis holds. Tools: "echo"; "count", which reports
// the progress it reads from tokens until tokens is closed; "greet",
// which asks the caller's name (an input round, single use).
type fleet struct {
	t       *testing.T
	redis   *redisProc
	client  *redis.Client
	prefix  string
	breaker *Breaker
	events  *EventStore
	servers [3]*mcp.Server
	hands   [3]*transport.StreamableHTTPHandler
	urls    [3]string
	http    *http.Client
	tokens  chan int
	ids     atomic.Int64 // of the requests echo sends
}

// newFleet starts a fleet on p; each option, if any, changes the
// handlers' options.
func newFleet(t *testing.T, p *redisProc, options ...func(*transport.StreamableHTTPOptions)) *fleet {
	t.Helper()
	f := fleetOn(t, p)
	f.start(nil, nil, options...)
	return f
}

// fleetOn returns a fleet on p, not started: its client, prefix and
// breaker, for the stores a variant of the fleet adds (see start).
func fleetOn(t *testing.T, p *redisProc) *fleet {
	return &fleet{t: t, redis: p, client: p.client(), prefix: testPrefix(), breaker: NewBreaker(nil), tokens: make(chan int)}
}

// start makes the fleet's stores and starts its replicas; a variant's
// opts, if not nil, changes replica i's server options, and add adds
// what it needs to the server, after the fleet's tools.
func (f *fleet) start(opts func(i int, o *mcp.ServerOptions), add func(i int, s *mcp.Server), options ...func(*transport.StreamableHTTPOptions)) {
	t := f.t
	t.Helper()
	sessions, err := NewSessionStore(f.client, &SessionStoreOptions{Prefix: f.prefix, Breaker: f.breaker})
	if err != nil {
		t.Fatal(err)
	}
	f.events, err = NewEventStore(f.client, &EventStoreOptions{Prefix: f.prefix, Breaker: f.breaker})
	if err != nil {
		t.Fatal(err)
	}
	claimer, err := NewStateClaimer(f.client, &StateClaimerOptions{Prefix: f.prefix, Breaker: f.breaker})
	if err != nil {
		t.Fatal(err)
	}
	ring := mcp.NewRandomKeyRing()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	f.http = &http.Client{Transport: tr}
	for i := range f.servers {
		bus, err := NewBus(f.client, &BusOptions{Prefix: f.prefix, Breaker: f.breaker})
		if err != nil {
			t.Fatal(err)
		}
		so := &mcp.ServerOptions{
			Keys: ring, StateClaimer: claimer, Bus: bus, ListChangedDelay: -1,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		}
		if opts != nil {
			opts(i, so)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "fleet", Version: "1"}, so)
		f.addTools(s)
		if add != nil {
			add(i, s)
		}
		o := &transport.StreamableHTTPOptions{SessionStore: sessions, EventStore: f.events, SessionRecheck: -1}
		for _, opt := range options {
			opt(o)
		}
		h := mcp.NewStreamableHTTPHandler(s, o)
		srv := httptest.NewServer(h)
		t.Cleanup(func() {
			h.Close()
			srv.Close()
			s.Close()
		})
		f.servers[i], f.hands[i], f.urls[i] = s, h, srv.URL
	}
	t.Cleanup(tr.CloseIdleConnections)
}

func (f *fleet) addTools(s *mcp.Server) {
	type in struct{}
	err := errors.Join(
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, in) (string, error) { return "echo", nil }),
		s.AddTool(&mcp.Tool{Name: "count", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case k, ok := <-f.tokens:
					if !ok {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
					}
					if err := req.ReportProgress(ctx, float64(k), 0, ""); err != nil {
						return nil, err
					}
				}
			}
		}),
		mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (string, error) {
			res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprint("Hello, ", res.Content["name"]), nil
		}),
	)
	if err != nil {
		f.t.Fatal(err)
	}
}

// reply is what a replica answered.
type reply struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

// rpc decodes the body's JSON-RPC message (the last data of an SSE body).
func (r reply) rpc() map[string]any {
	data := r.body
	if i := strings.LastIndex(data, "\ndata: "); i >= 0 || strings.HasPrefix(data, "data: ") {
		data = strings.TrimPrefix(data[i+1:], "data: ")
		data, _, _ = strings.Cut(data, "\n")
	}
	var m map[string]any
	json.Unmarshal([]byte(data), &m)
	return m
}

// errorCode returns the JSON-RPC error code of the reply, or 0.
func (r reply) errorCode() int {
	e, _ := r.rpc()["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

// send sends a request to replica i with the headers kv and reads the
// whole reply.
func (f *fleet) send(ctx context.Context, i int, method, body string, kv ...string) reply {
	f.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, f.urls[i], strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for j := 0; j+1 < len(kv); j += 2 {
		req.Header.Set(kv[j], kv[j+1])
	}
	start := time.Now()
	resp, err := f.http.Do(req)
	if err != nil {
		f.t.Errorf("%s to replica %d: %v", method, i, err)
		return reply{took: time.Since(start)}
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return reply{status: resp.StatusCode, header: resp.Header, body: string(data), took: time.Since(start)}
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// initialize sends initialize to replica i.
func (f *fleet) initialize(ctx context.Context, i int) reply {
	return f.send(ctx, i, http.MethodPost, initBody)
}

// session opens a session of the handshake era on replica i.
func (f *fleet) session(i int) string {
	f.t.Helper()
	r := f.initialize(f.t.Context(), i)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		f.t.Fatalf("initialize on %d: %d %s", i, r.status, r.body)
	}
	if r := f.call(f.t.Context(), i, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		f.t.Fatalf("initialized on %d: %d %s", i, r.status, r.body)
	}
	return sid
}

// call sends a message of session sid to replica i.
func (f *fleet) call(ctx context.Context, i int, sid, body string) reply {
	return f.send(ctx, i, http.MethodPost, body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
}

// echo calls the tool echo of session sid on replica i.
func (f *fleet) echo(ctx context.Context, i int, sid string) reply {
	return f.call(ctx, i, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, 100+f.ids.Add(1)))
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// modern sends a 2026-07-28 tools/call of tool with extra params.
func (f *fleet) modern(ctx context.Context, i int, tool, extra string) reply {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` + modernMeta + extra + `}}`
	return f.send(ctx, i, http.MethodPost, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", tool)
}

// greetState runs the first round of greet on replica i and returns the
// retry's params (the answer and the requestState).
func (f *fleet) greetState(i int) string {
	f.t.Helper()
	r := f.modern(f.t.Context(), i, "greet", "")
	res, _ := r.rpc()["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if state == "" {
		f.t.Fatalf("first round of greet: %d %s", r.status, r.body)
	}
	q, _ := json.Marshal(state)
	return `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(q)
}

// within reports on t a reply slower than requestBound.
func within(t *testing.T, what string, r reply) {
	t.Helper()
	if r.took > requestBound {
		t.Errorf("%s took %v, over %v", what, r.took, requestBound)
	}
}

// checkOutage checks what clients get while Redis fails: initialize gets
// 503 with Retry-After, and a session this replica does not hold 503
// (never 404) when records cannot be read (readable false) or is served
// when they can; 2026-07-28 plain calls are served; the retry of an
// input round is refused (-32603: its state cannot be claimed); each
// within requestBound. A burst of such requests leaves the goroutines
// and the heap (within 4 MiB) where they were. sid is a session that
// replica 0 holds.
func (f *fleet) checkOutage(t *testing.T, sid string, readable bool) {
	t.Helper()
	ctx := t.Context()
	retry := f.greetState(0) // issuing a state needs no Redis
	// Idle HTTP connections (three goroutines each) are not what the
	// burst below must leave flat.
	f.http.CloseIdleConnections()
	base, baseHeap := runtime.NumGoroutine(), heapAlloc()
	check := func() {
		for i := range f.urls {
			r := f.initialize(ctx, i)
			if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
				t.Errorf("initialize on %d: %d (Retry-After %q) %s; want 503 with Retry-After", i, r.status, r.header.Get("Retry-After"), r.body)
			}
			within(t, "initialize", r)
			r = f.modern(ctx, i, "echo", "")
			if r.status != 200 || r.rpc()["result"] == nil {
				t.Errorf("2026-07-28 call on %d: %d %s", i, r.status, r.body)
			}
			within(t, "2026-07-28 call", r)
			r = f.modern(ctx, i, "greet", retry)
			if r.errorCode() != -32603 {
				t.Errorf("retry of an input round on %d: %d %s; want -32603 (fails closed)", i, r.status, r.body)
			}
			within(t, "retry of an input round", r)
		}
		for _, i := range []int{1, 2} {
			r := f.echo(ctx, i, sid)
			switch {
			case readable && (r.status != 200 || r.rpc()["result"] == nil):
				t.Errorf("a call of a session restored with Redis readable, on %d: %d %s", i, r.status, r.body)
			case !readable && (r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == ""):
				t.Errorf("a call of a session replica %d does not hold: %d %s; want 503 with Retry-After", i, r.status, r.body)
			}
			within(t, "a call of a session held elsewhere", r)
		}
	}
	check()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(check)
	}
	wg.Wait()
	// Every request was answered: what they started has ended (polled:
	// connections and timers wind down after the answers).
	f.http.CloseIdleConnections()
	for deadline := time.Now().Add(5 * time.Second); ; {
		n, h := runtime.NumGoroutine(), heapAlloc()
		if n <= base+5 && h <= baseHeap+4<<20 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d after the burst, %d before; heap %d B, %d before\n%s", n, base, h, baseHeap, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond) // polling the goroutine count
	}
}

// heapAlloc returns the bytes of the heap in use after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// checkRecovery checks that replicas serve an initialize on each replica
// within recoveryBound of back, when Redis came back, with no restart of
// theirs. It returns the sessions opened.
func (f *fleet) checkRecovery(t *testing.T, back time.Time) (sids []string) {
	t.Helper()
	for i := range f.urls {
		for {
			r := f.initialize(t.Context(), i)
			// An initialize whose session could not be saved gets a
			// JSON-RPC error (200, no session): not recovered yet.
			if sid := r.header.Get("Mcp-Session-Id"); r.status == 200 && sid != "" {
				sids = append(sids, sid)
				break
			}
			if time.Since(back) > recoveryBound {
				t.Fatalf("initialize on %d %v after Redis came back: %d %s", i, time.Since(back), r.status, r.body)
			}
			time.Sleep(10 * time.Millisecond) // polling for recovery, bounded above
		}
	}
	if d := time.Since(back); d > recoveryBound {
		t.Errorf("recovery took %v, over %v", d, recoveryBound)
	}
	return sids
}

// countStream is a call of "count" of a session, whose SSE stream the
// test reads.
type countStream struct {
	f      *fleet
	cancel context.CancelFunc
	events *sseReader
	ids    map[int]string // by progress, "" for an event sent without an ID
}

// startCount calls count in session sid on replica 0.
func (f *fleet) startCount(sid string) *countStream {
	f.t.Helper()
	resp, events, cancel := f.postStream(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{},"_meta":{"progressToken":"p"}}}`)
	cs := &countStream{f: f, cancel: cancel, events: events, ids: map[int]string{}}
	if prime := cs.events.next(); prime == nil || prime["id"] == "" {
		f.t.Fatalf("count: %d, priming event %q", resp.StatusCode, prime)
	}
	return cs
}

// postStream POSTs body in session sid to replica 0 and returns the
// response, a reader of its SSE events, and what cancels the request
// (the test's cleanup does too).
func (f *fleet) postStream(sid, body string) (*http.Response, *sseReader, context.CancelFunc) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.urls[0], strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := f.http.Do(req)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, &sseReader{bufio.NewScanner(resp.Body)}, cancel
}

// progress sends progress k and returns the event's ID.
func (cs *countStream) progress(k int) string {
	cs.f.t.Helper()
	cs.f.tokens <- k
	ev := cs.events.next()
	if progressOf(ev) != k {
		cs.f.t.Fatalf("event %d: %q", k, ev)
	}
	cs.ids[k] = ev["id"]
	return ev["id"]
}

// end ends the call: its response is the stream's last event.
func (cs *countStream) end() {
	cs.f.t.Helper()
	close(cs.f.tokens)
	for {
		ev := cs.events.next()
		if ev == nil {
			cs.f.t.Fatal("count: the stream ended without the response")
		}
		if strings.Contains(ev["data"], `"done"`) {
			return
		}
	}
}

// resume sends GET with Last-Event-ID id of session sid to replica i.
func (f *fleet) resume(ctx context.Context, i int, sid, id string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.urls[i], nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", id)
	resp, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// checkGap checks, once Redis is back, that events 1..n of cs sent while
// Redis failed went out live without an ID, and that a resumption across
// them is refused with 400 like an unknown event.
func (cs *countStream) checkGap(t *testing.T, sid string, before int, failedFrom, failedTo int) {
	t.Helper()
	for k := failedFrom; k <= failedTo; k++ {
		if id, ok := cs.ids[k]; !ok || id != "" {
			t.Errorf("event %d sent while Redis failed: ID %q (present %v), want sent live without one", k, id, ok)
		}
	}
	after := cs.progress(failedTo + 1) // stored again, with a gap mark
	if after == "" {
		t.Fatalf("event %d, Redis back: no ID", failedTo+1)
	}
	for i := range cs.f.urls {
		resp := cs.f.resume(t.Context(), i, sid, cs.ids[before])
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("resume across the gap on %d: %d, want 400", i, resp.StatusCode)
		}
	}
}

// TestFaultPause stops Redis (SIGSTOP), whose connections then answer
// nothing, and continues it (SIGCONT). A change made on replica B
// meanwhile cannot be published: once Redis is back, B publishes a gap,
// which ends a listen stream on A gracefully; listening again hears C.
func TestFaultPause(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		f := newFleet(t, startRedis(t))
		sid := f.session(0)
		ch, copts := notes()
		lc := mcptest.Connect(t, f.servers[0], &mcptest.Options{Client: copts})
		sub, err := lc.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		cs := f.startCount(sid)
		cs.progress(1)
		f.redis.pause()
		addTool(t, f.servers[1], "x")
		for k := 2; k <= 3; k++ {
			cs.progress(k)
		}
		f.checkOutage(t, sid, false)
		if r := f.echo(t.Context(), 0, sid); r.status != 200 {
			t.Errorf("a call of the session on the replica holding it: %d %s; want served from its copy", r.status, r.body)
		}
		f.redis.resume()
		opened := f.checkRecovery(t, time.Now())
		cs.checkGap(t, sid, 1, 2, 3)
		for i := range f.urls {
			if r := f.echo(t.Context(), i, sid); r.status != 200 {
				t.Errorf("the session on %d after recovery: %d %s", i, r.status, r.body)
			}
		}
		select {
		case <-sub.Done():
			if err := sub.Err(); err != nil {
				t.Errorf("the listen stream ended with %v, want its graceful result", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the change lost while Redis was stopped did not end the listen stream")
		}
		sub2, err := lc.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub2.Close()
		for len(ch) > 0 { // what the first stream got
			<-ch
		}
		addTool(t, f.servers[2], "y")
		expect(t, ch, "tools")
		cs.end()
		f.checkKeys(t, f.lostReplies, append(opened, sid)...)
	})
}

// TestFaultKillRestart kills Redis (SIGKILL): connections are refused;
// then starts it again, empty. Sessions are then unknown on every replica
// (404: clients initialize again), and the event IDs issued before never
// resolve, even to the events a stream of the same name gets after.
func TestFaultKillRestart(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newFleet(t, startRedis(t))
		sid := f.session(0)
		cs := f.startCount(sid)
		old := cs.progress(1)
		cs.progress(2)
		f.redis.kill()
		cs.progress(3)
		f.checkOutage(t, sid, false)
		f.redis.restart()
		opened := f.checkRecovery(t, time.Now())
		// The stream goes on: its events are stored again, under a new
		// epoch of the stream.
		for k := 4; k <= 6; k++ {
			cs.progress(k)
		}
		if cs.ids[6] == "" {
			t.Fatal("event 6, Redis back: no ID")
		}
		for _, id := range []string{old, cs.ids[2]} {
			if _, evs, err := f.events.After(t.Context(), sid, id); !errors.Is(err, transport.ErrEventNotFound) {
				t.Errorf("After(%s) on the new Redis: %d events, %v; want ErrEventNotFound", id, len(evs), err)
			}
		}
		for i := range f.urls {
			if r := f.echo(t.Context(), i, sid); r.status != http.StatusNotFound {
				t.Errorf("the session on %d, Redis restarted empty: %d %s; want 404", i, r.status, r.body)
			}
		}
		again := f.session(1) // clients initialize again
		// The session is gone: its call was cancelled with it.
		cs.cancel()
		f.checkKeys(t, f.eventsOf(sid), append(opened, again)...)
	})
}

// TestFaultOOM sets maxmemory below what Redis uses, with noeviction:
// writes are refused (OOM), reads and deletions served. initialize gets
// 503, sessions are restored from their records, DELETE works, events go
// out live and a resumption across them is refused; the breaker stays
// closed (Redis answers).
func TestFaultOOM(t *testing.T) {
	mcptest.CheckGoroutines(t, func(context.Context) {
		f := newFleet(t, startRedis(t, "--maxmemory-policy", "noeviction"))
		sid, other := f.session(0), f.session(0)
		cs := f.startCount(sid)
		cs.progress(1)
		ctx := t.Context()
		if err := f.client.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			t.Fatal(err)
		}
		cs.progress(2)
		f.checkOutage(t, sid, true)
		// DELETE only deletes (DEL, ZREM: no command Redis refuses
		// under OOM): it frees memory, and works.
		r := f.send(ctx, 1, http.MethodDelete, "", "Mcp-Session-Id", other, "MCP-Protocol-Version", "2025-11-25")
		if r.status != http.StatusNoContent {
			t.Errorf("DELETE with Redis out of memory: %d %s; want 204", r.status, r.body)
		}
		if r := f.echo(ctx, 2, other); r.status != http.StatusNotFound {
			t.Errorf("the session deleted under OOM, on 2: %d %s; want 404", r.status, r.body)
		}
		if f.breaker.Open() {
			t.Error("the breaker opened for OOM refusals")
		}
		if err := f.client.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
		opened := f.checkRecovery(t, time.Now())
		cs.checkGap(t, sid, 1, 2, 2)
		cs.end()
		f.checkKeys(t, nil, append(opened, sid)...)
	})
}

// TestFaultPubSubKill kills the bus's Pub/Sub connections (CLIENT KILL
// TYPE pubsub): go-redis subscribes again, the bus tells the gap, and a
// listen stream on the replica ends with its graceful result; listening
// again hears another replica's changes.
func TestFaultPubSubKill(t *testing.T) {
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		f := newFleet(t, startRedis(t))
		ch, copts := notes()
		cs := mcptest.Connect(t, f.servers[0], &mcptest.Options{Client: copts})
		sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if n, err := f.client.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n < 3 {
			t.Fatalf("CLIENT KILL TYPE pubsub: %d killed, %v; want the 3 replicas'", n, err)
		}
		select {
		case <-sub.Done():
			if err := sub.Err(); err != nil {
				t.Fatalf("the listen stream ended with %v, want its graceful result", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the gap did not end the listen stream")
		}
		sub2, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer sub2.Close()
		addTool(t, f.servers[1], "x")
		expect(t, ch, "tools")
		f.checkKeys(t, nil)
	})
}
