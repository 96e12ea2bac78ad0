package mcpkit_test

// Wire-level conformance for the handshake era (2024-11-05 … 2025-11-25):
// scripted client lines against a real mcp.Server over newline-delimited
// pipes, each with the exact response expected (compared as JSON values,
// so member order does not matter, but every member and value does).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// step is one line sent and the line expected back ("" for none).
type step struct {
	send, want string
}

type echoArgs struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

func conformanceServer(t *testing.T) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "conformance", Version: "1.0.0"}, nil)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its input."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (echoOut, error) {
		return echoOut{Message: in.Message}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(&mcp.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// runScript serves one session and plays the steps against it.
func runScript(t *testing.T, steps []step) {
	t.Helper()
	runScriptWith(t, 0, steps)
}

// runScriptWith is runScript with a maximum message size for the server.
func runScriptWith(t *testing.T, maxSize int, steps []step) {
	t.Helper()
	s := conformanceServer(t)
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	ctx := context.Background()
	ss, err := s.Connect(ctx, &transport.IOTransport{Reader: serverR, Writer: serverW, MaxMessageSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(clientR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	defer func() {
		clientW.Close()
		ss.Wait()
		clientR.Close()
		for range lines {
		}
	}()
	for i, st := range steps {
		if _, err := io.WriteString(clientW, st.send+"\n"); err != nil {
			t.Fatalf("step %d: write: %v", i, err)
		}
		if st.want == "" {
			continue
		}
		var got string
		select {
		case got = <-lines:
		case <-time.After(10 * time.Second):
			t.Fatalf("step %d: no answer to %s", i, st.send)
		}
		if st.want == "*batch" {
			// Batch answers may come in any order.
			if !sameJSON(t, got, `[{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]`) &&
				!sameJSON(t, got, `[{"jsonrpc":"2.0","id":"b","result":{}},{"jsonrpc":"2.0","id":"a","result":{}}]`) {
				t.Errorf("step %d: batch answer %s", i, got)
			}
			continue
		}
		if !sameJSON(t, got, st.want) {
			t.Errorf("step %d: sent %s\n got %s\nwant %s", i, st.send, got, st.want)
		}
	}
}

// sameJSON reports whether two JSON texts hold equal values. A want
// member whose value is the string "*" matches anything.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("answer is not JSON: %s: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	return match(g, w)
}

func match(g, w any) bool {
	switch w := w.(type) {
	case string:
		if w == "*" {
			return true
		}
		return g == w
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok || len(gm) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := gm[k]
			if !ok || !match(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		ga, ok := g.([]any)
		if !ok || len(ga) != len(w) {
			return false
		}
		for i := range w {
			if !match(ga[i], w[i]) {
				return false
			}
		}
		return true
	}
	return fmt.Sprint(g) == fmt.Sprint(w)
}

const serverCaps = `{"logging":{},"tools":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}}`

func initLine(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"script","version":"0"}}}`, id, version)
}

func initResult(id int, version string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q,"capabilities":%s,"serverInfo":{"name":"conformance","version":"1.0.0"}}}`, id, version, serverCaps)
}

