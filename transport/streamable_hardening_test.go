package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// hardBackend serves the connections of a StreamableHTTPHandler for the
// hardening tests, as an MCP server would where it matters:
// notifications/cancelled cancels the request it names (and so suppresses
// its response).
//
//	initialize  answers {"protocolVersion": <params.protocolVersion>}
//	echo        answers its params
//	block       reports it started, waits until its context ends, answers
//	stuck       reports it started, ignores its context, answers when the
//	            test ends
//	stream      sends notifications/progress {"n":k} for each k received
//	            on tokens, until tokens is closed, then answers "done"
type hardBackend struct {
	noBatch bool // refuse batches whatever the version

	tokens  chan int
	started chan jsonrpc.ID
	unstick chan struct{}

	mu    sync.Mutex
	conns []*jsonrpc.Conn
}

func newHardBackend() *hardBackend {
	return &hardBackend{tokens: make(chan int), started: make(chan jsonrpc.ID, 16), unstick: make(chan struct{})}
}

func (b *hardBackend) connect(_ context.Context, c Conn) error {
	var conn *jsonrpc.Conn
	conn = jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
		AllowBatch: func() bool { return !b.noBatch },
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			switch req.Method {
			case "initialize":
				var p struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				json.Unmarshal(req.Params, &p)
				return map[string]string{"protocolVersion": p.ProtocolVersion}, nil
			case "echo":
				if req.Params == nil {
					return nil, nil
				}
				return req.Params, nil
			case "block":
				b.started <- req.ID
				<-ctx.Done()
				return nil, ctx.Err()
			case "stuck":
				b.started <- req.ID
				<-b.unstick
				return nil, nil
			case "stream":
				for {
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case k, ok := <-b.tokens:
						if !ok {
							return "done", nil
						}
						if err := conn.Notify(ctx, "notifications/progress", json.RawMessage(`{"n":`+strconv.Itoa(k)+`}`)); err != nil {
							return nil, err
						}
					}
				}
			case "notifications/cancelled":
				var p struct {
					RequestID jsonrpc.ID `json:"requestId"`
				}
				if json.Unmarshal(req.Params, &p) == nil {
					conn.Cancel(p.RequestID)
				}
				return nil, nil
			}
			if req.IsNotification() {
				return nil, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
		}),
	})
	b.mu.Lock()
	b.conns = append(b.conns, conn)
	b.mu.Unlock()
	conn.Start()
	return nil
}

func (b *hardBackend) closeAll() {
	close(b.unstick)
	b.mu.Lock()
	conns := b.conns
	b.mu.Unlock()
	for _, c := range conns {
		c.Close()
		c.Wait()
	}
}

// hardHarness is a StreamableHTTPHandler with a hardBackend on an httptest
// server, and a client whose every exchange is bounded in time: a POST
// that never ends fails the test instead of hanging it.
type hardHarness struct {
	t       *testing.T
	backend *hardBackend
	handler *StreamableHTTPHandler
	srv     *plainServer
	client  *http.Client
}

func newHardHarness(t *testing.T, opts *StreamableHTTPOptions, configure func(*hardBackend)) *hardHarness {
	t.Helper()
	b := newHardBackend()
	if configure != nil {
		configure(b)
	}
	h := newStreamableHTTPHandler(b.connect, opts)
	srv := newPlainServer(t, h, nil)
	client := srv.Client()
	client.Timeout = 10 * time.Second
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		b.closeAll()
	})
	return &hardHarness{t: t, backend: b, handler: h, srv: srv, client: client}
}

func (hh *hardHarness) request(ctx context.Context, method, body string, kv ...string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, hh.srv.URL, r)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setHeaders(req, kv)
	return req
}

// post sends body and returns the response with its whole body read.
func (hh *hardHarness) post(body string, kv ...string) (*http.Response, string) {
	hh.t.Helper()
	resp, err := hh.client.Do(hh.request(context.Background(), http.MethodPost, body, kv...))
	if err != nil {
		hh.t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		hh.t.Fatalf("POST %s: reading the answer: %v (the exchange did not end)", body, err)
	}
	return resp, string(b)
}

