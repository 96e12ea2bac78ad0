package hostile_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// gatedServer is an MCP server with tools whose progress the test
// controls: "steps" reports progress 1 to 5, waits for release, reports 6
// to 10 and returns; "block" signals started and waits for its request to
// end.
type gatedServer struct {
	*mcp.Server
	release chan struct{}
	started chan struct{}
}

func newGatedServer(t *testing.T, opts *mcp.ServerOptions) *gatedServer {
	g := &gatedServer{
		Server:  mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "0"}, opts),
		release: make(chan struct{}),
		started: make(chan struct{}, 16),
	}
	must(t, g.AddTool(&mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := 1; i <= 10; i++ {
			if i == 6 {
				select {
				case <-g.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if err := req.ReportProgress(ctx, float64(i), 10, ""); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "done"}}}, nil
	}))
	must(t, g.AddTool(&mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		g.started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	return g
}

func (g *gatedServer) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool did not start")
	}
}

// initPeer is a raw peer with a session of revision version.
func initPeer(t *testing.T, url, version string) *hostile.HTTPPeer {
	t.Helper()
	p := &hostile.HTTPPeer{URL: url}
	if err := p.Initialize(ctxFor(t, 20*time.Second), version); err != nil {
		t.Fatal(err)
	}
	return p
}

// A client that drops a live stream and resumes it gets every later event
// exactly once, in order, whether stored before the resumption or
// produced during it.
func TestAttackResumptionExactlyOnce(t *testing.T) {
	t.Parallel()
	g := newGatedServer(t, nil)
	u := serveHTTP(t, g.Server, &transport.StreamableHTTPOptions{
		ResponseMode: transport.ResponseSSE,
		EventStore:   transport.NewMemoryEventStore(nil),
	})
	p := initPeer(t, u, "2025-11-25")
	pctx, drop := context.WithCancel(context.Background())
	defer drop()
	resp, err := p.Post(pctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"p"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	var last string
	for i := 1; i <= 3; i++ {
		ev, err := hostile.ReadMessageEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := progressOf(t, ev.Data); got != i {
			t.Fatalf("event %d: %s", i, ev.Data)
		}
		last = ev.ID
	}
	drop()
	resp.Body.Close()

	resp, err = p.Get(ctxFor(t, 20*time.Second), last)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resuming: %s", resp.Status)
	}
	close(g.release) // events 6 to 10 are produced while 4 and 5 are replayed
	r = bufio.NewReader(resp.Body)
	want := 4
	for {
		ev, err := hostile.ReadMessageEvent(r)
		if err != nil {
			t.Fatalf("after progress %d: %v", want-1, err)
		}
		m := parse(t, ev.Data)[0]
		if m.Method == "" {
			if string(m.ID) != "1" || m.Result == nil {
				t.Fatalf("answer %s", ev.Data)
			}
			break
		}
		if got := progressOf(t, ev.Data); got != want {
			t.Fatalf("progress %d, want %d", got, want)
		}
		want++
	}
	if want != 11 {
		t.Fatalf("the answer came after progress %d, want 10", want-1)
	}
}

