package everything

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// fixture is a client session with the fixture server, in memory, and
// what the client received besides responses.
type fixture struct {
	cs *mcp.ClientSession

	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	progress []*mcp.ProgressParams
	elicits  []*mcp.ElicitParams
	samples  []*mcp.CreateMessageParams
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{}
	c := mcp.NewClient(&mcp.Implementation{Name: "fixture-test", Version: "0"}, &mcp.ClientOptions{
		Era: mcp.EraHandshake, // logging/setLevel, resources/subscribe and requests to the client between calls
		LoggingMessageHandler: func(_ context.Context, req *mcp.ClientRequest[*mcp.LoggingMessageParams]) {
			p := req.Params
			f.mu.Lock()
			f.logs = append(f.logs, p)
			f.mu.Unlock()
		},
		ProgressHandler: func(_ context.Context, req *mcp.ClientRequest[*mcp.ProgressParams]) {
			p := req.Params
			f.mu.Lock()
			f.progress = append(f.progress, p)
			f.mu.Unlock()
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			f.mu.Lock()
			f.samples = append(f.samples, req.Params)
			f.mu.Unlock()
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test-model", StopReason: "endTurn",
				Content: mcp.Contents{&mcp.TextContent{Text: "This is a test response from the client"}}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			f.mu.Lock()
			f.elicits = append(f.elicits, req.Params)
			f.mu.Unlock()
			res := &mcp.ElicitResult{Action: mcp.ElicitActionAccept}
			if strings.Contains(string(req.Params.RequestedSchema), `"username"`) {
				res.Content = map[string]any{"username": "testuser", "email": "test@example.com"}
			}
			return res, nil
		},
	})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	f.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return f
}

func (f *fixture) call(t *testing.T, name, args string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	res, err := f.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func firstText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	t.Fatalf("no text content in %+v", res.Content)
	return ""
}

func TestToolsList(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	want := map[string]bool{}
	for _, n := range []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress", "test_error_handling",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"json_schema_2020_12_tool", "test_reconnection"} {
		want[n] = true
	}
	for tool, err := range f.cs.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Description == "" || len(tool.InputSchema) == 0 {
			t.Errorf("tool %s lacks a description or an input schema", tool.Name)
		}
		if len(tool.Name) > 64 {
			t.Errorf("tool name %s is longer than the suite allows", tool.Name)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			var got, exp any
			if err := jsonv2.Unmarshal(tool.InputSchema, &got); err != nil {
				t.Fatal(err)
			}
			if err := jsonv2.Unmarshal([]byte(json202012Schema), &exp); err != nil {
				t.Fatal(err)
			}
			g, _ := jsonv2.Marshal(got, jsonv2.Deterministic(true))
			e, _ := jsonv2.Marshal(exp, jsonv2.Deterministic(true))
			if string(g) != string(e) {
				t.Errorf("json_schema_2020_12_tool schema changed on the way:\n got %s\nwant %s", g, e)
			}
		}
		delete(want, tool.Name)
	}
	if len(want) > 0 {
		t.Errorf("tools missing: %v", want)
	}
}

func TestContentTools(t *testing.T) {
	f := newFixture(t)
	if got := firstText(t, f.call(t, "test_simple_text", "")); got != simpleText {
		t.Errorf("test_simple_text: %q", got)
	}
	img, ok := f.call(t, "test_image_content", "{}").Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG\r\n\x1a\n") {
		t.Errorf("test_image_content: %+v", img)
	}
	audio, ok := f.call(t, "test_audio_content", "{}").Content[0].(*mcp.AudioContent)
	if !ok || audio.MIMEType != "audio/wav" || !strings.HasPrefix(string(audio.Data), "RIFF") || len(audio.Data) != 44+80 {
		t.Errorf("test_audio_content: %+v", audio)
	}
	er, ok := f.call(t, "test_embedded_resource", "{}").Content[0].(*mcp.EmbeddedResource)
	if !ok || er.Resource.URI != "test://embedded-resource" || er.Resource.MIMEType != "text/plain" || er.Resource.Text == "" {
		t.Errorf("test_embedded_resource: %+v", er)
	}
	mixed := f.call(t, "test_multiple_content_types", "{}").Content
	kinds := ""
	for _, c := range mixed {
		switch c.(type) {
		case *mcp.TextContent:
			kinds += "t"
		case *mcp.ImageContent:
			kinds += "i"
		case *mcp.EmbeddedResource:
			kinds += "r"
		}
	}
	if kinds != "tir" {
		t.Errorf("test_multiple_content_types: kinds %q", kinds)
	}
	res := f.call(t, "test_error_handling", "{}")
	if !res.IsError || firstText(t, res) != errorText {
		t.Errorf("test_error_handling: %+v", res)
	}
	if got := firstText(t, f.call(t, "json_schema_2020_12_tool", `{"name":"x","email":"a@b"}`)); !strings.Contains(got, `"email":"a@b"`) {
		t.Errorf("json_schema_2020_12_tool: %q", got)
	}
	if got := firstText(t, f.call(t, "test_reconnection", "{}")); got != reconnectionText {
		t.Errorf("test_reconnection over stdio: %q", got)
	}
}

