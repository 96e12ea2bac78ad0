package mcpkit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// wirePeer drives one server session line by line over pipes.
type wirePeer struct {
	t     *testing.T
	w     io.Writer
	lines chan string
}

func newWirePeer(t *testing.T, s *mcp.Server) *wirePeer {
	t.Helper()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	ss, err := s.Connect(context.Background(), &transport.IOTransport{Reader: serverR, Writer: serverW})
	if err != nil {
		t.Fatal(err)
	}
	p := &wirePeer{t: t, w: clientW, lines: make(chan string)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(clientR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		clientW.Close()
		ss.Wait()
		clientR.Close()
		for range p.lines {
		}
	})
	return p
}

// call sends line and returns the next line the server writes, decoded.
func (p *wirePeer) call(line string) map[string]any {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
	select {
	case got := <-p.lines:
		var m map[string]any
		if err := json.Unmarshal([]byte(got), &m); err != nil {
			p.t.Fatalf("answer is not JSON: %s", got)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no answer to %s", line)
		return nil
	}
}

func mrtrServer(t *testing.T, opts *mcp.ServerOptions) *mcp.Server {
	t.Helper()
	return mrtrServerNamed(t, "mrtr", opts)
}

// mrtrServerNamed is mrtrServer under another name.
func mrtrServerNamed(t *testing.T, name string, opts *mcp.ServerOptions) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, opts)
	type in struct {
		Greeting string `json:"greeting"`
	}
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Asks the user's name, then greets them."},
		func(ctx context.Context, req *mcp.CallToolRequest, a in) (string, error) {
			res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return "", err
			}
			return a.Greeting + ", " + res.Content["name"].(string), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func resultText(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	content := res["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// wireRing returns a key ring of keys or ends the test.
func wireRing(t *testing.T, keys ...[]byte) *mcp.KeyRing {
	t.Helper()
	r, err := mcp.NewKeyRing(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMRTROnTheWire plays the 2026-07-28 input round trip of a handler
// that elicits, with the retries a client makes and the ones an attacker
// would: the state altered, carried to other params or to another server,
// and a client that did not declare elicitation. The same handler serves a
// handshake-era session with a request to the client.
func TestMRTROnTheWire(t *testing.T) {
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `}`
	call := func(id, greeting, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"greet","arguments":{"greeting":"` + greeting + `"},` + meta + extra + `}}`
	}
	key := []byte("a shared key of at least 32 bytes")
	p := newWirePeer(t, mrtrServer(t, &mcp.ServerOptions{Keys: wireRing(t, key)}))

	first := p.call(call("1", "Hello", ""))
	res := first["result"].(map[string]any)
	if res["resultType"] != "input_required" {
		t.Fatalf("first try: %v", first)
	}
	ask := res["inputRequests"].(map[string]any)["name"].(map[string]any)
	if ask["method"] != "elicitation/create" || ask["params"].(map[string]any)["message"] != "Your name?" {
		t.Fatalf("input request: %v", ask)
	}
	state := res["requestState"].(string)
	answer := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + strconvQuote(state)

	if got := resultText(t, p.call(call("2", "Hello", answer))); got != "Hello, Ada" {
		t.Fatalf("retry: %q", got)
	}
	tests := []struct {
		name, line string
		code       float64
		msg        string
	}{
		{"tampered", call("3", "Hello", strings.Replace(answer, state, state[:len(state)-2]+"AA", 1)), -32602, "failed verification"},
		{"other params", call("4", "Goodbye", answer), -32602, "issued for another request"},
		{"not a state", call("5", "Hello", strings.Replace(answer, state, "forged", 1)), -32602, "not one this server issued"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.call(tt.line)
			if errorCode(got) != tt.code || !strings.Contains(got["error"].(map[string]any)["message"].(string), tt.msg) {
				t.Fatalf("got %v, want %v mentioning %q", got, tt.code, tt.msg)
			}
		})
	}
	t.Run("another server's key", func(t *testing.T) {
		q := newWirePeer(t, mrtrServer(t, &mcp.ServerOptions{Keys: wireRing(t, []byte("some other key, 32 bytes or more"))}))
		if got := q.call(call("1", "Hello", answer)); errorCode(got) != -32602 {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("the same replica set", func(t *testing.T) {
		q := newWirePeer(t, mrtrServer(t, &mcp.ServerOptions{Keys: wireRing(t, []byte("a newer key, 32 bytes or more...."), key)}))
		if got := resultText(t, q.call(call("1", "Hello", answer))); got != "Hello, Ada" {
			t.Fatalf("retry on another replica: %q", got)
		}
	})
	t.Run("undeclared capability", func(t *testing.T) {
		q := newWirePeer(t, mrtrServer(t, nil))
		line := strings.Replace(call("1", "Hello", ""), caps, `"io.modelcontextprotocol/clientCapabilities":{}`, 1)
		got := q.call(line)
		if errorCode(got) != -32021 {
			t.Fatalf("got %v, want -32021", got)
		}
		data := got["error"].(map[string]any)["data"].(map[string]any)
		if _, ok := data["requiredCapabilities"].(map[string]any)["elicitation"]; !ok {
			t.Fatalf("data %v does not name elicitation", data)
		}
	})
	t.Run("handshake era", func(t *testing.T) {
		q := newWirePeer(t, mrtrServer(t, nil))
		q.call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
		io.WriteString(q.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		req := q.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"greeting":"Hi"}}}`)
		if req["method"] != "elicitation/create" {
			t.Fatalf("the server sent %v, want an elicitation/create request", req)
		}
		id, _ := json.Marshal(req["id"])
		got := q.call(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"name":"Grace"}}}`)
		if text := resultText(t, got); text != "Hi, Grace" {
			t.Fatalf("handshake-era result: %q", text)
		}
	})
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestListenOnTheWire opens a subscriptions/listen stream over stdio and
// checks that the acknowledgment comes first with what the server
// honours, that the changes asked for arrive tagged with the subscription
// ID while others do not, and that notifications/cancelled ends it.
func TestListenOnTheWire(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "listen", Version: "1"}, &mcp.ServerOptions{ListChangedDelay: -1})
	if err := s.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	addTool := func(name string) {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	addTool("first")
	p := newWirePeer(t, s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	ack := p.call(`{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["test://a"]}}}`)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v, want the acknowledgment", ack)
	}
	params := ack["params"].(map[string]any)
	if params["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("acknowledgment %v does not carry the subscription ID", params)
	}
	got, _ := json.Marshal(params["notifications"])
	if want := `{"resourceSubscriptions":["test://a"],"toolsListChanged":true}`; string(got) != want {
		t.Fatalf("acknowledged %s, want %s (the server has no prompts)", got, want)
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case line := <-p.lines:
			var m map[string]any
			json.Unmarshal([]byte(line), &m)
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
			return nil
		}
	}
	addTool("second")
	n := next()
	if n["method"] != "notifications/tools/list_changed" || n["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("after a tool was added: %v", n)
	}
	// An update of a resource the stream did not ask about is not sent;
	// the next one, about test://a, is the next message.
	if err := s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedParams{URI: "test://other"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	n = next()
	if n["method"] != "notifications/resources/updated" || n["params"].(map[string]any)["uri"] != "test://a" ||
		n["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("after test://a was updated: %v", n)
	}
	// Cancelling ends the stream: the next answer is the next request's.
	io.WriteString(p.w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1"}}`+"\n")
	got2 := p.call(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`)
	if got2["id"] != float64(2) {
		t.Fatalf("after cancelling the stream: %v", got2)
	}
	addTool("third") // nobody listens: nothing is sent
	got3 := p.call(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`)
	if got3["id"] != float64(3) {
		t.Fatalf("a notification reached a cancelled stream: %v", got3)
	}
}