func TestConformanceHandshakeEra(t *testing.T) {
	echoTool := `{"name":"echo","description":"Echoes its input.","inputSchema":"*","outputSchema":"*"}`
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			runScript(t, []step{
				// Before initialize: only ping is served.
				{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: tools/list before initialize"}}`},
				{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
				{initLine(3, rev), initResult(3, rev)},
				{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
				{initLine(4, rev), `{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: session already initialized"}}`},
				{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":5,"result":{"tools":[` + echoTool + `]}}`},
				{`{"jsonrpc":"2.0","id":"s6","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
					`{"jsonrpc":"2.0","id":"s6","result":{"content":[{"type":"text","text":"{\"message\":\"hi\"}"}],"structuredContent":{"message":"hi"}}}`},
				// Invalid tool arguments are a tool error the model can read.
				{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":7}}}`,
					`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"*"}],"isError":true}}`},
				{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
				{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"*"}}`},
				{`{"jsonrpc":"2.0","id":10,"method":"no/such/method"}`, `{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found: no/such/method"}}`},
				{`{"jsonrpc":"2.0","id":11,"method":"prompts/list"}`, `{"jsonrpc":"2.0","id":11,"error":{"code":-32601,"message":"*"}}`},
				{`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"test://missing"}}`, `{"jsonrpc":"2.0","id":12,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://missing"}}}`},
				{`{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"test://static"}}`, `{"jsonrpc":"2.0","id":13,"result":{"contents":[{"uri":"test://static","mimeType":"text/plain","text":"hello"}]}}`},
				// Smuggling attempts: duplicate and wrong-case members.
				{`{"jsonrpc":"2.0","id":14,"method":"ping","method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"*"}}`},
				{`{"jsonrpc":"2.0","id":15,"Method":"ping"}`, `{"jsonrpc":"2.0","id":15,"error":{"code":-32600,"message":"*"}}`},
				{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"Name":"echo","name":"echo","arguments":{}}}`, `{"jsonrpc":"2.0","id":16,"result":{"content":[{"type":"text","text":"*"}],"isError":true}}`},
				// Malformed JSON, then the session keeps serving.
				{`{"jsonrpc":"2.0","id":17,`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"*"}}`},
				{`{"jsonrpc":"1.0","id":18,"method":"ping"}`, `{"jsonrpc":"2.0","id":18,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`},
				{`{"jsonrpc":"2.0","id":19,"method":"ping"}`, `{"jsonrpc":"2.0","id":19,"result":{}}`},
				{`{"jsonrpc":"2.0","id":20,"method":"logging/setLevel","params":{"level":"loud"}}`, `{"jsonrpc":"2.0","id":20,"error":{"code":-32602,"message":"*"}}`},
				{`{"jsonrpc":"2.0","id":21,"method":"logging/setLevel","params":{"level":"warning"}}`, `{"jsonrpc":"2.0","id":21,"result":{}}`},
			})
		})
	}
}

// modernMeta is the _meta of a 2026-07-28 request that declares no client
// capabilities, with the given extra members.
func modernMeta(extra string) string {
	m := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// TestConformanceModernEra plays 2026-07-28 requests over a stream
// transport, where the first message decides the era: each request is
// served on its own, checked for the _meta members the revision requires,
// and answered with a typed result (resultType, cache hints).
func TestConformanceModernEra(t *testing.T) {
	meta := modernMeta("")
	echoTool := `{"name":"echo","description":"Echoes its input.","inputSchema":"*","outputSchema":"*"}`
	// Every result of this era names the server.
	named := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"conformance","version":"1.0.0"}},`
	t.Run("served without initialize", func(t *testing.T) {
		runScript(t, []step{
			{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta(`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}`) + `}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"conformance","version":"1.0.0"}},"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"tools":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}},"ttlMs":0,"cacheScope":"private"}}`},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
				`{"jsonrpc":"2.0","id":2,"result":{` + named + `"resultType":"complete","tools":[` + echoTool + `],"ttlMs":0,"cacheScope":"private"}}`},
			{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`,
				`{"jsonrpc":"2.0","id":3,"result":{` + named + `"resultType":"complete","content":[{"type":"text","text":"{\"message\":\"hi\"}"}],"structuredContent":{"message":"hi"}}}`},
			{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope",` + meta + `}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
			// An unknown resource is -32602 on this revision, with its URI.
			{`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://missing",` + meta + `}}`,
				`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"test://missing"}}}`},
			{`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://static",` + meta + `}}`,
				`{"jsonrpc":"2.0","id":6,"result":{` + named + `"resultType":"complete","contents":[{"uri":"test://static","mimeType":"text/plain","text":"hello"}],"ttlMs":0,"cacheScope":"private"}}`},
			{`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{` + meta + `}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: no/such/method"}}`},
			{`{"jsonrpc":"2.0","id":8,"method":"prompts/list","params":{` + meta + `}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"*"}}`},
		})
	})
	t.Run("the _meta a request must carry", func(t *testing.T) {
		runScript(t, []step{
			{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
				`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: missing _meta member io.modelcontextprotocol/protocolVersion"}}`},
			{`{"jsonrpc":"2.0","id":2,"method":"server/discover"}`,
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: missing _meta member io.modelcontextprotocol/protocolVersion"}}`},
			{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: missing _meta member io.modelcontextprotocol/clientCapabilities"}}`},
			{`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
				`{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"Unsupported protocol version: 2099-01-01","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`},
			{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`,
				`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"*"}}`},
			{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`,
				`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"*"}}`},
			{`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":"2026-07-28"}}`,
				`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"*"}}`},
			// A request without _meta on a connection the first message made
			// modern is a malformed modern request.
			{`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"invalid params: missing _meta member io.modelcontextprotocol/protocolVersion"}}`},
			{`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + meta + `}}`, `{"jsonrpc":"2.0","id":9,"result":"*"}`},
		})
	})
	t.Run("methods the revision removed", func(t *testing.T) {
		var steps []step
		for i, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
			id := strconv.Itoa(i + 1)
			steps = append(steps, step{`{"jsonrpc":"2.0","id":` + id + `,"method":"` + m + `","params":{"uri":"test://static","level":"info",` + meta + `}}`,
				`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"Method not found: ` + m + ` (removed in 2026-07-28)"}}`})
		}
		// The first message made the connection modern: initialize
		// without _meta does not start a handshake.
		steps = append(steps, step{initLine(9, "2025-11-25"), `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"*"}}`})
		runScript(t, steps)
	})
	t.Run("a modern request on a handshake connection", func(t *testing.T) {
		runScript(t, []step{
			{initLine(1, "2025-11-25"), initResult(1, "2025-11-25")},
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
			{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: a 2026-07-28 request on a connection initialized with 2025-11-25"}}`},
			{`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"*"}}`},
			{`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":4,"result":"*"}`},
		})
	})
}