func TestLoggingAndProgress(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.cs.SetLoggingLevel(ctx, mcp.LoggingLevelDebug); err != nil {
		t.Fatal(err)
	}
	f.call(t, "test_tool_with_logging", "{}")
	p := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: json.RawMessage(`{}`)}
	mcp.SetProgressToken(p, jsonrpc.StringID("progress-test-1"))
	if _, err := f.cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	// Notifications are delivered in order, before the response that
	// follows them, but handled on another goroutine: wait a little.
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		nl, np := len(f.logs), len(f.progress)
		f.mu.Unlock()
		if nl >= 3 && np >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.logs) != 3 {
		t.Fatalf("got %d log messages, want 3", len(f.logs))
	}
	for _, l := range f.logs {
		if l.Level != mcp.LoggingLevelInfo {
			t.Errorf("log level %s, want info", l.Level)
		}
	}
	if len(f.progress) != 3 {
		t.Fatalf("got %d progress notifications, want 3", len(f.progress))
	}
	for i, want := range []float64{0, 50, 100} {
		if g := f.progress[i]; g.Progress != want || g.Total != 100 || g.ProgressToken.Raw() != `"progress-test-1"` {
			t.Errorf("progress %d: %+v (token %s)", i, g, g.ProgressToken.Raw())
		}
	}
}

func TestSamplingAndElicitation(t *testing.T) {
	f := newFixture(t)
	if got := firstText(t, f.call(t, "test_sampling", `{"prompt":"Test prompt for sampling"}`)); got != "LLM response: This is a test response from the client" {
		t.Errorf("test_sampling: %q", got)
	}
	if got := firstText(t, f.call(t, "test_elicitation", `{"message":"Please provide your information"}`)); got != `User response: action=accept, content={"email":"test@example.com","username":"testuser"}` {
		t.Errorf("test_elicitation: %q", got)
	}
	// The client applies the defaults of the SEP-1034 schema to the empty
	// content it accepts, so the answer shows them.
	got := firstText(t, f.call(t, "test_elicitation_sep1034_defaults", "{}"))
	for _, want := range []string{`"name":"John Doe"`, `"age":30`, `"score":95.5`, `"status":"active"`, `"verified":true`} {
		if !strings.Contains(got, want) {
			t.Errorf("test_elicitation_sep1034_defaults: %q lacks %s", got, want)
		}
	}
	if got := firstText(t, f.call(t, "test_elicitation_sep1330_enums", "{}")); !strings.HasPrefix(got, "Elicitation completed: action=accept") {
		t.Errorf("test_elicitation_sep1330_enums: %q", got)
	}
	// A missing required argument is a tool error, not a request.
	if res := f.call(t, "test_sampling", "{}"); !res.IsError {
		t.Errorf("test_sampling without a prompt: %+v", res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.samples) != 1 || f.samples[0].MaxTokens != 100 {
		t.Errorf("sampling requests: %+v", f.samples)
	}
	if len(f.elicits) != 3 {
		t.Fatalf("got %d elicitation requests, want 3", len(f.elicits))
	}
	var enums struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := jsonv2.Unmarshal(f.elicits[2].RequestedSchema, &enums); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"} {
		if enums.Properties[k] == nil {
			t.Errorf("SEP-1330 schema lacks %s", k)
		}
	}
}