// openPost sends body and returns the response with its body still open.
func (hh *hardHarness) openPost(ctx context.Context, body string, kv ...string) *http.Response {
	hh.t.Helper()
	c := *hh.client
	c.Timeout = 0 // the test reads the stream as it comes
	resp, err := c.Do(hh.request(ctx, http.MethodPost, body, kv...))
	if err != nil {
		hh.t.Fatalf("POST %s: %v", body, err)
	}
	hh.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (hh *hardHarness) initialize(version string) string {
	hh.t.Helper()
	resp, body := hh.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `"}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		hh.t.Fatalf("initialize: %d %q", resp.StatusCode, body)
	}
	return sid
}

// waitNoSessions waits, within a deadline, for the handler to hold no
// session.
func (hh *hardHarness) waitNoSessions() {
	hh.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(hh.handler.SessionIDs()) > 0 {
		if time.Now().After(deadline) {
			hh.t.Fatalf("sessions %v still open long after the idle timeout", hh.handler.SessionIDs())
		}
		// Polling: the idle timer fires on its own schedule.
		time.Sleep(5 * time.Millisecond)
	}
}

// sseReader reads SSE events one at a time.
type sseReader struct{ sc *bufio.Scanner }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{bufio.NewScanner(r)} }

// next returns the next event, or nil at the end of the stream.
func (r *sseReader) next() map[string]string {
	cur := map[string]string{}
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if len(cur) > 0 {
				return cur
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		cur[k] += strings.TrimPrefix(v, " ")
	}
	return nil
}

// eventSeq is the sequence number of a MemoryEventStore event ID.
func eventSeq(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id[strings.LastIndexByte(id, '_')+1:], 10, 64)
	if err != nil {
		t.Fatalf("event ID %q: %v", id, err)
	}
	return n
}

// A client that loses a live stream and resumes it while the request still
// runs gets every event after its Last-Event-ID exactly once, in order:
// those stored while it was away, then those sent during and after the
// replay.
func TestStreamableHTTPResumeInOrder(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil)}, nil)
	sid := hh.initialize("2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	post := hh.openPost(ctx, `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	if ct := post.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := newSSEReader(post.Body)
	if prime := events.next(); prime == nil || prime["data"] != "" {
		t.Fatalf("priming event %q", prime)
	}
	last := ""
	for k := 1; k <= 3; k++ {
		hh.backend.tokens <- k
		ev := events.next()
		if ev == nil || ev["data"] != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":`+strconv.Itoa(k)+`}}` {
			t.Fatalf("event %d: %q", k, ev)
		}
		last = ev["id"]
	}
	// The client drops the stream; the call goes on and its events are
	// stored meanwhile.
	cancel()
	for k := 4; k <= 10; k++ {
		hh.backend.tokens <- k
	}
	// It resumes; more events come once the resumed stream is live.
	get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", last))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	more := make(chan struct{})
	go func() {
		defer close(more)
		for k := 11; k <= 30; k++ {
			hh.backend.tokens <- k
		}
		close(hh.backend.tokens)
	}()
	resumed := newSSEReader(get.Body)
	prev := eventSeq(t, last)
	want := 4
	for {
		ev := resumed.next()
		if ev == nil {
			t.Fatalf("resumed stream ended before the response (next progress %d)", want)
		}
		if id := ev["id"]; id != "" {
			if seq := eventSeq(t, id); seq <= prev {
				t.Fatalf("event %s after %d: out of order or repeated", id, prev)
			} else {
				prev = seq
			}
		}
		if ev["data"] == "" {
			continue // a priming event (only its ID counts)
		}
		if ev["data"] == `{"jsonrpc":"2.0","id":1,"result":"done"}` {
			break
		}
		if wantData := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":` + strconv.Itoa(want) + `}}`; ev["data"] != wantData {
			t.Fatalf("event %q, want progress %d", ev, want)
		}
		want++
	}
	if want != 31 {
		t.Fatalf("the response came after progress %d, want 30", want-1)
	}
	<-more
}

