package hostile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/hostile"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

const (
	initialize  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// scripts are the hostile servers a re-executed test binary runs.
var scripts = map[string]hostile.Script{
	// chatty writes 20,000 lines that are not JSON before it reads
	// anything, then serves initialize and ping.
	"chatty": func(ctx context.Context, p *hostile.StdioPeer) error {
		if err := p.Flood("this is not JSON, and there is a lot of it", 20000); err != nil {
			return err
		}
		return serveScripted(p, func(id string) string { return hostile.InitializeResult(id, "2025-11-25") })
	},
	"answer-ping-then-exit": answerPingThenExit,
	// vanish-mid-call answers initialize, reads one more request and
	// exits without answering it.
	"vanish-mid-call": func(ctx context.Context, p *hostile.StdioPeer) error {
		line, _, err := p.ReadUntil(`"initialize"`, time.Minute)
		if err != nil {
			return err
		}
		if err := p.WriteLine(hostile.InitializeResult(parseID(line), "2025-11-25")); err != nil {
			return err
		}
		_, _, err = p.ReadUntil(`"tools/call"`, time.Minute)
		return err
	},
	// stop-reading answers initialize and then reads nothing, until it
	// is killed.
	"stop-reading": func(ctx context.Context, p *hostile.StdioPeer) error {
		line, _, err := p.ReadUntil(`"initialize"`, time.Minute)
		if err != nil {
			return err
		}
		if err := p.WriteLine(hostile.InitializeResult(parseID(line), "2025-11-25")); err != nil {
			return err
		}
		select {} // never reads again
	},
	// no-serverinfo answers initialize without serverInfo.
	"no-serverinfo": func(ctx context.Context, p *hostile.StdioPeer) error {
		return serveScripted(p, func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`
		})
	},
	// no-capabilities answers initialize without capabilities.
	"no-capabilities": func(ctx context.Context, p *hostile.StdioPeer) error {
		return serveScripted(p, func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"x","version":"0"}}}`
		})
	},
}

// serveScripted answers initialize with init(id) and every other request
// with an empty result, until end of input.
func serveScripted(p *hostile.StdioPeer, init func(id string) string) error {
	for {
		line, err := p.ReadLine(time.Minute)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		answer := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`
		if m.Method == "initialize" {
			answer = init(string(m.ID))
		}
		if err := p.WriteLine(answer); err != nil {
			return err
		}
	}
}

// Pipelined requests followed by end of input are all answered before the
// server returns: the stdio-server example, and a server of ours over the
// IO transport.
func TestAttackEndOfInputAnswersEverything(t *testing.T) {
	t.Parallel()
	t.Run("stdio-server", func(t *testing.T) {
		t.Parallel()
		p := startServer(t)
		pipelineThenEOF(t, p)
		select {
		case <-p.Exited():
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not exit after answering")
		}
	})
	t.Run("io-transport", func(t *testing.T) {
		t.Parallel()
		s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, nil)
		must(t, s.AddTool(&mcp.Tool{Name: "add"}, nopTool))
		cr, cw := io.Pipe()
		sr, sw := io.Pipe()
		ran := make(chan error, 1)
		go func() {
			ran <- s.Run(context.Background(), &transport.IOTransport{Reader: cr, Writer: sw})
			sw.Close()
		}()
		p := hostile.NewStdioPeer(sr, cw)
		t.Cleanup(func() { p.Close() })
		pipelineThenEOF(t, p)
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return after answering")
		}
	})
}

// pipelineThenEOF writes a handshake, ten pings, tools/list and a tool
// call, closes its input and checks that every request is answered
// before the output ends.
func pipelineThenEOF(t *testing.T, p *hostile.StdioPeer) {
	t.Helper()
	// The client waits for the answer to initialize before it sends
	// anything else, as the specification asks; the rest is pipelined.
	must(t, p.WriteLine(initialize))
	if _, _, err := p.ReadUntil(`"id":0`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	must(t, p.WriteLine(initialized))
	want := map[string]bool{}
	for i := 1; i <= 10; i++ {
		id := fmt.Sprint(i)
		want[id] = true
		must(t, p.WriteLine(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
	}
	want["11"] = true
	must(t, p.WriteLine(`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`))
	want["12"] = true
	must(t, p.WriteLine(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`))
	must(t, p.CloseInput())
	for {
		line, err := p.ReadLine(20 * time.Second)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the answers: %v (still missing %v)", err, want)
		}
		for _, m := range parse(t, line) {
			if m.Error != nil {
				t.Errorf("answer %s", line)
			}
			delete(want, string(m.ID))
		}
	}
	if len(want) > 0 {
		t.Fatalf("unanswered after end of input: %v", want)
	}
}

