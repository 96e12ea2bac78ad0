package mcptest_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestConnectTasks: a tool that runs as a task and asks for input is
// tested like any other, in both eras, the script answering the task's
// question; the task's goroutines are the server's, which
// Options.CloseServer closes before the check, and which fail the test,
// with a hint, when the server is left open.
func TestConnectTasks(t *testing.T) {
	for _, v := range mcptest.Eras() {
		for _, closeServer := range []bool{true, false} {
			name := v + "/CloseServer"
			if !closeServer {
				name = v + "/server left open"
			}
			t.Run(name, func(t *testing.T) {
				s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1.0.0"},
					&mcp.ServerOptions{Tasks: &mcp.TaskOptions{PollInterval: 10 * time.Millisecond}})
				if err := mcp.AddTool(s, &mcp.Tool{Name: "report", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskRequired}},
					func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
						ok, err := confirm(ctx, req)
						if err != nil || !ok {
							return "no report", err
						}
						return "report", nil
					}); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ft := newFakeT(t)
				if !ft.run(func() {
					script := mcptest.NewScript(ft, mcptest.Elicit(accept))
					cs := mcptest.ConnectWait(ft, s, &mcptest.Options{
						ProtocolVersion: v,
						Script:          script,
						CloseServer:     closeServer,
						Client:          &mcp.ClientOptions{Tasks: &mcp.ClientTaskOptions{MinPollInterval: 10 * time.Millisecond}},
					}, waitFor(!closeServer))
					if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "report"})); got != "report" {
						t.Errorf("report = %q", got)
					}
				}) {
					t.Fatalf("the test body failed: %v", ft.finish())
				}
				failures := ft.finish()
				if closeServer {
					wantFailure(t, failures, "")
				} else {
					wantFailure(t, failures, "see mcptest.Options.CloseServer")
				}
			})
		}
	}
}
