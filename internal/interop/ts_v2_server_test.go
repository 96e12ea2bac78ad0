package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// pkgServerV2 is the TypeScript SDK v2 server package ts_v2_server.mjs
// runs; package.json pins its version.
const pkgServerV2 = "@modelcontextprotocol/server"

// tsV2ServerName is the name the server of ts_v2_server.mjs gives itself.
const tsV2ServerName = "ts-v2-interop-server"

// tsV2ServerTools are the tools ts_v2_server.mjs offers, sorted.
var tsV2ServerTools = []string{"ask_model", "bad_header", "client_roots", "echo", "greet", "profile", "weather"}

// tsV2ServerCommand returns the command that runs ts_v2_server.mjs over
// stdio, its standard error going to stderr.
func tsV2ServerCommand(t *testing.T, modules string, stderr io.Writer) *exec.Cmd {
	t.Helper()
	work, script := stageScript(t, modules, "ts_v2_server.mjs")
	cmd := exec.Command("node", script, "stdio")
	cmd.Dir = work
	cmd.Stderr = stderr
	return cmd
}

// startTSV2ServerHTTP runs ts_v2_server.mjs over Streamable HTTP on a
// loopback port it picks, until the test ends, and returns the URL it
// prints once it accepts connections.
func startTSV2ServerHTTP(ctx context.Context, t *testing.T, modules string, stderr io.Writer) string {
	t.Helper()
	work, script := stageScript(t, modules, "ts_v2_server.mjs")
	cmd := exec.CommandContext(ctx, "node", script, "http")
	cmd.Dir = work
	cmd.Stderr = stderr
	return startListening(t, cmd)
}

// tsV2Peer is mcpkit's client side of one connection to the TypeScript v2
// server: the session, what the connection is, and what the server asked
// the client's handlers.
type tsV2Peer struct {
	cs      *mcp.ClientSession
	http    bool // over Streamable HTTP, not stdio
	modern  bool // speaking 2026-07-28
	logged  bool // through transport.LoggingTransport
	elicits events[*mcp.ElicitParams]
	samples events[*mcp.CreateMessageParams]
}

// tsV2Answers are the elicitation answers, by form property.
var tsV2Answers = map[string]string{"name": "Ada", "color": "blue"}

// elicit is the client's elicitation handler: it accepts every form,
// filling each requested property from tsV2Answers.
func (p *tsV2Peer) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.elicits.add(req.Params)
	var form struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(req.Params.RequestedSchema, &form); err != nil {
		return nil, err
	}
	content := map[string]any{}
	for name := range form.Properties {
		content[name] = tsV2Answers[name]
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, nil
}

// createMessage is the client's sampling handler: it always answers
// "Paris".
func (p *tsV2Peer) createMessage(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	p.samples.add(req.Params)
	return &mcp.CreateMessageResult{
		Role:    mcp.RoleAssistant,
		Content: mcp.Contents{&mcp.TextContent{Text: "Paris"}},
		Model:   "interop",
	}, nil
}

// callText calls a tool and returns the text of its result, failing the
// test on an error or an error result.
func (p *tsV2Peer) callText(ctx context.Context, t *testing.T, name string, args map[string]any) string {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != nil {
		params.Arguments = mustJSON(args)
	}
	res, err := p.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: error result %q", name, texts(res.Content))
	}
	return texts(res.Content)
}

// tsV2Check is one thing the test checks on a connection.
type tsV2Check struct {
	name string
	run  func(ctx context.Context, t *testing.T, p *tsV2Peer)
}

// tsV2Checks are the checks run on every connection, in order.
var tsV2Checks = []tsV2Check{
	{"era", checkTSV2Era},
	{"tools/list", checkTSV2Tools},
	{"tools/call echo", func(ctx context.Context, t *testing.T, p *tsV2Peer) {
		if got, want := p.callText(ctx, t, "echo", map[string]any{"message": "hi there"}), "Echo: hi there"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}},
	{"input_required", checkTSV2InputRounds},
	{"x-mcp-header", checkTSV2Header},
	{"prompts", checkTSV2Prompts},
	{"resources", checkTSV2Resources},
	{"errors", checkTSV2Errors},
	{"ping", checkTSV2Ping},
}