func progressOf(t *testing.T, data string) int {
	t.Helper()
	var m struct {
		Method string `json:"method"`
		Params struct {
			Progress float64 `json:"progress"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil || m.Method != "notifications/progress" {
		t.Fatalf("event %q is not progress", data)
	}
	return int(m.Params.Progress)
}

// Every POST of a batch on a 2025-03-26 session ends, with the right
// status and an answer for each request and each invalid element.
func TestAttackBatchesEnd(t *testing.T) {
	t.Parallel()
	u := serveHTTP(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil), nil)
	for _, tc := range []struct {
		name       string
		session    string // negotiated revision
		header     string // MCP-Protocol-Version sent
		body       string
		wantStatus int
		wantIDs    string
	}{
		{"duplicate ids", "2025-03-26", "2025-03-26",
			`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 200, "1,1"},
		{"batch with an earlier header", "2025-11-25", "2025-03-26",
			`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, 400, "null"},
		{"nested batch", "2025-03-26", "2025-03-26", `[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]`, 400, "null"},
		{"number", "2025-03-26", "2025-03-26", `[5]`, 400, "null"},
		{"not a message", "2025-03-26", "2025-03-26", `[{"foo":1}]`, 400, "null"},
		{"invalid with a request", "2025-03-26", "2025-03-26", `[5,{"jsonrpc":"2.0","id":7,"method":"ping"}]`, 200, "null,7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := initPeer(t, u, tc.session)
			p.Version = tc.header
			resp, err := p.Post(ctxFor(t, 20*time.Second), tc.body)
			if err != nil {
				t.Fatal(err)
			}
			ms := answers(t, resp) // ends, or the test times out
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if got := ids(ms); got != tc.wantIDs {
				t.Errorf("answers to %s: ids %s, want %s", tc.body, got, tc.wantIDs)
			}
			for _, m := range ms {
				if string(m.ID) == "null" && (m.Error == nil || m.Error.Code != -32600 && m.Error.Code != -32700) {
					t.Errorf("answer without id is not an invalid request error: %+v", m.Error)
				}
			}
		})
	}
}

// A POST still open when the server closes the session is answered with
// its request's id.
func TestAttackClosedSessionAnswersWithID(t *testing.T) {
	t.Parallel()
	for _, mode := range []transport.ResponseMode{transport.ResponseAuto, transport.ResponseSSE} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			t.Parallel()
			g := newGatedServer(t, nil)
			u := serveHTTP(t, g.Server, &transport.StreamableHTTPOptions{ResponseMode: mode})
			p := initPeer(t, u, "2025-11-25")
			got := make(chan []message, 1)
			go func() {
				resp, err := p.Post(ctxFor(t, 20*time.Second), `{"jsonrpc":"2.0","id":"x7","method":"tools/call","params":{"name":"block"}}`)
				if err != nil {
					t.Error(err)
					got <- nil
					return
				}
				got <- answers(t, resp)
			}()
			g.waitStarted(t)
			for _, ss := range g.Sessions() {
				ss.Close()
			}
			select {
			case ms := <-got:
				if ids(ms) != `"x7"` {
					t.Fatalf("answers %s, want one for \"x7\"", ids(ms))
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the open POST was not answered")
			}
		})
	}
}

// A call cancelled with notifications/cancelled ends its POST stream, and
// a peer that then vanishes without DELETE leaves no session behind once
// the idle timeout passes.
func TestAttackCancelThenVanish(t *testing.T) {
	t.Parallel()
	g := newGatedServer(t, nil)
	u := serveHTTP(t, g.Server, &transport.StreamableHTTPOptions{
		ResponseMode:       transport.ResponseSSE,
		EventStore:         transport.NewMemoryEventStore(nil),
		SessionIdleTimeout: 300 * time.Millisecond,
	})
	const peers = 3
	for i := range peers {
		p := initPeer(t, u, "2025-11-25")
		resp, err := p.Post(ctxFor(t, 20*time.Second), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		g.waitStarted(t)
		cresp, err := p.Post(ctxFor(t, 20*time.Second), fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		cresp.Body.Close()
		ended := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, resp.Body)
			ended <- err
		}()
		select {
		case err := <-ended:
			if err != nil {
				t.Fatalf("the cancelled call's stream: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the cancelled call's POST stream did not end")
		}
		resp.Body.Close()
		// The peer vanishes: no DELETE.
	}
	waitFor(t, 20*time.Second, "sessions to expire", func() bool { return len(g.Sessions()) == 0 })
}

// waitFor polls cond until it holds or timeout passes: it waits for an
// asynchronous bound, not for an event.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noDelete is an HTTP transport that drops DELETE requests: the client
// vanishes instead of ending its session.
type noDelete struct{ http.RoundTripper }

func (t noDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("vanished")
	}
	return t.RoundTripper.RoundTrip(r)
}

// Our own client cancelling slow calls and vanishing without DELETE leaves
// no session behind once the idle timeout passes.
func TestAttackOwnClientCancelThenVanish(t *testing.T) {
	checkGoroutines(t)
	g := newGatedServer(t, nil)
	u := serveHTTP(t, g.Server, &transport.StreamableHTTPOptions{
		EventStore:         transport.NewMemoryEventStore(nil),
		SessionIdleTimeout: 300 * time.Millisecond,
	})
	hc := &http.Client{Transport: noDelete{http.DefaultTransport.(*http.Transport).Clone()}}
	for range 3 {
		cs, err := newClient().Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			g.waitStarted(t)
			cancel()
		}()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block"}); err == nil {
			t.Fatal("the cancelled call succeeded")
		}
		cs.Close()
	}
	waitFor(t, 20*time.Second, "sessions to expire", func() bool { return len(g.Sessions()) == 0 })
}

// When the server forgets the session, our client's session ends with a
// *transport.SessionExpiredError.
func TestAttackExpiredSessionEndsClient(t *testing.T) {
	checkGoroutines(t)
	u := serveHTTP(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil), nil)
	cs, err := newClient().Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// Another peer ends the session behind the client's back.
	raw := &hostile.HTTPPeer{URL: u, SessionID: cs.ID(), Version: cs.ProtocolVersion()}
	if err := raw.Delete(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	cs.Ping(ctxFor(t, 20*time.Second)) // meets the expiry, if the stream did not
	select {
	case <-cs.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the client session did not end")
	}
	var se *transport.SessionExpiredError
	if err := cs.Wait(); !errors.As(err, &se) {
		t.Fatalf("Wait = %v, want a *transport.SessionExpiredError", err)
	}
}

// MaxSessions holds under concurrent initializes: at no point can more
// sessions than the bound be used.
func TestAttackMaxSessionsHard(t *testing.T) {
	t.Parallel()
	const max, n = 10, 100
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil)
	u := serveHTTP(t, s, &transport.StreamableHTTPOptions{MaxSessions: max})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var peers []*hostile.HTTPPeer
	for range n {
		wg.Go(func() {
			p := &hostile.HTTPPeer{URL: u}
			if p.Initialize(ctxFor(t, 20*time.Second), "2025-11-25") == nil {
				mu.Lock()
				peers = append(peers, p)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(s.Sessions()) > max {
		t.Errorf("%d server sessions, bound %d", len(s.Sessions()), max)
	}
	var live atomic.Int32
	for _, p := range peers {
		wg.Go(func() {
			resp, err := p.Post(ctxFor(t, 20*time.Second), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if err != nil {
				return
			}
			if ms := answers(t, resp); resp.StatusCode == 200 && len(ms) == 1 && ms[0].Error == nil {
				live.Add(1)
			}
		})
	}
	wg.Wait()
	if live.Load() > max {
		t.Fatalf("%d sessions answer, bound %d", live.Load(), max)
	}
}

// After one peer floods the server with sessions it never uses, a new
// client initializes at once.
func TestAttackSessionFlood(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil)
	u := serveHTTP(t, s, &transport.StreamableHTTPOptions{MaxSessions: 50})
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for range 300 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p := &hostile.HTTPPeer{URL: u}
			resp, err := p.Post(ctxFor(t, 20*time.Second), initialize)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	cs, err := newClient().Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u})
	if err != nil {
		t.Fatalf("a new client after the flood: %v", err)
	}
	defer cs.Close()
	if err := cs.Ping(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
}

// resources/subscribe is refused past the bound of subscriptions per
// session, and for a URI longer than its bound.
func TestAttackSubscribeBounded(t *testing.T) {
	t.Parallel()
	const max = 16
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, &mcp.ServerOptions{
		Capabilities:             &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		MaxSubscriptions:         max,
		MaxSubscriptionURILength: 1024,
	})
	p := initPeer(t, serveHTTP(t, s, nil), "2025-11-25")
	subscribe := func(uri string) *message {
		resp, err := p.Post(ctxFor(t, 20*time.Second), `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`)
		if err != nil {
			t.Fatal(err)
		}
		ms := answers(t, resp)
		if len(ms) != 1 {
			t.Fatalf("%d answers", len(ms))
		}
		return &ms[0]
	}
	if m := subscribe("test://" + strings.Repeat("x", 2048)); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("a 2 KiB URI: %+v, want -32602", m)
	}
	for i := range max {
		if m := subscribe(fmt.Sprintf("test://%d", i)); m.Error != nil {
			t.Fatalf("subscription %d: %+v", i, m.Error)
		}
	}
	if m := subscribe("test://one-too-many"); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("subscription past the bound: %+v, want -32602", m)
	}
}

// A body that stalls after its first bytes gets 408 within the handler's
// read deadline, and loses its connection.
func TestAttackSlowBody(t *testing.T) {
	t.Parallel()
	u := serveHTTP(t, mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil), &transport.StreamableHTTPOptions{ReadBodyTimeout: 300 * time.Millisecond})
	p := initPeer(t, u, "2025-11-25")
	addr, _ := url.Parse(u)
	for _, sid := range []string{"", p.SessionID} {
		conn, err := net.Dial("tcp", addr.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		hdr := "POST / HTTP/1.1\r\nHost: " + addr.Host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 16000000\r\n"
		if sid != "" {
			hdr += "Mcp-Session-Id: " + sid + "\r\nMcp-Protocol-Version: 2025-11-25\r\n"
		}
		if _, err := io.WriteString(conn, hdr+"\r\n"+`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("a", 60000)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("session %q: %v", sid, err)
		}
		resp.Body.Close()
		if sid != "" && resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("status %s, want 408", resp.Status)
		}
		if resp.StatusCode < 400 {
			t.Errorf("without a session: %s", resp.Status)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("answered after %v", d)
		}
	}
}

