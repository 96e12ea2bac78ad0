package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// BenchmarkInProcessCallTool measures one tools/call round trip between a
// client and a server in this process, over the in-memory transport.
func BenchmarkInProcessCallTool(b *testing.B) {
	s := NewServer(&Implementation{Name: "bench", Version: "1"}, nil)
	if err := s.AddTool(&Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "ok"}}}, nil
	}); err != nil {
		b.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cs.Close(); ss.Close(); cs.Wait(); ss.Wait() }()
	params := &CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequiredChecks measures what the required-member checks add
// to one tools/call: the params scan on the server, the result walk on
// the client. Neither allocates.
func BenchmarkRequiredChecks(b *testing.B) {
	required := serverMethods[MethodToolsCall].required.members()
	raw := []byte(`{"name":"echo","arguments":{"text":"hello"}}`)
	res := &CallToolResult{Content: Contents{&TextContent{Text: "ok"}}}
	b.Run("params", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if missingMember(raw, required) != "" {
				b.Fatal("missing")
			}
		}
	})
	b.Run("result", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res.nilMember() != "" {
				b.Fatal("nil")
			}
		}
	})
}
