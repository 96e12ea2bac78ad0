package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// TestRequestsPipelinedBehindInitialize writes initialize,
// notifications/initialized and tools/list without waiting for answers, as
// some clients do, and makes tools/list reach the server's lifecycle check
// while initialize is still being handled. It must be answered, not
// refused as coming before initialize: it arrived after it.
func TestRequestsPipelinedBehindInitialize(t *testing.T) {
	checkGoroutines(t)
	listStarted := make(chan struct{})
	order := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req Request) (Result, error) {
			switch req.Method() {
			case MethodInitialize:
				select { // hold initialize until tools/list is being handled
				case <-listStarted:
				case <-time.After(10 * time.Second):
				}
			case MethodToolsList:
				close(listStarted)
			}
			return next(ctx, req)
		}
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Middleware: []Middleware{order}})
	must(t, s.AddTool(&Tool{Name: "t"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	}))
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	must(t, err)
	defer ss.Close()
	c, err := ct.Connect(ctx)
	must(t, err)
	defer c.Close()
	for _, m := range []*jsonrpc.Request{
		{ID: jsonrpc.Int64ID(0), Method: MethodInitialize, Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)},
		{Method: NotificationInitialized},
		{ID: jsonrpc.Int64ID(1), Method: MethodToolsList},
	} {
		must(t, c.Write(ctx, m))
	}
	for range 2 {
		m, err := c.Read(ctx)
		must(t, err)
		r, ok := m.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("got %T", m)
		}
		if r.Error != nil {
			t.Fatalf("response to %s: %v", r.ID, r.Error)
		}
	}
}
