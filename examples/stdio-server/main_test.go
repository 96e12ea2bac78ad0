package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// TestReportTask calls the report tool in both eras: as a task for a
// client that supports tasks, synchronously for one that does not, and
// refused at once (no task) for bad input.
func TestReportTask(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		for _, tasks := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/tasks=%v", era, tasks), func(t *testing.T) {
				s, err := newServer()
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ct, st := transport.NewInMemoryTransports()
				ctx := t.Context()
				ss, err := s.Connect(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				opts := &mcp.ClientOptions{Era: era}
				if tasks {
					opts.Tasks = &mcp.ClientTaskOptions{MinPollInterval: time.Millisecond, DefaultPollInterval: time.Millisecond}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, task, err := cs.StartTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: json.RawMessage(`{"topic":"tides","steps":3,"pauseMs":1}`)})
				if err != nil {
					t.Fatal(err)
				}
				if (task != nil) != tasks {
					t.Fatalf("StartTool: task %v, want a task: %v", task, tasks)
				}
				if task != nil {
					if res, err = task.Wait(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != "a report on tides in 3 sections" {
					t.Errorf("report: %q", got)
				}
				res, task, err = cs.StartTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: json.RawMessage(`{"topic":"","steps":3}`)})
				if err != nil || task != nil || !res.IsError {
					t.Errorf("bad input: %v, %v, %v; want a tool error at once", res, task, err)
				}
			})
		}
	}
}
