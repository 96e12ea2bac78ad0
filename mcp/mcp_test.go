package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// checkGoroutines fails the test if goroutines started during it are
// still running at its end (polling, bounded, for them to exit).
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	})
}

// connect joins a client and a server over the in-memory transport and
// closes both at the end of the test. A client left at the default era
// (EraAuto, which finds 2026-07-28 with our server) is pinned to the
// handshake era: the tests using connect are about that era's semantics
// (sessions, requests to the client, list_changed and log notifications
// between requests); modernPair, the modern-era tests and the
// ByEra benchmarks cover the other.
func connect(t *testing.T, s *Server, c *Client) (*ClientSession, *ServerSession) {
	t.Helper()
	if c.opts.Era == EraAuto && c.opts.ProtocolVersion == "" {
		c.opts.Era = EraHandshake
	}
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cs.Wait()
		ss.Wait()
	})
	return cs, ss
}

type addIn struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b,omitempty" jsonschema:"the second addend" schema:"default=10"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func testServer(t *testing.T, opts *ServerOptions) *Server {
	t.Helper()
	s := NewServer(&Implementation{Name: "test-server", Version: "1.0.0"}, opts)
	must(t, AddTool(s, &Tool{Name: "add", Description: "Adds."}, func(ctx context.Context, req *CallToolRequest, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}))
	must(t, AddTool(s, &Tool{Name: "fail"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "", errors.New("it broke")
	}))
	must(t, s.AddTool(&Tool{Name: "raw", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "raw:" + string(req.Params.Arguments)}}}, nil
	}))
	must(t, s.AddResource(&Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: "A"}}}, nil
	}))
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		if strings.HasSuffix(req.Params.URI, "/missing") {
			return nil, &ResourceNotFoundError{URI: req.Params.URI}
		}
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Blob: []byte{1, 2, 3}}}}, nil
	}))
	must(t, s.AddPrompt(&Prompt{Name: "greet", Arguments: []*PromptArgument{{Name: "name", Required: true}}}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "Hello " + req.Params.Arguments["name"]}}}}, nil
	}))
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestServerFeatures(t *testing.T) {
	checkGoroutines(t)
	s := testServer(t, &ServerOptions{
		CompletionHandler: func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
			return &CompleteResult{Completion: Completion{Values: []string{req.Params.Argument.Value + "1", req.Params.Argument.Value + "2"}}}, nil
		},
	})
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()

	if got := cs.ProtocolVersion(); got != LatestVersion {
		t.Errorf("ProtocolVersion = %q", got)
	}
	var names []string
	for tool, err := range cs.Tools(ctx) {
		must(t, err)
		names = append(names, tool.Name)
	}
	if fmt.Sprint(names) != "[add fail raw]" {
		t.Errorf("tools = %v", names)
	}

	tests := []struct {
		name, args, wantText string
		wantErr              bool
	}{
		{"add", `{"a":1,"b":2}`, `{"sum":3}`, false},
		{"add", `{"a":1}`, `{"sum":11}`, false}, // default applied
		{"add", `{"a":"x"}`, "invalid arguments", true},
		{"add", `{}`, "invalid arguments", true},
		{"fail", `{}`, "it broke", true},
		{"raw", `{"q":1}`, `raw:{"q":1}`, false},
	}
	for _, tt := range tests {
		res, err := cs.CallTool(ctx, &CallToolParams{Name: tt.name, Arguments: json.RawMessage(tt.args)})
		if err != nil {
			t.Fatalf("CallTool(%s, %s): %v", tt.name, tt.args, err)
		}
		text := res.Content[0].(*TextContent).Text
		if res.IsError != tt.wantErr || !strings.Contains(text, tt.wantText) {
			t.Errorf("CallTool(%s, %s) = %q isError=%v; want %q isError=%v", tt.name, tt.args, text, res.IsError, tt.wantText, tt.wantErr)
		}
	}
	if _, err := cs.CallTool(ctx, &CallToolParams{Name: "nope"}); !errors.Is(err, jsonrpc.ErrInvalidParams) {
		t.Errorf("unknown tool: err = %v", err)
	}

	r, err := cs.ReadResource(ctx, &ReadResourceParams{URI: "test://items/7"})
	must(t, err)
	if string(r.Contents[0].Blob) != "\x01\x02\x03" {
		t.Errorf("template read = %+v", r.Contents[0])
	}
	_, err = cs.ReadResource(ctx, &ReadResourceParams{URI: "test://items/missing"})
	if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeResourceNotFound}) {
		t.Errorf("missing resource: err = %v", err)
	}
	var templates []string
	for tmpl, err := range cs.ResourceTemplates(ctx) {
		must(t, err)
		templates = append(templates, tmpl.URITemplate)
	}
	if fmt.Sprint(templates) != "[test://items/{id}]" {
		t.Errorf("templates = %v", templates)
	}

	p, err := cs.GetPrompt(ctx, &GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	must(t, err)
	if got := p.Messages[0].Content.(*TextContent).Text; got != "Hello Ada" {
		t.Errorf("prompt = %q", got)
	}
	if _, err := cs.GetPrompt(ctx, &GetPromptParams{Name: "greet"}); !errors.Is(err, jsonrpc.ErrInvalidParams) {
		t.Errorf("missing argument: err = %v", err)
	}
	c, err := cs.Complete(ctx, &CompleteParams{Ref: &CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: CompleteArgument{Name: "name", Value: "A"}})
	must(t, err)
	if fmt.Sprint(c.Completion.Values) != "[A1 A2]" {
		t.Errorf("completion = %v", c.Completion.Values)
	}
}

