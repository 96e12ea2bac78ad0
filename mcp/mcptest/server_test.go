package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// newServer returns the server the tests connect to: add, a tool that
// asks the client for nothing; book, which asks for a confirmation
// (elicitation), a model's answer (sampling) and the client's roots, in
// that order; confirm, which asks only for the confirmation; both, which
// asks for the confirmation and the model's answer at once, then for the
// roots; and whoami,
// which tells the client's name, capabilities and roots.
func newServer(t testing.TB) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest-server", Version: "1.0.0"}, nil)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds."}, func(ctx context.Context, req *mcp.CallToolRequest, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "book", Description: "Books after asking."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		ok, err := confirm(ctx, req)
		if err != nil || !ok {
			return "not booked", err
		}
		res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 10,
			Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "Pick a seat."}}}},
		})
		if err != nil {
			return "", err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		seat := res.Content[0].(*mcp.TextContent).Text
		return fmt.Sprintf("booked %s, receipt in %s", seat, strings.Join(uris, " ")), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks for a confirmation."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		ok, err := confirm(ctx, req)
		return fmt.Sprint(ok), err
	}); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "both", Description: "Asks to confirm and asks the model at once, then lists the roots."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		var wg sync.WaitGroup
		var ok bool
		var res *mcp.CreateMessageResult
		var errConfirm, errModel error
		wg.Go(func() { ok, errConfirm = confirm(ctx, req) })
		wg.Go(func() {
			res, errModel = req.CreateMessage(ctx, &mcp.CreateMessageParams{
				MaxTokens: 10,
				Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "Pick a seat."}}}},
			})
		})
		wg.Wait()
		if err := errors.Join(errConfirm, errModel); err != nil {
			return "", err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%t %s %d", ok, res.Content[0].(*mcp.TextContent).Text, len(roots.Roots)), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Tells the client about itself."}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		info, caps := req.ClientInfo(), req.ClientCapabilities()
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		return fmt.Sprintf("%s %s, sampling %t, elicitation %t, roots [%s]", info.Name, info.Version,
			caps.Sampling != nil, caps.Elicitation != nil, strings.Join(uris, " ")), nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// confirm asks the user to confirm.
func confirm(ctx context.Context, req *mcp.CallToolRequest) (bool, error) {
	res, err := req.Elicit(ctx, &mcp.ElicitParams{
		Message:         "Book it?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
	})
	if err != nil {
		return false, err
	}
	return res.Action == mcp.ElicitActionAccept && res.Content["ok"] == true, nil
}

// text returns the text of a tool result, or its error.
func text(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	if res.IsError {
		b.WriteString("tool error: ")
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
