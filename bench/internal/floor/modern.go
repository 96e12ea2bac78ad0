package floor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/bench/internal/payload"
)

// ModernVersion is the stateless MCP revision that [ModernHTTPHandler] and
// [ModernHTTPClient] speak: no initialize handshake and no session; every
// request is a POST of its own that names the revision in its
// MCP-Protocol-Version header and in its _meta, together with the client's
// capabilities and identity.
const ModernVersion = "2026-07-28"

// codeHeaderMismatch is the JSON-RPC error code of revision 2026-07-28 for
// a request whose headers disagree with its body.
const codeHeaderMismatch = -32020

// requestMeta is the _meta every 2026-07-28 request carries, as the
// server decodes it.
type requestMeta struct {
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities *clientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         *implementation     `json:"io.modelcontextprotocol/clientInfo"`
}

// clientCapabilities are the capabilities a client declares. The floor
// server decodes them and looks no further; the values stay raw.
type clientCapabilities struct {
	Roots        json.RawMessage `json:"roots,omitempty"`
	Sampling     json.RawMessage `json:"sampling,omitempty"`
	Elicitation  json.RawMessage `json:"elicitation,omitempty"`
	Experimental json.RawMessage `json:"experimental,omitempty"`
}

// implementation names a client or server.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// modernParams are the params of a 2026-07-28 request as the server
// receives them: the tool name and raw arguments of tools/call (empty for
// tools/list) and the request's _meta.
type modernParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      *requestMeta    `json:"_meta"`
}

// resultMeta is the _meta of a result in revision 2026-07-28: the
// server's identity, which servers should send with every result.
type resultMeta struct {
	ServerInfo implementation `json:"io.modelcontextprotocol/serverInfo"`
}

// floorMeta is the floor servers' resultMeta.
var floorMeta = resultMeta{ServerInfo: implementation{Name: "floor", Version: "1"}}

// modernResult is the result of tools/call in revision 2026-07-28, which
// names the server and says whether the result is complete.
type modernResult struct {
	Meta       *resultMeta `json:"_meta,omitempty"`
	Content    []Content   `json:"content"`
	IsError    bool        `json:"isError,omitempty"`
	ResultType string      `json:"resultType"`
}

// resultComplete is the resultType of a complete result.
const resultComplete = "complete"

// modernRequest is a tools/call request of revision 2026-07-28 as the
// floor's client sends it over a stream (see [NewModernClient]).
type modernRequest struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      int64            `json:"id"`
	Method  string           `json:"method"`
	Params  modernCallParams `json:"params"`
}

