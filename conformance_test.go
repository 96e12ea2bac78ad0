package mcpkit_test

// Wire-level conformance for the handshake era (2024-11-05 … 2025-11-25):
// scripted client lines against a real mcp.Server over newline-delimited
// pipes, each with the exact response expected (compared as JSON values,
// so member order does not matter, but every member and value does).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
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