// A client that resumes a stream whose previous connection the server
// still holds takes it over; the old connection's exchange ends.
func TestStreamableHTTPResumeTakesOver(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil)}, nil)
	sid := hh.initialize("2025-11-25")
	post := hh.openPost(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	events := newSSEReader(post.Body)
	prime := events.next()
	if prime == nil || prime["id"] == "" {
		t.Fatalf("priming event %q", prime)
	}
	// The first connection is still open (the server cannot know the
	// client lost it): the resume replaces it.
	get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", prime["id"]))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	if ev := events.next(); ev != nil {
		t.Fatalf("the replaced connection got %q; want its end", ev)
	}
	hh.backend.tokens <- 1
	close(hh.backend.tokens)
	resumed := newSSEReader(get.Body)
	if ev := resumed.next(); ev == nil || !strings.Contains(ev["data"], `"n":1`) {
		t.Fatalf("resumed event %q", ev)
	}
	if ev := resumed.next(); ev == nil || ev["data"] != `{"jsonrpc":"2.0","id":1,"result":"done"}` {
		t.Fatalf("resumed response %q", ev)
	}
	if ev := resumed.next(); ev != nil {
		t.Fatalf("after the response: %q; want the end", ev)
	}
}

// jsonrpcAnswers decodes an application/json answer: one response or a
// batch of them.
func jsonrpcAnswers(t *testing.T, body string) []map[string]any {
	t.Helper()
	var many []map[string]any
	if err := json.Unmarshal([]byte(body), &many); err == nil {
		return many
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(body), &one); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	return []map[string]any{one}
}

// idsOf lists the IDs of answers, as JSON text, in order.
func idsOf(answers []map[string]any) string {
	var ids []string
	for _, a := range answers {
		b, _ := json.Marshal(a["id"])
		ids = append(ids, string(b))
	}
	return strings.Join(ids, ",")
}

