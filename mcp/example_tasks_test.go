package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// StartTool starts a tool call as a task where the tool and the server
// allow it: the client holds its ID (which ClientSession.Task takes to
// resume it, after a restart say), reads its state, and waits for its
// result, answering the task's questions with its own handlers.
func ExampleClientSession_StartTool() {
	s := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1.0.0"},
		&mcp.ServerOptions{Tasks: &mcp.TaskOptions{PollInterval: 10 * time.Millisecond}})
	err := mcp.AddTool(s, &mcp.Tool{Name: "report", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Which quarter?",
				RequestedSchema: []byte(`{"type":"object","properties":{"quarter":{"type":"string"}}}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("report for %v", res.Content["quarter"]), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	cs, done := connectPair(s, &mcp.ClientOptions{
		Tasks: &mcp.ClientTaskOptions{MinPollInterval: 10 * time.Millisecond},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"quarter": "Q3"}}, nil
		},
	})
	defer done()

	ctx := context.Background()
	res, task, err := cs.StartTool(ctx, &mcp.CallToolParams{Name: "report"})
	if err != nil {
		log.Fatal(err)
	}
	if task == nil { // the server answered at once
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
		return
	}
	fmt.Println("running as a task:", task.ID() != "")
	res, err = cs.Task(task.ID()).Wait(ctx) // a handle resumed by its ID works alike
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// running as a task: true
	// report for Q3
}

// AddAsyncTool registers a tool that checks its input while the client
// waits, and becomes a task where it calls GoAsync: a bad request is
// refused at once, a good one runs detached from the request, the client
// (with ClientOptions.Tasks) polling it to its end. A client that did not
// declare tasks gets the same handler run synchronously.
func ExampleAddAsyncTool() {
	s := mcp.NewServer(&mcp.Implementation{Name: "exports", Version: "1.0.0"},
		&mcp.ServerOptions{Tasks: &mcp.TaskOptions{PollInterval: 10 * time.Millisecond}})
	type Export struct {
		Rows int `json:"rows" jsonschema:"how many rows to export"`
	}
	err := mcp.AddAsyncTool(s, &mcp.Tool{Name: "export", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}},
		func(ctx context.Context, req *mcp.CallToolRequest, in Export) (string, error) {
			if in.Rows <= 0 { // checked before any task exists
				return "", fmt.Errorf("rows must be positive, got %d", in.Rows)
			}
			ctx, err := req.GoAsync(ctx) // the client now holds a task
			if err != nil {
				return "", err
			}
			for i := range in.Rows {
				if err := req.ReportProgress(ctx, float64(i+1), float64(in.Rows), "exporting"); err != nil {
					return "", err
				}
			}
			return fmt.Sprintf("exported %d rows", in.Rows), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	cs, done := connectPair(s, &mcp.ClientOptions{Tasks: &mcp.ClientTaskOptions{MinPollInterval: 10 * time.Millisecond}})
	defer done()
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "export", Arguments: json.RawMessage(`{"rows":0}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	_, task, err := cs.StartTool(ctx, &mcp.CallToolParams{Name: "export", Arguments: json.RawMessage(`{"rows":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	res, err = task.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// true rows must be positive, got 0
	// exported 3 rows
}

// ClientTaskOptions.Host lets a client run the server's sampling and
// elicitation requests as tasks of its own (2025-11-25): the server's
// handler asks with Task set and gets its answer as from a plain request,
// while the client's handler runs detached and the server polls it. Close
// the Client to end the tasks it still runs.
func ExampleClientTaskOptions_host() {
	s := mcp.NewServer(&mcp.Implementation{Name: "writer", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "draft"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Task:      &mcp.TaskMetadata{}, // a task where the client hosts them
				MaxTokens: 50,
				Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "A title, please"}}}},
			})
			if err != nil {
				return "", err
			}
			return "draft: " + res.Content[0].(*mcp.TextContent).Text, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	cs, done := connectPair(s, &mcp.ClientOptions{
		Era:   mcp.EraHandshake,
		Tasks: &mcp.ClientTaskOptions{Host: &mcp.TaskOptions{PollInterval: 10 * time.Millisecond}},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.Contents{&mcp.TextContent{Text: "On Tasks"}}}, nil
		},
	})
	defer done()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "draft"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// draft: On Tasks
}
