// Command everything-client is the client that the official MCP
// conformance suite (@modelcontextprotocol/conformance) tests in its client
// scenarios. The suite starts a mock server per scenario and runs
//
//	everything-client [-timeout D] <server-url>
//
// with the scenario's name in the environment variable
// MCP_CONFORMANCE_SCENARIO and the revision to speak in
// MCP_CONFORMANCE_PROTOCOL_VERSION. The client connects over Streamable
// HTTP, does what the scenario expects of it, and exits 0, or non-zero
// with the reason on standard error when something failed.
//
// Scenarios it knows:
//
//   - initialize: connect, list the tools if the server has any,
//     disconnect.
//   - tools_call: list the tools and call add_numbers with a and b.
//   - elicitation-sep1034-client-defaults: accept the server's elicitation
//     with empty content, so that the client fills in the schema's
//     defaults; the server calls it from test_client_elicitation_defaults.
//   - sse-retry: call test_reconnection, whose response stream the server
//     closes; the transport resumes it with GET and Last-Event-ID after
//     the server's retry delay.
//   - json-schema-2020-12-preservation: list the tools and send the input
//     schema of json_schema_2020_12_tool back, byte for byte, as the
//     schema argument of json_schema_echo.
//   - sep-2640-client-no-prefetch: list the skills, read no file.
//   - sep-2640-client-verify-*: list the skills and load each, reading
//     its other files only once its SKILL.md is verified; a skill that
//     fails verification is reported on standard error and not used.
//   - auth/*: authorize with an auth.Authorizer (see auth.go), list the
//     tools and call test-tool. When the Authorizer refuses for a reason
//     the scenario tests (a PRM for another resource, an issuer
//     mismatch, a missing iss, the step-up limit), the client says so
//     on standard error and exits 0: the suite's checks judge whether
//     refusing was right.
//
// Any other scenario: connect and list the tools if the server has any;
// failing to is an error.
//
// conformance_test.go at the repository root builds and runs it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

func main() {
	timeout := flag.Duration("timeout", 20*time.Second, "give up after this long")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: everything-client [-timeout D] <server-url>")
		os.Exit(2)
	}
	url := flag.Arg(flag.NArg() - 1)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, scenario, os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"), url); err != nil {
		if isAuthScenario(scenario) && refusedForSafety(err) {
			// The harness accepts this status only in the scenarios
			// that expect the client to refuse (clientMayRefuse in
			// conformance_test.go).
			fmt.Fprintf(os.Stderr, "everything-client: scenario %q: refused: %v\n", scenario, err)
			os.Exit(exitRefused)
		}
		fmt.Fprintf(os.Stderr, "everything-client: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

// exitRefused is the exit status when the authorizer refused to go on for
// a safety reason (see refusedForSafety).
const exitRefused = 3

// scenarios maps each scenario name to what the client does in it, once
// connected.
var scenarios = map[string]func(ctx context.Context, cs *mcp.ClientSession) error{
	"initialize":                          listTools,
	"tools_call":                          callAddNumbers,
	"elicitation-sep1034-client-defaults": callTool("test_client_elicitation_defaults"),
	"sse-retry":                           callTool("test_reconnection"),
	"json-schema-2020-12-preservation":    echoSchema,
	"http-custom-headers":                 contextToolCalls,
	"http-standard-headers":               exerciseAll,
	"http-invalid-tool-headers":           callEveryTool,
	"sep-2322-client-request-state":       callEveryTool,
	"sep-2640-client-no-prefetch":         listSkills,
	"sep-2640-client-verify-digest":       loadSkills,
	"sep-2640-client-verify-size":         loadSkills,
	"sep-2640-client-verify-frontmatter":  loadSkills,
}

// contextToolCalls lists the tools and makes the calls the scenario names
// in MCP_CONFORMANCE_CONTEXT ({"toolCalls":[{"name":..., "arguments":...}]}).
func contextToolCalls(ctx context.Context, cs *mcp.ClientSession) error {
	var sc struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	if _, err := tools(ctx, cs); err != nil {
		return err
	}
	for _, c := range sc.ToolCalls {
		if err := call(ctx, cs, c.Name, c.Arguments); err != nil {
			return err
		}
	}
	return nil
}

// callEveryTool lists the tools and calls each, all at once, with no
// arguments: the client keeps each call's input rounds apart.
func callEveryTool(ctx context.Context, cs *mcp.ClientSession) error {
	all, err := tools(ctx, cs)
	if err != nil {
		return err
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, t := range all {
		wg.Go(func() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: json.RawMessage(`{}`)}); err != nil {
				errs[i] = fmt.Errorf("calling %s: %w", t.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run connects to url and plays the scenario.
func run(ctx context.Context, scenario, version, url string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := &mcp.ClientOptions{
		Logger: logger,
		// Accept every form elicitation with no content of its own: the
		// client fills in the defaults of the requested schema (SEP-1034)
		// before it answers.
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{}}, nil
		},
		// Sampling is declared, as a host with a model does; the answer
		// is fixed.
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Contents{&mcp.TextContent{Text: "ok"}}, Model: "mcpkit-conformance"}, nil
		},
	}
	if slices.Contains(mcp.SupportedVersions(), version) || version == mcp.Version20260728 {
		opts.ProtocolVersion = version
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-conformance-client", Version: "1.0.0"}, opts)
	t := &transport.StreamableClientTransport{URL: url}
	if isAuthScenario(scenario) {
		a, err := newAuthorizer(scenario)
		if err != nil {
			return err
		}
		t.Authorizer = a
	}
	cs, err := c.Connect(ctx, t)
	if err != nil {
		return err
	}
	play, ok := scenarios[scenario]
	switch {
	case ok:
	case isAuthScenario(scenario):
		play = callTool("test-tool")
	default:
		play = listTools
	}
	err = play(ctx, cs)
	if cerr := cs.Close(); err == nil && cerr != nil && !errors.Is(cerr, mcp.ErrSessionClosed) {
		err = fmt.Errorf("closing: %w", cerr)
	}
	return err
}

// serverCaps returns the server's capabilities: from initialize, or from
// server/discover (2026-07-28).
func serverCaps(cs *mcp.ClientSession) *mcp.ServerCapabilities {
	if d := cs.DiscoverResult(); d != nil {
		return d.Capabilities
	}
	return cs.InitializeResult().Capabilities
}

// tools lists every tool the server offers.
func tools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var all []*mcp.Tool
	for t, err := range cs.Tools(ctx) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		all = append(all, t)
	}
	return all, nil
}

