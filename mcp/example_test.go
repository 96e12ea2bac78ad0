package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// A typed tool: the input and output schemas are inferred from the Go
// types, the arguments are validated and decoded before the handler runs,
// and the output becomes structured content and a text block.
func ExampleAddTool() {
	type AddIn struct {
		A int `json:"a" jsonschema:"the first term"`
		B int `json:"b" jsonschema:"the second term"`
	}
	type AddOut struct {
		Sum int `json:"sum"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "calculator", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in AddIn) (AddOut, error) {
			return AddOut{Sum: in.A + in.B}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// Connect a client in the same process (see Example_inMemory).
	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("input schema:", string(tool.InputSchema))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("structured:", string(res.StructuredContent))

	// Arguments that do not match the schema are a tool error the model
	// can read, not a protocol error.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":"two"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("isError:", res.IsError)
	// Output:
	// input schema: {"type":"object","properties":{"a":{"type":"integer","description":"the first term"},"b":{"type":"integer","description":"the second term"}},"required":["a","b"]}
	// structured: {"sum":5}
	// isError: true
}

// A client and a server in one process, connected by in-memory transports:
// the usual way to test a server. Messages pass as values, with no
// encoding.
func Example_inMemory() {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "server-under-test", Version: "0.1.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return in.Text, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.1.0"}, nil)
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("server:", cs.InitializeResult().ServerInfo.Name, cs.ProtocolVersion())

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("echo:", res.Content[0].(*mcp.TextContent).Text)

	// Closing the client ends the server's session too.
	cs.Close()
	ss.Wait()
	fmt.Println("closed")
	// Output:
	// server: server-under-test 2026-07-28
	// echo: hi
	// closed
}

// A client that launches a server as a subprocess and talks to it over its
// standard input and output.
func ExampleClient_Connect() {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	cmd := exec.Command("my-mcp-server", "--flag")
	cmd.Stderr = os.Stderr // show the server's log
	cs, err := c.Connect(ctx, &transport.CommandTransport{Command: cmd})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
	}
}

// A server served over Streamable HTTP, and a client that connects to it.
// The handler is an http.Handler: mount it on any mux, behind any
// middleware. It serves both protocol eras; the default client asks the
// server's era and speaks 2026-07-28, a POST per request.
func ExampleNewStreamableHTTPHandler() {
	s := mcp.NewServer(&mcp.Implementation{Name: "http-server", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "whoami"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			info := transport.HTTPRequestInfoFromContext(ctx)
			return "called over " + info.Header.Get("Content-Type"), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(s, nil))
	defer srv.Close()

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("protocol:", cs.ProtocolVersion())
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// protocol: 2026-07-28
	// called over application/json
}

// The legacy HTTP+SSE transport, for clients that predate Streamable
// HTTP. It carries the handshake era; within that era the session
// negotiates the newest revision both sides support.
func ExampleNewSSEHandler() {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy-server", Version: "1.0.0"}, nil)
	srv := httptest.NewServer(mcp.NewSSEHandler(s, nil))
	defer srv.Close()

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy-client", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &transport.SSEClientTransport{URL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("protocol:", cs.ProtocolVersion())
	// Output:
	// protocol: 2025-11-25
}

// Middleware sees every method a server receives. This one refuses calls
// to a tool that is switched off, and reports each call's outcome.
func ExampleMiddleware() {
	disabled := map[string]bool{"delete_everything": true}
	guard := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
			p, ok := req.Parameters().(*mcp.CallToolParams)
			if !ok {
				return next(ctx, req) // not tools/call
			}
			if disabled[p.Name] {
				fmt.Println(req.Method(), p.Name, "refused")
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tool is disabled: " + p.Name}
			}
			res, err := next(ctx, req)
			fmt.Println(req.Method(), p.Name, "err:", err)
			return res, err
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1.0.0"},
		&mcp.ServerOptions{Middleware: []mcp.Middleware{guard}})
	for _, name := range []string{"hello", "delete_everything"} {
		err := mcp.AddTool(s, &mcp.Tool{Name: name},
			func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
				return "done", nil
			})
		if err != nil {
			log.Fatal(err)
		}
	}

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello"}); err != nil {
		log.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_everything"})
	var werr *jsonrpc.Error
	fmt.Println("client got code:", errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams)
	// Output:
	// tools/call hello err: <nil>
	// tools/call delete_everything refused
	// client got code: true
}

// Sampling, on both sides: a tool asks the client's model for a
// completion with req.CreateMessage, and the client answers with its
// CreateMessageHandler (which a real host would pass to its model, with
// the user's consent).
func ExampleServerRequest_CreateMessage() {
	s := mcp.NewServer(&mcp.Implementation{Name: "summarizer", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "summarize"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages: []*mcp.SamplingMessage{{
					Role:    mcp.RoleUser,
					Content: mcp.Contents{&mcp.TextContent{Text: "Summarize: " + in.Text}},
				}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			return res.Content[0].(*mcp.TextContent).Text + " (by " + res.Model + ")", nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// The client declares sampling because it has a handler for it.
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content[0].(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{
				Role:    mcp.RoleAssistant,
				Content: mcp.Contents{&mcp.TextContent{Text: fmt.Sprintf("%d characters", len(prompt))}},
				Model:   "toy-model",
			}, nil
		},
	})

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "summarize", Arguments: json.RawMessage(`{"text":"a long story"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 23 characters (by toy-model)
}

// Elicitation, on both sides: a tool asks the user for a value through
// the client with req.Elicit, and the client answers with its
// ElicitationHandler (which a real host would show as a form).
func ExampleServerRequest_Elicit() {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "book_table"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{
				Message:         "How many guests?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"guests":{"type":"integer","minimum":1}},"required":["guests"]}`),
			})
			if err != nil {
				return "", err
			}
			if res.Action != mcp.ElicitActionAccept {
				return "no booking: the user chose " + string(res.Action), nil
			}
			return fmt.Sprintf("table for %v booked", res.Content["guests"]), nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// The client declares elicitation because it has a handler for it.
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"guests": 4}}, nil
		},
	})

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book_table"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// asked: How many guests?
	// table for 4 booked
}

