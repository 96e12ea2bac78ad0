package floor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxHTTPBody bounds one POST body on the floor's HTTP server.
const maxHTTPBody = 4 << 20

// protocolVersion is the MCP revision the floor's HTTP client and server
// speak.
const protocolVersion = "2025-11-25"

// httpSession is what the floor's HTTP server remembers of a session.
type httpSession struct {
	protocolVersion string
	lastUsed        atomic.Int64 // unix nanoseconds, for an idle sweep a real server would run
	// stream is closed when the session ends, which ends its standalone
	// GET stream; nil until a GET opens one. Guarded by the handler's mu.
	stream chan struct{}
}

// HTTPHandler is the no-SDK baseline of a Streamable HTTP MCP server: a
// hand-written net/http handler that answers POSTed JSON-RPC requests
// with application/json, keeps a table of sessions keyed by a random
// Mcp-Session-Id and serves the echo, large and tools/list requests the
// benchmarks make. A GET opens a session's standalone stream, which stays
// open, without events, until the session ends. It keeps no event log
// and checks only the headers it needs; any SDK does at least this much
// work per request.
type HTTPHandler struct {
	mu       sync.RWMutex
	sessions map[string]*httpSession
}

// NewHTTPHandler returns an empty floor HTTP handler.
func NewHTTPHandler() *HTTPHandler {
	return &HTTPHandler{sessions: make(map[string]*httpSession)}
}

// ServeHTTP implements [http.Handler].
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.stream(w, r)
	case http.MethodDelete:
		id := r.Header.Get("Mcp-Session-Id")
		h.mu.Lock()
		s, ok := h.sessions[id]
		delete(h.sessions, id)
		if ok && s.stream != nil {
			close(s.stream)
		}
		h.mu.Unlock()
		if !ok {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// post serves one POSTed JSON-RPC message.
func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
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
	if req.Method == "initialize" {
		id := rand.Text()
		s := &httpSession{protocolVersion: protocolVersion}
		s.lastUsed.Store(time.Now().UnixNano())
		h.mu.Lock()
		h.sessions[id] = s
		h.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		writeJSON(w, outAny{JSONRPC: "2.0", ID: req.ID, Result: initializeResult})
		return
	}
	h.mu.RLock()
	s := h.sessions[r.Header.Get("Mcp-Session-Id")]
	h.mu.RUnlock()
	if s == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	s.lastUsed.Store(time.Now().UnixNano())
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch req.Method {
	case "tools/list":
		writeJSON(w, outAny{JSONRPC: "2.0", ID: req.ID, Result: toolsListResult})
	case "tools/call":
		resp := outResponse{JSONRPC: "2.0", ID: req.ID}
		resp.Result, resp.Error = handle(&req)
		writeJSON(w, &resp)
	default:
		writeJSON(w, outAny{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{Code: -32601, Message: "method not found"}})
	}
}

// stream serves a session's standalone stream: headers at once, then
// nothing until the session ends or the client leaves.
func (h *HTTPHandler) stream(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "not acceptable", http.StatusNotAcceptable)
		return
	}
	h.mu.Lock()
	s := h.sessions[r.Header.Get("Mcp-Session-Id")]
	var end chan struct{}
	if s != nil && s.stream == nil {
		end = make(chan struct{})
		s.stream = end
	}
	h.mu.Unlock()
	switch {
	case s == nil:
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	case end == nil:
		http.Error(w, "the session has a stream", http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	select {
	case <-end:
	case <-r.Context().Done():
	}
}

// Sessions reports how many sessions the handler holds.
func (h *HTTPHandler) Sessions() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.sessions)
}

// writeJSON writes v as an application/json response.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// outAny is a JSON-RPC response with a result of any type.
type outAny struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// initializeResult is the floor server's answer to initialize.
var initializeResult = map[string]any{
	"protocolVersion": protocolVersion,
	"capabilities":    map[string]any{"tools": map[string]any{}},
	"serverInfo":      map[string]any{"name": "floor", "version": "1"},
}

// toolsListResult is the floor server's answer to tools/list.
var toolsListResult = json.RawMessage(`{"tools":[` +
	`{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}},` +
	`{"name":"large","description":"large","inputSchema":{"type":"object"}}]}`)

// HTTPClient is the no-SDK baseline of a Streamable HTTP MCP client
// session: each call is one POST whose application/json response it
// decodes. It is safe for concurrent use.
type HTTPClient struct {
	hc        *http.Client
	url       string
	sessionID string
	nextID    atomic.Int64
	// streamEnd, when the client opened a standalone stream, is closed
	// once the stream's body is read to its end, and streamErr is why it
	// ended if not cleanly.
	streamEnd chan struct{}
	streamErr error
}

// DialHTTP initializes a session with the server at url: it POSTs
// initialize and notifications/initialized through hc.
func DialHTTP(ctx context.Context, hc *http.Client, url string) (*HTTPClient, error) {
	return dialHTTP(ctx, hc, url, false)
}

// DialHTTPStream is DialHTTP with a GET that opens the session's
// standalone stream, as SDK clients do: the GET goes out alongside
// notifications/initialized, and DialHTTPStream returns once both are
// answered. A goroutine reads the stream, which carries no events from
// the floor's server, until Close ends the session.
func DialHTTPStream(ctx context.Context, hc *http.Client, url string) (*HTTPClient, error) {
	return dialHTTP(ctx, hc, url, true)
}

