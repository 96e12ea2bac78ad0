package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// rawHTTP sends a request with the JSON and Accept headers of a client,
// and header, to srv, and returns the response and its body.
func rawHTTP(t *testing.T, srv *httptest.Server, method string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

// TestModernHTTPStatuses posts 2026-07-28 requests, good and bad, to a
// dual-era endpoint and checks the HTTP status and the JSON-RPC answer of
// each, and that the endpoint keeps serving sessions of the handshake era.
func TestModernHTTPStatuses(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "dual", Version: "1"}, nil)
	if err := AddTool(s, &Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := NewStreamableHTTPHandler(s, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()

	meta := func(version string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	const v = "2026-07-28"
	type hdr = map[string]string
	std := func(method, name string) hdr {
		h := hdr{"MCP-Protocol-Version": v, "Mcp-Method": method}
		if name != "" {
			h["Mcp-Name"] = name
		}
		return h
	}
	tests := []struct {
		name   string
		header hdr
		body   string
		status int
		code   float64 // 0: a result
		msg    string  // a substring of the error message
	}{
		{"discover", std("server/discover", ""), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta(v) + `}}`, 200, 0, ""},
		{"tools/call", std("tools/call", "echo"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta(v) + `}}`, 200, 0, ""},
		{"Mcp-Name in base64", std("tools/call", "=?base64?ZWNobw==?="), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta(v) + `}}`, 200, 0, ""},
		{"missing _meta", std("server/discover", ""), `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}`, 400, -32602, "protocolVersion"},
		{"missing capabilities", std("tools/list", ""), `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400, -32602, "clientCapabilities"},
		{"version not a string", std("tools/list", ""), `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}}`, 400, -32602, ""},
		{"header and body disagree", std("tools/list", ""), `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta("2099-01-01") + `}}`, 400, -32020, "MCP-Protocol-Version"},
		{"unsupported version", hdr{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + meta("2099-01-01") + `}}`, 400, -32022, "2099-01-01"},
		{"missing Mcp-Method", hdr{"MCP-Protocol-Version": v}, `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + meta(v) + `}}`, 400, -32020, "Mcp-Method"},
		{"Mcp-Method disagrees", std("tools/call", "echo"), `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{` + meta(v) + `}}`, 400, -32020, "Mcp-Method"},
		{"missing Mcp-Name", std("tools/call", ""), `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo",` + meta(v) + `}}`, 400, -32020, "Mcp-Name"},
		{"Mcp-Name disagrees", std("tools/call", "other"), `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo",` + meta(v) + `}}`, 400, -32020, "Mcp-Name"},
		{"Mcp-Name bad base64", std("tools/call", "=?base64?***?="), `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo",` + meta(v) + `}}`, 400, -32020, "Mcp-Name"},
		{"removed method", std("ping", ""), `{"jsonrpc":"2.0","id":14,"method":"ping","params":{` + meta(v) + `}}`, 404, -32601, "removed"},
		{"unknown method", std("no/such", ""), `{"jsonrpc":"2.0","id":15,"method":"no/such","params":{` + meta(v) + `}}`, 404, -32601, ""},
		{"a batch", std("tools/list", ""), `[{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{` + meta(v) + `}}]`, 400, -32600, "batch"},
		// A member name twice: the JSON-RPC layer refuses the message, so
		// the header checks and the params decode, which read the params
		// again without checking names (see receivedOption), never see a
		// second "name" or _meta that the other reading would miss.
		{"name twice", std("tools/call", "echo"), `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","name":"other",` + meta(v) + `}}`, 400, -32700, ""},
		{"_meta twice", std("tools/list", ""), `{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{` + meta(v) + `,` + meta("2099-01-01") + `}}`, 400, -32700, ""},
		{"a member twice in _meta", std("tools/list", ""), `{"jsonrpc":"2.0","id":19,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`, 400, -32700, ""},
		{"a notification", std("notifications/cancelled", ""), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawHTTP(t, srv, http.MethodPost, tt.header, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatal("a 2026-07-28 exchange was given a session")
			}
			if tt.status == 202 {
				return
			}
			var m struct {
				ID     any             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    float64 `json:"code"`
					Message string  `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("answer %s: %v", body, err)
			}
			if tt.code == 0 {
				if m.Error != nil || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
					t.Fatalf("answer %s, want a complete result", body)
				}
				return
			}
			if m.Error == nil || m.Error.Code != tt.code || !strings.Contains(m.Error.Message, tt.msg) {
				t.Fatalf("answer %s, want error %v mentioning %q", body, tt.code, tt.msg)
			}
			if tt.code != -32600 && tt.code != -32700 && m.ID == nil {
				t.Fatalf("answer %s does not carry the request's id", body)
			}
		})
	}
	// The same endpoint serves handshake-era sessions.
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake})
	cs, err := c.Connect(t.Context(), streamableClient(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ProtocolVersion() != LatestVersion {
		t.Fatalf("handshake session negotiated %s", cs.ProtocolVersion())
	}
}

// TestModernOnlyHTTPEndpoint checks an endpoint that serves only
// 2026-07-28 (StreamableHTTPOptions.SupportedVersions): GET and DELETE
// get 405, a Mcp-Session-Id header is ignored, initialize gets 400, and
// the clients behave: the default one speaks 2026-07-28, one pinned to
// the handshake era fails.
func TestModernOnlyHTTPEndpoint(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "modern", Version: "1"}, nil)
	h := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SupportedVersions: []string{Version20260728}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	modern := map[string]string{"MCP-Protocol-Version": Version20260728, "Mcp-Method": "server/discover"}
	tests := []struct {
		name   string
		method string
		header map[string]string
		body   string
		status int
	}{
		{"GET", http.MethodGet, map[string]string{"MCP-Protocol-Version": Version20260728}, "", 405},
		{"DELETE", http.MethodDelete, map[string]string{"Mcp-Session-Id": "abc"}, "", 405},
		{"discover", http.MethodPost, modern, discover, 200},
		{"discover with a session ID", http.MethodPost, map[string]string{"MCP-Protocol-Version": Version20260728, "Mcp-Method": "server/discover", "Mcp-Session-Id": "abc"}, discover, 200},
		{"initialize", http.MethodPost, nil, initialize, 400},
		{"initialize naming 2025-11-25", http.MethodPost, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, initialize, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawHTTP(t, srv, tt.method, tt.header, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 405 && resp.Header.Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", resp.Header.Get("Allow"))
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Error("a session ID was minted or echoed")
			}
		})
	}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), streamableClient(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ProtocolVersion() != Version20260728 {
		t.Errorf("the default client speaks %s", cs.ProtocolVersion())
	}
	if _, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake}).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL, DisableSSEFallback: true}); err == nil {
		t.Error("a client of the handshake era connected to an endpoint of 2026-07-28 only")
	}
}

// TestModernHTTPPerPeerBound checks that 2026-07-28 exchanges held open
// (subscriptions/listen streams) count against MaxSessionsPerPeer on an
// endpoint that serves sessions too: one peer cannot hold every slot.
func TestModernHTTPPerPeerBound(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	if err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{MaxSessionsPerPeer: 2})
	// Loopback addresses are not counted per peer; principals are.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(transport.WithPrincipal(r.Context(), "alice")))
	}))
	defer srv.Close()
	defer h.Close()
	post := func(ctx context.Context, method, params string) *http.Response {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}` + params + `}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := range 2 {
		ctx, cancel := context.WithCancel(t.Context())
		cancels = append(cancels, cancel)
		resp := post(ctx, "subscriptions/listen", `,"notifications":{"toolsListChanged":true}`)
		defer resp.Body.Close()
		// The acknowledgment is the stream's first event: the listen is open.
		line, err := bufio.NewReader(resp.Body).ReadString('}')
		if resp.StatusCode != 200 || err != nil || !strings.Contains(line, "acknowledged") {
			t.Fatalf("listen %d: %d %q %v", i, resp.StatusCode, line, err)
		}
	}
	resp := post(t.Context(), "tools/list", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third exchange of a peer holding two: %d, want 429", resp.StatusCode)
	}
	cancels[0]() // the client closes one stream
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp := post(t.Context(), "tools/list", "")
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a stream closed: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond) // polling: the server notices the close on its own
	}
}

// A 2026-07-28 request's handler sees the values of its POST's context,
// and its context ends when the client goes away, whether the handler
// waits on Done or polls Err.
func TestModernHTTPClientGoneCancels(t *testing.T) {
	checkGoroutines(t)
	type key struct{}
	for _, wait := range []string{"done", "err"} {
		t.Run(wait, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			started, stopped := make(chan any, 1), make(chan error, 1)
			AddTool(s, &Tool{Name: "block"}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (string, error) {
				started <- ctx.Value(key{})
				if wait == "done" {
					<-ctx.Done()
				} else {
					for ctx.Err() == nil { // a handler that polls
						runtime.Gosched()
					}
				}
				stopped <- context.Cause(ctx)
				return "", ctx.Err()
			})
			h := NewStreamableHTTPHandler(s, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), key{}, "v")))
			}))
			defer srv.Close()
			defer h.Close()
			ctx, cancel := context.WithCancel(t.Context())
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"block","arguments":{}}}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "block")
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := srv.Client().Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			if v := <-started; v != "v" {
				t.Fatalf("the handler's context has %v for the POST's value", v)
			}
			cancel()
			if err := <-stopped; err == nil {
				t.Fatal("the handler's context ended without a cause")
			}
			<-done
		})
	}
}