// claimerFunc is a StateClaimer of a function.
type claimerFunc func(ctx context.Context, id string, until time.Time) (bool, error)

func (f claimerFunc) Claim(ctx context.Context, id string, until time.Time) (bool, error) {
	return f(ctx, id, until)
}

// TestMRTRSingleUse plays a retry on three servers that share a key ring
// and a StateClaimer: the first use of the state runs, its replays (on
// the same or another server) are refused with -32602, and a claimer that
// fails refuses the retry (fails closed). A server without a claimer
// accepts the replay: that is what single use prevents. A server of
// another name refuses the state (its audience).
func TestMRTRSingleUse(t *testing.T) {
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `}`
	call := func(id, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"greet","arguments":{"greeting":"Hello"},` + meta + extra + `}}`
	}
	ring := wireRing(t, []byte("a shared key of at least 32 bytes"))
	claims := mcp.NewMemoryStateClaimer(nil)
	var ids []string
	var until time.Time
	spy := claimerFunc(func(ctx context.Context, id string, u time.Time) (bool, error) {
		ids, until = append(ids, id), u
		return claims.Claim(ctx, id, u)
	})
	peers := make([]*wirePeer, 3)
	for i := range peers {
		peers[i] = newWirePeer(t, mrtrServer(t, &mcp.ServerOptions{Keys: ring, StateClaimer: spy}))
	}
	first := peers[0].call(call("1", ""))
	state := first["result"].(map[string]any)["requestState"].(string)
	answer := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + strconvQuote(state)
	if len(ids) != 0 {
		t.Fatalf("the first round claimed %v", ids)
	}
	if got := resultText(t, peers[1].call(call("2", answer))); got != "Hello, Ada" {
		t.Fatalf("first use on B: %q", got)
	}
	if len(ids) != 1 || len(ids[0]) < 22 || time.Until(until) < 10*time.Minute {
		t.Fatalf("claims %v until %v: want one ID, held past the state's expiry", ids, until)
	}
	for i, p := range []*wirePeer{peers[2], peers[1], peers[0]} {
		got := p.call(call(fmt.Sprint(3+i), answer))
		if errorCode(got) != -32602 || !strings.Contains(fmt.Sprint(got["error"]), "used already") {
			t.Fatalf("replay %d: %v, want -32602 used already", i, got)
		}
	}
	if n := claims.Len(); n != 1 {
		t.Fatalf("%d claims held, want 1", n)
	}
	tests := []struct {
		name  string
		opts  *mcp.ServerOptions
		name2 string  // the server's name, "" for mrtr
		code  float64 // 0: the retry runs
		msg   string
	}{
		{"no claimer: replays run", &mcp.ServerOptions{Keys: ring}, "", 0, ""},
		{"claimer fails", &mcp.ServerOptions{Keys: ring, StateClaimer: claimerFunc(func(context.Context, string, time.Time) (bool, error) {
			return true, errors.New("redis: connection refused")
		})}, "", -32603, "could not check"},
		{"claimer full", &mcp.ServerOptions{Keys: ring, StateClaimer: claimerFunc(func(context.Context, string, time.Time) (bool, error) {
			return false, fmt.Errorf("claims: %w", mcp.ErrStateClaimsFull)
		})}, "", -32000, "too many request states"},
		{"another server's name", &mcp.ServerOptions{Keys: ring}, "billing", -32602, "another server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mrtrServer(t, tt.opts)
			if tt.name2 != "" {
				s = mrtrServerNamed(t, tt.name2, tt.opts)
			}
			got := newWirePeer(t, s).call(call("1", answer))
			if tt.code == 0 {
				if text := resultText(t, got); text != "Hello, Ada" {
					t.Fatalf("retry: %q", text)
				}
				return
			}
			if errorCode(got) != tt.code || !strings.Contains(fmt.Sprint(got["error"]), tt.msg) {
				t.Fatalf("got %v, want %v mentioning %q", got, tt.code, tt.msg)
			}
		})
	}
}
