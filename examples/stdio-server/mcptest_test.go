package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// server returns the example's server, failing the test if it cannot be
// made.
func server(t *testing.T) *mcp.Server {
	t.Helper()
	s, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// result returns a tool result's text, or its error.
func result(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	if res.IsError {
		b.WriteString("tool error: ")
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestTools calls the example's tools in both eras, with mcptest.
func TestTools(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{"add", `{"a":1.5,"b":2}`, `{"sum":3.5}`},
		{"echo", `{"message":"hi"}`, `{"message":"hi"}`},
		{"word_count", `{"text":"to be or not"}`, `{"words":4,"characters":12}`},
		{"countdown", `{"from":1}`, "liftoff"},
		{"countdown", `{"from":0}`, "tool error: from must be between 1 and 10, got 0"},
		{"add", `{"a":"one"}`, "tool error: "},
	}
	for _, v := range mcptest.Eras() {
		t.Run(v, func(t *testing.T) {
			cs := mcptest.Connect(t, server(t), &mcptest.Options{ProtocolVersion: v})
			for _, tc := range tests {
				got := result(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)}))
				if got != tc.want && !(strings.HasSuffix(tc.want, ": ") && strings.HasPrefix(got, tc.want)) {
					t.Errorf("%s %s = %q; want %q", tc.tool, tc.args, got, tc.want)
				}
			}
		})
	}
}

// TestSummarize tests the tool that asks the client's model, in both
// eras, with the model's answers scripted.
func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		model *mcp.CreateMessageResult
		want  string
	}{
		{"text", &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "fake", Content: mcp.Contents{&mcp.TextContent{Text: "Short."}}}, "Short."},
		{"no text", &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "fake", Content: mcp.Contents{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, "tool error: the model answered with no text"},
	}
	for _, v := range mcptest.Eras() {
		for _, tc := range tests {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				script := mcptest.NewScript(t, mcptest.CreateMessageFunc(func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					if text := req.Params.Messages[0].Content[0].(*mcp.TextContent).Text; !strings.HasSuffix(text, ": A long story.") {
						t.Errorf("the model was asked %q", text)
					}
					return tc.model, nil
				}))
				cs := mcptest.Connect(t, server(t), &mcptest.Options{ProtocolVersion: v, Script: script})
				if got := result(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "summarize", Arguments: json.RawMessage(`{"text":"A long story."}`)})); got != tc.want {
					t.Errorf("summarize = %q; want %q", got, tc.want)
				}
			})
		}
	}
}

// TestSessionTranscript records a session with the example in each era,
// from its start: the tools listed, a call that reports progress and logs,
// one that asks the client's model, a resource, a prompt and a
// completion, compared with testdata/session-<revision>.golden (go test
// -mcptest.update rewrites them).
func TestSessionTranscript(t *testing.T) {
	for _, v := range mcptest.Eras() {
		t.Run(v, func(t *testing.T) {
			var mu sync.Mutex
			var progress, logs []string
			tr := &mcptest.Transcript{}
			script := mcptest.NewScript(t, mcptest.CreateMessage(&mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "fake", Content: mcp.Contents{&mcp.TextContent{Text: "Short."}}}))
			cs := mcptest.Connect(t, server(t), &mcptest.Options{
				ProtocolVersion: v,
				Script:          script,
				Transcript:      tr,
				Client: &mcp.ClientOptions{
					ProgressHandler: func(_ context.Context, n *mcp.ProgressNotification) {
						mu.Lock()
						defer mu.Unlock()
						progress = append(progress, n.Params.Message)
					},
					LoggingMessageHandler: func(_ context.Context, n *mcp.LoggingMessageNotification) {
						mu.Lock()
						defer mu.Unlock()
						logs = append(logs, string(n.Params.Level))
					},
				},
			})
			ctx := t.Context()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			countdown := &mcp.CallToolParams{Name: "countdown", Arguments: json.RawMessage(`{"from":2}`)}
			mcp.SetProgressToken(countdown, jsonrpc.StringID("countdown-1"))
			if got := result(cs.CallTool(ctx, countdown)); got != "liftoff" {
				t.Errorf("countdown = %q", got)
			}
			if got := result(cs.CallTool(ctx, &mcp.CallToolParams{Name: "summarize", Arguments: json.RawMessage(`{"text":"A long story."}`)})); got != "Short." {
				t.Errorf("summarize = %q", got)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "greeting://Ada"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "code_review", Arguments: map[string]string{"code": "x := 1", "language": "go"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: mcp.ReferencePrompt, Name: "code_review"},
				Argument: mcp.CompleteArgument{Name: "language", Value: "j"},
			}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if strings.Join(progress, ",") != "1 left,0 left" || strings.Join(logs, ",") != "info,info" {
				t.Errorf("progress %q, logs %q", progress, logs)
			}
			mu.Unlock()
			tr.CompareGolden(t, filepath.Join("testdata", "session-"+v+".golden"))
		})
	}
}
