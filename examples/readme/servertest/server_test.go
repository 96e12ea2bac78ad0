package servertest

import (
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

func TestBook(t *testing.T) {
	for _, v := range mcptest.Eras() { // 2025-11-25 (initialize) and 2026-07-28
		t.Run(v, func(t *testing.T) {
			script := mcptest.NewScript(t, mcptest.Elicit(&mcp.ElicitResult{
				Action:  mcp.ElicitActionAccept,
				Content: map[string]any{"seat": "12A"},
			}))
			tr := &mcptest.Transcript{}
			cs := mcptest.Connect(t, NewServer(), &mcptest.Options{
				ProtocolVersion: v,
				Script:          script, // the user's answers
				Transcript:      tr,     // the wire, both ways
			})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
				Name:      "book",
				Arguments: json.RawMessage(`{"flight":"MC 24"}`),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "MC 24, seat 12A" {
				t.Errorf("book = %q", got)
			}
			tr.CompareGolden(t, "testdata/book-"+v+".golden")
		})
	}
}
