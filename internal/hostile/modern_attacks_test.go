package hostile_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Attacks on, and defects of, the 2026-07-28 surface of Streamable HTTP.

const modernVersion = "2026-07-28"

// modernMeta is the _meta member every 2026-07-28 request carries, with
// extra members (raw JSON, each with its leading comma) appended.
func modernMeta(extra string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
}

// postModern POSTs body to url with the headers given (besides Accept and
// Content-Type), and returns the response, whose body the caller owns.
func postModern(ctx context.Context, t *testing.T, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// newModernServer is a server with a tool, "chatty", that logs and
// reports progress before it answers, and a resource, so that a
// subscriptions/listen request has something to acknowledge.
func newModernServer(t *testing.T) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "modern", Version: "0"}, nil)
	must(t, s.AddTool(&mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "working"}); err != nil {
			return nil, err
		}
		if err := req.ReportProgress(ctx, 1, 2, "half"); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "done"}}}, nil
	}))
	return s
}

// A subscriptions/listen request to a server in JSON response mode gets
// its acknowledgment at once, on an SSE stream (its client accepts one),
// instead of waiting forever with nothing sent: on a stateless server and
// on one that also serves sessions.
func TestAttackListenJSONMode(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := "stateful"
		if stateless {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) {
			checkGoroutines(t)
			url := serveHTTP(t, newModernServer(t), &transport.StreamableHTTPOptions{Stateless: stateless, ResponseMode: transport.ResponseJSON})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp := postModern(ctx, t, url, map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "subscriptions/listen"},
				`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+modernMeta("")+`}}`)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				// A refusal is allowed, if it is one at once.
				ms := answers(t, resp)
				if len(ms) != 1 || ms[0].Error == nil {
					t.Fatalf("answer %s %q: %+v, want an SSE stream or an error", resp.Status, ct, ms)
				}
				return
			}
			ev, err := hostile.ReadMessageEvent(bufio.NewReader(resp.Body))
			if err != nil {
				t.Fatalf("no acknowledgment: %v", err)
			}
			m := parse(t, ev.Data)[0]
			if m.Method != "notifications/subscriptions/acknowledged" {
				t.Fatalf("first message %s, want the acknowledgment", ev.Data)
			}
		})
	}
}

// A tool call of 2026-07-28 whose handler logs and reports progress
// before its answer delivers both to a client that accepts SSE, from a
// server in JSON response mode (which has no GET stream to send them on),
// stateless or not.
func TestAttackModernNotificationsJSONMode(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := "stateful"
		if stateless {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) {
			checkGoroutines(t)
			url := serveHTTP(t, newModernServer(t), &transport.StreamableHTTPOptions{Stateless: stateless, ResponseMode: transport.ResponseJSON})
			resp := postModern(ctxFor(t, 20*time.Second), t, url,
				map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "tools/call", "Mcp-Name": "chatty"},
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chatty","arguments":{},`+
					modernMeta(`,"io.modelcontextprotocol/logLevel":"debug","progressToken":"p"`)+`}}`)
			ms := answers(t, resp)
			var got []string
			for _, m := range ms {
				if m.Method != "" {
					got = append(got, m.Method)
				} else {
					got = append(got, "response "+string(m.ID))
				}
			}
			want := "notifications/message,notifications/progress,response 7"
			if strings.Join(got, ",") != want {
				t.Errorf("answer (%s): %v, want %s", resp.Header.Get("Content-Type"), got, want)
			}
		})
	}
}