// checkTSV2Era checks the revision spoken and what the server said of
// itself: through server/discover in 2026-07-28, through initialize in
// the handshake era.
func checkTSV2Era(_ context.Context, t *testing.T, p *tsV2Peer) {
	want := mcp.Version20251125
	if p.modern {
		want = mcp.Version20260728
	}
	if got := p.cs.ProtocolVersion(); got != want {
		t.Errorf("ProtocolVersion %q, want %q", got, want)
	}
	init := p.cs.InitializeResult()
	if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != tsV2ServerName {
		t.Fatalf("InitializeResult %+v does not name %s", init, tsV2ServerName)
	}
	if !strings.Contains(init.Instructions, "interop") || init.Capabilities == nil || init.Capabilities.Tools == nil {
		t.Errorf("InitializeResult: instructions %q, capabilities %+v", init.Instructions, init.Capabilities)
	}
	d := p.cs.DiscoverResult()
	if !p.modern {
		if d != nil {
			t.Errorf("DiscoverResult %+v in the handshake era", d)
		}
		return
	}
	if d == nil {
		t.Fatal("no DiscoverResult")
	}
	if !slices.Contains(d.SupportedVersions, mcp.Version20260728) {
		t.Errorf("supportedVersions %v", d.SupportedVersions)
	}
	if d.Meta.ServerInfo == nil || d.Meta.ServerInfo.Name != tsV2ServerName {
		t.Errorf("server/discover _meta serverInfo %+v", d.Meta.ServerInfo)
	}
	if d.Capabilities == nil || d.Capabilities.Tools == nil || d.Capabilities.Prompts == nil || d.Capabilities.Resources == nil {
		t.Errorf("server/discover capabilities %+v", d.Capabilities)
	}
}

// checkTSV2Tools checks tools/list: every tool, except that a client of
// 2026-07-28 over Streamable HTTP must leave out bad_header, whose
// x-mcp-header mark breaks the rules (on stdio and in the handshake era
// the marks mean nothing).
func checkTSV2Tools(ctx context.Context, t *testing.T, p *tsV2Peer) {
	res, err := p.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
	}
	slices.Sort(got)
	want := tsV2ServerTools
	if p.http && p.modern {
		want = slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == "bad_header" })
	}
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}

// checkTSV2InputRounds calls the tools whose handlers ask the client for
// input: in 2026-07-28 with input_required results that mcpkit's client
// answers with its handlers and sends the call again; in the handshake era
// the TypeScript SDK sends the same asks as requests.
func checkTSV2InputRounds(ctx context.Context, t *testing.T, p *tsV2Peer) {
	for _, tc := range []struct {
		tool             string
		want             string
		elicits, samples int // the asks the call makes of the handlers
	}{
		{"greet", "Hello, Ada!", 1, 0},
		{"ask_model", "The model said: Paris", 0, 1},
		{"client_roots", "Roots: file:///interop", 0, 0},
		// Two rounds: the name, then the colour with the name in
		// requestState.
		{"profile", "Ada likes blue", 2, 0},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if p.http && !p.modern {
				checkTSV2StatelessAsk(ctx, t, p, tc.tool)
				return
			}
			elicits, samples := p.elicits.len(), p.samples.len()
			if got := p.callText(ctx, t, tc.tool, nil); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if n := p.elicits.len() - elicits; n != tc.elicits {
				t.Errorf("%d elicitations, want %d", n, tc.elicits)
			}
			if n := p.samples.len() - samples; n != tc.samples {
				t.Errorf("%d sampling requests, want %d", n, tc.samples)
			}
		})
	}
	if asks := p.elicits.all(); len(asks) > 0 && asks[0].Message != "What is your name?" {
		t.Errorf("first elicitation asked %q", asks[0].Message)
	}
	if asks := p.samples.all(); len(asks) > 0 && (len(asks[0].Messages) != 1 || !strings.Contains(texts(asks[0].Messages[0].Content), "capital of France")) {
		t.Errorf("sampling asked %s", mustJSON(asks[0].Messages))
	}
}

