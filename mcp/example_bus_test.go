package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Two replicas of one server share a bus (here in memory; across
// processes, redisstore.NewBus): a client listening on replica A hears
// the tool added on replica B.
func ExampleMemoryBus() {
	bus := &mcp.MemoryBus{}
	replica := func() *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1.0.0"}, &mcp.ServerOptions{
			Bus:          bus,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		})
	}
	a, b := replica(), replica()
	defer a.Close()
	defer b.Close()

	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := a.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	changed := make(chan struct{}, 1)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ClientRequest[*mcp.ToolListChangedParams]) {
			changed <- struct{}{}
		},
	}).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()

	// The application changes its features on every replica; here on
	// B only, to show where the notification comes from.
	if err := b.AddTool(&mcp.Tool{Name: "new", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}); err != nil {
		log.Fatal(err)
	}
	<-changed
	fmt.Println("the client of A heard B's change")
	// Output:
	// the client of A heard B's change
}
