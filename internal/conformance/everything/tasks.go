package everything

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// The tools of the tasks scenarios (SEP-2663, and the task utility of
// 2025-11-25). confirm_delete, first in tools/list, is optional rather
// than required: http-header-validation calls the first tool listed
// without declaring tasks and expects an answer. The server runs tasks (ServerOptions.Tasks); each handler
// is an ordinary tool handler, which the runtime runs as a task as the
// tool's TaskSupport and the request allow.

// Schemas of the task tools' arguments.
const (
	greetSchema       = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	slowComputeSchema = `{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`
	filenameSchema    = `{"type":"object","properties":{"filename":{"type":"string"}}}`
	confirmDelete     = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`
)

// taskTool returns a tool that supports tasks as support says.
func taskTool(name, desc, schema, support string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Execution: &mcp.ToolExecution{TaskSupport: support}}
}

func addTaskTools(s *mcp.Server) error {
	add := func(t *mcp.Tool, h mcp.ToolHandler) error { return s.AddTool(t, h) }
	var errs []error
	errs = append(errs, add(&mcp.Tool{Name: "greet", Description: "Greets someone, synchronously.", InputSchema: json.RawMessage(greetSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Name string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text("Hello, " + in.Name + "!"), nil
		}))
	errs = append(errs, add(taskTool("slow_compute", "Works for the given seconds, then answers; cancellable.", slowComputeSchema, mcp.TaskOptional),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Seconds float64
				Label   string
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if err := sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Computed %s after %gs", in.Label, in.Seconds)), nil
		}))
	errs = append(errs, add(taskTool("failing_job", "Fails with a tool error after a second (a task only).", `{"type":"object"}`, mcp.TaskRequired),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, err
			}
			return nil, errors.New("the job failed: the input could not be processed")
		}))
	errs = append(errs, add(taskTool("protocol_error_job", "Crashes: its task fails with a JSON-RPC error (a task only).", `{"type":"object"}`, mcp.TaskRequired),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			panic("protocol_error_job crashes on purpose")
		}))
	errs = append(errs, add(taskTool("confirm_delete", "Asks for a confirmation, then deletes.", filenameSchema, mcp.TaskOptional),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Filename string }
			json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: json.RawMessage(confirmDelete)})
			if err != nil {
				return nil, err
			}
			if res.Action != mcp.ElicitActionAccept || res.Content["confirm"] != true {
				return text("Kept " + in.Filename), nil
			}
			return text("Deleted " + in.Filename), nil
		}))
	errs = append(errs, add(taskTool("multi_input", "Asks two questions at once.", `{"type":"object"}`, mcp.TaskOptional),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var (
				wg      sync.WaitGroup
				answers [2]string
				errs    [2]error
			)
			for i := range answers {
				wg.Go(func() {
					res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprintf("Question %d: your name?", i+1), RequestedSchema: json.RawMessage(nameSchema)})
					if err != nil {
						errs[i] = err
						return
					}
					answers[i], _ = res.Content["name"].(string)
				})
			}
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				return nil, err
			}
			return text("Answers: " + strings.Join(answers[:], ", ")), nil
		}))
	errs = append(errs, s.AddAsyncTool(taskTool("test_tool_with_task", "Asks a name (multi round-trip), then works on as a task.", `{"type":"object"}`, mcp.TaskRequired),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, err := askName(ctx, req, "user_name", "What is your name?")
			if err != nil {
				return nil, err
			}
			ctx, err = req.GoAsync(ctx)
			if err != nil {
				return nil, err
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			return text("Hello, " + name + ", from a task!"), nil
		}))
	return errors.Join(errs...)
}
