package mcp

import (
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// The hand-written encoders below write the most frequent messages in
// their common shape by appending bytes, with no reflection and no second
// pass over values already encoded (the client's _meta envelope, the
// arguments). They report false for any other shape, which the engine
// encodes instead (see marshalWith); the output is the engine's, byte for
// byte (TestAppendWire holds them to it).

// appendWire appends the encoding of p when it has no input responses,
// request state or task, its _meta is nothing or the client's envelope,
// and its arguments are compact JSON.
func (p *CallToolParams) appendWire(dst []byte) ([]byte, bool) {
	if len(p.InputResponses) != 0 || p.RequestState != "" || p.Task != nil {
		return dst, false
	}
	var meta jsontext.Value
	if !p.Meta.IsZero() {
		if !p.Meta.pre.isEnvelope(&p.Meta) {
			return dst, false
		}
		meta = p.Meta.pre.envelope
	}
	if p.Arguments != nil && !jsonscan.Compact(p.Arguments) {
		return dst, false
	}
	if dst == nil {
		dst = make([]byte, 0, len(meta)+len(p.Name)+len(p.Arguments)+32)
	}
	dst = append(dst, '{')
	if meta != nil {
		dst = append(dst, `"_meta":`...)
		dst = append(dst, meta...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"name":`...)
	dst, err := jsontext.AppendQuote(dst, p.Name)
	if err != nil {
		return dst, false
	}
	if p.Arguments != nil {
		dst = append(dst, `,"arguments":`...)
		dst = append(dst, p.Arguments...)
	}
	return append(dst, '}'), true
}

// appendWire appends the encoding of r when it has no _meta, its content
// blocks are plain text (no _meta, no annotations), and its structured
// content is compact JSON.
func (r *CallToolResult) appendWire(dst []byte) ([]byte, bool) {
	if !r.Meta.IsZero() || r.StructuredContent != nil && !jsonscan.Compact(r.StructuredContent) {
		return dst, false
	}
	n := len(r.StructuredContent) + 64
	for _, c := range r.Content {
		t, ok := c.(*TextContent)
		if !ok || t == nil || !t.Meta.IsZero() || t.Annotations != nil {
			return dst, false
		}
		n += len(t.Text) + 32
	}
	if dst == nil {
		dst = make([]byte, 0, n)
	}
	dst = append(dst, '{')
	if r.ResultType != "" {
		dst = append(dst, `"resultType":`...)
		var err error
		if dst, err = jsontext.AppendQuote(dst, r.ResultType); err != nil {
			return dst, false
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		var err error
		if dst, err = jsontext.AppendQuote(dst, c.(*TextContent).Text); err != nil {
			return dst, false
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.StructuredContent != nil {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, r.StructuredContent...)
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), true
}