func TestConformanceVersionNegotiation(t *testing.T) {
	tests := []struct{ asked, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2023-01-01", mcp.LatestVersion}, // unknown: counter-offer the newest
		{"banana", mcp.LatestVersion},
	}
	for _, tt := range tests {
		t.Run(tt.asked, func(t *testing.T) {
			runScript(t, []step{{initLine(1, tt.asked), initResult(1, tt.want)}})
		})
	}
}

func TestConformanceBatches(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`
	t.Run("2025-03-26 serves batches", func(t *testing.T) {
		runScript(t, []step{
			{initLine(1, "2025-03-26"), initResult(1, "2025-03-26")},
			{batch, `*batch`},
		})
	})
	for _, rev := range []string{"2024-11-05", "2025-06-18", "2025-11-25"} {
		t.Run(rev+" rejects batches", func(t *testing.T) {
			runScript(t, []step{
				{initLine(1, rev), initResult(1, rev)},
				{batch, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not allowed"}}`},
			})
		})
	}
	t.Run("initialize cannot be batched", func(t *testing.T) {
		runScript(t, []step{
			{"[" + initLine(1, "2025-03-26") + "]", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not allowed"}}`},
		})
	})
}

func TestConformanceBadInput(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", 4096) + `"}}}`
	deep := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`
	runScriptWith(t, 64<<10, []step{
		{initLine(1, "2025-11-25"), initResult(1, "2025-11-25")},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		// Past the size limit: answered without an id, and the session goes on.
		{strings.Replace(huge, strings.Repeat("x", 4096), strings.Repeat("x", 70000), 1), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"*","data":"*"}}`},
		{huge, `{"jsonrpc":"2.0","id":2,"result":"*"}`},
		{deep, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"*"}}`},
		{"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"*"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1,2]}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"*"}}`},
		{`{"jsonrpc":"2.0","id":6}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"*"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/unknown"}`, ""},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"result":{}}`},
	})
}

// The official MCP conformance suite
// (@modelcontextprotocol/conformance on npm) against mcpkit's fixture
// programs in internal/conformance: TestOfficialSuiteServer runs its
// server scenarios against everything-server over Streamable HTTP, and
// TestOfficialSuiteClient runs its client scenarios with everything-client.
// The server is run three times against one running fixture, one URL:
// with the frozen requirement sets of 2025-11-25 and of 2026-07-28, and
// with every scenario (--suite all, each at the revision that introduced
// it), so that one endpoint is shown to serve both eras. The client runs
// the 2025-11-25 and 2026-07-28 sets. Every run uses the expected-failures file beside
// the fixtures; every FAILURE or WARNING check outside that file fails the
// test.

// Pinned versions: the suite, the Node.js runtime it needs (>= 22; it is
// installed from npm as a package when the node on PATH is older), and the
// requirement set the client runs.
const (
	officialSuiteVersion      = "0.2.0-alpha.12"
	officialSuiteNodeVersion  = "22.23.3"
	officialSuiteRequirements = "2025-11-25"
)

// serverSuiteRuns are the runs of the server scenarios, each a
// requirement set or, for "all", every scenario.
var serverSuiteRuns = []string{"2025-11-25", "2026-07-28", "all"}

// clientSuiteRuns are the runs of the client scenarios, each a
// requirement set or, for "all", every scenario; each scenario names the
// revision the client is to speak (the fixture pins it).
var clientSuiteRuns = []string{"2025-11-25", "2026-07-28", "all"}

const (
	expectedFailuresFile = "internal/conformance/expected-failures.yaml"
	// officialSuiteDeadline bounds one run of the suite; warm runs take a
	// few seconds.
	officialSuiteDeadline = 100 * time.Second
	// clientDeadline bounds one run of everything-client (the suite's own
	// per-scenario timeout is 30 s and only kills the shell around it).
	clientDeadline = 25 * time.Second
)

// officialSuite is an installed conformance suite and the node to run it.
type officialSuite struct {
	node    string // node binary, version >= 22
	cli     string // the suite's dist/index.js
	preload string // loopback-only preload for node --require
}

var (
	suiteOnce sync.Once
	suiteInst *officialSuite
	suiteSkip string // reason to skip, when set
	suiteErr  error
)

// installedSuite returns the suite, installing it and Node on first use.
// It skips the test in short mode, or when something must be installed
// and cannot be (npm is not on PATH, or has no Node.js for the platform).
func installedSuite(t *testing.T) *officialSuite {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the official conformance suite in short mode")
	}
	suiteOnce.Do(func() { suiteInst, suiteSkip, suiteErr = installSuite() })
	if suiteSkip != "" {
		t.Skip(suiteSkip)
	}
	if suiteErr != nil {
		t.Fatal(suiteErr)
	}
	return suiteInst
}

// errCannotInstall reports that something had to be installed and cannot
// be here: npm is not on PATH, or npm has no Node.js for the platform.
var errCannotInstall = errors.New("cannot install")

// errNoNPM is the errCannotInstall of a missing npm.
var errNoNPM = fmt.Errorf("%w: npm is not on PATH", errCannotInstall)

// installSuite finds or installs node >= 22 and the pinned suite under
// the user cache directory (mcpkit-conformance), re-using earlier
// installs. It returns a reason to skip when npm is needed but absent.
func installSuite() (*officialSuite, string, error) {
	s, err := findOrInstallSuite()
	if errors.Is(err, errCannotInstall) {
		return nil, fmt.Sprintf("%v; the official MCP conformance suite (@modelcontextprotocol/conformance@%s) needs it, with Node.js >= 22", err, officialSuiteVersion), nil
	}
	return s, "", err
}

func findOrInstallSuite() (*officialSuite, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("no user cache directory for the conformance suite: %w", err)
	}
	dir := filepath.Join(cache, "mcpkit-conformance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &officialSuite{}
	if p, err := exec.LookPath("node"); err == nil && nodeMajor(p) >= 22 {
		s.node = p
	} else {
		pkg, ok := nodePackage()
		if !ok {
			return nil, fmt.Errorf("%w: no node >= 22 on PATH, and npm has no Node.js package for %s/%s", errCannotInstall, runtime.GOOS, runtime.GOARCH)
		}
		nodeDir := filepath.Join(dir, "node-"+officialSuiteNodeVersion)
		s.node = filepath.Join(nodeDir, "node_modules", pkg, "bin", "node")
		if err := npmInstall(nodeDir, s.node, pkg+"@"+officialSuiteNodeVersion); err != nil {
			return nil, err
		}
		if m := nodeMajor(s.node); m < 22 {
			return nil, fmt.Errorf("%s is node %d, need >= 22", s.node, m)
		}
	}
	suiteDir := filepath.Join(dir, "conformance-"+officialSuiteVersion)
	s.cli = filepath.Join(suiteDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if err := npmInstall(suiteDir, s.cli, "@modelcontextprotocol/conformance@"+officialSuiteVersion); err != nil {
		return nil, err
	}
	s.preload = filepath.Join(dir, "loopback-only.cjs")
	if err := writeFileAtomic(s.preload, []byte(loopbackPreload)); err != nil {
		return nil, err
	}
	return s, nil
}

// nodePackage names the npm package holding the Node binary for this
// platform.
func nodePackage() (string, bool) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		return "", false
	}
	return "node-" + runtime.GOOS + "-" + arch, true
}

// nodeMajor returns the major version of a node binary, or 0.
func nodeMajor(node string) int {
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0
	}
	return n
}

// npmInstall installs spec into dir unless want already exists there. It
// installs into a fresh directory and renames it into place, so that a
// failed or concurrent install never leaves a half-made dir behind.
func npmInstall(dir, want, spec string) error {
	if _, err := os.Stat(want); err == nil {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errNoNPM
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", spec)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s: %v\n%s", spec, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(want); serr == nil {
			return nil // another process installed it meanwhile
		}
		return fmt.Errorf("installing %s: %w", spec, err)
	}
	if _, err := os.Stat(want); err != nil {
		return fmt.Errorf("npm install %s did not produce %s", spec, want)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file.
func writeFileAtomic(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// loopbackPreload is loaded with node --require before the suite. The
// suite's mock servers listen on all interfaces; this makes a listen()
// without a host bind 127.0.0.1 instead. listen() with a host normally
// resolves it asynchronously, and the suite reads address() right after
// listen(), so while the patched call runs, dns.lookup answers
// "127.0.0.1" synchronously.
const loopbackPreload = `'use strict';
const net = require('net');
const dns = require('dns');
const HOST = '127.0.0.1';
const listen = net.Server.prototype.listen;
const lookup = dns.lookup;
function immediateLookup(name, opts, cb) {
  if (typeof opts === 'function') { cb = opts; opts = {}; }
  if (name !== HOST) return lookup.call(dns, name, opts, cb);
  if (opts && opts.all) return cb(null, [{ address: HOST, family: 4 }]);
  return cb(null, HOST, 4);
}
function withHost(args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    const o = first;
    if (o instanceof net.Server || o.host !== undefined || o.path !== undefined ||
        o.handle !== undefined || o._handle !== undefined || o.fd !== undefined) return null;
    return [Object.assign({}, o, { host: HOST }), ...args.slice(1)];
  }
  if (first === undefined) args = [0, ...args.slice(1)];
  else if (typeof first === 'function') args = [0, ...args];
  else if (typeof first !== 'number' && !(typeof first === 'string' && /^\d+$/.test(first))) return null;
  if (typeof args[1] === 'string') return null;
  return [args[0], HOST, ...args.slice(1)];
}
net.Server.prototype.listen = function (...args) {
  const patched = withHost(args);
  if (!patched) return listen.apply(this, args);
  dns.lookup = immediateLookup;
  try { return listen.apply(this, patched); } finally { dns.lookup = lookup; }
};
`

// buildFixture builds internal/conformance/<name> into a temporary
// directory and returns the binary's path.
func buildFixture(t *testing.T, name string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), name)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(gobin, "build", "-o", bin, "./internal/conformance/"+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

// lockedBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startHTTPFixture starts everything-server on a free loopback port and
// returns its endpoint URL and its collected standard error. The server
// is stopped when the test ends.
func startHTTPFixture(t *testing.T, bin string) (string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case line, ok := <-lines:
		url, found := strings.CutPrefix(line, "listening on ")
		if !ok || !found || !strings.HasPrefix(url, "http://") {
			if !ok { // it exited: let its stderr be copied in full
				select {
				case err := <-exited:
					exited <- err
				case <-time.After(5 * time.Second):
				}
			}
			t.Fatalf("everything-server did not announce its URL (first line %q); stderr:\n%s", line, stderr)
		}
		return url, stderr
	case <-time.After(30 * time.Second):
		t.Fatalf("everything-server did not start within 30s; stderr:\n%s", stderr)
	}
	return "", nil
}

// run runs the suite in dir with args and returns its exit code and
// combined output. The run is bounded by officialSuiteDeadline.
func (s *officialSuite) run(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), officialSuiteDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, append([]string{"--require", s.preload, s.cli}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var out lockedBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within %v; output:\n%s", officialSuiteDeadline, tail(out.String(), 60))
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running the conformance suite: %v\n%s", err, out.String())
		}
		code = ee.ExitCode()
	}
	return code, out.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// suiteCheck is one entry of a scenario's checks.json.
type suiteCheck struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// scenarioResult is what one scenario left in the output directory.
type scenarioResult struct {
	dir    string
	checks []suiteCheck
}

// suiteOutDir returns the directory for the suite's results of mode: a
// temporary one, or a fresh mode subdirectory of $MCPKIT_CONFORMANCE_OUT
// when that is set, to keep them for debugging.
func suiteOutDir(t *testing.T, mode string) string {
	t.Helper()
	keep := os.Getenv("MCPKIT_CONFORMANCE_OUT")
	if keep == "" {
		return t.TempDir()
	}
	dir := filepath.Join(keep, mode)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("keeping the suite's %s results in %s", mode, dir)
	return dir
}

// resultDirSuffix is the timestamp the suite appends to each result
// directory: -YYYY-MM-DDTHH-MM-SS-mmmZ.
var resultDirSuffix = regexp.MustCompile(`-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// statusCounts formats counts of check statuses, as "12 SUCCESS, 1 INFO".
func statusCounts(counts map[string]int) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	return strings.Join(parts, ", ")
}

