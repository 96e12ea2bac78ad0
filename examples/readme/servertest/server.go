// Package servertest is the server of README's "Testing your server":
// a tool that asks the user for a seat, tested with mcptest in
// server_test.go.
package servertest

import (
	"context"
	"fmt"

	"github.com/mcpkit/mcpkit/mcp"
)

// BookIn is the input of the book tool.
type BookIn struct {
	Flight string `json:"flight" jsonschema:"the flight to book"`
}

// Seat is what the book tool asks the user for.
type Seat struct {
	Seat string `json:"seat" jsonschema:"the seat, such as 12A"`
}

// NewServer returns a server with the tool book, which asks the user
// which seat to book (an elicitation: a request to the client in the
// handshake era, an input_required round in 2026-07-28).
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "airline", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "book", Description: "Books a seat on a flight."},
		func(ctx context.Context, req *mcp.CallToolRequest, in BookIn) (string, error) {
			seat, action, err := mcp.ElicitAs[Seat](ctx, req, "Which seat on "+in.Flight+"?")
			if err != nil {
				return "", err
			}
			if action != mcp.ElicitActionAccept {
				return "not booked", nil
			}
			return fmt.Sprintf("%s, seat %s", in.Flight, seat.Seat), nil
		})
	return s
}
