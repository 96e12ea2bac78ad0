package hostile_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// sessionScript wraps a hostile HTTP server's script with a well-behaved
// handshake: initialize is answered with session "s1", notifications are
// accepted, DELETE is answered 200. Everything else goes to rest.
func sessionScript(rest func(r *hostile.Request) hostile.Answer) func(r *hostile.Request) hostile.Answer {
	return func(r *hostile.Request) hostile.Answer {
		switch {
		case r.HTTP.Method == http.MethodDelete:
			return hostile.Answer{Status: http.StatusOK}
		case r.HTTP.Method == http.MethodPost && r.Method() == "initialize":
			return hostile.Answer{
				Header: http.Header{"Mcp-Session-Id": {"s1"}},
				Body:   hostile.InitializeResult(r.ID(), "2025-11-25"),
			}
		case r.HTTP.Method == http.MethodPost && strings.HasPrefix(r.Method(), "notifications/"):
			return hostile.Answer{}
		}
		return rest(r)
	}
}

// A server whose standalone stream ends at once with "retry: 0" cannot
// make the client reconnect in a tight loop.
func TestAttackReconnectStorm(t *testing.T) {
	t.Parallel()
	h, u := serveHostile(t, sessionScript(func(r *hostile.Request) hostile.Answer {
		if r.HTTP.Method == http.MethodGet {
			return hostile.Answer{Events: []hostile.SSE{{Retry: "0"}}}
		}
		return hostile.Answer{Status: http.StatusBadRequest}
	}))
	cs, err := newClient().Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u, MaxRetries: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// Count the GETs over a window of real time: the bound is on a rate.
	const window, bound = time.Second, 50
	before := h.Count(http.MethodGet)
	time.Sleep(window)
	n := h.Count(http.MethodGet) - before
	if n >= bound {
		t.Fatalf("%d GETs in %v, bound %d", n, window, bound)
	}
	t.Logf("%d GETs in %v", n, window)
}

// A server that sends a batch of requests on a response stream, which the
// client refuses, and answers the POSTed refusal with a JSON body instead
// of 202, neither deadlocks the client nor holds up Close.
func TestAttackBatchRefusalDoesNotDeadlockClient(t *testing.T) {
	checkGoroutines(t)
	refused := make(chan struct{}, 16)
	_, u := serveHostile(t, sessionScript(func(r *hostile.Request) hostile.Answer {
		switch {
		case r.HTTP.Method == http.MethodGet:
			return hostile.Answer{Status: http.StatusMethodNotAllowed}
		case r.Method() == "tools/call":
			return hostile.Answer{
				Events: []hostile.SSE{{Data: `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`}},
				Stall:  true,
			}
		case r.Method() == "":
			select {
			case refused <- struct{}{}:
			default:
			}
			return hostile.Answer{Body: `{"jsonrpc":"2.0","id":"zz","result":{}}`}
		}
		return hostile.Answer{Status: http.StatusBadRequest}
	}))
	cs, err := newClient().Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
		called <- err
	}()
	select {
	case <-refused:
	case <-time.After(20 * time.Second):
		t.Fatal("the client did not answer the batch")
	}
	cancel()
	select {
	case <-called:
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
	}
}

// A client whose server answers a request and then closes its output
// (exits) gets the answer.
func TestAttackServerExitsAfterAnswering(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	cs, err := newClient().Connect(ctx, &transport.CommandTransport{Command: hostile.ScriptCommand("answer-ping-then-exit")})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx); err != nil {
		t.Fatalf("Ping answered just before the server exited: %v", err)
	}
	select {
	case <-cs.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end with the server")
	}
}

// answerPingThenExit answers initialize and one ping, then exits.
func answerPingThenExit(ctx context.Context, p *hostile.StdioPeer) error {
	line, _, err := p.ReadUntil(`"initialize"`, time.Minute)
	if err != nil {
		return err
	}
	if err := p.WriteLine(hostile.InitializeResult(parseID(line), "2025-11-25")); err != nil {
		return err
	}
	line, _, err = p.ReadUntil(`"ping"`, time.Minute)
	if err != nil {
		return err
	}
	return p.WriteLine(`{"jsonrpc":"2.0","id":` + parseID(line) + `,"result":{}}`)
}

func parseID(line string) string {
	_, rest, ok := strings.Cut(line, `"id":`)
	if !ok {
		return "null"
	}
	end := strings.IndexAny(rest, ",}")
	if end < 0 {
		return "null"
	}
	return rest[:end]
}