// readResults reads every checks.json under out, keyed by scenario name
// (the directory path relative to out, without the timestamp and, for
// server scenarios, without the "server-" prefix).
func readResults(t *testing.T, out, mode string) map[string]*scenarioResult {
	t.Helper()
	res := map[string]*scenarioResult{}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		dir := filepath.Dir(path)
		rel, err := filepath.Rel(out, dir)
		if err != nil {
			return err
		}
		name := resultDirSuffix.ReplaceAllString(filepath.ToSlash(rel), "")
		if mode == "server" {
			name = strings.TrimPrefix(name, "server-")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r := &scenarioResult{dir: dir}
		if err := json.Unmarshal(data, &r.checks, json.RejectUnknownMembers(false)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if old := res[name]; old == nil || old.dir < dir {
			res[name] = r
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the suite's results: %v", err)
	}
	return res
}

// summaryLine matches the suite's per-scenario summary lines.
var summaryLine = regexp.MustCompile(`^[✓✗] (\S+): \d+ passed`)

// parseConsole returns the scenarios the suite's summary reported, in
// order.
func parseConsole(out string) []string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if m := summaryLine.FindStringSubmatch(l); m != nil && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// notScored reads the not_scored section of the installed suite's
// requirement set: the scenarios of mode ("server" or "client") that run
// but do not count for the revision, with the reason.
func (s *officialSuite) notScored(t *testing.T, mode, requirements string) map[string]string {
	t.Helper()
	if requirements == "all" {
		return nil // every scenario counts
	}
	file := filepath.Join(filepath.Dir(filepath.Dir(s.cli)), "requirements", requirements+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("reading the requirement set: %v", err)
	}
	res := map[string]string{}
	in := false
	var scenario, leg, reason string
	flush := func() {
		if scenario != "" && leg == mode {
			res[scenario] = reason
		}
		scenario, leg, reason = "", "", ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#") {
			flush()
			in = strings.HasPrefix(l, "not_scored:")
			continue
		}
		if !in {
			continue
		}
		f := strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(f, "- scenario:"); ok {
			flush()
			scenario = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(f, "leg:"); ok {
			leg = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(f, "reason:"); ok {
			reason = strings.TrimSpace(v)
		}
	}
	flush()
	return res
}

// readExpectedFailures parses expected-failures.yaml (the small subset of
// YAML it uses: top-level "server:" and "client:" keys, each followed by
// "- name # reason" items or "[]"), and fails the test on an entry
// without a reason.
func readExpectedFailures(t *testing.T) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]map[string]string{"server": {}, "client": {}}
	section := ""
	for i, l := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if key, rest, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "-") {
			section = key
			if _, known := res[section]; !known {
				t.Fatalf("%s:%d: unknown section %q", expectedFailuresFile, i+1, key)
			}
			if r := strings.TrimSpace(rest); r != "" && r != "[]" {
				t.Fatalf("%s:%d: write one entry per line", expectedFailuresFile, i+1)
			}
			continue
		}
		item, ok := strings.CutPrefix(trimmed, "- ")
		if !ok || section == "" {
			t.Fatalf("%s:%d: cannot parse %q", expectedFailuresFile, i+1, l)
		}
		name, reason, _ := strings.Cut(item, "#")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if reason == "" {
			t.Errorf("%s:%d: %s has no reason comment", expectedFailuresFile, i+1, name)
		}
		res[section][name] = reason
	}
	return res
}

