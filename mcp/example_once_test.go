package mcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// A tool that reserves an item, then asks the user to confirm. With a
// client of 2026-07-28 (the default between mcpkit peers) the handler
// runs again for the retry that carries the answer; the reservation,
// done through Once, happens once all the same, and the retry reads its
// result from the request state. A handshake-era client gets the same
// answer from a single run.
func ExampleOnce() {
	type confirmation struct {
		OK bool `json:"ok"`
	}
	reservations := 0 // what would happen twice without Once
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "order"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		fmt.Println("run in round", mcp.InputRound(ctx))
		id, err := mcp.Once(ctx, "reserve", func(context.Context) (string, error) {
			reservations++
			return fmt.Sprintf("R-%d", reservations), nil
		})
		if err != nil {
			return "", err
		}
		answer, _, err := mcp.ElicitAs[confirmation](ctx, req, "Confirm reservation "+id+"?")
		if err != nil {
			return "", err // on 2026-07-28, mcp.ErrInputRequired: return it
		}
		if !answer.OK {
			return "cancelled " + id, nil
		}
		return "confirmed " + id, nil
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
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}, nil
		},
	})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, "over", cs.ProtocolVersion())
	fmt.Println("reservations:", reservations)
	// Output:
	// run in round 0
	// run in round 1
	// confirmed R-1 over 2026-07-28
	// reservations: 1
}