// sortedIDsOf lists the IDs of answers, as JSON text, sorted.
func sortedIDsOf(answers []map[string]any) string {
	ids := strings.Split(idsOf(answers), ",")
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// Every POST of a batch ends, with the right status and an answer for each
// request and each invalid element.
func TestStreamableHTTPBatchesEnd(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name       string
		session    string // negotiated version
		header     string // MCP-Protocol-Version sent
		noBatch    bool   // the backend refuses batches
		body       string
		wantStatus int
		wantIDs    string // of the answers, in order ("" for no body)
	}{
		{"duplicate ids", "2025-03-26", "2025-03-26", false,
			`[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","id":1,"method":"echo","params":[2]}]`, 200, "1,1"},
		{"batch on a later session with an earlier header", "2025-11-25", "2025-03-26", false,
			`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, 400, "null"},
		{"nested batch", "2025-03-26", "2025-03-26", false, `[[{"jsonrpc":"2.0","id":1,"method":"echo"}]]`, 400, "null"},
		{"number", "2025-03-26", "2025-03-26", false, `[5]`, 400, "null"},
		{"not a message", "2025-03-26", "2025-03-26", false, `[{"foo":1}]`, 400, "null"},
		{"several invalid", "2025-03-26", "2025-03-26", false, `[5,[],{"foo":1}]`, 400, "null,null,null"},
		{"invalid with a notification", "2025-03-26", "2025-03-26", false, `[5,{"jsonrpc":"2.0","method":"note"}]`, 400, "null"},
		{"invalid with a request", "2025-03-26", "2025-03-26", false, `[5,{"jsonrpc":"2.0","id":7,"method":"echo"}]`, 200, "null,7"},
		{"invalid with an id", "2025-03-26", "2025-03-26", false, `[{"jsonrpc":"2.0","id":8,"foo":1}]`, 200, "8"},
		{"only notifications", "2025-03-26", "2025-03-26", false, `[{"jsonrpc":"2.0","method":"note"}]`, 202, ""},
		{"refused by the connection", "2025-03-26", "2025-03-26", true,
			`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, 200, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hh := newHardHarness(t, nil, func(b *hardBackend) { b.noBatch = tc.noBatch })
			sid := hh.initialize(tc.session)
			resp, body := hh.post(tc.body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", tc.header)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if tc.wantIDs == "" {
				if body != "" {
					t.Fatalf("body %q, want none", body)
				}
				return
			}
			answers := jsonrpcAnswers(t, body)
			if got := idsOf(answers); got != tc.wantIDs {
				t.Fatalf("answers %s (%q), want IDs %s", got, body, tc.wantIDs)
			}
			// The session is still usable, and nothing of the exchange
			// lingers: it can go idle.
			if resp, body := hh.post(`{"jsonrpc":"2.0","id":99,"method":"echo","params":{}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", tc.session); resp.StatusCode != 200 {
				t.Fatalf("session after the batch: %d %q", resp.StatusCode, body)
			}
		})
	}
}

// When the session ends before a request is answered, the POST still open
// is answered with an error that names the request.
func TestStreamableHTTPClosedSessionAnswersWithID(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name    string
		mode    ResponseMode
		version string
		body    string
		n       int // requests that block
		wantIDs string
	}{
		{"json", ResponseAuto, "2025-06-18", `{"jsonrpc":"2.0","id":7,"method":"block"}`, 1, "7"},
		{"sse", ResponseSSE, "2025-06-18", `{"jsonrpc":"2.0","id":"x","method":"block"}`, 1, `"x"`},
		{"batch", ResponseAuto, "2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"block"},{"jsonrpc":"2.0","id":2,"method":"block"}]`, 2, "1,2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hh := newHardHarness(t, &StreamableHTTPOptions{ResponseMode: tc.mode}, nil)
			sid := hh.initialize(tc.version)
			type result struct {
				resp *http.Response
				body string
			}
			done := make(chan result, 1)
			go func() {
				resp, err := hh.client.Do(hh.request(context.Background(), http.MethodPost, tc.body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", tc.version))
				if err != nil {
					done <- result{}
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				done <- result{resp, string(b)}
			}()
			for range tc.n {
				<-hh.backend.started
			}
			hh.handler.CloseSession(sid)
			r := <-done
			if r.resp == nil {
				t.Fatal("the POST failed")
			}
			data := r.body
			if strings.HasPrefix(r.resp.Header.Get("Content-Type"), "text/event-stream") {
				data = ""
				for ev := range strings.SplitSeq(r.body, "\n") {
					if d, ok := strings.CutPrefix(ev, "data: "); ok {
						data = d
					}
				}
			}
			// The handlers, cancelled with the session, may answer first.
			if got := sortedIDsOf(jsonrpcAnswers(t, data)); got != tc.wantIDs {
				t.Fatalf("answer %q names %s, want %s", r.body, got, tc.wantIDs)
			}
		})
	}
}

// A request cancelled with notifications/cancelled ends its POST (the
// server sends no response), and the session can then go idle and expire.
// The POST may be left open by the client or abandoned, with or without an
// event store.
func TestStreamableHTTPCancelledRequestEndsExchange(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name    string
		store   bool
		mode    ResponseMode
		abandon bool // the client drops the POST before cancelling
	}{
		{"json open", false, ResponseAuto, false},
		{"sse open", false, ResponseSSE, false},
		{"store open", true, ResponseAuto, false},
		{"store abandoned", true, ResponseAuto, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &StreamableHTTPOptions{ResponseMode: tc.mode, SessionIdleTimeout: 50 * time.Millisecond}
			if tc.store {
				opts.EventStore = NewMemoryEventStore(nil)
			}
			hh := newHardHarness(t, opts, nil)
			sid := hh.initialize("2025-11-25")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan error, 1)
			go func() {
				resp, err := hh.client.Do(hh.request(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":5,"method":"block"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"))
				if err == nil {
					var b []byte
					b, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && strings.Contains(string(b), `"id":5`) {
						err = fmt.Errorf("a cancelled request was answered: %q", b)
					}
				}
				ended <- err
			}()
			<-hh.backend.started
			if tc.abandon {
				cancel()
				<-ended
			}
			resp, body := hh.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"changed my mind"}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d %q", resp.StatusCode, body)
			}
			if !tc.abandon {
				if err := <-ended; err != nil {
					t.Fatalf("cancelled POST: %v", err)
				}
			}
			hh.waitNoSessions()
		})
	}
}