func TestPagination(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{PageSize: 2})
	for i := range 5 {
		must(t, s.AddTool(&Tool{Name: fmt.Sprintf("t%d", i)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	}
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	first, err := cs.ListTools(ctx, nil)
	must(t, err)
	if len(first.Tools) != 2 || first.NextCursor == "" {
		t.Fatalf("first page = %d tools, cursor %q", len(first.Tools), first.NextCursor)
	}
	var all []string
	for tool, err := range cs.Tools(ctx) {
		must(t, err)
		all = append(all, tool.Name)
	}
	if fmt.Sprint(all) != "[t0 t1 t2 t3 t4]" {
		t.Errorf("all = %v", all)
	}
	if _, err := cs.ListTools(ctx, &ListToolsParams{Cursor: "!!not-a-cursor"}); !errors.Is(err, jsonrpc.ErrInvalidParams) {
		t.Errorf("bad cursor: err = %v", err)
	}
}

func TestToolNames(t *testing.T) {
	long := strings.Repeat("a", 129)
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"getUser", true}, {"DATA_EXPORT_v2", true}, {"admin.tools.list", true}, {"a-b", true},
		{"", false}, {"has space", false}, {"comma,", false}, {"ünïcode", false}, {long, false}, {long[:128], true},
	} {
		err := ValidateToolName(tt.name)
		var ne *ToolNameError
		if (err == nil) != tt.ok || (err != nil && !errors.As(err, &ne)) {
			t.Errorf("ValidateToolName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
	s := NewServer(nil, nil)
	if err := s.AddTool(&Tool{Name: "bad name"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }); err == nil {
		t.Error("AddTool accepted a bad name")
	}
}

func TestServerToClientRequests(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		msg, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 10, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}})
		if err != nil {
			return "", err
		}
		el, err := req.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","default":3}},"required":["name"]}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s|%s|%s|%v|%v", roots.Roots[0].URI, msg.Content[0].(*TextContent).Text, el.Action, el.Content["name"], el.Content["n"]), nil
	}))
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "sampled"}}}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	c.AddRoots(&Root{URI: "file:///work", Name: "work"})
	cs, _ := connect(t, s, c)
	res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "ask"})
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != "file:///work|sampled|accept|Ada|3" || res.IsError {
		t.Errorf("got %q (isError %v)", got, res.IsError)
	}
}

