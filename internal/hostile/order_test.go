package hostile_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// pipeTransports returns the two ends of a pair of operating-system
// pipes as transports, as a client and a stdio server see them.
func pipeTransports(t *testing.T) (client, server transport.Transport) {
	t.Helper()
	cr, sw, err := os.Pipe() // server -> client
	if err != nil {
		t.Fatal(err)
	}
	sr, cw, err := os.Pipe() // client -> server
	if err != nil {
		t.Fatal(err)
	}
	return &transport.IOTransport{Reader: cr, Writer: cw}, &transport.IOTransport{Reader: sr, Writer: sw}
}

// TestLogsBeforeToolResult checks that the log messages a tool sends
// before it returns have reached the client's handler when CallTool
// returns, over every transport.
func TestLogsBeforeToolResult(t *testing.T) {
	const n = 300
	newServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "0"}, nil)
		s.AddTool(&mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := range n {
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevelInfo, Data: json.RawMessage(fmt.Sprint(i))}); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
		return s
	}
	connect := map[string]func(t *testing.T, s *mcp.Server) transport.Transport{
		"in-memory": func(t *testing.T, s *mcp.Server) transport.Transport {
			ct, st := transport.NewInMemoryTransports()
			serve(t, s, st)
			return ct
		},
		"pipe": func(t *testing.T, s *mcp.Server) transport.Transport {
			ct, st := pipeTransports(t)
			serve(t, s, st)
			return ct
		},
		"streamable HTTP": func(t *testing.T, s *mcp.Server) transport.Transport {
			return &transport.StreamableClientTransport{URL: serveHTTP(t, s, nil)}
		},
	}
	for _, name := range []string{"in-memory", "pipe", "streamable HTTP"} {
		t.Run(name, func(t *testing.T) {
			checkGoroutines(t)
			var logged atomic.Int64
			c := mcp.NewClient(&mcp.Implementation{Name: "order", Version: "0"}, &mcp.ClientOptions{
				Era: mcp.EraHandshake,
				LoggingMessageHandler: func(context.Context, *mcp.ClientRequest[*mcp.LoggingMessageParams]) {
					logged.Add(1)
				},
			})
			ctx := ctxFor(t, time.Minute)
			cs, err := c.Connect(ctx, connect[name](t, newServer()))
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if err := cs.SetLoggingLevel(ctx, mcp.LoggingLevelDebug); err != nil {
				t.Fatal(err)
			}
			for round := int64(1); round <= 3; round++ {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chatty"}); err != nil {
					t.Fatal(err)
				}
				if got := logged.Load(); got != round*n {
					t.Fatalf("call %d returned with %d log messages handled, want %d", round, got, round*n)
				}
			}
		})
	}
}

// serve serves s on st until the test ends.
func serve(t *testing.T, s *mcp.Server, st transport.Transport) {
	t.Helper()
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
}

// TestAttackStaleCancelReusedID cancels a running request and at once
// sends a new request with the same id: the server applies the
// cancellation once, when it arrives, so the new request is answered.
func TestAttackStaleCancelReusedID(t *testing.T) {
	checkGoroutines(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "cancel", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "quick", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quick"}}}, nil
		})
	sr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Close()
	defer cr.Close()
	serve(t, s, &transport.IOTransport{Reader: sr, Writer: sw})
	in := bufio.NewReader(cr)
	type answer struct {
		line string
		err  error
	}
	lines := make(chan answer)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			line, err := in.ReadString('\n')
			select {
			case lines <- answer{line, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	read := func() message {
		t.Helper()
		select {
		case a := <-lines:
			if a.err != nil {
				t.Fatalf("reading: %v", a.err)
			}
			var m message
			if err := json.Unmarshal([]byte(a.line), &m); err != nil {
				t.Fatalf("%q: %v", a.line, err)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no answer after 20s")
			return message{}
		}
	}
	fmt.Fprintln(cw, initialize)
	read()
	fmt.Fprintln(cw, initialized)
	const rounds = 30
	for round := range rounds {
		id := round%3 + 1 // ids come back round after round
		fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n"+
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick"}}`+"\n", id, id, id)
		m := read()
		if string(m.ID) != fmt.Sprint(id) || m.Error != nil || !strings.Contains(string(m.Result), "quick") {
			t.Fatalf("round %d: answer %+v (result %s), want the quick tool's result for id %d", round, m, m.Result, id)
		}
	}
	// The cancelled calls got no answer: a ping is answered next.
	fmt.Fprintln(cw, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	if m := read(); string(m.ID) != `"last"` {
		t.Fatalf("answer %+v, want the ping's", m)
	}
}