// checkTSV2StatelessAsk calls a tool that asks for input in the
// handshake era over Streamable HTTP, where the TypeScript server serves
// each request with a new server that has no session (createMcpHandler's
// stateless fallback): it cannot send the client requests, so the call is
// a tool error saying so, and the client's handlers are not asked.
func checkTSV2StatelessAsk(ctx context.Context, t *testing.T, p *tsV2Peer, tool string) {
	elicits, samples := p.elicits.len(), p.samples.len()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	const why = "per-request legacy serving cannot receive server-to-client requests"
	if !res.IsError || !strings.Contains(texts(res.Content), why) {
		t.Errorf("tools/call %s: %s, want an error result saying %q", tool, mustJSON(res), why)
	}
	if p.elicits.len() != elicits || p.samples.len() != samples {
		t.Errorf("the handlers were asked: %d elicitations, %d sampling requests", p.elicits.len()-elicits, p.samples.len()-samples)
	}
}

// checkTSV2Header calls weather, whose region argument is marked
// x-mcp-header: Region. Over Streamable HTTP in 2026-07-28 the client
// must send it as Mcp-Param-Region too (Base64 in the sentinel form when
// it is not plain ASCII), and the server rejects a call whose header is
// missing or disagrees with the body (-32020); the tool reports the header
// it saw. Elsewhere there is no header.
func checkTSV2Header(ctx context.Context, t *testing.T, p *tsV2Peer) {
	for _, tc := range []struct {
		name, region, header string
	}{
		{"ascii", "eu-west1", "eu-west1"},
		{"non-ascii", "Zürich", "=?base64?WsO8cmljaA==?="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := "no header"
			if p.http && p.modern {
				seen = "header " + tc.header
			}
			want := fmt.Sprintf("Weather in %s/Basel: sunny (%s)", tc.region, seen)
			if got := p.callText(ctx, t, "weather", map[string]any{"region": tc.region, "city": "Basel"}); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// checkTSV2Prompts checks prompts/list and prompts/get.
func checkTSV2Prompts(ctx context.Context, t *testing.T, p *tsV2Peer) {
	list, err := p.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "greeting" ||
		len(list.Prompts[0].Arguments) != 1 || list.Prompts[0].Arguments[0].Name != "name" || !list.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts/list: %s", mustJSON(list.Prompts))
	}
	res, err := p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != mcp.RoleUser || texts(mcp.Contents{res.Messages[0].Content}) != "Please greet Ada." {
		t.Errorf("prompts/get: %s", mustJSON(res.Messages))
	}
}

// checkTSV2Resources checks resources/list, resources/templates/list and
// resources/read of a resource and of a template's expansion.
func checkTSV2Resources(ctx context.Context, t *testing.T, p *tsV2Peer) {
	list, err := p.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != "test://info" || list.Resources[0].Name != "info" {
		t.Errorf("resources/list: %s", mustJSON(list.Resources))
	}
	templates, err := p.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "test://items/{id}" {
		t.Errorf("resources/templates/list: %s", mustJSON(templates.ResourceTemplates))
	}
	for uri, want := range map[string]string{
		"test://info":     "TypeScript v2 server resource",
		"test://items/42": "Item 42",
	} {
		res, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("resources/read %s: %v", uri, err)
			continue
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].Text != want {
			t.Errorf("resources/read %s: %s", uri, mustJSON(res.Contents))
		}
	}
}

// checkTSV2Errors checks that a name the server does not know is the
// protocol error the spec gives, -32602 (Invalid params), for each of
// tools/call, prompts/get and resources/read.
func checkTSV2Errors(ctx context.Context, t *testing.T, p *tsV2Peer) {
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"unknown tool", func() error {
			_, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})
			return err
		}},
		{"unknown prompt", func() error {
			_, err := p.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no_such_prompt"})
			return err
		}},
		{"unknown resource", func() error {
			_, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://no-such-resource"})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("error %v (%T), want JSON-RPC error %d", err, err, jsonrpc.CodeInvalidParams)
			}
		})
	}
	// The session survives its errors.
	if got, want := p.callText(ctx, t, "echo", map[string]any{"message": "still here"}), "Echo: still here"; got != want {
		t.Errorf("after the errors: %q, want %q", got, want)
	}
}