func TestCapabilityChecks(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "sample"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		return "", err
	}))
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	// The client declared no sampling: the server must not send the
	// request, and the tool reports the failure as a tool error.
	res, err := cs.CallTool(ctx, &CallToolParams{Name: "sample"})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "sampling") {
		t.Errorf("sampling without capability: %+v, %v", res, err)
	}
	// The server declared no prompts: the client must not send prompts/list.
	_, err = cs.ListPrompts(ctx, nil)
	var ce *CapabilityError
	if !errors.As(err, &ce) || ce.Capability != "prompts" {
		t.Errorf("prompts without capability: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	checkGoroutines(t)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "block"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return "", ctx.Err()
	}))
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &CallToolParams{Name: "block"})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client err = %v", err)
	}
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ctx err = %v", err)
	}
}

func TestProgressAndLogging(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "work"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := req.ReportProgress(ctx, float64(i), 3, "step"); err != nil {
				return "", err
			}
		}
		req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelDebug, Logger: "test", Data: "dropped below warning"})
		req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelError, Logger: "test", Data: "kept"})
		return "done", nil
	}))
	var mu sync.Mutex
	var progress []float64
	var logs []string
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ProgressHandler: func(ctx context.Context, req *ClientRequest[*ProgressParams]) {
			p := req.Params
			mu.Lock()
			progress = append(progress, p.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(ctx context.Context, req *ClientRequest[*LoggingMessageParams]) {
			p := req.Params
			mu.Lock()
			logs = append(logs, fmt.Sprint(p.Data))
			mu.Unlock()
		},
	})
	cs, _ := connect(t, s, c)
	ctx := context.Background()
	must(t, cs.SetLoggingLevel(ctx, LoggingLevelWarning))
	params := &CallToolParams{Name: "work"}
	SetProgressToken(params, jsonrpc.StringID("tok"))
	_, err := cs.CallTool(ctx, params)
	must(t, err)
	// Notifications precede the response on the wire, and the client
	// delivers them in order before... they are delivered by a worker, so
	// poll until the last one arrived.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n, l := len(progress), len(logs)
		mu.Unlock()
		if n == 3 && l == 1 || time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(progress) != "[1 2 3]" || fmt.Sprint(logs) != "[kept]" {
		t.Errorf("progress %v, logs %v", progress, logs)
	}
}

func TestHandlerPanic(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, s.AddTool(&Tool{Name: "boom"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { panic("boom") }))
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "boom"})
	if !errors.Is(err, jsonrpc.ErrInternal) {
		t.Fatalf("err = %v", err)
	}
	if err := cs.Ping(context.Background()); err != nil {
		t.Fatalf("session died after a panic: %v", err)
	}
}

