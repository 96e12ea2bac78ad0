package everything

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/mcp"
)

// The entries that test_trigger_tool_change and test_trigger_prompt_change
// add and remove.
const (
	dynamicToolName   = "test_dynamic_tool"
	dynamicPromptName = "test_dynamic_prompt"
)

// Flags keeps named on/off flags: those saying whether the dynamic tool
// and prompt are listed. Replicas of the fixture share one, so that a
// trigger called on one replica changes the lists of all.
type Flags interface {
	// Flip turns the flag over and returns its new value.
	Flip(ctx context.Context, name string) (bool, error)
	// Get returns the flag's value (false for a flag never flipped).
	Get(ctx context.Context, name string) (bool, error)
}

// MemoryFlags are the Flags of one process. The zero value is ready.
type MemoryFlags struct {
	mu sync.Mutex
	on map[string]bool
}

// Flip turns the flag over.
func (f *MemoryFlags) Flip(_ context.Context, name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.on == nil {
		f.on = map[string]bool{}
	}
	f.on[name] = !f.on[name]
	return f.on[name], nil
}

// Get returns the flag's value.
func (f *MemoryFlags) Get(_ context.Context, name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on[name], nil
}

// dynamic lists the dynamic tool and prompt as its flags say. The
// triggers flip a flag and apply it here; every request that lists or
// uses tools or prompts first applies the flags, so that a replica
// follows what a trigger did on another.
type dynamic struct {
	s     *mcp.Server
	flags Flags

	mu     sync.Mutex
	listed map[string]bool // what s lists now
}

// flip flips the named flag and applies it.
func (d *dynamic) flip(ctx context.Context, name string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	on, err := d.flags.Flip(ctx, name)
	if err != nil {
		return false, err
	}
	return on, d.apply(name, on)
}

// sync applies both flags.
func (d *dynamic) sync(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, name := range []string{dynamicToolName, dynamicPromptName} {
		on, err := d.flags.Get(ctx, name)
		if err != nil {
			return err
		}
		if err := d.apply(name, on); err != nil {
			return err
		}
	}
	return nil
}

// apply adds or removes the named entry, if it is not as on says.
// d.mu is held.
func (d *dynamic) apply(name string, on bool) error {
	if d.listed[name] == on {
		return nil
	}
	d.listed[name] = on
	switch {
	case name == dynamicToolName && on:
		return d.s.AddTool(&mcp.Tool{Name: dynamicToolName, Description: "Comes and goes.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("dynamic"), nil })
	case name == dynamicToolName:
		d.s.RemoveTools(dynamicToolName)
	case name == dynamicPromptName && on:
		return d.s.AddPrompt(&mcp.Prompt{Name: dynamicPromptName, Description: "Comes and goes."},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "dynamic"}}}}, nil
			})
	case name == dynamicPromptName:
		d.s.RemovePrompts(dynamicPromptName)
	}
	return nil
}

// middleware applies the flags before each request that lists or uses
// tools or prompts.
func (d *dynamic) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
		switch req.Method() {
		case "tools/list", "tools/call", "prompts/list", "prompts/get":
			if err := d.sync(ctx); err != nil {
				return nil, fmt.Errorf("reading the dynamic entries: %w", err)
			}
		}
		return next(ctx, req)
	}
}
