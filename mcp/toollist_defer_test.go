package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestListToolsSkipsBrokenDefinition checks that a tool whose schema,
// left by AddTool for first use, cannot be made is left out of
// tools/list (and logged) while the other tools are still listed.
func TestListToolsSkipsBrokenDefinition(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "good", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	s.addTool(&serverTool{
		tool:     &Tool{Name: "broken"},
		handler:  func(context.Context, *CallToolRequest) (*CallToolResult, error) { return &CallToolResult{}, nil },
		complete: func() (*Tool, error) { return nil, errors.New("schema cannot be encoded") },
	})
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "good" {
		t.Errorf("listed %d tools, want only good", len(res.Tools))
	}
}