func TestMiddleware(t *testing.T) {
	checkGoroutines(t)
	var mu sync.Mutex
	var seen []string
	record := func(side string) Middleware {
		return func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				mu.Lock()
				seen = append(seen, side+":"+req.Method())
				mu.Unlock()
				return next(ctx, req)
			}
		}
	}
	s := testServer(t, &ServerOptions{Middleware: []Middleware{record("srv-recv")}})
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{SendingMiddleware: []Middleware{record("cli-send")}})
	cs, _ := connect(t, s, c)
	_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1}`)})
	must(t, err)
	mu.Lock()
	got := strings.Join(seen, " ")
	mu.Unlock()
	for _, want := range []string{"cli-send:initialize", "srv-recv:initialize", "cli-send:tools/call", "srv-recv:tools/call", "cli-send:notifications/initialized"} {
		if !strings.Contains(got, want) {
			t.Errorf("middleware saw %q; missing %q", got, want)
		}
	}
}

func TestListChangedAndSubscriptions(t *testing.T) {
	checkGoroutines(t)
	s := testServer(t, nil)
	toolsChanged := make(chan struct{}, 10)
	updated := make(chan string, 10)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ToolListChangedHandler: func(context.Context, *ClientRequest[*ToolListChangedParams]) { toolsChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, req *ClientRequest[*ResourceUpdatedParams]) { updated <- req.Params.URI },
	})
	cs, _ := connect(t, s, c)
	ctx := context.Background()
	s.RemoveTools("raw")
	<-toolsChanged
	must(t, cs.Subscribe(ctx, &SubscribeParams{URI: "test://a"}))
	must(t, s.ResourceUpdated(ctx, &ResourceUpdatedParams{URI: "test://other"}))
	must(t, s.ResourceUpdated(ctx, &ResourceUpdatedParams{URI: "test://a"}))
	if got := <-updated; got != "test://a" {
		t.Errorf("updated %q", got)
	}
}

func TestURLElicitationRequired(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, s.AddTool(&Tool{Name: "auth"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return nil, &URLElicitationRequiredError{Elicitations: []*ElicitParams{{Mode: ElicitModeURL, Message: "log in", URL: "https://example.com/login", ElicitationID: "e1"}}}
	}))
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "auth"})
	var ue *URLElicitationRequiredError
	if !errors.As(err, &ue) || len(ue.Elicitations) != 1 || ue.Elicitations[0].ElicitationID != "e1" {
		t.Fatalf("err = %v", err)
	}
}

func TestPeerDisconnectMidCall(t *testing.T) {
	checkGoroutines(t)
	started := make(chan struct{})
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "block"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}))
	cs, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "block"})
		errc <- err
	}()
	<-started
	ss.Close() // the server goes away mid-call
	// The call ends either way the server goes: closed under it, or
	// answered first with the cancellation of its handler (the server
	// answers a call it cancels while its connection still writes).
	var rpcErr *jsonrpc.Error
	if err := <-errc; !errors.Is(err, ErrSessionClosed) && !(errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeRequestCancelled) {
		t.Fatalf("err = %v, want ErrSessionClosed or a cancellation", err)
	}
	if err := cs.Wait(); err == nil {
		t.Error("client session still open")
	}
}

// TestHandlerThatNeverReturns runs on fake time (testing/synctest): a call
// to a handler that ignores its context ends at the client's
// RequestTimeout, and closing does not wait for the handler.
func TestHandlerThatNeverReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
		must(t, s.AddTool(&Tool{Name: "stuck"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
			<-release // ignores its context
			return nil, nil
		}))
		const timeout = time.Minute
		c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{RequestTimeout: timeout})
		cs, ss := connect(t, s, c)
		start := time.Now()
		_, err := cs.CallTool(context.Background(), &CallToolParams{Name: "stuck"})
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if d := time.Since(start); d != timeout {
			t.Fatalf("the call ended after %v; want RequestTimeout, %v", d, timeout)
		}
		// Other calls still work, and closing does not wait for the stuck
		// handler: no fake time passes.
		must(t, cs.Ping(context.Background()))
		start = time.Now()
		cs.Close()
		ss.Close()
		if d := time.Since(start); d != 0 {
			t.Fatalf("Close waited %v for a stuck handler", d)
		}
	})
}

func TestResetTimeoutOnProgress(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	step := make(chan struct{})
	must(t, AddTool(s, &Tool{Name: "slow"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		for i := range 3 {
			<-step
			if err := req.ReportProgress(ctx, float64(i+1), 3, ""); err != nil {
				return "", err
			}
		}
		return "done", nil
	}))
	progressed := make(chan struct{}, 3)
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		RequestTimeout:         2 * time.Second,
		ResetTimeoutOnProgress: true,
		ProgressHandler: func(context.Context, *ClientRequest[*ProgressParams]) {
			progressed <- struct{}{}
		},
	})
	cs, _ := connect(t, s, c)
	errc := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "slow"})
		if err == nil && res.Content[0].(*TextContent).Text != "done" {
			err = fmt.Errorf("result %v", res.Content[0])
		}
		errc <- err
	}()
	for range 3 {
		step <- struct{}{}
		<-progressed // the client saw progress: its token was sent and routed
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
