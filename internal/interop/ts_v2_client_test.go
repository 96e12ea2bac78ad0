package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// tsV2Summary is what ts_v2_client.mjs prints.
type tsV2Summary struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Tools           []string          `json:"tools"`
	Calls           map[string]string `json:"calls"`
	Errors          map[string]string `json:"errors"`
	Prompt          string            `json:"prompt"`
	Resource        string            `json:"resource"`
	Counts          map[string]int    `json:"counts"`
	TraceContext    string            `json:"traceContext"`
}

// buildFixtureServer builds the conformance fixture everything-server.
func buildFixtureServer(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./internal/conformance/everything-server")
	cmd.Dir = repoRoot(t)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/conformance/everything-server: %v\n%s", err, out)
	}
	return bin
}

// startFixtureHTTP runs the fixture server bin over Streamable HTTP on a
// port it picks (it prints "listening on <URL>"), until the test ends,
// and returns its URL.
func startFixtureHTTP(ctx context.Context, t *testing.T, bin string) string {
	t.Helper()
	return startListening(t, exec.CommandContext(ctx, bin, "-http", "127.0.0.1:0"))
}

// startListening starts cmd, a server that prints "listening on <URL>"
// as its first line of output, stops it when the test ends, and returns
// the URL.
func startListening(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("%s said %q (%v)", strings.Join(cmd.Args, " "), line, err)
	}
	return url
}

// runTSV2Client runs ts_v2_client.mjs against target and returns its
// summary.
func runTSV2Client(ctx context.Context, t *testing.T, modules string, target ...string) *tsV2Summary {
	t.Helper()
	work, scriptPath := stageScript(t, modules, "ts_v2_client.mjs")
	cmd := exec.CommandContext(ctx, "node", append([]string{scriptPath}, target...)...)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node ts_v2_client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, tail(stderr.String(), 8000), tail(string(out), 8000))
	}
	var sum tsV2Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, tail(string(out), 8000))
	}
	return &sum
}

// TestTypeScriptV2ClientModernEra runs the official TypeScript SDK v2
// client (@modelcontextprotocol/client) in its 2026-07-28 mode against
// mcpkit's conformance fixture server, over stdio and over Streamable
// HTTP: it discovers the server, lists the tools and calls tools, a
// prompt and a resource whose handlers ask for elicitation, sampling and
// roots, which it answers through input_required rounds.
func TestTypeScriptV2ClientModernEra(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bin := buildFixtureServer(ctx, t)

	check := func(t *testing.T, sum *tsV2Summary) {
		t.Helper()
		if len(sum.Errors) > 0 {
			t.Fatalf("errors: %v", sum.Errors)
		}
		if sum.ProtocolVersion != mcp.Version20260728 {
			t.Fatalf("negotiated %q, want %s", sum.ProtocolVersion, mcp.Version20260728)
		}
		if !slices.Contains(sum.Tools, "test_input_required_result_multiple_inputs") {
			t.Fatalf("tools: %v", sum.Tools)
		}
		want := map[string]string{
			"test_simple_text":                           "This is a simple text response for testing.",
			"test_input_required_result_elicitation":     "Hello, Ada!",
			"test_input_required_result_sampling":        "Sampling response: Paris",
			"test_input_required_result_list_roots":      "Client roots: file:///interop",
			"test_input_required_result_multiple_inputs": "Name: Ada; greeting: Paris; roots: file:///interop",
			"test_input_required_result_multi_round":     "Ada likes blue",
		}
		for name, text := range want {
			if sum.Calls[name] != text {
				t.Errorf("%s: %q, want %q", name, sum.Calls[name], text)
			}
		}
		if want := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 interop=1"; sum.TraceContext != want {
			t.Errorf("the trace context the server got: %q, want %q", sum.TraceContext, want)
		}
		if sum.Prompt != "Use this context: interop" || sum.Resource == "" {
			t.Errorf("prompt %q, resource %q", sum.Prompt, sum.Resource)
		}
		// elicitation: 1 + 1 + 2 (multi round) + 1 (prompt); sampling and
		// roots: 1 + 1 (multiple inputs) each.
		if sum.Counts["elicitation"] != 5 || sum.Counts["sampling"] != 2 || sum.Counts["roots"] != 2 {
			t.Errorf("input requests answered: %v", sum.Counts)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, runTSV2Client(ctx, t, modules, "--", bin))
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		url := startFixtureHTTP(ctx, t, bin)
		check(t, runTSV2Client(ctx, t, modules, "--url", url))
	})
}
