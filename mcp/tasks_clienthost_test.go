package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestClientHostedTasksEndToEnd has an mcpkit server ask an mcpkit client
// to run sampling and elicitation as tasks of the client's (2025-11-25):
// the client declares it, runs the handler as a task, and the server's
// handler gets the result as if there were no task; a handler the server
// gives up on is cancelled on the client.
func TestClientHostedTasksEndToEnd(t *testing.T) {
	checkGoroutines(t)
	var sampled, elicited atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	blocked := make(chan error, 1)
	c := NewClient(&Implementation{Name: "host", Version: "1"}, &ClientOptions{
		Tasks: &ClientTaskOptions{Host: &TaskOptions{PollInterval: 1}},
		CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			sampled.Add(1)
			if text := req.Params.Messages[0].Content[0].(*TextContent).Text; text == "block" {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
					blocked <- context.Cause(ctx)
					return nil, ctx.Err()
				}
			}
			return &CreateMessageResult{Role: RoleAssistant, Content: Contents{&TextContent{Text: "sampled"}}, Model: "m"}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			elicited.Add(1)
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Kay"}}, nil
		},
	})
	defer c.Close()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, s.AddTool(&Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var in struct{ Prompt string }
		json.Unmarshal(req.Params.Arguments, &in)
		if in.Prompt == "block" {
			ctx, cancel := context.WithCancel(ctx)
			go func() { <-started; cancel() }()
			_, err := req.CreateMessage(ctx, &CreateMessageParams{Task: &TaskMetadata{}, MaxTokens: 5,
				Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "block"}}}}})
			return nil, err
		}
		res, err := req.CreateMessage(ctx, &CreateMessageParams{Task: &TaskMetadata{}, MaxTokens: 5,
			Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: in.Prompt}}}}})
		if err != nil {
			return nil, err
		}
		el, err := req.Elicit(ctx, &ElicitParams{Task: &TaskMetadata{}, Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		return &CallToolResult{Content: []Content{&TextContent{Text: res.Content[0].(*TextContent).Text + " " + el.Content["name"].(string)}}}, nil
	}))
	cs, ss := connect(t, s, c)
	if caps := ss.ClientCapabilities().Tasks; caps == nil || caps.Requests.Sampling == nil || caps.Requests.Elicitation == nil || caps.List == nil {
		t.Fatalf("the client declares %+v", caps)
	}
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "ask", Arguments: json.RawMessage(`{"prompt":"hi"}`)})
	if err != nil || res.IsError || res.Content[0].(*TextContent).Text != "sampled Kay" {
		t.Fatalf("CallTool: %+v %v", res, err)
	}
	if sampled.Load() != 1 || elicited.Load() != 1 {
		t.Fatalf("handlers ran %d and %d times", sampled.Load(), elicited.Load())
	}
	// The server lists the tasks it made on this client.
	var list ListTasksResult
	must(t, ss.call(t.Context(), MethodTasksList, &ListTasksParams{}, &list))
	if len(list.Tasks) != 2 || list.Tasks[0].Status != TaskCompleted {
		t.Fatalf("tasks/list on the client: %+v", list.Tasks)
	}
	var got Task
	if err := ss.call(t.Context(), MethodTasksGet, &GetTaskParams{TaskID: "unknown"}, &got); err == nil {
		t.Fatal("tasks/get of an unknown task succeeded")
	}
	// Abandoned by the server: cancelled on the client.
	res, err = cs.CallTool(t.Context(), &CallToolParams{Name: "ask", Arguments: json.RawMessage(`{"prompt":"block"}`)})
	if err != nil || !res.IsError {
		t.Fatalf("the abandoned call: %+v %v", res, err)
	}
	if cause := <-blocked; !errors.Is(cause, errTaskCancelled) {
		t.Fatalf("the client's handler ended by %v", cause)
	}
	close(release)
	if !strings.Contains(res.Content[0].(*TextContent).Text, "context canceled") {
		t.Fatalf("abandoned call's error %q", res.Content[0].(*TextContent).Text)
	}
}
