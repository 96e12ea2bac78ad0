package mcp_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// A host connected to several servers has one Client, whose handlers
// serve every session: each request names its session, which carries
// the name the host gave it in ConnectOptions and what the server said
// about itself.
func ExampleConnectOptions() {
	ctx := context.Background()
	var mu sync.Mutex // the handler may run for both sessions at once
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageNotification) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Printf("[%s, %s] %v\n", req.Session.Name(), req.Session.ServerInfo().Name, req.Params.Data)
		},
	})
	sessions := map[string]*mcp.ClientSession{}
	for _, name := range []string{"weather", "notes"} {
		s := mcp.NewServer(&mcp.Implementation{Name: name + "-server", Version: "1.0.0"}, nil)
		err := mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			return "hi", req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevelInfo, Data: "hello called"})
		})
		if err != nil {
			log.Fatal(err)
		}
		ct, st := transport.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st); err != nil {
			log.Fatal(err)
		}
		cs, err := client.Connect(ctx, ct, &mcp.ConnectOptions{Name: name})
		if err != nil {
			log.Fatal(err)
		}
		defer cs.Close()
		sessions[name] = cs
	}
	for _, name := range []string{"weather", "notes"} {
		if _, err := sessions[name].CallTool(ctx, &mcp.CallToolParams{Name: "hello"}); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// [weather, weather-server] hello called
	// [notes, notes-server] hello called
}