func TestResources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		res, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, res.Contents)
		}
		return res.Contents[0]
	}
	if c := read("test://static-text"); c.Text != staticText || c.MIMEType != "text/plain" {
		t.Errorf("static-text: %+v", c)
	}
	if c := read("test://static-binary"); len(c.Blob) == 0 || c.MIMEType != "image/png" {
		t.Errorf("static-binary: %+v", c)
	}
	if c := read("test://template/123/data"); c.Text != `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` || c.MIMEType != "application/json" {
		t.Errorf("template: %+v", c)
	}
	if _, err := f.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nonexistent"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}
	n, skillFiles := 0, 0
	for r, err := range f.cs.Resources(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(r.URI, "skill://") {
			skillFiles++
			continue
		}
		n++
	}
	if n != 3 || skillFiles != 4 {
		t.Errorf("listed %d resources and %d skill files, want 3 and 4", n, skillFiles)
	}
	if err := f.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: watchedURI}); err != nil {
		t.Fatal(err)
	}
	if err := f.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: watchedURI}); err != nil {
		t.Fatal(err)
	}
}

// TestSkills loads every skill the fixture serves, and reads their
// other files, verified.
func TestSkills(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var uris []string
	for e, err := range f.cs.Skills(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, e.URI)
		l, err := f.cs.LoadSkill(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range e.Resources.Files {
			if rel, _ := strings.CutPrefix(file.URI, strings.TrimSuffix(e.URI, "SKILL.md")); file.URI != e.URI {
				if _, err := l.ReadFile(ctx, rel); err != nil {
					t.Error(err)
				}
			}
		}
	}
	if want := "skill://acme/data/csv-tools/SKILL.md skill://pdf-processing/SKILL.md"; strings.Join(uris, " ") != want {
		t.Errorf("skills %v, want %s", uris, want)
	}
	dir, err := f.cs.ReadDirectory(ctx, &mcp.ReadDirectoryParams{URI: "skill://pdf-processing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(dir.Resources) != 2 || dir.Resources[1].MIMEType != mcp.MIMETypeDirectory {
		t.Errorf("skill://pdf-processing holds %+v", dir.Resources)
	}
}

func TestPromptsAndCompletion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	get := func(name string, args map[string]string) *mcp.GetPromptResult {
		t.Helper()
		res, err := f.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if m := get("test_simple_prompt", nil).Messages; len(m) != 1 || m[0].Content.(*mcp.TextContent).Text != simplePromptText {
		t.Errorf("test_simple_prompt: %+v", m)
	}
	m := get(promptWithArgs, map[string]string{"arg1": "testValue1", "arg2": "testValue2"}).Messages
	if txt := m[0].Content.(*mcp.TextContent).Text; !strings.Contains(txt, "testValue1") || !strings.Contains(txt, "testValue2") {
		t.Errorf("%s: %q", promptWithArgs, txt)
	}
	m = get("test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"}).Messages
	if er, ok := m[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != "test://example-resource" {
		t.Errorf("test_prompt_with_embedded_resource: %+v", m[0].Content)
	}
	m = get("test_prompt_with_image", nil).Messages
	if img, ok := m[0].Content.(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("test_prompt_with_image: %+v", m[0].Content)
	}
	for prompt, err := range f.cs.Prompts(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if prompt.Description == "" {
			t.Errorf("prompt %s has no description", prompt.Name)
		}
	}
	res, err := f.cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: promptWithArgs},
		Argument: mcp.CompleteArgument{Name: "arg1", Value: "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Completion.Values) == 0 {
		t.Error("no completions for arg1")
	}
	res, err = f.cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: templateURI},
		Argument: mcp.CompleteArgument{Name: "id", Value: "12"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Completion.Values) != 1 || res.Completion.Values[0] != "123" {
		t.Errorf("template id completion: %v", res.Completion.Values)
	}
}

// TestHTTPReconnection serves the fixture over Streamable HTTP, as the
// suite reaches it, and calls test_reconnection, whose response stream the
// server closes mid-call: the client must resume it to get the result.
func TestHTTPReconnection(t *testing.T) {
	h, err := NewHTTPHandler(Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "fixture-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL, MinRetryDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_reconnection", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := firstText(t, res); got != reconnectionText {
		t.Errorf("test_reconnection: %q", got)
	}
}
