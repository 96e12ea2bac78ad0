// Package features builds the server of the stdio-server example: typed
// tools with structured output, a tool that asks the client's model
// (sampling), a tool that becomes a task, text and binary resources, a
// resource template, prompts with arguments, completion, logging and
// progress. examples/stdio-server serves it over stdio or HTTP from one
// process; redisstore/cmd/stdio-server serves it from replicas sharing
// their state in Redis.
package features

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// AddInput is the input of the add tool.
type AddInput struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

// AddOutput is the structured output of the add tool.
type AddOutput struct {
	Sum float64 `json:"sum"`
}

// EchoInput is the input of the echo tool.
type EchoInput struct {
	Message string `json:"message" jsonschema:"the text to send back"`
}

// EchoOutput is the structured output of the echo tool.
type EchoOutput struct {
	Message string `json:"message"`
}

// WordCountInput is the input of the word_count tool.
type WordCountInput struct {
	Text string `json:"text" jsonschema:"the text to count words in"`
}

// WordCountOutput is the structured output of the word_count tool.
type WordCountOutput struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
}

// SummarizeInput is the input of the summarize tool.
type SummarizeInput struct {
	Text string `json:"text" jsonschema:"the text to summarize"`
}

// ReportInput is the input of the report tool.
type ReportInput struct {
	Topic   string `json:"topic" jsonschema:"what the report is about"`
	Steps   int    `json:"steps" jsonschema:"how many sections (1-20)"`
	PauseMs int    `json:"pauseMs,omitempty" jsonschema:"how long each section takes, in milliseconds (default 500, at most 5000)"`
}

// Pause is how long each section of the report takes.
func (in ReportInput) Pause() time.Duration {
	if in.PauseMs <= 0 {
		return 500 * time.Millisecond
	}
	return time.Duration(min(in.PauseMs, 5000)) * time.Millisecond
}

// CountdownInput is the input of the countdown tool.
type CountdownInput struct {
	From int `json:"from" jsonschema:"where to start counting down (1-10)"`
}

var languages = []string{"c", "go", "java", "javascript", "python", "rust", "typescript", "zig"}

