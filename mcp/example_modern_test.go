package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The stateless era (2026-07-28): a client with EraModern discovers the
// server instead of initializing, and the handler's Elicit becomes an
// input round that the client answers with its ElicitationHandler; the
// caller sees the final result, which names the server in its _meta
// (ServerOptions.OmitServerInfo leaves that out). The same handler serves
// handshake-era sessions with a request to the client.
func ExampleEraModern() {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{
			Message:         "What is your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		})
		if err != nil {
			return "", err // mcp.ErrInputRequired in the first round
		}
		return fmt.Sprintf("Hello, %v! (%s)", res.Content["name"], req.ProtocolVersion()), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		Era: mcp.EraModern,
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("server:", cs.DiscoverResult().Meta.ServerInfo.Name)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("answered by:", res.Meta.ServerInfo.Name, res.Meta.ServerInfo.Version)
	// Output:
	// server: greeter
	// Hello, Ada! (2026-07-28)
	// answered by: greeter 1.0.0
}

// A subscriptions/listen stream: the client of the stateless era asks for
// tool list changes, and they reach its ToolListChangedHandler.
func ExampleClientSession_Listen() {
	s := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1.0.0"}, &mcp.ServerOptions{ListChangedDelay: -1})
	add := func(name string) {
		if err := s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}); err != nil {
			log.Fatal(err)
		}
	}
	add("first")
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	changed := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		Era: mcp.EraModern,
		ToolListChangedHandler: func(context.Context, *mcp.ClientRequest[*mcp.ToolListChangedParams]) {
			changed <- struct{}{}
		},
	})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	fmt.Println("tools list changes acknowledged:", sub.Acknowledged.ToolsListChanged)
	add("second")
	<-changed
	fmt.Println("the tool list changed")
	// Output:
	// tools list changes acknowledged: true
	// the tool list changed
}

// An endpoint that serves only the stateless era (2026-07-28), as the
// revision describes one: the default client finds that era, and a client
// pinned to the handshake era cannot initialize there.
func ExampleNewStreamableHTTPHandler_modernOnly() {
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-only", Version: "1.0.0"}, nil)
	h := mcp.NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{
		SupportedVersions: []string{mcp.Version20260728},
	})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).
		Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("default client:", cs.Era(), cs.ProtocolVersion())

	_, err = mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1.0.0"}, &mcp.ClientOptions{Era: mcp.EraHandshake}).
		Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL, DisableSSEFallback: true})
	fmt.Println("handshake client refused:", err != nil)
	// Output:
	// default client: modern 2026-07-28
	// handshake client refused: true
}
