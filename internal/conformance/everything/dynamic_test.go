package everything

import (
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestSharedFlags runs two fixture servers on one Flags, as replicas
// share one in Redis: a trigger called on one changes the lists the
// other serves, in each era.
func TestSharedFlags(t *testing.T) {
	for _, era := range mcptest.Eras() {
		t.Run(era, func(t *testing.T) {
			flags := &MemoryFlags{}
			var cs [2]*mcp.ClientSession
			for i := range cs {
				s, err := NewServer(Options{Flags: flags})
				if err != nil {
					t.Fatal(err)
				}
				cs[i] = mcptest.Connect(t, s, &mcptest.Options{ProtocolVersion: era, CloseServer: true})
			}
			ctx := t.Context()
			listed := func(c *mcp.ClientSession) (tool, prompt bool) {
				t.Helper()
				tools, err := c.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				prompts, err := c.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				return slices.ContainsFunc(tools.Tools, func(x *mcp.Tool) bool { return x.Name == dynamicToolName }),
					slices.ContainsFunc(prompts.Prompts, func(x *mcp.Prompt) bool { return x.Name == dynamicPromptName })
			}
			trigger := func(c *mcp.ClientSession, name string) {
				t.Helper()
				if res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: []byte(`{}`)}); err != nil || res.IsError {
					t.Fatalf("%s: %+v, %v", name, res, err)
				}
			}
			for step, tt := range []struct {
				on           int // the server the triggers are called on
				tool, prompt bool
			}{
				{0, true, true},
				{1, false, false},
				{1, true, true},
			} {
				trigger(cs[tt.on], "test_trigger_tool_change")
				trigger(cs[tt.on], "test_trigger_prompt_change")
				for i, c := range cs {
					if tool, prompt := listed(c); tool != tt.tool || prompt != tt.prompt {
						t.Errorf("step %d, server %d lists the dynamic tool %v and prompt %v; want %v, %v", step, i, tool, prompt, tt.tool, tt.prompt)
					}
				}
			}
			// The tool added through server 1 is called on server 0.
			res, err := cs[0].CallTool(ctx, &mcp.CallToolParams{Name: dynamicToolName, Arguments: []byte(`{}`)})
			if err != nil || res.IsError {
				t.Fatalf("%s on the other server: %+v, %v", dynamicToolName, res, err)
			}
		})
	}
}
