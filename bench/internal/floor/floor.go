// Package floor is the no-SDK baseline for the mcpkit benchmarks: a minimal,
// hand-written JSON-RPC 2.0 client and server that speak just enough of the
// MCP tools/call exchange to echo a message, using encoding/json and
// newline-delimited framing.
//
// It is deliberately small but not a toy: the client multiplexes concurrent
// calls over one connection (a pending-call table keyed by request id and a
// single reader goroutine), and the server decodes the envelope, the params
// and the arguments in three steps as a general-purpose server would. Any
// MCP SDK has to do at least this much work per call, so its cost is the
// floor the SDKs are measured against.
package floor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpkit/mcpkit/bench/internal/payload"
)

// maxLine bounds one inbound frame, like the SDKs' stdio transports do.
const maxLine = 16 << 20

// EchoArgs is the echo tool's input.
type EchoArgs struct {
	Message string `json:"message"`
}

// request is a JSON-RPC request as the client sends it.
type request struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      int64          `json:"id"`
	Method  string         `json:"method"`
	Params  callToolParams `json:"params"`
}

// callToolParams are the params of a tools/call request.
type callToolParams struct {
	Name      string   `json:"name"`
	Arguments EchoArgs `json:"arguments"`
}

// inRequest is a JSON-RPC request as the server receives it: the params
// stay raw until the method is known.
type inRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// inCallToolParams are tools/call params with the arguments still raw, to
// be decoded by the tool that is named.
type inCallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Content is one item of a tool result's content.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// CallToolResult is the result of a tools/call request.
type CallToolResult struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// outResponse is a JSON-RPC response as the server sends it.
type outResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *CallToolResult `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// inResponse is a JSON-RPC response as the client receives it.
type inResponse struct {
	ID     int64           `json:"id"`
	Result *CallToolResult `json:"result"`
	Error  *rpcError       `json:"error"`
}

// Serve answers newline-delimited tools/call requests for the echo tool
// (and initialize, with a fixed result) read from r, writing responses to
// w, until r reports EOF or another error.
// Requests are handled in order on the calling goroutine; each response
// costs one Write on w (json.Encoder appends the newline).
func Serve(r io.Reader, w io.Writer) error {
	return serveLines(r, w, func(req *inRequest) any {
		if req.Method == "initialize" {
			return &outAny{JSONRPC: "2.0", ID: req.ID, Result: initializeResult}
		}
		resp := &outResponse{JSONRPC: "2.0", ID: req.ID}
		resp.Result, resp.Error = handle(req)
		return resp
	})
}

// serveLines reads newline-delimited requests from r and writes the
// response answer gives each to w, until r reports EOF or another error.
func serveLines(r io.Reader, w io.Writer, answer func(*inRequest) any) error {
	br := bufio.NewReaderSize(r, 64<<10)
	enc := json.NewEncoder(w)
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var req inRequest
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("floor: decoding request: %w", err)
		}
		if err := enc.Encode(answer(&req)); err != nil {
			return err
		}
	}
}

// handle runs one request.
func handle(req *inRequest) (*CallToolResult, *rpcError) {
	if req.Method != "tools/call" {
		return nil, &rpcError{Code: -32601, Message: "method not found"}
	}
	var p inCallToolParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	switch p.Name {
	case "echo":
	case "large":
		return &CallToolResult{Content: []Content{{Type: "text", Text: payload.Large}}}, nil
	default:
		return nil, &rpcError{Code: -32602, Message: "unknown tool"}
	}
	var args EchoArgs
	if err := json.Unmarshal(p.Arguments, &args); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	return &CallToolResult{Content: []Content{{Type: "text", Text: args.Message}}}, nil
}

// readLine returns the next newline-terminated frame of br, without the
// newline. The slice is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return line, nil
		}
		return nil, err
	}
	// Long frame: accumulate.
	buf := append([]byte(nil), line...)
	for {
		line, err = br.ReadSlice('\n')
		buf = append(buf, line...)
		if len(buf) > maxLine {
			return nil, errors.New("floor: frame too long")
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// ErrClosed is returned by calls made on, or pending in, a closed Client.
var ErrClosed = errors.New("floor: client closed")

// Client is a JSON-RPC client for the echo tool that is safe for
// concurrent use: each call is matched to its response by id.
type Client struct {
	// wmu serializes writes. It is separate from mu so that the reader
	// goroutine can dispatch a response while a writer is blocked on a
	// synchronous pipe whose other end is itself waiting for that reader.
	wmu sync.Mutex
	w   io.WriteCloser
	enc *json.Encoder

	meta []byte // the _meta of every request (revision 2026-07-28), or nil

	mu      sync.Mutex // guards nextID, pending, err
	nextID  int64
	pending map[int64]chan *inResponse
	err     error

	done chan struct{} // closed when the reader goroutine exits
}

// NewClient starts a client that writes requests to w and reads responses
// from r. Close closes w and waits for r to be drained to EOF.
func NewClient(r io.Reader, w io.WriteCloser) *Client {
	c := &Client{
		w:       w,
		enc:     json.NewEncoder(w),
		pending: make(map[int64]chan *inResponse),
		done:    make(chan struct{}),
	}
	go c.read(r)
	return c
}

// NewModernClient is [NewClient] for revision 2026-07-28, to be served by
// [ServeModern]: no handshake, and every request's params carry the
// _meta naming the revision, the client's capabilities and its identity
// (encoded once, here); a result must say it is complete.
func NewModernClient(r io.Reader, w io.WriteCloser) *Client {
	c := &Client{
		w:       w,
		enc:     json.NewEncoder(w),
		meta:    modernMeta(),
		pending: make(map[int64]chan *inResponse),
		done:    make(chan struct{}),
	}
	go c.read(r)
	return c
}

// read dispatches responses to waiting callers until r fails.
func (c *Client) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br)
		if err != nil {
			break
		}
		var resp *inResponse
		if resp, err = c.decode(line); err != nil {
			break
		}
		c.mu.Lock()
		ch := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	if errors.Is(err, io.EOF) {
		err = ErrClosed
	}
	c.fail(err)
}

// decode decodes a response: a result of revision 2026-07-28 for a
// modern client, which must say it is complete, or else one of the
// handshake era.
func (c *Client) decode(line []byte) (*inResponse, error) {
	if c.meta == nil {
		resp := new(inResponse)
		return resp, json.Unmarshal(line, resp)
	}
	var m inModernResponse
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	resp := &inResponse{ID: m.ID, Error: m.Error}
	if r := m.Result; r != nil {
		if r.ResultType != resultComplete {
			resp.Error = &rpcError{Code: -32603, Message: "floor: result not complete"}
		} else {
			resp.Result = &CallToolResult{Content: r.Content, IsError: r.IsError}
		}
	}
	return resp, nil
}

// fail records err and releases every pending call.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// CallEcho calls the echo tool with message and returns the echoed text.
func (c *Client) CallEcho(ctx context.Context, message string) (string, error) {
	ch := make(chan *inResponse, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return "", c.err
	}
	c.nextID++
	id := c.nextID
	var req any = &request{JSONRPC: "2.0", ID: id, Method: "tools/call",
		Params: callToolParams{Name: "echo", Arguments: EchoArgs{Message: message}}}
	if c.meta != nil {
		req = &modernRequest{JSONRPC: "2.0", ID: id, Method: "tools/call",
			Params: modernCallParams{Name: "echo", Arguments: EchoArgs{Message: message}, Meta: c.meta}}
	}
	c.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	err := c.enc.Encode(req)
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
		return "", err
	}

	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return "", err
		}
		if resp.Error != nil {
			return "", fmt.Errorf("floor: rpc error %d: %s", resp.Error.Code, resp.Error.Message)
		}
		if resp.Result == nil || len(resp.Result.Content) != 1 {
			return "", errors.New("floor: malformed result")
		}
		return resp.Result.Content[0].Text, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return "", ctx.Err()
	}
}

// Close closes the request stream and waits for the server to close the
// response stream.
func (c *Client) Close() error {
	c.wmu.Lock()
	err := c.w.Close()
	c.wmu.Unlock()
	<-c.done
	return err
}
