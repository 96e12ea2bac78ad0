package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// connectPair connects a client to s in memory, for the examples below.
func connectPair(s *mcp.Server, opts *mcp.ClientOptions) (*mcp.ClientSession, func()) {
	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, opts).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	return cs, func() { cs.Close(); ss.Close() }
}

// ElicitAs asks the user for a Go value: the schema is inferred from the
// type, and the accepted answer decoded into it.
func ExampleElicitAs() {
	type Guests struct {
		Count int    `json:"count" jsonschema:"how many people"`
		Name  string `json:"name"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "book_table"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			g, action, err := mcp.ElicitAs[Guests](ctx, req, "Who is coming?")
			if err != nil {
				return "", err
			}
			if action != mcp.ElicitActionAccept {
				return "no booking", nil
			}
			return fmt.Sprintf("table for %d, name of %s", g.Count, g.Name), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	cs, done := connectPair(s, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"count": 4, "name": "Ada"}}, nil
		},
	})
	defer done()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "book_table"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: table for 4, name of Ada
}

// CallToolAs calls a tool and decodes its structured content into the
// tool's output type.
func ExampleCallToolAs() {
	type Sum struct {
		Total int `json:"total"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "add"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{ A, B int }) (Sum, error) {
			return Sum{Total: in.A + in.B}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	cs, done := connectPair(s, nil)
	defer done()
	sum, _, err := mcp.CallToolAs[Sum](context.Background(), cs, "add", map[string]int{"A": 2, "B": 3}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Total)
	// Output: 5
}

// CallToolOptions carries what a typed call needs beside its arguments:
// here a progress callback, which gets the call's progress notifications
// while the tool runs (the session makes up the progress token), and
// _meta for the server.
func ExampleCallToolOptions() {
	type Report struct {
		Pages int `json:"pages"`
	}
	// shown lets the tool wait until the client has shown each page: the
	// server and the client of this example share a process.
	shown := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "printer", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "print"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{ Pages int }) (Report, error) {
			for p := 1; p <= in.Pages; p++ {
				if err := req.ReportProgress(ctx, float64(p), float64(in.Pages), fmt.Sprintf("page %d", p)); err != nil {
					return Report{}, err
				}
				select {
				case <-shown:
				case <-ctx.Done():
					return Report{}, ctx.Err()
				}
			}
			return Report{Pages: in.Pages}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	cs, done := connectPair(s, nil)
	defer done()
	rep, _, err := mcp.CallToolAs[Report](context.Background(), cs, "print", map[string]int{"Pages": 2}, &mcp.CallToolOptions{
		Progress: func(ctx context.Context, p *mcp.ProgressParams) {
			fmt.Printf("%v/%v %s\n", p.Progress, p.Total, p.Message)
			shown <- struct{}{}
		},
		Meta: mcp.Meta{Other: map[string]json.RawMessage{"example.com/job": json.RawMessage(`"j-42"`)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Pages, "pages printed")
	// Output:
	// 1/2 page 1
	// 2/2 page 2
	// 2 pages printed
}

// Batch registers several tools with one notifications/tools/list_changed
// to each connected client, however many tools change.
func ExampleServer_Batch() {
	s := mcp.NewServer(&mcp.Implementation{Name: "plugins", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	changed := make(chan struct{}, 10)
	cs, done := connectPair(s, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ClientRequest[*mcp.ToolListChangedParams]) {
			changed <- struct{}{}
		},
	})
	defer done()
	// Change notifications come to a client that listens for them (in
	// the handshake era they come unasked; Listen works in both).
	sub, err := cs.Listen(context.Background(), &mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	err = s.Batch(func() error {
		for _, name := range []string{"a", "b", "c"} {
			if err := s.AddTool(&mcp.Tool{Name: name}, noop); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	<-changed
	n := 0
	for _, err := range cs.Tools(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println(n, "tools after one notification")
	// Output: 3 tools after one notification
}
