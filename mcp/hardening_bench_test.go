package mcp

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
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
	params := &CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"text":"hello"}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