// judge compares the suite's results with the expected failures: every
// FAILURE or WARNING check of a scenario not expected to fail fails the
// test (as it fails the suite's run), as does an expected failure that now
// passes. clientExit, in client mode, holds
// each scenario's client exit status ("0", a code, or "timeout"); a
// client that did not exit 0 fails a scenario that is not expected to
// fail. It logs "<mode>: N/M scenarios passed".
func judge(t *testing.T, mode, requirements, out, console string, suiteCode int, notScored, expected map[string]string, clientExit func(string) string) {
	t.Helper()
	results := readResults(t, out, mode)
	names := parseConsole(console)
	for name := range results {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: the suite ran no scenarios (exit %d); output:\n%s", mode, suiteCode, tail(console, 40))
	}
	passed, scored, scoredPassed, problems := 0, 0, 0, 0
	var skipped []string // SKIPPED checks outside strictSkips
	for _, name := range names {
		r := results[name]
		var failures []string
		if r == nil {
			failures = append(failures, "no checks.json: the scenario crashed or did not run")
		} else {
			for _, c := range r.checks {
				switch c.Status {
				case "FAILURE":
					failures = append(failures, fmt.Sprintf("%s: %s", c.ID, c.ErrorMessage))
				case "WARNING":
					// The suite's expected-failures logic counts a
					// WARNING (a SHOULD not met) as a failure too.
					failures = append(failures, fmt.Sprintf("%s (WARNING): %s", c.ID, c.ErrorMessage))
				case "SKIPPED":
					// A skipped check shows nothing: in the scenarios
					// where every check applies to our fixtures, it is
					// a failure; elsewhere it is logged.
					switch {
					case skipAllowed(c):
					case strictSkips(name):
						failures = append(failures, fmt.Sprintf("%s (SKIPPED): %s", c.ID, c.ErrorMessage))
					default:
						skipped = append(skipped, name+": "+c.ID)
					}
				}
			}
		}
		if clientExit != nil {
			if rc := clientExit(name); rc != "0" && !(rc == clientRefusedStatus && clientMayRefuse[name]) {
				msg := "client exited with status " + rc
				if rc == "" {
					msg = "client never ran or its exit status was not recorded"
				}
				if r != nil {
					if b, err := os.ReadFile(filepath.Join(r.dir, "stderr.txt")); err == nil && len(b) > 0 {
						msg += "; its stderr ends:\n" + tail(string(b), 15)
					}
				}
				failures = append(failures, msg)
			}
		}
		ok := len(failures) == 0
		if ok {
			passed++
		}
		if _, ns := notScored[name]; !ns {
			scored++
			if ok {
				scoredPassed++
			}
		}
		_, want := expected[name]
		switch {
		case !ok && !want:
			problems++
			t.Errorf("%s scenario %s FAILED:\n  %s", mode, name, strings.Join(failures, "\n  "))
		case ok && want:
			problems++
			t.Errorf("%s scenario %s passes but is listed in %s: remove it there", mode, name, expectedFailuresFile)
		case !ok:
			t.Logf("%s scenario %s fails as expected (%s)", mode, name, expected[name])
		}
		if why, ns := notScored[name]; ns {
			t.Logf("%s scenario %s is not scored by %s (%s)", mode, name, requirements, why)
		}
	}
	for name := range expected {
		if !slices.Contains(names, name) {
			t.Logf("%s: %s is listed in %s but did not run", mode, name, expectedFailuresFile)
		}
	}
	if len(skipped) > 0 {
		slices.Sort(skipped)
		t.Logf("%s, %s: %d SKIPPED checks in scenarios not held to every check:\n  %s", mode, requirements, len(skipped), strings.Join(skipped, "\n  "))
	}
	// Per-check figures (shown with -v): the statuses of every check, in
	// all and for each scenario.
	total := map[string]int{}
	var per []string
	slices.Sort(names)
	for _, name := range names {
		r := results[name]
		if r == nil {
			continue
		}
		counts := map[string]int{}
		for _, c := range r.checks {
			counts[c.Status]++
			total[c.Status]++
		}
		per = append(per, name+" "+statusCounts(counts))
	}
	t.Logf("%s, %s: checks %s; by scenario:\n  %s", mode, requirements, statusCounts(total), strings.Join(per, "\n  "))
	t.Logf("%s, %s: %d/%d scenarios passed (%d/%d of those scored)", mode, requirements, passed, len(names), scoredPassed, scored)
	if suiteCode != 0 && problems == 0 {
		t.Errorf("%s: the suite exited with %d though every result matched %s; its output ends:\n%s", mode, suiteCode, expectedFailuresFile, tail(console, 40))
	}
}

