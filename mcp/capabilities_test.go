package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCapabilityDeclaredUpFront checks that a client connected before any
// tool was added is told how to fix the refusal, and that declaring the
// capability in ServerOptions lets it use tools added later.
func TestCapabilityDeclaredUpFront(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	addLater := func(s *Server) {
		must(t, s.AddTool(&Tool{Name: "late"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{&TextContent{Text: "here"}}}, nil
		}))
	}

	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	addLater(s)
	_, err := cs.ListTools(ctx, nil)
	var ce *CapabilityError
	if !errors.As(err, &ce) || ce.Capability != "tools" || !strings.Contains(err.Error(), "ServerOptions.Capabilities") {
		t.Errorf("tools added after connect, undeclared: %v", err)
	}

	changed := make(chan struct{}, 1)
	s = NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Capabilities: &ServerCapabilities{Tools: &ToolCapabilities{ListChanged: true}},
	})
	cs, _ = connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ToolListChangedHandler: func(context.Context, *ClientRequest[*ToolListChangedParams]) { changed <- struct{}{} },
	}))
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("declared capabilities = %+v", caps)
	}
	addLater(s)
	<-changed
	res, err := cs.CallTool(ctx, &CallToolParams{Name: "late"})
	if err != nil || res.Content[0].(*TextContent).Text != "here" {
		t.Errorf("late tool: %+v, %v", res, err)
	}
}