// checkTSV2Ping checks that ClientSession.Ping finds the server there.
// The handshake era has ping; 2026-07-28 removed it, and the client asks
// server/discover instead (a server of the revision answers ping with
// -32601, Method not found).
func checkTSV2Ping(ctx context.Context, t *testing.T, p *tsV2Peer) {
	err := p.cs.Ping(ctx)
	if err != nil {
		t.Errorf("ping: %v", err)
	}
}

// TestOurClientAgainstTypeScriptV2Server connects mcpkit's client to the
// official TypeScript SDK v2 server (@modelcontextprotocol/server, run by
// ts_v2_server.mjs), over stdio (serveStdio) and over Streamable HTTP
// (createMcpHandler), each of which serves 2026-07-28 and the handshake
// era on one endpoint. The client speaks 2026-07-28 pinned (EraModern)
// and by finding it (EraAuto), and the handshake era pinned
// (EraHandshake); on each connection it checks the era, the tools
// (x-mcp-header marks included), the input_required rounds its handlers
// answer, a prompt, the resources, the errors of unknown names and ping.
// The connections over HTTP go through transport.LoggingTransport, whose
// wire log is shown when a check fails; one more stdio connection does
// too, for a defect of the client it shows.
func TestOurClientAgainstTypeScriptV2Server(t *testing.T) {
	modules := nodeModules(t)
	t.Logf("%s %s", pkgServerV2, pinnedVersions(t)[pkgServerV2])
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var httpStderr syncBuffer
	url := startTSV2ServerHTTP(ctx, t, modules, &httpStderr)

	for _, tc := range []struct {
		name   string
		kind   string // "stdio" or "http"
		era    mcp.Era
		modern bool // the client ends up speaking 2026-07-28
		logged bool // through transport.LoggingTransport
	}{
		{"stdio/EraModern", "stdio", mcp.EraModern, true, false},
		{"stdio/EraAuto", "stdio", mcp.EraAuto, true, false},
		{"stdio/EraHandshake", "stdio", mcp.EraHandshake, false, false},
		{"http/EraModern", "http", mcp.EraModern, true, true},
		{"http/EraAuto", "http", mcp.EraAuto, true, true},
		{"http/EraHandshake", "http", mcp.EraHandshake, false, true},
		{"stdio/EraModern/LoggingTransport", "stdio", mcp.EraModern, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := &httpStderr
			var tr transport.Transport = &transport.StreamableClientTransport{URL: url, DisableSSEFallback: true}
			if tc.kind == "stdio" {
				stderr = &syncBuffer{}
				tr = &transport.CommandTransport{Command: tsV2ServerCommand(t, modules, stderr), TerminateDuration: 3 * time.Second}
			}
			var wire syncBuffer
			if tc.logged {
				tr = &transport.LoggingTransport{Transport: tr, Writer: &wire}
			}
			p := &tsV2Peer{http: tc.kind == "http", modern: tc.modern, logged: tc.logged}
			c := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-interop", Version: "1.0.0"}, &mcp.ClientOptions{
				Era:                  tc.era,
				ElicitationHandler:   p.elicit,
				CreateMessageHandler: p.createMessage,
			})
			c.AddRoots(&mcp.Root{URI: "file:///interop", Name: "interop"})
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			cs, err := c.Connect(cctx, tr)
			if err != nil {
				t.Fatalf("connect: %v\nwire:\n%s\nserver stderr:\n%s", err, tail(wire.String(), 8000), tail(stderr.String(), 4000))
			}
			defer cs.Close()
			p.cs = cs
			for _, check := range tsV2Checks {
				t.Run(check.name, func(t *testing.T) {
					check.run(cctx, t, p)
				})
			}
			if t.Failed() {
				t.Logf("wire:\n%s\nserver stderr:\n%s", tail(wire.String(), 8000), tail(stderr.String(), 4000))
			}
		})
	}
}