// listTools lists the tools, if the server offers any.
func listTools(ctx context.Context, cs *mcp.ClientSession) error {
	if caps := serverCaps(cs); caps == nil || caps.Tools == nil {
		return nil
	}
	_, err := tools(ctx, cs)
	return err
}

// exerciseAll uses every feature the server declares: it lists the tools,
// resources and prompts, and calls, reads and gets the first of each, so
// that every request kind goes over the wire once (the scenario checks
// each one's mirrored headers).
func exerciseAll(ctx context.Context, cs *mcp.ClientSession) error {
	caps := serverCaps(cs)
	if caps == nil {
		return nil
	}
	if caps.Tools != nil {
		all, err := tools(ctx, cs)
		if err != nil {
			return err
		}
		if len(all) > 0 {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: all[0].Name}); err != nil {
				return err
			}
		}
	}
	if caps.Resources != nil {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			return err
		}
		if len(res.Resources) > 0 {
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI}); err != nil {
				return err
			}
		}
	}
	if caps.Prompts != nil {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			return err
		}
		if len(res.Prompts) > 0 {
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: res.Prompts[0].Name}); err != nil {
				return err
			}
		}
	}
	return nil
}

// find returns the named tool, listing the tools as a client would first.
func find(ctx context.Context, cs *mcp.ClientSession, name string) (*mcp.Tool, error) {
	all, err := tools(ctx, cs)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("the server offers no tool %q", name)
}

// call calls a tool and turns a tool error into an error.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args json.RawMessage) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("calling %s: %w", name, err)
	}
	if res.IsError {
		return fmt.Errorf("tool %s failed: %v", name, res.Content)
	}
	return nil
}

// callTool returns a scenario that lists the tools and calls name with
// no arguments.
func callTool(name string) func(context.Context, *mcp.ClientSession) error {
	return func(ctx context.Context, cs *mcp.ClientSession) error {
		if _, err := find(ctx, cs, name); err != nil {
			return err
		}
		return call(ctx, cs, name, json.RawMessage(`{}`))
	}
}

func callAddNumbers(ctx context.Context, cs *mcp.ClientSession) error {
	if _, err := find(ctx, cs, "add_numbers"); err != nil {
		return err
	}
	return call(ctx, cs, "add_numbers", json.RawMessage(`{"a":5,"b":3}`))
}

// echoSchema sends the input schema of json_schema_2020_12_tool back as
// received: the scenario checks that no keyword was lost on the way
// through the client.
func echoSchema(ctx context.Context, cs *mcp.ClientSession) error {
	focal, err := find(ctx, cs, "json_schema_2020_12_tool")
	if err != nil {
		return err
	}
	if !json.Valid(focal.InputSchema) || !bytes.HasPrefix(bytes.TrimSpace(focal.InputSchema), []byte("{")) {
		return fmt.Errorf("json_schema_2020_12_tool has no object input schema: %s", focal.InputSchema)
	}
	args := append(append([]byte(`{"schema":`), focal.InputSchema...), '}')
	return call(ctx, cs, "json_schema_echo", json.RawMessage(args))
}