func dialHTTP(ctx context.Context, hc *http.Client, url string, stream bool) (*HTTPClient, error) {
	c := &HTTPClient{hc: hc, url: url}
	init := map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "floor", "version": "1"},
	}
	resp, err := c.post(ctx, "initialize", init, true)
	if err != nil {
		return nil, err
	}
	c.sessionID = resp.Header.Get("Mcp-Session-Id")
	var out struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	err = decodeBody(resp, &out)
	switch {
	case err != nil:
		return nil, fmt.Errorf("floor: decoding initialize result: %w", err)
	case out.Error != nil:
		return nil, fmt.Errorf("floor: initialize: %s", out.Error.Message)
	case c.sessionID == "":
		return nil, errors.New("floor: no session ID")
	}
	var opened chan error
	if stream {
		opened = make(chan error, 1)
		go func() { opened <- c.openStream(ctx) }()
	}
	resp, err = c.post(ctx, "notifications/initialized", nil, false)
	if err == nil {
		err = decodeBody(resp, nil)
	}
	if opened != nil {
		if serr := <-opened; err == nil {
			err = serr
		}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// openStream GETs the session's standalone stream and starts the
// goroutine that reads it.
func (c *HTTPClient) openStream(ctx context.Context) error {
	// The stream outlives ctx: it ends with the session.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sessionID)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return fmt.Errorf("floor: GET: HTTP %s", resp.Status)
	}
	c.streamEnd = make(chan struct{})
	go func() {
		defer close(c.streamEnd)
		_, c.streamErr = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	return nil
}

// post sends one JSON-RPC message (a request when isRequest) and returns
// the response, whose body the caller must close.
func (c *HTTPClient) post(ctx context.Context, method string, params any, isRequest bool) (*http.Response, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0",`)
	if isRequest {
		buf.WriteString(`"id":`)
		buf.WriteString(strconv.FormatInt(c.nextID.Add(1), 10))
		buf.WriteByte(',')
	}
	buf.WriteString(`"method":`)
	m, _ := json.Marshal(method)
	buf.Write(m)
	if params != nil {
		buf.WriteString(`,"params":`)
		if err := json.NewEncoder(&buf).Encode(params); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, &buf)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.sessionID)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return nil, fmt.Errorf("floor: %s: HTTP %s", method, resp.Status)
	}
	return resp, nil
}

// callTool calls the named tool and returns its one text block.
func (c *HTTPClient) callTool(ctx context.Context, name string, args any) (string, error) {
	resp, err := c.post(ctx, "tools/call", callToolParams2{Name: name, Arguments: args}, true)
	if err != nil {
		return "", err
	}
	var out inResponse
	if err := decodeBody(resp, &out); err != nil {
		return "", fmt.Errorf("floor: decoding result: %w", err)
	}
	if out.Error != nil {
		return "", fmt.Errorf("floor: rpc error %d: %s", out.Error.Code, out.Error.Message)
	}
	if out.Result == nil || len(out.Result.Content) != 1 {
		return "", errors.New("floor: malformed result")
	}
	return out.Result.Content[0].Text, nil
}

// callToolParams2 are tools/call params with any arguments.
type callToolParams2 struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

// CallEcho calls the echo tool with message and returns the echoed text.
func (c *HTTPClient) CallEcho(ctx context.Context, message string) (string, error) {
	return c.callTool(ctx, "echo", EchoArgs{Message: message})
}

// CallLarge calls the large tool and returns its text.
func (c *HTTPClient) CallLarge(ctx context.Context) (string, error) {
	return c.callTool(ctx, "large", struct{}{})
}

// ListTools lists the server's tools and returns how many there are.
func (c *HTTPClient) ListTools(ctx context.Context) (int, error) {
	resp, err := c.post(ctx, "tools/list", struct{}{}, true)
	if err != nil {
		return 0, err
	}
	var out struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := decodeBody(resp, &out); err != nil {
		return 0, fmt.Errorf("floor: decoding tools/list: %w", err)
	}
	return len(out.Result.Tools), nil
}

// Close ends the session with DELETE.
func (c *HTTPClient) Close(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", c.sessionID)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return fmt.Errorf("floor: DELETE: HTTP %s", resp.Status)
	}
	if err := decodeBody(resp, nil); err != nil {
		return err
	}
	if c.streamEnd != nil {
		// The server ends the stream with the session; reading it to its
		// end returns its connection to the pool.
		select {
		case <-c.streamEnd:
			return c.streamErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// decodeBody decodes the JSON-RPC message in the body of resp into v
// (nil: discard it), reads the body to its end, so that the connection
// can be reused, and closes it. The body is either application/json or an
// SSE stream whose first event with data holds the message (servers that
// answer every request with SSE, as go-sdk does by default).
func decodeBody(resp *http.Response, v any) error {
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if v == nil {
			return nil
		}
		data, err := firstSSEData(body)
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			return err
		}
	}
	_, err := io.Copy(io.Discard, resp.Body)
	return err
}

// firstSSEData returns the data of the first event in stream that has
// any.
func firstSSEData(stream []byte) ([]byte, error) {
	var data []byte
	for len(stream) > 0 {
		line, rest, _ := bytes.Cut(stream, []byte("\n"))
		stream = rest
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				return data, nil
			}
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
	if len(data) > 0 {
		return data, nil
	}
	return nil, errors.New("floor: SSE response without data")
}

// NewHTTPClient returns a client for the existing session sessionID of
// the server at url, for example to end it with Close.
func NewHTTPClient(hc *http.Client, url, sessionID string) *HTTPClient {
	return &HTTPClient{hc: hc, url: url, sessionID: sessionID}
}

// SessionID returns the session's Mcp-Session-Id.
func (c *HTTPClient) SessionID() string { return c.sessionID }