// A POST labelled 2026-07-28 whose Mcp-Method or Mcp-Name header disagrees
// with its body is refused (400, -32020) on every path: with no session,
// naming a live session of the handshake era (the label decides; the
// session ID is ignored, as that revision has none), and on a stateless
// server. The tool never runs.
func TestAttackModernHeaderMismatchOnSession(t *testing.T) {
	checkGoroutines(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "0"}, nil)
	var (
		mu  sync.Mutex
		ran []string
	)
	for _, name := range []string{"public", "admin"} {
		must(t, s.AddTool(&mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			return &mcp.CallToolResult{}, nil
		}))
	}
	stateful := serveHTTP(t, s, nil)
	stateless := serveHTTP(t, s, &transport.StreamableHTTPOptions{Stateless: true})
	session := initPeer(t, stateful, "2025-11-25").SessionID
	call := func(id int, tool string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` + modernMeta("") + `}}`
	}
	tests := []struct {
		name, url, session string
		header             map[string]string
		body               string
	}{
		{"Mcp-Name disagrees on a session", stateful, session, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "public"}, call(1, "admin")},
		{"Mcp-Method disagrees on a session", stateful, session, map[string]string{"Mcp-Method": "ping"}, call(2, "admin")},
		{"Mcp-Name disagrees, stateless, with a session ID", stateless, "made-up", map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "public"}, call(3, "admin")},
		{"Mcp-Method disagrees, stateless", stateless, "", map[string]string{"Mcp-Method": "ping"}, call(4, "admin")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"MCP-Protocol-Version": modernVersion}
			for k, v := range tt.header {
				h[k] = v
			}
			if tt.session != "" {
				h["Mcp-Session-Id"] = tt.session
			}
			resp := postModern(ctxFor(t, 20*time.Second), t, tt.url, h, tt.body)
			status := resp.StatusCode
			ms := answers(t, resp)
			if status != http.StatusBadRequest || len(ms) != 1 || ms[0].Error == nil || ms[0].Error.Code != -32020 {
				t.Errorf("answer %d %+v (%+v), want 400 with -32020 (HeaderMismatch)", status, ms, ms[0].Error)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 0 {
		t.Errorf("tools ran: %v", ran)
	}
}

// The legacy HTTP+SSE transport (2024-11-05) refuses a POST labelled
// 2026-07-28, whose mirrored headers it does not check.
func TestAttackModernLabelOnLegacySSE(t *testing.T) {
	checkGoroutines(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "0"}, nil)
	ran := make(chan struct{}, 1)
	must(t, s.AddTool(&mcp.Tool{Name: "admin"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran <- struct{}{}
		return &mcp.CallToolResult{}, nil
	}))
	h := mcp.NewSSEHandler(s, nil)
	url, closeServer := startHTTPServer(t, h)
	defer closeServer()
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	ev, err := hostile.ReadEvent(bufio.NewReader(stream.Body))
	if err != nil || ev.Name != "endpoint" {
		t.Fatalf("endpoint event: %+v, %v", ev, err)
	}
	endpoint := url + ev.Data[strings.Index(ev.Data, "?"):]
	resp := postModern(ctx, t, endpoint, map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "ping"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin","arguments":{}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %s, want 400", resp.Status)
	}
	select {
	case <-ran:
		t.Error("the tool ran")
	default:
	}
}

// countingHandler counts the log records it receives.
type countingHandler struct{ n *atomic.Int64 }

func (h countingHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (h countingHandler) Handle(context.Context, slog.Record) error { h.n.Add(1); return nil }
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h countingHandler) WithGroup(string) slog.Handler             { return h }

// A 2026-07-28 server that pushes requests on a tool call's response
// stream (that revision has none from server to client) gets no answer to
// them: not one POST of a response, however many it pushes, and the
// client logs a bounded number of lines about them.
func TestAttackModernPushedRequestsNotAnswered(t *testing.T) {
	checkGoroutines(t)
	const pushed = 2004
	var responsePOSTs atomic.Int64
	events := make([]hostile.SSE, 0, pushed+1)
	for i := range pushed {
		events = append(events, hostile.SSE{Data: `{"jsonrpc":"2.0","id":"push-` + strconv.Itoa(i) + `","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`})
	}
	_, url := serveHostile(t, func(r *hostile.Request) hostile.Answer {
		switch r.Method() {
		case "server/discover":
			return hostile.Answer{Body: `{"jsonrpc":"2.0","id":` + r.ID() + `,"result":{"resultType":"complete","supportedVersions":["` + modernVersion + `"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"pusher","version":"0"}}}}`}
		case "tools/call":
			evs := append(events[:pushed:pushed], hostile.SSE{Data: `{"jsonrpc":"2.0","id":` + r.ID() + `,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`})
			return hostile.Answer{Events: evs}
		case "":
			if r.ID() != "" {
				responsePOSTs.Add(1)
			}
			return hostile.Answer{Status: http.StatusAccepted}
		}
		return hostile.Answer{Status: http.StatusNotFound, Body: `{"jsonrpc":"2.0","id":` + r.ID() + `,"error":{"code":-32601,"message":"Method not found"}}`}
	})
	var logLines atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "hostile-test", Version: "0"}, &mcp.ClientOptions{Era: mcp.EraModern, Logger: slog.New(countingHandler{&logLines})})
	cs, err := c.Connect(ctxFor(t, 20*time.Second), &transport.StreamableClientTransport{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctxFor(t, 20*time.Second), &mcp.CallToolParams{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Errorf("result %+v", res)
	}
	cs.Close()
	if n := responsePOSTs.Load(); n != 0 {
		t.Errorf("the client POSTed %d responses to the %d requests pushed", n, pushed)
	}
	if n := logLines.Load(); n > 10 {
		t.Errorf("the client logged %d lines about the %d requests pushed", n, pushed)
	}
}
