package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// serverBinEnv names a prebuilt server binary to use instead of building
// examples/stdio-server (for trying the client script against another
// mcpkit server by hand).
const serverBinEnv = "MCPKIT_INTEROP_STDIO_SERVER"

// tsSummary is what ts_client.mjs prints.
type tsSummary struct {
	ServerInfo      *mcp.Implementation `json:"serverInfo"`
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    map[string]any      `json:"capabilities"`
	Instructions    string              `json:"instructions"`
	Ping            string              `json:"ping"`
	SetLevel        string              `json:"setLevel"`
	Tools           []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	ToolCalls      []*tsToolCall `json:"toolCalls"`
	ExtraToolCalls []*tsToolCall `json:"extraToolCalls"`
	Resources      []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
		Name        string `json:"name"`
	} `json:"resourceTemplates"`
	Reads   []*tsRead `json:"reads"`
	Prompts []struct {
		Name      string `json:"name"`
		Arguments []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	} `json:"prompts"`
	PromptGets     []*tsPromptGet  `json:"promptGets"`
	Completions    []*tsCompletion `json:"completions"`
	ServerRequests map[string]int  `json:"serverRequests"`
	Notifications  map[string]int  `json:"notifications"`
	Errors         []struct {
		Step    string `json:"step"`
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
}

// tsToolCall is one tools/call as the TypeScript client saw it.
type tsToolCall struct {
	Name              string            `json:"name"`
	Arguments         map[string]any    `json:"arguments"`
	IsError           bool              `json:"isError"`
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	Progress          int               `json:"progress"`
	Error             *tsError          `json:"error"`
}

// Text joins the text blocks of the result.
func (c *tsToolCall) Text() string { return contentText(c.Content) }

// tsRead is one resources/read.
type tsRead struct {
	URI      string `json:"uri"`
	Contents []struct {
		URI              string  `json:"uri"`
		MIMEType         *string `json:"mimeType"`
		Text             *string `json:"text"`
		BlobBase64Length *int    `json:"blobBase64Length"`
	} `json:"contents"`
	Error *tsError `json:"error"`
}

// tsPromptGet is one prompts/get.
type tsPromptGet struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Error *tsError `json:"error"`
}

// tsCompletion is one completion/complete.
type tsCompletion struct {
	Params     map[string]any `json:"params"`
	Completion *struct {
		Values []string `json:"values"`
	} `json:"completion"`
	Error *tsError `json:"error"`
}

type tsError struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
}

func (e *tsError) String() string {
	if e.Code != nil {
		return fmt.Sprintf("%d %s", *e.Code, e.Message)
	}
	return e.Message
}

// tsClientOptions is the options file of ts_client.mjs.
type tsClientOptions struct {
	ToolArgs       map[string]map[string]any    `json:"toolArgs,omitempty"`
	PromptArgs     map[string]map[string]string `json:"promptArgs,omitempty"`
	SkipTools      []string                     `json:"skipTools,omitempty"`
	ExtraToolCalls []map[string]any             `json:"extraToolCalls,omitempty"`
	MaxReads       int                          `json:"maxReads,omitempty"`
	TemplateVars   map[string]string            `json:"templateVars,omitempty"`
	TemplateReads  []string                     `json:"templateReads,omitempty"`
	Completions    []map[string]any             `json:"completions,omitempty"`
	Roots          []map[string]string          `json:"roots,omitempty"`
	TimeoutMs      int                          `json:"timeoutMs,omitempty"`
}