// NewServer returns the example server with its tools, resources,
// prompts and completion. configure, if not nil, is called with the
// server's options before the server is made, to add what replicas share
// (redisstore/cmd/stdio-server sets keys, a bus, a state claimer and a
// task store); the example's own settings are in place.
func NewServer(configure func(*mcp.ServerOptions)) (*mcp.Server, error) {
	opts := &mcp.ServerOptions{
		Instructions:      "Try the add, echo, word_count, countdown and report tools.",
		CompletionHandler: complete,
		// Tools marked TaskOptional or TaskRequired may run as tasks: a
		// call still running after SyncWindow is answered with a task,
		// which the client polls.
		Tasks:  &mcp.TaskOptions{SyncWindow: time.Second},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if configure != nil {
		configure(opts)
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:        "mcpkit-example",
		Title:       "mcpkit example server",
		Version:     "1.0.0",
		Description: "Shows tools, resources, prompts, completion, logging and progress.",
	}, opts)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in AddInput) (AddOutput, error) {
			return AddOutput{Sum: in.A + in.B}, nil
		}); err != nil {
		return nil, err
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Sends the message back."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoInput) (EchoOutput, error) {
			return EchoOutput{Message: in.Message}, nil
		}); err != nil {
		return nil, err
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "word_count", Description: "Counts the words and characters of a text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in WordCountInput) (WordCountOutput, error) {
			return WordCountOutput{Words: len(strings.Fields(in.Text)), Characters: len([]rune(in.Text))}, nil
		}); err != nil {
		return nil, err
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "countdown", Description: "Counts down, reporting progress and logging each step."},
		func(ctx context.Context, req *mcp.CallToolRequest, in CountdownInput) (string, error) {
			if in.From < 1 || in.From > 10 {
				return "", fmt.Errorf("from must be between 1 and 10, got %d", in.From)
			}
			log := slog.New(mcp.NewLoggingHandler(req.Session, &mcp.LoggingHandlerOptions{Name: "countdown"}))
			for i := in.From; i > 0; i-- {
				log.InfoContext(ctx, "tick", "remaining", i) // ctx: the message travels with the request
				if err := req.ReportProgress(ctx, float64(in.From-i+1), float64(in.From), fmt.Sprintf("%d left", i-1)); err != nil {
					return "", err
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
			return "liftoff", nil
		}); err != nil {
		return nil, err
	}

	// report checks its input while the client waits, then becomes a task
	// (for a client that declared tasks) where it calls GoAsync.
	if err := mcp.AddAsyncTool(s, &mcp.Tool{Name: "report", Description: "Builds a report on a topic, slowly: a task where the client supports tasks.",
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}},
		func(ctx context.Context, req *mcp.CallToolRequest, in ReportInput) (string, error) {
			if in.Topic == "" || in.Steps < 1 || in.Steps > 20 {
				return "", fmt.Errorf("a topic and 1 to 20 steps, please (got %q, %d)", in.Topic, in.Steps)
			}
			ctx, err := req.GoAsync(ctx)
			if err != nil {
				return "", err
			}
			for i := range in.Steps {
				if err := req.ReportProgress(ctx, float64(i+1), float64(in.Steps), fmt.Sprintf("section %d of %d", i+1, in.Steps)); err != nil {
					return "", err
				}
				select {
				case <-ctx.Done(): // cancelled, or the server closes
					return "", ctx.Err()
				case <-time.After(in.Pause()):
				}
			}
			return fmt.Sprintf("a report on %s in %d sections", in.Topic, in.Steps), nil
		}); err != nil {
		return nil, err
	}

	if err := mcp.AddTool(s, &mcp.Tool{Name: "summarize", Description: "Summarizes a text with the client's model (sampling); needs a client that offers sampling."},
		func(ctx context.Context, req *mcp.CallToolRequest, in SummarizeInput) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "Summarize in one sentence: " + in.Text}}}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					return t.Text, nil
				}
			}
			return "", fmt.Errorf("the model answered with no text")
		}); err != nil {
		return nil, err
	}

	if err := s.AddResource(&mcp.Resource{URI: "example://readme", Name: "readme", Title: "Read me", MIMEType: "text/markdown"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# mcpkit example\nThis server is written with mcpkit.\n"}}}, nil
		}); err != nil {
		return nil, err
	}
	if err := s.AddResource(&mcp.Resource{URI: "example://logo.png", Name: "logo", MIMEType: "image/png"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			png := []byte("\x89PNG\r\n\x1a\n") // the PNG signature stands in for an image
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: png}}}, nil
		}); err != nil {
		return nil, err
	}
	if err := s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "greeting://{name}", Name: "greeting", Description: "A greeting for anyone.", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			name := req.TemplateVars["name"] // percent-decoded
			if name == "" {
				return nil, &mcp.ResourceNotFoundError{URI: req.Params.URI}
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "Hello, " + name + "!"}}}, nil
		}); err != nil {
		return nil, err
	}

	if err := s.AddPrompt(&mcp.Prompt{
		Name:        "code_review",
		Description: "Asks for a review of a piece of code.",
		Arguments: []*mcp.PromptArgument{
			{Name: "code", Description: "The code to review", Required: true},
			{Name: "language", Description: "Its programming language"},
		},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		lang := req.Params.Arguments["language"]
		if lang == "" {
			lang = "unknown language"
		}
		return &mcp.GetPromptResult{
			Description: "Code review",
			Messages: []*mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: fmt.Sprintf("Please review this %s code:\n\n%s", lang, req.Params.Arguments["code"])}},
				{Role: mcp.RoleUser, Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "example://readme", MIMEType: "text/markdown", Text: "Reviews should be kind."}}},
			},
		}, nil
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// complete offers languages for the prompt and names for the template;
// a name is suggested in the language given earlier, if any.
func complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var pool []string
	switch {
	case p.Ref.Type == mcp.ReferencePrompt && p.Argument.Name == "language":
		pool = languages
	case p.Ref.Type == mcp.ReferenceResource && p.Argument.Name == "name":
		pool = []string{"Ada", "Alan", "Barbara", "Grace", "Ken", "Rob"}
		if p.Context != nil && p.Context.Arguments["language"] == "go" {
			pool = []string{"Ken", "Rob", "Robert"}
		}
	}
	var out []string
	for _, v := range pool {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return &mcp.CompleteResult{Completion: mcp.Completion{Values: out, Total: len(out)}}, nil
}