// When the session ends while a resumed stream waits for its request's
// answer, the resumed connection gets an error naming the request.
func TestStreamableHTTPClosedSessionAnswersResumedStream(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil)}, nil)
	sid := hh.initialize("2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	post := hh.openPost(ctx, `{"jsonrpc":"2.0","id":4,"method":"stuck"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	prime := newSSEReader(post.Body).next()
	if prime == nil || prime["id"] == "" {
		t.Fatalf("priming event %q", prime)
	}
	<-hh.backend.started
	cancel() // the client loses the stream, then resumes it
	get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", prime["id"]))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	hh.handler.CloseSession(sid)
	ev := newSSEReader(get.Body).next()
	if ev == nil {
		t.Fatal("the resumed stream ended without an answer")
	}
	if got := idsOf(jsonrpcAnswers(t, ev["data"])); got != "4" {
		t.Fatalf("answer %q names %s, want 4", ev["data"], got)
	}
}

// A batch that reuses the ID of a request in flight is refused whole, with
// an answer for each of its requests.
func TestStreamableHTTPBatchIDInFlight(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, nil, nil)
	sid := hh.initialize("2025-03-26")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		resp, err := hh.client.Do(hh.request(ctx, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"block"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-hh.backend.started
	resp, body := hh.post(`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d %q", resp.StatusCode, body)
	}
	if got := sortedIDsOf(jsonrpcAnswers(t, body)); got != "1,2" {
		t.Fatalf("answer %q names %s, want 1,2", body, got)
	}
}

// A client that drops a resumed stream in the middle of its replay can
// resume again from the same event and gets everything once, in order;
// a DELETE ends a resumed stream.
func TestStreamableHTTPResumeInterrupted(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil)}, nil)
	sid := hh.initialize("2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	post := hh.openPost(ctx, `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	prime := newSSEReader(post.Body).next()
	if prime == nil || prime["id"] == "" {
		t.Fatalf("priming event %q", prime)
	}
	cancel()
	for k := 1; k <= 50; k++ {
		hh.backend.tokens <- k
	}
	resume := func(ctx context.Context) (*http.Response, *sseReader) {
		t.Helper()
		get, err := hh.client.Do(hh.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", prime["id"]))
		if err != nil {
			t.Fatal(err)
		}
		if get.StatusCode != 200 {
			t.Fatalf("resume: %d", get.StatusCode)
		}
		return get, newSSEReader(get.Body)
	}
	// The first resumption is dropped after one event.
	ctx1, cancel1 := context.WithCancel(context.Background())
	get1, events1 := resume(ctx1)
	if ev := events1.next(); ev == nil || !strings.Contains(ev["data"], `"n":1}`) {
		t.Fatalf("first replayed event %q", ev)
	}
	cancel1()
	get1.Body.Close()
	// The second gets the whole replay, in order.
	get2, events2 := resume(context.Background())
	defer get2.Body.Close()
	for k := 1; k <= 50; k++ {
		if ev := events2.next(); ev == nil || !strings.Contains(ev["data"], `"n":`+strconv.Itoa(k)+`}`) {
			t.Fatalf("replayed event %d: %q", k, ev)
		}
	}
	// DELETE ends it.
	resp, err := hh.client.Do(hh.request(context.Background(), http.MethodDelete, "", "Mcp-Session-Id", sid))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for ev := events2.next(); ev != nil; ev = events2.next() {
		if !strings.Contains(ev["data"], `"id":1`) {
			t.Fatalf("after DELETE: %q", ev)
		}
	}
}