// stageScript copies the node script name into a new directory beside a
// link to the installed node_modules, from which it resolves its imports,
// and returns the directory and the script's path there.
func stageScript(t *testing.T, modules, name string) (work, path string) {
	t.Helper()
	work = t.TempDir()
	if err := os.Symlink(filepath.Join(modules, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(work, name)
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	return work, path
}

// runTSClient runs ts_client.mjs against target (its arguments after the
// options file: "--" and a server command, or "--url" or "--sse" and a
// URL) and returns its summary.
func runTSClient(ctx context.Context, t *testing.T, modules string, opts *tsClientOptions, target ...string) *tsSummary {
	t.Helper()
	work, scriptPath := stageScript(t, modules, "ts_client.mjs")
	optsPath := filepath.Join(work, "options.json")
	if err := os.WriteFile(optsPath, mustJSON(opts), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{scriptPath, optsPath}, target...)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ts_client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, tail(stderr.String(), 8000), tail(string(out), 8000))
	}
	if s := stderr.String(); s != "" {
		t.Logf("stderr of the client and server:\n%s", tail(s, 4000))
	}
	var sum tsSummary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, tail(string(out), 8000))
	}
	return &sum
}

// buildExampleServer builds examples/stdio-server, or returns the binary
// named by $MCPKIT_INTEROP_STDIO_SERVER.
func buildExampleServer(ctx context.Context, t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(serverBinEnv); bin != "" {
		t.Logf("using %s=%s instead of building examples/stdio-server", serverBinEnv, bin)
		return bin
	}
	root := repoRoot(t)
	if !exists(filepath.Join(root, "examples", "stdio-server")) {
		t.Fatalf("examples/stdio-server does not exist in %s", root)
	}
	bin := filepath.Join(t.TempDir(), "stdio-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/stdio-server")
	cmd.Dir = root
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/stdio-server: %v\n%s", err, out)
	}
	return bin
}

// TestTypeScriptClientAgainstOurServer runs the official TypeScript SDK
// client (ts_client.mjs with StdioClientTransport) against mcpkit's
// example stdio server: it initializes, pings, sets the log level, lists
// and calls every tool, lists and reads every resource and template,
// gets every prompt and asks for completions. The script answers the
// server's sampling, elicitation and roots requests, should the example
// make any. The test checks the summary the script prints.
func TestTypeScriptClientAgainstOurServer(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	server := buildExampleServer(ctx, t)
	built := time.Now()
	sum := runTSClient(ctx, t, modules, exampleClientOptions(), "--", server)
	t.Logf("server built in %v, TypeScript client ran in %v", built.Sub(start).Round(time.Millisecond), time.Since(built).Round(time.Millisecond))
	checkExampleSummary(t, sum, false)
}

// exampleClientOptions tells ts_client.mjs how to call the example
// server's tools, prompts and completions.
func exampleClientOptions() *tsClientOptions {
	opts := &tsClientOptions{
		ToolArgs:      map[string]map[string]any{},
		PromptArgs:    map[string]map[string]string{},
		TemplateVars:  exampleTemplateVars,
		TemplateReads: exampleMissingResources,
		TimeoutMs:     10000,
	}
	for name, x := range exampleTools {
		opts.ToolArgs[name] = x.args
	}
	for _, x := range exampleFailingCalls {
		opts.ExtraToolCalls = append(opts.ExtraToolCalls, map[string]any{"name": x.name, "arguments": x.args})
	}
	for name, x := range examplePrompts {
		opts.PromptArgs[name] = x.args
	}
	for _, c := range exampleCompletions {
		opts.Completions = append(opts.Completions, c.params)
	}
	return opts
}

