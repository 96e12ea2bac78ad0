package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The client of Streamable HTTP in 2026-07-28 and later, which the mcp
// package selects with SetProtocolVersion: every message is a POST of its
// own, with no session, no standalone stream and no DELETE. Each carries
// MCP-Protocol-Version, Mcp-Method and, for tools/call, prompts/get and
// resources/read, Mcp-Name (Base64 in its sentinel form when the value is
// not plain ASCII); the caller adds Mcp-Param-* headers through
// WithHTTPHeader. The server's errors come with a 4xx status and the
// JSON-RPC error as the body, which is the answer.

// writeModern POSTs m with the revision's headers and handles the answer.
// It drops a response (or a batch): a client of this revision sends none,
// as its server sends no requests, and a server that pushes requests on a
// response stream anyway would otherwise cost a POST for each.
func (c *streamableClientConn) writeModern(ctx context.Context, m jsonrpc.Message, body []byte) error {
	if _, ok := m.(*jsonrpc.Request); !ok {
		return nil
	}
	method, name := "", ""
	if r, ok := m.(*jsonrpc.Request); ok {
		method = r.Method
		name = mirroredName(r)
	}
	rctx, release := c.link(ctx)
	owned := false // a goroutine took over rctx
	defer func() {
		if !owned {
			release()
		}
	}()
	req, err := c.newRequest(rctx, http.MethodPost, c.url, body,
		"Content-Type", contentTypeJSON, "Accept", acceptJSONOrSSE, headerProtocolVersion, c.version(),
		headerMethod, method, headerName, name)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("transport: POST: %w", err)
	}
	if !isSuccess(resp.StatusCode) && mediaType(resp.Header.Get("Content-Type")) == "application/json" {
		// The body is the answer when it answers the request.
		data, rerr := readSized(&io.LimitedReader{R: resp.Body, N: int64(c.limit) + 1}, resp.ContentLength, int64(c.limit))
		resp.Body.Close()
		if rerr == nil && len(data) <= c.limit {
			if msg, derr := decodeOwned(nil, data); derr == nil { // data is ours alone
				if r, ok := msg.(*jsonrpc.Response); ok && r.ID.IsValid() {
					st := &clientStream{inline: true}
					st.expect(m)
					st.answered(msg)
					if c.deliver(msg, nil, false) {
						c.failPending(rctx, st, "the server's response did not answer the request")
					}
					return nil
				}
			}
		}
		return fmt.Errorf("transport: the server answered %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	owned, err = c.handle(rctx, release, m, resp, false)
	return err
}

// mirroredName returns the Mcp-Name header of a request: its params' name
// (tools/call, prompts/get) or uri (resources/read), encoded for a header;
// "" for other methods.
func mirroredName(r *jsonrpc.Request) string {
	var member string
	switch r.Method {
	case "tools/call", "prompts/get":
		member = `"name"`
	case "resources/read":
		member = `"uri"`
	default:
		return ""
	}
	var v jsontext.Value
	if scanMembers(r.Params, func(name []byte, value jsontext.Value) {
		if string(name) == member {
			v = value
		}
	}) != nil {
		return ""
	}
	s, _ := jsonString(v)
	return mcpheader.Encode(s)
}
