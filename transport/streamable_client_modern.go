//go:build !mcpkit_nohttp

package transport

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
// JSON-RPC error as the body, which is the answer. Responses are not
// sent: a client of this revision answers no requests (see dropModern).

// dropModern reports whether Write drops m, a response (or a batch): a
// client of this revision sends none, as its server sends no requests,
// and a server that pushes requests on a response stream anyway would
// otherwise cost a POST for each. It is dropped whether or not the
// connection is still open, and reported (see droppedResponses) while it
// is.
func (c *streamableClientConn) dropModern(ctx context.Context, m jsonrpc.Message) bool {
	if _, ok := m.(*jsonrpc.Request); ok {
		return false
	}
	if !c.isClosed() {
		c.dropped.report(ctx, m)
	}
	return true
}

// writeModern POSTs the request or notification m with the revision's
// headers and handles the answer.
func (c *streamableClientConn) writeModern(ctx context.Context, m jsonrpc.Message, body []byte) error {
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		return nil // dropped by Write
	}
	method, name := r.Method, mirroredName(r, &c.metaMemo)
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
	resp, err := c.do(req)
	if err != nil {
		return fmt.Errorf("transport: POST: %w", err)
	}
	if !isSuccess(resp.StatusCode) && mediaType(headerValue(resp.Header, "Content-Type")) == "application/json" {
		// The body is the answer when it answers the request.
		data, rerr := readSized(resp.Body, resp.ContentLength, int64(c.limit), int64(c.limit))
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
// (tools/call, prompts/get), uri (resources/read) or taskId (tasks/get,
// tasks/update, tasks/cancel), encoded for a header; "" for other methods.
//
// The _meta this connection sends, the same with every request, is
// skipped by comparing it with the last (memo), not scanned; and when the
// member follows it at once, as this package's client writes params, the
// rest is not read (see leadingMember).
func mirroredName(r *jsonrpc.Request, memo *metaMemo) string {
	member := mirroredMember(r.Method)
	if member == "" {
		return ""
	}
	var known []byte
	if last := memo.load(); last != nil {
		known = last.text
	}
	if _, v, ok := leadingMember(r.Params, known, member); ok {
		s, _ := jsonString(v)
		return mcpheader.Encode(s)
	}
	var v jsontext.Value
	if scanMembers(r.Params, known, func(name []byte, value jsontext.Value) {
		switch {
		case isMemberName(name, member):
			v = value
		case string(name) == `"_meta"` && !bytes.Equal(value, known):
			memo.store(value, nil, nil)
		}
	}) != nil {
		return ""
	}
	s, _ := jsonString(v)
	return mcpheader.Encode(s)
}

// SetLogger makes l receive the connection's diagnostics, such as the
// responses it does not send in 2026-07-28; an MCP client passes its
// own logger, finding the method with a type assertion. Without one,
// they are discarded. It is safe for concurrent use.
func (c *streamableClientConn) SetLogger(l *slog.Logger) { c.dropped.logger.Store(l) }

// Bounds on the reports of dropped responses.
const (
	// droppedLogMax bounds the dropped responses logged a minute, the
	// first included; past it they are counted, and the count is logged
	// when the minute is over (at the next drop) or the connection closes.
	droppedLogMax = 5
	// droppedIDMax bounds the bytes of a request id shown in a report:
	// the server chose it.
	droppedIDMax = 64
)

// droppedResponses counts the responses a client of 2026-07-28 does not
// send, to requests its server pushed on a response stream, and reports
// them at warning level: each by its request id (never its content), at
// most droppedLogMax a minute, the first with why, and then the count of
// those not shown.
type droppedResponses struct {
	logger atomic.Pointer[slog.Logger] // nil: discard
	count  atomic.Int64                // responses dropped

	mu         sync.Mutex
	window     time.Time // start of the current minute of reports
	logged     int       // drops logged in the window
	suppressed int       // drops not logged in the window
}

// report counts the dropped response or batch m and logs it, within the
// rate limit.
func (d *droppedResponses) report(ctx context.Context, m jsonrpc.Message) {
	n, id := int64(1), ""
	switch m := m.(type) {
	case *jsonrpc.Response:
		id = m.ID.String()
	case jsonrpc.Batch:
		n = int64(len(m))
		if len(m) > 0 {
			if r, ok := m[0].(*jsonrpc.Response); ok {
				id = r.ID.String()
			}
		}
	}
	total := d.count.Add(n)
	l := d.logger.Load()
	if l == nil {
		return
	}
	now := time.Now()
	d.mu.Lock()
	suppressed := 0
	if now.Sub(d.window) >= time.Minute {
		suppressed, d.window, d.logged, d.suppressed = d.suppressed, now, 0, 0
	}
	show := d.logged < droppedLogMax
	if show {
		d.logged++
	} else {
		d.suppressed += int(n)
	}
	d.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if suppressed > 0 {
		d.logSuppressed(ctx, l, suppressed, total-n)
	}
	if !show {
		return
	}
	if len(id) > droppedIDMax {
		id = strings.ToValidUTF8(id[:droppedIDMax], "") + "..."
	}
	attrs := []any{"id", id, "dropped", total}
	if _, ok := m.(jsonrpc.Batch); ok {
		attrs = append(attrs, "batch", n)
	}
	if total == n {
		l.Log(ctx, slog.LevelWarn, "transport: not sending a response to a request the server pushed: a client of "+
			"2026-07-28 sends none, as a server of that revision sends no requests (it asks for input within a result)", attrs...)
		return
	}
	l.Log(ctx, slog.LevelWarn, "transport: not sending a response to a request the server pushed", attrs...)
}

// close logs the count of the drops not shown in the current window.
func (d *droppedResponses) close() {
	l := d.logger.Load()
	if l == nil {
		return
	}
	d.mu.Lock()
	suppressed := d.suppressed
	d.suppressed = 0
	d.mu.Unlock()
	if suppressed > 0 {
		d.logSuppressed(context.Background(), l, suppressed, d.count.Load())
	}
}

// logSuppressed logs the count of the drops not shown.
func (d *droppedResponses) logSuppressed(ctx context.Context, l *slog.Logger, suppressed int, total int64) {
	l.Log(ctx, slog.LevelWarn, "transport: more responses to requests the server pushed were not sent, and not shown",
		"responses", suppressed, "dropped", total)
}