// modernCallParams are the params of such a request, with the _meta the
// client encoded once.
type modernCallParams struct {
	Name      string          `json:"name"`
	Arguments EchoArgs        `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// inModernResponse is a tools/call response of revision 2026-07-28 as
// the floor's client receives it.
type inModernResponse struct {
	ID     int64         `json:"id"`
	Result *modernResult `json:"result"`
	Error  *rpcError     `json:"error"`
}

// ServeModern is [Serve] for revision 2026-07-28 (see
// [NewModernClient]): it answers newline-delimited tools/call requests
// for the echo tool whose params carry the revision's _meta, checking
// the revision there, with a result that names the server and says it is
// complete, until r reports EOF or another error.
func ServeModern(r io.Reader, w io.Writer) error {
	return serveLines(r, w, func(req *inRequest) any {
		resp := &modernResponse{JSONRPC: "2.0", ID: req.ID}
		resp.Result, resp.Error = handleModern(req)
		return resp
	})
}

// handleModern runs one request of revision 2026-07-28.
func handleModern(req *inRequest) (*modernResult, *rpcError) {
	if req.Method != "tools/call" {
		return nil, &rpcError{Code: -32601, Message: "method not found"}
	}
	var p modernParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	if p.Meta == nil || p.Meta.ProtocolVersion != ModernVersion || p.Meta.ClientCapabilities == nil {
		return nil, &rpcError{Code: -32602, Message: "missing or unsupported protocol version in _meta"}
	}
	if p.Name != "echo" {
		return nil, &rpcError{Code: -32602, Message: "unknown tool"}
	}
	var args EchoArgs
	if err := json.Unmarshal(p.Arguments, &args); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	return &modernResult{Meta: &floorMeta, Content: []Content{{Type: "text", Text: args.Message}}, ResultType: resultComplete}, nil
}

// modernResponse is a tools/call response as the server sends it.
type modernResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *modernResult   `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// modernToolsListResult is the floor server's answer to tools/list in
// revision 2026-07-28.
var modernToolsListResult = json.RawMessage(`{"tools":[` +
	`{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}},` +
	`{"name":"large","description":"large","inputSchema":{"type":"object"}}],"resultType":"complete",` +
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1"}}}`)

// ModernHTTPHandler is the no-SDK baseline of a Streamable HTTP server of
// revision 2026-07-28: a hand-written, stateless net/http handler. For
// each POST it checks the MCP-Protocol-Version and Mcp-Method headers,
// decodes the JSON-RPC envelope, then the params with their _meta
// (checking the revision there against the header, and Mcp-Name against
// the tool's name), then the tool's arguments, and answers with an
// application/json CallToolResult. It keeps nothing between requests,
// does no SSE and answers only tools/call (echo and large) and
// tools/list; any SDK does at least this much work per request.
type ModernHTTPHandler struct{}

// NewModernHTTPHandler returns a floor HTTP handler of revision
// 2026-07-28.
func NewModernHTTPHandler() *ModernHTTPHandler { return &ModernHTTPHandler{} }

// ServeHTTP implements [http.Handler].
func (*ModernHTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != ModernVersion {
		http.Error(w, "unsupported MCP-Protocol-Version "+strconv.Quote(version), http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHTTPBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	var req inRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification: this revision has none for a client to POST
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if r.Header.Get("Mcp-Method") != req.Method {
		writeModernError(w, req.ID, codeHeaderMismatch, "Mcp-Method header does not match the body")
		return
	}
	var p modernParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		writeModernError(w, req.ID, -32602, err.Error())
		return
	}
	if p.Meta == nil || p.Meta.ProtocolVersion != version {
		writeModernError(w, req.ID, codeHeaderMismatch, "_meta protocol version does not match the MCP-Protocol-Version header")
		return
	}
	switch req.Method {
	case "tools/list":
		writeJSON(w, outAny{JSONRPC: "2.0", ID: req.ID, Result: modernToolsListResult})
	case "tools/call":
		if r.Header.Get("Mcp-Name") != p.Name {
			writeModernError(w, req.ID, codeHeaderMismatch, "Mcp-Name header does not match the tool's name")
			return
		}
		var text string
		switch p.Name {
		case "echo":
			var args EchoArgs
			if err := json.Unmarshal(p.Arguments, &args); err != nil {
				writeModernError(w, req.ID, -32602, err.Error())
				return
			}
			text = args.Message
		case "large":
			text = payload.Large
		default:
			writeModernError(w, req.ID, -32602, "unknown tool")
			return
		}
		writeJSON(w, &modernResponse{JSONRPC: "2.0", ID: req.ID,
			Result: &modernResult{Meta: &floorMeta, Content: []Content{{Type: "text", Text: text}}, ResultType: resultComplete}})
	default:
		writeModernError(w, req.ID, -32601, "method not found")
	}
}

// writeModernError answers a request with a JSON-RPC error and HTTP 400.
func writeModernError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(outAny{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: message}})
}

// ModernHTTPClient is the no-SDK baseline of a Streamable HTTP client of
// revision 2026-07-28. It has no handshake and no session: each call is
// one POST, with the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers and a _meta naming the revision, the client's capabilities and
// its identity (encoded once, when the client is made), whose
// application/json (or SSE) answer it decodes. It is safe for concurrent
// use.
type ModernHTTPClient struct {
	hc     *http.Client
	url    string
	meta   []byte // the JSON of every request's _meta
	nextID atomic.Int64
}

// NewModernHTTPClient returns a client of the server at url that sends
// its requests through hc. It sends nothing itself.
func NewModernHTTPClient(hc *http.Client, url string) *ModernHTTPClient {
	return &ModernHTTPClient{hc: hc, url: url, meta: modernMeta()}
}

// modernMeta returns the JSON of the _meta of the floor clients' requests
// in revision 2026-07-28.
func modernMeta() []byte {
	meta, err := json.Marshal(map[string]any{
		"io.modelcontextprotocol/protocolVersion":    ModernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         implementation{Name: "floor", Version: "1"},
	})
	if err != nil {
		panic(err) // constant input
	}
	return meta
}

// post sends the request method with params (a JSON object without the
// closing brace, to which the client adds _meta; empty for none) and the
// MCP headers (name is Mcp-Name, or empty for none), and decodes the
// response's result into result, checking its id.
func (c *ModernHTTPClient) post(ctx context.Context, method, name string, params []byte, result any) error {
	id := c.nextID.Add(1)
	buf := make([]byte, 0, 96+len(params)+len(c.meta))
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":`...)
	buf = strconv.AppendQuote(buf, method) // method names are plain ASCII
	buf = append(buf, `,"params":`...)
	if len(params) == 0 {
		buf = append(buf, '{')
	} else {
		buf = append(buf, params...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"_meta":`...)
	buf = append(buf, c.meta...)
	buf = append(buf, "}}"...)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(buf))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", ModernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 && resp.Header.Get("Content-Type") != "application/json" {
		resp.Body.Close()
		return fmt.Errorf("floor: %s: HTTP %s", method, resp.Status)
	}
	out := struct {
		ID     int64     `json:"id"`
		Result any       `json:"result"`
		Error  *rpcError `json:"error"`
	}{Result: result}
	if err := decodeBody(resp, &out); err != nil {
		return fmt.Errorf("floor: decoding the %s response: %w", method, err)
	}
	switch {
	case out.Error != nil:
		return fmt.Errorf("floor: rpc error %d: %s", out.Error.Code, out.Error.Message)
	case out.ID != id:
		return fmt.Errorf("floor: response id %d, want %d", out.ID, id)
	}
	return nil
}

// callTool calls the named tool with args and returns its one text block.
func (c *ModernHTTPClient) callTool(ctx context.Context, name string, args any) (string, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	params := make([]byte, 0, 32+len(name)+len(a))
	params = append(params, `{"name":`...)
	params = strconv.AppendQuote(params, name) // tool names are plain ASCII
	params = append(params, `,"arguments":`...)
	params = append(params, a...)
	var res modernResult
	if err := c.post(ctx, "tools/call", name, params, &res); err != nil {
		return "", err
	}
	if res.ResultType != resultComplete || len(res.Content) != 1 {
		return "", errors.New("floor: malformed result")
	}
	return res.Content[0].Text, nil
}

// CallEcho calls the echo tool with message and returns the echoed text.
func (c *ModernHTTPClient) CallEcho(ctx context.Context, message string) (string, error) {
	return c.callTool(ctx, "echo", EchoArgs{Message: message})
}

// CallLarge calls the large tool and returns its text.
func (c *ModernHTTPClient) CallLarge(ctx context.Context) (string, error) {
	return c.callTool(ctx, "large", struct{}{})
}

// ListTools lists the server's tools and returns how many there are.
func (c *ModernHTTPClient) ListTools(ctx context.Context) (int, error) {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		ResultType string `json:"resultType"`
	}
	if err := c.post(ctx, "tools/list", "", nil, &res); err != nil {
		return 0, err
	}
	if res.ResultType != resultComplete {
		return 0, errors.New("floor: malformed tools/list result")
	}
	return len(res.Tools), nil
}