// With ReinitializeOnSessionExpired, a client whose session the server
// forgot starts a new one transparently, and its resource subscriptions
// hold in the new session.
func TestAttackExpiredSessionReinitializeRestoresSubscriptions(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
	})
	u := serveHTTP(t, s, nil)
	updated := make(chan string, 100)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		Era: mcp.EraHandshake, // sessions and resources/subscribe
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ClientRequest[*mcp.ResourceUpdatedParams]) {
			select {
			case updated <- req.Params.URI:
			default:
			}
		},
	})
	cs, err := c.Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u, ReinitializeOnSessionExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(ctxFor(t, 20*time.Second), &mcp.SubscribeParams{URI: "test://r"}); err != nil {
		t.Fatal(err)
	}
	old := cs.ID()
	raw := &hostile.HTTPPeer{URL: u, SessionID: old, Version: cs.ProtocolVersion()}
	if err := raw.Delete(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctxFor(t, 20*time.Second)); err != nil {
		t.Fatalf("Ping after the session expired: %v", err)
	}
	if cs.ID() == old {
		t.Errorf("still on session %s", old)
	}
	// The notification reaches the client once its new standalone stream
	// is open; until then the server may have nowhere to send it.
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.ResourceUpdated(ctxFor(t, 20*time.Second), &mcp.ResourceUpdatedParams{URI: "test://r"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-updated:
			return
		case <-tick.C:
		case <-deadline:
			t.Fatal("the new session is not subscribed")
		}
	}
}

// Sessions opened with initialize and never used again expire after the
// handshake timeout, long before the idle timeout.
func TestAttackAbandonedHandshakes(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil)
	u := serveHTTP(t, s, &transport.StreamableHTTPOptions{HandshakeTimeout: 200 * time.Millisecond})
	for range 20 {
		p := &hostile.HTTPPeer{URL: u}
		resp, err := p.Post(ctxFor(t, 20*time.Second), initialize)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitFor(t, 20*time.Second, "abandoned sessions to expire", func() bool { return len(s.Sessions()) == 0 })
}

// One session cannot hold more than MaxRequestsPerSession requests open:
// past it a POST is refused with 429 before its body is read.
func TestAttackRequestsPerSessionBounded(t *testing.T) {
	t.Parallel()
	const max = 4
	g := newGatedServer(t, nil)
	u := serveHTTP(t, g.Server, &transport.StreamableHTTPOptions{MaxRequestsPerSession: max})
	p := initPeer(t, u, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range max {
		wg.Go(func() {
			resp, err := p.Post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, i))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for range max {
		g.waitStarted(t)
	}
	resp, err := p.Post(ctxFor(t, 20*time.Second), `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("request %d: %s, want 429", max+1, resp.Status)
	}
}
