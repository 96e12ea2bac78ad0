package redisstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// TestStateClaimer checks the claims on each backend: the first claim of
// an ID wins and the next lose, each claim is one key with the TTL asked,
// an ID that is no base64url (or too long) builds no key, and a claim
// whose end has passed is stored nowhere.
func TestStateClaimer(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			prefix := testPrefix()
			cl, err := NewStateClaimer(c, &StateClaimerOptions{Prefix: prefix, Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			until := time.Now().Add(time.Minute)
			tests := []struct {
				id    string
				until time.Time
				ok    bool
				err   bool
			}{
				{"AAAAAAAAAAAAAAAAAAAAAA", until, true, false},
				{"AAAAAAAAAAAAAAAAAAAAAA", until, false, false},
				{"AAAAAAAAAAAAAAAAAAAAAA", until.Add(time.Hour), false, false},
				{"b-_9", until, true, false},
				{"ended", time.Now().Add(-time.Second), true, false},
				{"", until, false, true},
				{"{x}", until, false, true},
				{"a b", until, false, true},
				{"a:b", until, false, true},
				{"(", until, false, true},
				{"+", until, false, true},
				{strings.Repeat("A", maxStateIDBytes+1), until, false, true},
			}
			for _, tt := range tests {
				ok, err := cl.Claim(ctx, tt.id, tt.until)
				if ok != tt.ok || (err != nil) != tt.err {
					t.Fatalf("Claim(%.20q): %v, %v; want %v, error %v", tt.id, ok, err, tt.ok, tt.err)
				}
			}
			keys := keysUnder(t, c, prefix)
			if len(keys) != 2 {
				t.Fatalf("keys %v, want the claims of two IDs", keys)
			}
			for _, id := range []string{"AAAAAAAAAAAAAAAAAAAAAA", "b-_9"} {
				ttl, ok := keys[prefix+"{r"+id+"}:used"]
				if !ok || ttl <= 0 || ttl > time.Minute {
					t.Errorf("claim of %s: TTL %v (present %v), want within a minute", id, ttl, ok)
				}
			}
		})
	}
	if _, err := NewStateClaimer(nil, nil); err == nil {
		t.Error("a claimer without a client")
	}
	if _, err := NewStateClaimer(redis.NewClient(&redis.Options{}), &StateClaimerOptions{Prefix: "a{b"}); err == nil {
		t.Error("a prefix with a brace accepted")
	}
}

// TestStateClaimerDown checks that a claimer whose Redis is gone returns
// an error (the server then fails closed) within its Timeout.
func TestStateClaimerDown(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	cl, err := NewStateClaimer(c, &StateClaimerOptions{Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	ok, err := cl.Claim(t.Context(), "AAAA", time.Now().Add(time.Minute))
	if ok || err == nil {
		t.Fatalf("claim with Redis down: %v, %v; want an error", ok, err)
	}
}

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

// call sends line and returns the server's answer, decoded.
func (p *wirePeer) call(line string) map[string]any {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
	got, ok := <-p.lines
	if !ok {
		p.t.Fatalf("no answer to %s", line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		p.t.Fatalf("answer is not JSON: %s", got)
	}
	return m
}

// singleUseServer returns a server of the tool "greet", which asks the
// caller's name, with single-use request states claimed in claimer.
func singleUseServer(t *testing.T, keys *mcp.KeyRing, claimer mcp.StateClaimer, runs chan<- string) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, &mcp.ServerOptions{Keys: keys, StateClaimer: claimer})
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return "", err
		}
		name := res.Content["name"].(string)
		runs <- name
		return "Hello, " + name, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSingleUseAcrossReplicas runs the round of an input request on
// replica A and its retry on B, two servers sharing a key ring and a
// Redis claimer: the retry runs once, and its replay on A or B is refused
// with -32602; with Redis gone, a retry is refused (fails closed).
func TestSingleUseAcrossReplicas(t *testing.T) {
	keys, err := mcp.NewKeyRing([]byte("the replicas' key, 32 bytes or more"))
	if err != nil {
		t.Fatal(err)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(id int, extra string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"greet","arguments":{},%s%s}}`, id, meta, extra)
	}
	errorOf := func(m map[string]any) (float64, string) {
		e, _ := m["error"].(map[string]any)
		code, _ := e["code"].(float64)
		msg, _ := e["message"].(string)
		return code, msg
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			claimer, err := NewStateClaimer(c, &StateClaimerOptions{Prefix: testPrefix(), Timeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			runs := make(chan string, 10)
			a := newWirePeer(t, singleUseServer(t, keys, claimer, runs))
			bb := newWirePeer(t, singleUseServer(t, keys, claimer, runs))
			first := a.call(call(1, ""))
			res, _ := first["result"].(map[string]any)
			state, _ := res["requestState"].(string)
			if state == "" {
				t.Fatalf("first round: %v", first)
			}
			quoted, _ := json.Marshal(state)
			answer := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(quoted)
			if got := bb.call(call(2, answer)); got["result"] == nil {
				t.Fatalf("retry on B: %v", got)
			}
			if name := <-runs; name != "Ada" {
				t.Fatalf("run with %q", name)
			}
			for i, p := range []*wirePeer{a, bb} {
				got := p.call(call(3+i, answer))
				if code, msg := errorOf(got); code != -32602 || !strings.Contains(msg, "used already") {
					t.Fatalf("replay %d: %v, want -32602 used already", i, got)
				}
			}
			select {
			case name := <-runs:
				t.Fatalf("a replay ran (%q)", name)
			default:
			}
		})
	}
	t.Run("Redis down", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		claimer, err := NewStateClaimer(c, &StateClaimerOptions{Timeout: testTimeout})
		if err != nil {
			t.Fatal(err)
		}
		runs := make(chan string, 1)
		p := newWirePeer(t, singleUseServer(t, keys, claimer, runs))
		first := p.call(call(1, ""))
		state := first["result"].(map[string]any)["requestState"].(string)
		quoted, _ := json.Marshal(state)
		m.Close()
		got := p.call(call(2, `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+string(quoted)))
		if code, _ := errorOf(got); code != -32603 {
			t.Fatalf("retry with Redis down: %v, want -32603", got)
		}
		if len(runs) != 0 {
			t.Fatal("the retry ran with Redis down")
		}
	})
}