// strictSkips reports whether a SKIPPED check of the scenario fails it:
// a check the suite skips tested nothing, so every scenario is held to
// every check but those skipAllowed names.
func strictSkips(scenario string) bool {
	return true
}

// skipAllowed reports whether a SKIPPED check is one the suite rightly
// skips: the cache attributes (ttlMs, cacheScope) of a result on a
// revision before 2026-07-28, which does not define them; the standard
// headers of initialize and notifications/initialized, which a client of
// 2026-07-28 never sends (that revision has no handshake); and the
// placeholder check of the tasks status notifications.
func skipAllowed(c suiteCheck) bool {
	switch {
	case strings.HasSuffix(c.ID, "-cache-attributes") && strings.Contains(c.ErrorMessage, "not applicable on negotiated protocol 2025-"):
		return true
	case c.ID == "sep-2243-client-includes-standard-headers" &&
		(strings.Contains(c.ErrorMessage, "send a initialize request") || strings.Contains(c.ErrorMessage, "send a notifications/initialized request")):
		return true
	case c.ID == "tasks-status-notifications":
		return true // the suite's placeholder: it checks nothing yet
	}
	return false
}

// serverURLEnv names a server for TestOfficialSuiteServer to test instead
// of the everything-server it starts: redisstore's
// TestOfficialSuiteReplicas sets it to a round-robin proxy in front of
// three replicas sharing Redis.
const serverURLEnv = "MCPKIT_CONFORMANCE_SERVER_URL"

