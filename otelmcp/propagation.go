package otelmcp

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Bounds on the trace context a peer sends. The W3C limits are 55 bytes
// for a traceparent of version 00 (other versions may be longer), 512
// bytes for a tracestate and 8192 for baggage; anything longer is
// ignored, unread.
const (
	maxTraceparent = 256
	maxTracestate  = 512
	maxBaggage     = 8192
	maxOther       = 512 // other keys a custom propagator asks for
)

func limit(key string) int {
	switch key {
	case "traceparent":
		return maxTraceparent
	case "tracestate":
		return maxTracestate
	case "baggage":
		return maxBaggage
	}
	return maxOther
}

// metaCarrier reads the trace context from the members of a request's
// _meta. It never writes.
type metaCarrier map[string]json.RawMessage

// Get returns the string member key, or "" when it is missing, not a
// string or too long.
func (c metaCarrier) Get(key string) string {
	raw, ok := c[key]
	if !ok || len(raw) > limit(key)+2 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || len(s) > limit(key) {
		return ""
	}
	return s
}

// Set does nothing: received _meta is not modified.
func (metaCarrier) Set(string, string) {}

// Keys returns the member names.
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// headerCarrier reads the trace context from HTTP headers, within the
// same bounds.
type headerCarrier http.Header

// Get returns the first value of the header key, or "" when it is too
// long.
func (c headerCarrier) Get(key string) string {
	v := http.Header(c).Get(key)
	if len(v) > limit(key) {
		return ""
	}
	return v
}

// Set does nothing.
func (headerCarrier) Set(string, string) {}

// Keys returns the header names.
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// wireCarrier writes the trace context into the _meta members of a
// message being sent.
type wireCarrier struct{ w *mcp.WireSend }

// Get returns "".
func (wireCarrier) Get(string) string { return "" }

// Set adds the member key with the string value.
func (c wireCarrier) Set(key, value string) {
	b, err := json.Marshal(value)
	if err != nil {
		return
	}
	if c.w.Meta == nil {
		c.w.Meta = make(map[string]json.RawMessage, 3)
	}
	c.w.Meta[key] = b
}

// Keys returns the member names set.
func (c wireCarrier) Keys() []string {
	keys := make([]string, 0, len(c.w.Meta))
	for k := range c.w.Meta {
		keys = append(keys, k)
	}
	return keys
}

// extract returns ctx with the trace context of req: from its _meta, or
// else from the headers of the HTTP request that carried it.
func (in *instr) extract(ctx context.Context, req mcp.Request, info *transport.HTTPRequestInfo) context.Context {
	other := mcp.MetaOf(req.Parameters()).Other
	if _, ok := other["traceparent"]; ok || info == nil {
		return in.prop.Extract(ctx, metaCarrier(other))
	}
	return in.prop.Extract(ctx, headerCarrier(info.Header))
}

// inject puts the trace context of ctx into the message w describes.
func (in *instr) inject(ctx context.Context, w *mcp.WireSend) {
	in.prop.Inject(ctx, wireCarrier{w})
}
