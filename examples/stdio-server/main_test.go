package main

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestGreetingTemplate reads the greeting template with a name that must
// be percent-encoded in the URI.
func TestGreetingTemplate(t *testing.T) {
	s, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "greeting://Ada%20Lovelace"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Contents[0].Text; got != "Hello, Ada Lovelace!" {
		t.Errorf("greeting = %q; want %q", got, "Hello, Ada Lovelace!")
	}
}