// TestOfficialSuiteServer runs the official suite's server scenarios
// against everything-server over Streamable HTTP (or the server at
// $MCPKIT_CONFORMANCE_SERVER_URL).
func TestOfficialSuiteServer(t *testing.T) {
	t.Parallel()
	suite := installedSuite(t)
	expected := readExpectedFailures(t)
	url, serverLog := os.Getenv(serverURLEnv), &lockedBuffer{}
	if url == "" {
		url, serverLog = startHTTPFixture(t, buildFixture(t, "everything-server"))
	} else {
		t.Logf("testing the server at %s (%s)", url, serverURLEnv)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range serverSuiteRuns {
		t.Run(run, func(t *testing.T) {
			out := suiteOutDir(t, "server-"+run)
			args := []string{"server", "--url", url, "--requirements", run, "-o", out,
				"--expected-failures", filepath.Join(wd, expectedFailuresFile)}
			if run == "all" {
				args[3], args[4] = "--suite", "all"
			}
			code, console := suite.run(t, out, nil, args...)
			judge(t, "server", run, out, console, code, suite.notScored(t, "server", run), expected["server"], nil)
			if t.Failed() {
				t.Logf("everything-server stderr:\n%s", tail(serverLog.String(), 40))
			}
		})
	}
	// The Skills extension is served on the handshake era too: its
	// scenarios, forced to run at 2025-11-25.
	for _, scenario := range skillsServerScenarios {
		t.Run("2025-11-25-forced/"+scenario, func(t *testing.T) {
			out := suiteOutDir(t, "server-2025-forced-"+scenario)
			code, console := suite.run(t, out, nil, "server", "--url", url, "--scenario", scenario,
				"--spec-version", "2025-11-25", "--force", "-o", out,
				"--expected-failures", filepath.Join(wd, expectedFailuresFile))
			judge(t, "server", "2025-11-25 (forced)", out, console, code, nil, nil, nil)
			if t.Failed() {
				t.Logf("everything-server stderr:\n%s", tail(serverLog.String(), 40))
			}
		})
	}
}

// skillsServerScenarios are the server scenarios of the Skills extension.
var skillsServerScenarios = []string{"sep-2640-skills-enumeration", "sep-2640-skills-directory", "sep-2640-skills-manifest"}

// clientWrapper runs the client under test for the suite (which starts
// it as `/bin/sh -c "<command> <url>"`), records its exit status per
// scenario, and stops it at the deadline: the suite's own timeout kills
// only the shell.
const clientWrapper = `#!/bin/sh
if command -v timeout >/dev/null 2>&1; then
  timeout -k 2 "$MCPKIT_CLIENT_DEADLINE" "$MCPKIT_CLIENT" "$@"
  rc=$?
  case $rc in 124|137) rc=timeout ;; esac
else
  "$MCPKIT_CLIENT" "$@"
  rc=$?
fi
printf '%s %s\n' "$rc" "$MCP_CONFORMANCE_SCENARIO" >"$MCPKIT_CLIENT_RC_DIR/$$"
[ "$rc" = 0 ]
`

// clientExits reads what clientWrapper recorded: each scenario's client
// exit status.
func clientExits(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		rc, scenario, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
		if !ok {
			t.Fatalf("client exit record %s: %q", e.Name(), b)
		}
		if old, seen := res[scenario]; seen && old != "0" {
			rc = old // the client ran twice; keep a failure
		}
		res[scenario] = rc
	}
	return res
}

