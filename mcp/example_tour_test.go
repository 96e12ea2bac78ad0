package mcp_test

// The feature tour of README.md: each example's body is a snippet of the
// README, word for word (examples/readme_test.go checks it), so that a
// snippet cannot stop compiling or printing what it says without a test
// failing. Each runs a server and a client in one process, joined by
// connect.

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// connect joins the client c to the server s over the in-memory transport,
// as a test does, and returns the client's session; closing it ends the
// server's session too.
func connect(c *mcp.Client, s *mcp.Server) *mcp.ClientSession {
	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

// A typed tool: the schemas come from the Go types, the arguments are
// validated and decoded before the handler runs, and CallToolAs decodes
// the structured result on the client.
func Example_tools() {
	type WeatherIn struct {
		City string `json:"city" jsonschema:"the city to report on"`
	}
	type WeatherOut struct {
		TempC float64 `json:"tempC"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Reports the weather in a city."},
		func(ctx context.Context, req *mcp.CallToolRequest, in WeatherIn) (WeatherOut, error) {
			return WeatherOut{TempC: 21.5}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	cs := connect(mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), s)
	defer cs.Close()
	out, _, err := mcp.CallToolAs[WeatherOut](ctx, cs, "weather", WeatherIn{City: "Lisbon"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.TempC)
	// Output: 21.5
}

// An untyped tool: the schema is raw JSON, the handler reads raw
// arguments and builds the result itself.
func Example_toolsUntyped() {
	s := mcp.NewServer(&mcp.Implementation{Name: "shout", Version: "1.0.0"}, nil)
	err := s.AddTool(&mcp.Tool{
		Name:        "shout",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err // a tool error (isError) the model can read
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	cs := connect(mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), s)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: HI
}

// Resources: data at a fixed URI, and a resource template (RFC 6570) for
// a family of them, whose handler gets the template's variables.
func Example_resources() {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	err := s.AddResource(&mcp.Resource{URI: "notes://index", Name: "index", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "todo, ideas"}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	err = s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "note", URITemplate: "notes://note/{name}"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			name := req.TemplateVars["name"] // percent-decoded
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "the note " + name}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	cs := connect(mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), s)
	defer cs.Close()
	for _, uri := range []string{"notes://index", "notes://note/shopping%20list"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Contents[0].Text)
	}
	// Output:
	// todo, ideas
	// the note shopping list
}

// A prompt: a template with arguments that the server renders into
// messages, and completion of its arguments as the user types them.
func Example_prompts() {
	s := mcp.NewServer(&mcp.Implementation{Name: "reviewer", Version: "1.0.0"}, &mcp.ServerOptions{
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			// req.Params.Ref names the prompt (or resource template), Argument the argument.
			return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{req.Params.Argument.Value + "askell"}}}, nil
		},
	})
	err := s.AddPrompt(&mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "language", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Review this " + req.Params.Arguments["language"] + " code."}},
			}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	cs := connect(mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), s)
	defer cs.Close()
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: mcp.ReferencePrompt, Name: "review"},
		Argument: mcp.CompleteArgument{Name: "language", Value: "H"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": comp.Completion.Values[0]}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Messages[0].Content.(*mcp.TextContent).Text)
	// Output: Review this Haskell code.
}

// Logging and progress, on both sides: a handler logs to its client
// through log/slog and reports progress; the client's handlers receive
// both before the call returns.
func Example_logging() {
	type Report struct {
		Files int `json:"files"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "indexer", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "index"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (Report, error) {
			logger := slog.New(mcp.NewLoggingHandler(req.Session, &mcp.LoggingHandlerOptions{Name: "indexer"}))
			for i := 1; i <= 2; i++ {
				logger.InfoContext(ctx, "indexing", "file", i) // pass ctx: the message goes with the call
				if err := req.ReportProgress(ctx, float64(i), 2, "indexed"); err != nil {
					return Report{}, err
				}
			}
			return Report{Files: 2}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageNotification) {
			fmt.Println(req.Params.Level, req.Params.Logger, req.Params.Data)
		},
	})
	cs := connect(c, s)
	defer cs.Close()
	out, _, err := mcp.CallToolAs[Report](ctx, cs, "index", nil, &mcp.CallToolOptions{
		Progress: func(ctx context.Context, p *mcp.ProgressParams) {
			fmt.Printf("%v/%v %s\n", p.Progress, p.Total, p.Message)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Files, "files")
	// Output:
	// info indexer map[file:1 message:indexing]
	// 1/2 indexed
	// info indexer map[file:2 message:indexing]
	// 2/2 indexed
	// 2 files
}

// Elicitation: a tool asks the user for a typed value, and the client's
// ElicitationHandler (a form, in a real host) answers. On 2026-07-28 the
// handler runs again for the retry that carries the answer, so the work
// before the ask that must happen once goes in Once.
func Example_elicitation() {
	type Confirm struct {
		OK bool `json:"ok" jsonschema:"go ahead?"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "order"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			id, err := mcp.Once(ctx, "reserve", func(ctx context.Context) (string, error) {
				return "R-1", nil // reserve the item: once, whatever the rounds
			})
			if err != nil {
				return "", err
			}
			answer, action, err := mcp.ElicitAs[Confirm](ctx, req, "Confirm order "+id+"?")
			if err != nil {
				return "", err // on 2026-07-28 mcp.ErrInputRequired: return it
			}
			if action != mcp.ElicitActionAccept || !answer.OK {
				return "cancelled " + id, nil
			}
			return "confirmed " + id, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}, nil
		},
	})
	cs := connect(c, s)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "order"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// asked: Confirm order R-1?
	// confirmed R-1
}

// Sampling and roots: a tool asks the client for its roots and for a
// completion by its model; the client answers from its roots and its
// CreateMessageHandler (which a real host passes to its model, with the
// user's consent).
func Example_sampling() {
	s := mcp.NewServer(&mcp.Implementation{Name: "poet", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "haiku"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			roots, err := req.ListRoots(ctx)
			if err != nil {
				return "", err // on 2026-07-28 mcp.ErrInputRequired: return it
			}
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{
				{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "A haiku about " + roots.Roots[0].Name}}},
			}})
			if err != nil {
				return "", err
			}
			return res.Content[0].(*mcp.TextContent).Text, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content[0].(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "toy", Content: mcp.Contents{&mcp.TextContent{Text: prompt + "..."}}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///home/ada/garden", Name: "garden"})
	cs := connect(c, s)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "haiku"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: A haiku about garden...
}

// Change notifications: the client's handlers receive the server's
// list_changed and resources/updated notifications once it listens for
// them (Listen works in both eras).
func Example_notifications() {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	err := s.AddResource(&mcp.Resource{URI: "notes://todo", Name: "todo"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "buy milk"}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	events := make(chan string, 2)
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedNotification) {
			events <- "tools changed"
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotification) {
			events <- "updated " + req.Params.URI
		},
	})
	cs := connect(c, s)
	defer cs.Close()
	sub, err := cs.Listen(ctx, &mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"notes://todo"}})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()

	err = s.AddTool(&mcp.Tool{Name: "new"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-events)
	if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedParams{URI: "notes://todo"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-events)
	// Output:
	// tools changed
	// updated notes://todo
}

// Example_tasks: a tool that may outlast a proxy's timeout runs as a
// task. The server answers within SyncWindow when it can, and otherwise
// with a task that the client polls; CallTool does all of that itself,
// StartTool hands over the task.
func Example_tasks() {
	s := mcp.NewServer(&mcp.Implementation{Name: "reports", Version: "1.0.0"}, &mcp.ServerOptions{
		Tasks: &mcp.TaskOptions{SyncWindow: 10 * time.Millisecond, PollInterval: 10 * time.Millisecond},
	})
	ready := make(chan struct{})
	type Report struct {
		Quarter string `json:"quarter"`
	}
	err := mcp.AddTool(s, &mcp.Tool{Name: "report", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}},
		func(ctx context.Context, req *mcp.CallToolRequest, in Report) (string, error) {
			select {
			case <-ready: // the data is slow to come
			case <-ctx.Done(): // the task was cancelled
				return "", ctx.Err()
			}
			return "revenue for " + in.Quarter + ": 42", nil
		})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		Tasks: &mcp.ClientTaskOptions{MinPollInterval: 10 * time.Millisecond},
	})
	cs := connect(c, s)
	defer cs.Close()
	_, task, err := cs.StartTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: json.RawMessage(`{"quarter":"Q3"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a task:", task != nil)
	close(ready)
	res, err := task.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// a task: true
	// revenue for Q3: 42
}

// A host with two servers: one Client, a session per server. The
// client's handlers serve every session; req.Session tells which.
func Example_host() {
	newServer := func(name string) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
		err := mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevelInfo, Data: "said hello"})
			return "hello from " + name, nil
		})
		if err != nil {
			log.Fatal(err)
		}
		return s
	}

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageNotification) {
			fmt.Println(req.Session.Name(), "logged:", req.Params.Data)
		},
	})
	sessions := map[string]*mcp.ClientSession{}
	for _, name := range []string{"notes", "weather"} {
		ct, st := transport.NewInMemoryTransports() // or a CommandTransport, a StreamableClientTransport...
		if _, err := newServer(name).Connect(ctx, st); err != nil {
			log.Fatal(err)
		}
		cs, err := c.Connect(ctx, ct, &mcp.ConnectOptions{Name: name})
		if err != nil {
			log.Fatal(err)
		}
		defer cs.Close()
		sessions[name] = cs
	}
	for _, name := range []string{"notes", "weather"} {
		out, _, err := mcp.CallToolAs[string](ctx, sessions[name], "hello", nil, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(out)
	}
	// Output:
	// notes logged: said hello
	// hello from notes
	// weather logged: said hello
	// hello from weather
}

// Middleware wraps every method a server receives (or, as
// SendingMiddleware, sends), typed: here it reports each tool call and
// its outcome. Clients take middleware the same way.
func Example_middleware() {
	logCalls := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, req)
			if p, ok := req.Parameters().(*mcp.CallToolParams); ok {
				fmt.Println(req.Method(), p.Name, "err:", err)
			}
			return res, err
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "audited", Version: "1.0.0"},
		&mcp.ServerOptions{Middleware: []mcp.Middleware{logCalls}})
	err := mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
		return "pong", nil
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	cs := connect(mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), s)
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err != nil {
		log.Fatal(err)
	}
	// Output: tools/call ping err: <nil>
}
