package mcp_test

import (
	"context"
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