// A resource template stands for a family of resources: any URI that
// matches it is read by its handler.
func ExampleServer_AddResourceTemplate() {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "greeting",
		URITemplate: "greeting://{name}",
		MIMEType:    "text/plain",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		// The SDK matched the URI and decoded the variables.
		name := req.TemplateVars["name"]
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI:      req.Params.URI,
			MIMEType: "text/plain",
			Text:     "Hello, " + name + "!",
		}}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for tmpl, err := range cs.ResourceTemplates(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("template:", tmpl.URITemplate)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "greeting://Ada%20Lovelace"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].Text)
	// Output:
	// template: greeting://{name}
	// Hello, Ada Lovelace!
}

// Progress: the client asks for progress by putting a progress token in
// the request (SetProgressToken), the tool reports it with
// req.ReportProgress, and the client's ProgressHandler receives it.
func ExampleServerRequest_ReportProgress() {
	s := mcp.NewServer(&mcp.Implementation{Name: "worker", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "process"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			const steps = 3
			for i := 1; i <= steps; i++ {
				// ... do one step of the work ...
				if err := req.ReportProgress(ctx, float64(i), steps, fmt.Sprintf("step %d", i)); err != nil {
					return "", err
				}
			}
			return "processed", nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// Notifications are handled in order, on a goroutine of their own, so
	// the handler hands them over through a channel.
	progress := make(chan *mcp.ProgressParams, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressHandler: func(ctx context.Context, req *mcp.ClientRequest[*mcp.ProgressParams]) {
			progress <- req.Params
		},
	})

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	params := &mcp.CallToolParams{Name: "process"}
	mcp.SetProgressToken(params, jsonrpc.StringID("job-1"))
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		p := <-progress
		fmt.Printf("%s: %v/%v %s\n", p.ProgressToken, p.Progress, p.Total, p.Message)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// job-1: 1/3 step 1
	// job-1: 2/3 step 2
	// job-1: 3/3 step 3
	// processed
}

// Cancellation: when the context of a client's call ends, the client
// sends notifications/cancelled and the server cancels the context of the
// handler, which stops its work.
func ExampleClientSession_CallTool_cancel() {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "wait"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
			close(started)
			<-ctx.Done() // a long job would check ctx between steps
			stopped <- ctx.Err()
			return "", ctx.Err()
		})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	callCtx, cancel := context.WithCancel(ctx)
	go func() {
		<-started
		cancel()
	}()
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "wait"})
	fmt.Println("client:", errors.Is(err, context.Canceled))
	fmt.Println("server handler:", <-stopped)
	// Output:
	// client: true
	// server handler: context canceled
}