// completion/complete without its required members is refused with
// -32602, never reaching the handler.
func TestAttackCompletionWithoutRequiredMembers(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	must(t, p.WriteLine(initialize))
	if _, _, err := p.ReadUntil(`"id":0`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	must(t, p.WriteLine(initialized))
	for i, params := range []string{`{}`, `{"ref":null,"argument":null}`, `{"ref":{"type":"ref/prompt","name":"x"}}`} {
		id := string(rune('1' + i))
		must(t, p.WriteLine(`{"jsonrpc":"2.0","id":`+id+`,"method":"completion/complete","params":`+params+`}`))
		line, _, err := p.ReadUntil(`"id":`+id, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		m := parse(t, line)[0]
		if m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("complete %s: %s, want error -32602", params, line)
		}
	}
}

// A client whose server floods its output with lines that are not JSON,
// without reading meanwhile, skips them and initializes.
func TestAttackChattyServerDoesNotDeadlockClient(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	cs, err := newClient().Connect(ctx, &transport.CommandTransport{Command: hostile.ScriptCommand("chatty")})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// An initialize result without a required member is refused with a typed
// error, and neither our client nor the example client panics.
func TestAttackInitializeResultMissingMembers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ script, member string }{
		{"no-serverinfo", "serverInfo"},
		{"no-capabilities", "capabilities"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			ctx := ctxFor(t, 30*time.Second)
			cs, err := newClient().Connect(ctx, &transport.CommandTransport{Command: hostile.ScriptCommand(tc.script)})
			if err == nil {
				cs.Close()
				t.Fatal("Connect succeeded")
			}
			var re *mcp.ResultError
			if !errors.As(err, &re) || re.Member != tc.member {
				t.Fatalf("Connect: %v, want a *mcp.ResultError for %s", err, tc.member)
			}

			cmd := exec.Command(binary(t, "./examples/stdio-client"), "-timeout", "20s", "--", os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), hostile.ScriptEnv+"="+tc.script)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("stdio-client succeeded against a server without %s:\n%s", tc.member, out)
			}
			if strings.Contains(string(out), "panic") || strings.Contains(string(out), "goroutine ") {
				t.Errorf("stdio-client panicked:\n%s", out)
			}
		})
	}
}

// One client that stops reading does not hold up the server's owner:
// registrations return at once and the stalled session is closed.
func TestAttackStalledClientDoesNotBlockAddTool(t *testing.T) {
	checkGoroutines(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "0"}, &mcp.ServerOptions{
		ListChangedDelay:    -1, // a notification per change: the stall is met at once
		NotificationTimeout: 200 * time.Millisecond,
		Capabilities:        &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	cr, cw := io.Pipe() // client to server
	sr, sw := io.Pipe() // server to client
	ss, err := s.Connect(context.Background(), &transport.IOTransport{Reader: cr, Writer: sw})
	if err != nil {
		t.Fatal(err)
	}
	p := hostile.NewStdioPeer(sr, cw)
	t.Cleanup(func() {
		p.Close()
		ss.Close()
		sw.Close()
	})
	must(t, p.WriteLine(initialize))
	if _, _, err := p.ReadUntil(`"id":0`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	must(t, p.WriteLine(initialized))
	// From here on the peer reads nothing.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			must(t, s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool%d", i)}, nopTool))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("AddTool blocked on a client that does not read")
	}
	select {
	case <-ss.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the stalled session was not closed")
	}
}

func nopTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

// Requests pipelined behind initialize and notifications/initialized,
// without waiting for initialize's answer (which the specification
// discourages but mcp-go and hand-written servers answer), are answered.
func TestAttackPipelinedBehindInitialize(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	must(t, p.WriteLine(initialize))
	must(t, p.WriteLine(initialized))
	must(t, p.WriteLine(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	must(t, p.CloseInput())
	line, _, err := p.ReadUntil(`"id":1`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m := parse(t, line)[0]; m.Error != nil {
		t.Fatalf("tools/list pipelined behind initialize: %s", line)
	}
}

// A server that exits in the middle of a call ends the call and the
// session; neither waits for an answer that cannot come.
func TestAttackServerVanishesMidCall(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	cs, err := newClient().Connect(ctx, &transport.CommandTransport{Command: hostile.ScriptCommand("vanish-mid-call")})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"}); err == nil {
		t.Fatal("a call the server never answered succeeded")
	}
	if ctx.Err() != nil {
		t.Fatal("the call waited for its context to end")
	}
	select {
	case <-cs.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end with the server")
	}
}

// A server that stops reading cannot hold up a call past its context, nor
// Close.
func TestAttackServerStopsReading(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	cs, err := newClient().Connect(ctx, &transport.CommandTransport{
		Command:           hostile.ScriptCommand("stop-reading"),
		TerminateDuration: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	big := strings.Repeat("x", 256<<10) // a few of these fill the pipe
	for range 4 {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "x", Arguments: json.RawMessage(`{"big":"` + big + `"}`)})
		cancel()
		if err == nil {
			t.Fatal("a call the server never read succeeded")
		}
		if ctx.Err() != nil {
			t.Fatal("a call outlived its context")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
}
