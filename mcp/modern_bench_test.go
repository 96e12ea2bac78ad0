package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// BenchmarkServerCallByEra measures a server's side of one tools/call of a
// typed echo tool, in process, in each era: a handshake-era session, and
// a 2026-07-28 connection where every request carries its _meta (the
// revision, the client's capabilities and name) and the result its type.
// The client is a bare jsonrpc.Conn sending fixed params, so the figures
// are the server's and the transport's.
func BenchmarkServerCallByEra(b *testing.B) {
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`
	for _, era := range []struct{ name, params, want string }{
		{"handshake", `{"name":"echo","arguments":{"message":"hello"}}`, `"text":"hello"`},
		{"modern", `{"name":"echo","arguments":{"message":"hello"},` + modernMeta + `}`, `"resultType":"complete"`},
	} {
		b.Run(era.name, func(b *testing.B) {
			ct := echoServerTransport(b)
			ctx := context.Background()
			tc, err := ct.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			c := jsonrpc.NewConn(tc, &jsonrpc.ConnOptions{})
			c.Start()
			defer c.Close()
			if era.name == "handshake" {
				if _, err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)); err != nil {
					b.Fatal(err)
				}
				if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
					b.Fatal(err)
				}
			}
			params := json.RawMessage(era.params)
			res, err := c.Call(ctx, "tools/call", params)
			if err != nil || !strings.Contains(string(res), era.want) {
				b.Fatalf("warm-up call: %s, %v", res, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(ctx, "tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallByEra measures one tools/call of a typed echo tool through
// mcpkit's Client and Server, in process, in each era: a handshake-era
// session, and a client of the stateless era (EraModern), whose requests
// carry the _meta envelope and whose results are checked for input rounds.
func BenchmarkCallByEra(b *testing.B) {
	for _, era := range []struct {
		name string
		era  Era
	}{{"handshake", EraHandshake}, {"modern", EraModern}} {
		b.Run(era.name, func(b *testing.B) {
			ct := echoServerTransport(b)
			ctx := context.Background()
			cs, err := NewClient(&Implementation{Name: "bench", Version: "1"}, &ClientOptions{Era: era.era}).Connect(ctx, ct)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := json.RawMessage(`{"message":"hello"}`)
			if _, err := cs.CallTool(ctx, &CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// echoServerTransport serves a server with a typed echo tool over an
// in-memory pair, closed when b ends, and returns the client's end.
func echoServerTransport(b *testing.B) transport.Transport {
	s := NewServer(&Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	if err := AddTool(s, &Tool{Name: "echo"}, func(_ context.Context, _ *CallToolRequest, a in) (string, error) {
		return a.Message, nil
	}); err != nil {
		b.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	return ct
}