// checkExampleSummary checks what ts_client.mjs reports of a session with
// the example server. A stateless server cannot send the client requests,
// so there the tool that asks for sampling must fail.
func checkExampleSummary(t *testing.T, sum *tsSummary, stateless bool) {
	t.Helper()
	for _, e := range sum.Errors {
		t.Errorf("TypeScript client: %s failed: %s %s", e.Step, codeOf(e.Code), e.Message)
	}
	if sum.ServerInfo == nil || sum.ServerInfo.Name == "" {
		t.Fatalf("no serverInfo: %+v", sum)
	}
	t.Logf("server %s %s, protocol %s, capabilities %s", sum.ServerInfo.Name, sum.ServerInfo.Version, sum.ProtocolVersion, mustJSON(sum.Capabilities))
	if sum.ProtocolVersion != mcp.LatestVersion {
		t.Errorf("negotiated protocol %q, want %q (the newest both sides speak)", sum.ProtocolVersion, mcp.LatestVersion)
	}
	if sum.Instructions == "" {
		t.Error("no instructions")
	}
	if sum.Ping != "ok" {
		t.Errorf("ping: %q", sum.Ping)
	}
	if _, ok := sum.Capabilities["logging"]; ok && sum.SetLevel != "ok" {
		t.Errorf("logging/setLevel: %q", sum.SetLevel)
	}

	// Tools: every one listed was called and succeeded (the TypeScript
	// client also checks structuredContent against each outputSchema).
	listed := map[string]bool{}
	for _, tl := range sum.Tools {
		listed[tl.Name] = true
	}
	for name := range exampleTools {
		if !listed[name] {
			t.Errorf("tool %s not listed by the example server", name)
		}
	}
	if len(sum.ToolCalls) != len(sum.Tools) {
		t.Errorf("%d tools listed, %d called", len(sum.Tools), len(sum.ToolCalls))
	}
	for _, c := range sum.ToolCalls {
		if stateless && c.Name == "summarize" {
			if c.Error == nil && !c.IsError || !strings.Contains(fmt.Sprint(c.Error, c.Text()), "sampling") {
				t.Errorf("summarize on a stateless server: want a failure naming sampling, got error %v, isError %v %q", c.Error, c.IsError, c.Text())
			} else {
				t.Logf("summarize on a stateless server failed as it must: %v %q", c.Error, c.Text())
			}
			continue
		}
		switch {
		case c.Error != nil:
			t.Errorf("tool %s %s: protocol error %s", c.Name, mustJSON(c.Arguments), c.Error)
			continue
		case c.IsError:
			t.Errorf("tool %s %s: isError: %s", c.Name, mustJSON(c.Arguments), c.Text())
			continue
		case len(c.Content) == 0 && len(c.StructuredContent) == 0:
			t.Errorf("tool %s: empty result", c.Name)
		}
		t.Logf("tool %s %s -> %s (structured %s, %d progress)", c.Name, mustJSON(c.Arguments), abbreviate(c.Text(), 100), abbreviate(string(c.StructuredContent), 100), c.Progress)
		if x, ok := exampleTools[c.Name]; ok {
			if err := x.check(c); err != nil {
				t.Errorf("tool %s: %v", c.Name, err)
			}
		}
	}
	if len(sum.ExtraToolCalls) != len(exampleFailingCalls) {
		t.Fatalf("%d failing calls made, want %d", len(sum.ExtraToolCalls), len(exampleFailingCalls))
	}
	for i, c := range sum.ExtraToolCalls {
		if err := exampleFailingCalls[i].check(c); err != nil {
			t.Errorf("failing call %s %s: %v", c.Name, mustJSON(c.Arguments), err)
		} else {
			t.Logf("failing call %s %s: as expected: error %v, isError %v %q", c.Name, mustJSON(c.Arguments), c.Error, c.IsError, c.Text())
		}
	}
	if n := sum.ServerRequests["sampling"]; !stateless && n != 1 {
		t.Errorf("%d sampling requests answered by the client, want 1 (from summarize)", n)
	}
	if n := sum.Notifications["logging"]; n < exampleTools["countdown"].args["from"].(int) {
		t.Errorf("%d log messages, want one per countdown step", n)
	}

	// Resources and templates: every read succeeded and returned the URI
	// asked for, except the missing ones.
	read := map[string]bool{}
	for _, r := range sum.Reads {
		read[r.URI] = true
		if slices.Contains(exampleMissingResources, r.URI) {
			if r.Error == nil || r.Error.Code == nil || *r.Error.Code != -32002 {
				t.Errorf("read of missing %s: want error -32002, got %v", r.URI, r.Error)
			} else {
				t.Logf("read %s: error %s, as expected", r.URI, r.Error)
			}
			continue
		}
		if r.Error != nil {
			t.Errorf("read %s: %s", r.URI, r.Error)
			continue
		}
		if len(r.Contents) == 0 {
			t.Errorf("read %s: no contents", r.URI)
			continue
		}
		for _, c := range r.Contents {
			if c.Text == nil && c.BlobBase64Length == nil {
				t.Errorf("read %s: content with neither text nor blob", r.URI)
			}
		}
		if r.Contents[0].URI != r.URI {
			t.Errorf("read %s: content URI %s", r.URI, r.Contents[0].URI)
		}
		t.Logf("read %s: %d contents", r.URI, len(r.Contents))
		if check := exampleReads[r.URI]; check != nil {
			if err := check(r); err != nil {
				t.Errorf("read %s: %v", r.URI, err)
			}
		}
	}
	for uri := range exampleReads {
		if !read[uri] {
			t.Errorf("%s was not read (not listed, or its template not offered)", uri)
		}
	}
	if want := len(sum.Resources) + len(sum.ResourceTemplates) + len(exampleMissingResources); len(sum.Reads) != want {
		t.Errorf("%d reads for %d resources, %d templates and %d missing URIs", len(sum.Reads), len(sum.Resources), len(sum.ResourceTemplates), len(exampleMissingResources))
	}

	// Prompts: every one rendered.
	if len(sum.PromptGets) != len(sum.Prompts) {
		t.Errorf("%d prompts listed, %d got", len(sum.Prompts), len(sum.PromptGets))
	}
	got := map[string]bool{}
	for _, g := range sum.PromptGets {
		got[g.Name] = true
		if g.Error != nil {
			t.Errorf("prompt %s %v: %s", g.Name, g.Arguments, g.Error)
			continue
		}
		if len(g.Messages) == 0 {
			t.Errorf("prompt %s: no messages", g.Name)
		}
		t.Logf("prompt %s %v: %d messages", g.Name, g.Arguments, len(g.Messages))
		if x, ok := examplePrompts[g.Name]; ok {
			if err := x.check(g); err != nil {
				t.Errorf("prompt %s: %v", g.Name, err)
			}
		}
	}
	for name := range examplePrompts {
		if !got[name] {
			t.Errorf("prompt %s not listed by the example server", name)
		}
	}

	// Completion.
	if _, ok := sum.Capabilities["completions"]; !ok {
		t.Error("no completions capability")
	}
	if len(sum.Completions) != len(exampleCompletions) {
		t.Errorf("%d completions, want %d", len(sum.Completions), len(exampleCompletions))
	}
	for _, c := range sum.Completions {
		if c.Error != nil || c.Completion == nil {
			t.Errorf("complete %s: %v", mustJSON(c.Params), c.Error)
			continue
		}
		want, _ := completionWant(c.Params)
		if !slices.Equal(c.Completion.Values, want) {
			t.Errorf("complete %s: %v, want %v", mustJSON(c.Params), c.Completion.Values, want)
		}
		t.Logf("complete %s -> %v", mustJSON(c.Params), c.Completion.Values)
	}
	t.Logf("counts: %d tools (%d calls + %d failing), %d resources, %d templates, %d reads, %d prompts, %d completions; server requests %v; notifications %v",
		len(sum.Tools), len(sum.ToolCalls), len(sum.ExtraToolCalls), len(sum.Resources), len(sum.ResourceTemplates), len(sum.Reads),
		len(sum.Prompts), len(sum.Completions), sum.ServerRequests, sum.Notifications)
}

func codeOf(c *int) string {
	if c == nil {
		return ""
	}
	return fmt.Sprint(*c)
}

func abbreviate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// contentText joins the text of content blocks as the TypeScript client
// reported them.
func contentText(blocks []json.RawMessage) string {
	var parts []string
	for _, b := range blocks {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &c) == nil && c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