// clientRefusedStatus is the exit status of everything-client when it
// stops because the authorizer refused to go on for a safety reason (a
// protected resource metadata document naming another resource, an
// issuer mismatch, the step-up limit): what a host does then is fail the
// connection, which is these scenarios' expected outcome.
const clientRefusedStatus = "3"

// clientMayRefuse are the client scenarios in which the suite expects
// the client to refuse and fail (they set allowClientError in the suite);
// in them, and only in them, everything-client's clientRefusedStatus is
// not a failure. Their checks still judge what the client did.
var clientMayRefuse = map[string]bool{
	"auth/scope-retry-limit":        true,
	"auth/resource-mismatch":        true,
	"auth/iss-supported-missing":    true,
	"auth/iss-wrong-issuer":         true,
	"auth/iss-unexpected":           true,
	"auth/iss-normalized":           true,
	"auth/metadata-issuer-mismatch": true,
}

// TestOfficialSuiteClient runs the official suite's client scenarios with
// everything-client.
func TestOfficialSuiteClient(t *testing.T) {
	t.Parallel()
	suite := installedSuite(t)
	expected := readExpectedFailures(t)
	bin := buildFixture(t, "everything-client")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range clientSuiteRuns {
		t.Run(run, func(t *testing.T) {
			tmp := t.TempDir()
			if strings.ContainsAny(tmp, " \t\n'\"\\$`") {
				t.Skipf("temporary directory %q cannot be used in the suite's shell command", tmp)
			}
			wrapper := filepath.Join(tmp, "client.sh")
			if err := os.WriteFile(wrapper, []byte(clientWrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			rcDir := filepath.Join(tmp, "rc")
			if err := os.Mkdir(rcDir, 0o755); err != nil {
				t.Fatal(err)
			}
			out := suiteOutDir(t, "client-"+run)
			env := []string{
				"MCPKIT_CLIENT=" + bin,
				"MCPKIT_CLIENT_RC_DIR=" + rcDir,
				fmt.Sprintf("MCPKIT_CLIENT_DEADLINE=%d", int(clientDeadline/time.Second)),
			}
			args := []string{"client", "--command", wrapper, "--requirements", run, "-o", out,
				"--expected-failures", filepath.Join(wd, expectedFailuresFile)}
			if run == "all" {
				args[3], args[4] = "--suite", "all"
			}
			code, console := suite.run(t, out, env, args...)
			exits := clientExits(t, rcDir)
			judge(t, "client", run, out, console, code, suite.notScored(t, "client", run), expected["client"], func(scenario string) string {
				return exits[scenario]
			})
		})
	}
}
