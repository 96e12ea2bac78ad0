package everything

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// The tools and the prompt the 2026-07-28 scenarios call. Those that need
// input from the client ask for it as any handler does (Elicit,
// CreateMessage, ListRoots), so they serve both eras: on a handshake-era
// session each ask is a request to the client; on a 2026-07-28 request
// the asks become an InputRequiredResult, keyed as the scenarios expect
// (mcp.WithInputKey), and the client's retry completes the call.

// Schemas of the elicitations the scenarios describe.
const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	colorSchema   = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	contextSchema = `{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`
	inputSchema   = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`
)

// askName elicits the user's name under key.
func askName(ctx context.Context, req *mcp.CallToolRequest, key, message string) (string, error) {
	res, err := req.Elicit(mcp.WithInputKey(ctx, key), &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(nameSchema)})
	if err != nil {
		return "", err
	}
	name, _ := res.Content["name"].(string)
	return name, nil
}

// askCapital samples the client's model under key.
func askCapital(ctx context.Context, req *mcp.CallToolRequest, key, prompt string, maxTokens int64) (string, error) {
	res, err := req.CreateMessage(mcp.WithInputKey(ctx, key), &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: prompt}}}},
		MaxTokens: maxTokens,
	})
	if err != nil {
		return "", err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, nil
		}
	}
	return "", nil
}

// askRoots lists the client's roots under key.
func askRoots(ctx context.Context, req *mcp.CallToolRequest, key string) (string, error) {
	res, err := req.ListRoots(mcp.WithInputKey(ctx, key))
	if err != nil {
		return "", err
	}
	var uris []string
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, ", "), nil
}

func addModernTools(s *mcp.Server, d *dynamic) error {
	type none struct{}
	tools := []struct {
		name, desc string
		h          mcp.TypedToolHandler[none, *mcp.CallToolResult]
	}{
		{"test_input_required_result_elicitation", "Asks the user's name (elicitation), then greets them.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				name, err := askName(ctx, req, "user_name", "What is your name?")
				if err != nil {
					return nil, err
				}
				return text("Hello, " + name + "!"), nil
			}},
		{"test_input_required_result_sampling", "Asks the client's model a question (sampling).",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				answer, err := askCapital(ctx, req, "capital_question", "What is the capital of France?", 100)
				if err != nil {
					return nil, err
				}
				return text("Sampling response: " + answer), nil
			}},
		{"test_input_required_result_list_roots", "Lists the client's roots.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				roots, err := askRoots(ctx, req, "client_roots")
				if err != nil {
					return nil, err
				}
				return text("Client roots: " + roots), nil
			}},
		{"test_input_required_result_request_state", "Asks for a confirmation; the retry's request state is checked.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				res, err := req.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(confirmSchema)})
				if err != nil {
					return nil, err
				}
				// The server verified the request state before this run (a
				// state that fails is refused with -32602).
				verdict := "no request state"
				if req.Params.RequestState != "" {
					verdict = "state-ok"
				}
				return text(fmt.Sprintf("Confirmed (%v): %s", res.Content["ok"], verdict)), nil
			}},
		{"test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots in one round.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				// Every ask is made before any error is returned, so that a
				// 2026-07-28 client gets all three in one round.
				name, err1 := askName(ctx, req, "user_name", "What is your name?")
				greeting, err2 := askCapital(ctx, req, "greeting", "Generate a greeting", 50)
				roots, err3 := askRoots(ctx, req, "client_roots")
				if err := errors.Join(err1, err2, err3); err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("Name: %s; greeting: %s; roots: %s", name, greeting, roots)), nil
			}},
		{"test_input_required_result_multi_round", "Asks two questions, one round each.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				name, err := askName(ctx, req, "step1", "Step 1: What is your name?")
				if err != nil {
					return nil, err
				}
				res, err := req.Elicit(mcp.WithInputKey(ctx, "step2"), &mcp.ElicitParams{Message: "Step 2: What is your favorite color, " + name + "?", RequestedSchema: json.RawMessage(colorSchema)})
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("%s likes %v", name, res.Content["color"])), nil
			}},
		{"test_input_required_result_tampered_state", "Asks for a confirmation; a tampered request state is refused.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				res, err := req.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(confirmSchema)})
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("Confirmed: %v", res.Content["ok"])), nil
			}},
		{"test_input_required_result_capabilities", "Asks only for the input the client declared it can give.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				caps := req.ClientCapabilities()
				var errs []error
				var parts []string
				if caps != nil && caps.Elicitation != nil {
					res, err := req.Elicit(mcp.WithInputKey(ctx, "user_input"), &mcp.ElicitParams{Message: "Your input?", RequestedSchema: json.RawMessage(inputSchema)})
					errs = append(errs, err)
					if err == nil {
						parts = append(parts, fmt.Sprintf("input=%v", res.Content["input"]))
					}
				}
				if caps != nil && caps.Sampling != nil {
					answer, err := askCapital(ctx, req, "llm_query", "What is the capital of France?", 100)
					errs = append(errs, err)
					if err == nil {
						parts = append(parts, "sampling="+answer)
					}
				}
				if err := errors.Join(errs...); err != nil {
					return nil, err
				}
				return text("Inputs: " + strings.Join(parts, "; ")), nil
			}},
		{"test_logging_tool", "Logs two messages: sent only to a request that set a log level.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				for _, m := range []string{"Logging tool started", "Logging tool finished"} {
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevelInfo, Logger: "conformance", Data: m}); err != nil {
						return nil, err
					}
				}
				return text("Logging tool executed"), nil
			}},
		{"test_streaming_elicitation", "Asks the user for input while the call is open (elicitation).",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				name, err := askName(ctx, req, "streaming_name", "What is your name?")
				if err != nil {
					return nil, err
				}
				return text("Streaming elicitation answered: " + name), nil
			}},
		{"test_missing_capability", "Needs sampling, which the client must declare.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				answer, err := askCapital(ctx, req, "needs_sampling", "Say something", 10)
				if err != nil {
					return nil, err
				}
				return text("Sampling response: " + answer), nil
			}},
	}
	// The triggers change the tool or prompt list (a dynamic entry comes
	// and goes), so that listen streams see list_changed. The entries'
	// state is kept in d's Flags, which replicas share.
	tools = append(tools,
		struct {
			name, desc string
			h          mcp.TypedToolHandler[none, *mcp.CallToolResult]
		}{"test_trigger_tool_change", "Adds or removes the tool test_dynamic_tool.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				on, err := d.flip(ctx, dynamicToolName)
				if err != nil {
					return nil, err
				}
				if !on {
					return text("Removed " + dynamicToolName), nil
				}
				return text("Added " + dynamicToolName), nil
			}},
		struct {
			name, desc string
			h          mcp.TypedToolHandler[none, *mcp.CallToolResult]
		}{"test_trigger_prompt_change", "Adds or removes the prompt test_dynamic_prompt.",
			func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, error) {
				on, err := d.flip(ctx, dynamicPromptName)
				if err != nil {
					return nil, err
				}
				if !on {
					return text("Removed " + dynamicPromptName), nil
				}
				return text("Added " + dynamicPromptName), nil
			}})
	for _, t := range tools {
		if err := mcp.AddTool(s, &mcp.Tool{Name: t.name, Description: t.desc}, t.h); err != nil {
			return err
		}
	}
	// test_x_mcp_header mirrors its region argument into Mcp-Param-Region.
	if err := s.AddTool(&mcp.Tool{Name: "test_x_mcp_header", Description: "Runs a query in a region (its region travels in the Mcp-Param-Region header).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}},"required":["region"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Region string `json:"region"`
			}
			json.Unmarshal(req.Params.Arguments, &in)
			return text("Query run in " + in.Region), nil
		}); err != nil {
		return err
	}
	return s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for its context (elicitation)."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := req.Elicit(mcp.WithInputKey(ctx, "user_context"), &mcp.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: json.RawMessage(contextSchema)})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser,
				Content: &mcp.TextContent{Text: fmt.Sprintf("Use this context: %v", res.Content["context"])}}}}, nil
		})
}
