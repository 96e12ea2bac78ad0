package mcp

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

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
	meta, ok := wireMeta(&p.Meta)
	if !ok || p.Arguments != nil && !jsonscan.Compact(p.Arguments) {
		return dst, false
	}
	dst = grow(dst, metaLen(meta)+len(p.Name)+len(p.Arguments)+48) // 48: the member names and punctuation
	dst = append(dst, '{')
	dst = appendMeta(dst, meta)
	dst = append(dst, `"name":`...)
	dst, err := jsonscan.AppendQuote(dst, p.Name)
	if err != nil {
		return dst, false
	}
	if p.Arguments != nil {
		dst = append(dst, `,"arguments":`...)
		dst = append(dst, p.Arguments...)
	}
	return append(dst, '}'), true
}

// appendWire appends the encoding of r when its _meta is nothing or the
// server's identity (see wireMeta), its content blocks are plain
// text (no _meta, no annotations), and its structured content is compact
// JSON.
func (r *CallToolResult) appendWire(dst []byte) ([]byte, bool) {
	meta, ok := wireMeta(&r.Meta)
	if !ok || r.StructuredContent != nil && !jsonscan.Compact(r.StructuredContent) {
		return dst, false
	}
	n := metaLen(meta) + len(r.StructuredContent) + 96 // the member names and punctuation
	for _, c := range r.Content {
		t, ok := c.(*TextContent)
		if !ok || t == nil || !t.Meta.IsZero() || t.Annotations != nil {
			return dst, false
		}
		n += len(t.Text) + 32
	}
	dst = grow(dst, n)
	dst = append(dst, '{')
	dst = appendMeta(dst, meta)
	switch r.ResultType {
	case "":
	case ResultTypeComplete:
		dst = append(dst, `"resultType":"complete",`...)
	default:
		dst = append(dst, `"resultType":`...)
		var err error
		if dst, err = jsonscan.AppendQuote(dst, r.ResultType); err != nil {
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
		if dst, err = jsonscan.AppendQuote(dst, c.(*TextContent).Text); err != nil {
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

// The hand-written decoders below read received params and results in
// their common shape with byte scanners. The text must be valid JSON: the
// JSON-RPC layer validated it, or a peer's own encoder wrote it (see
// receivedOption); on other text they never fail badly but may take what
// the engine refuses. They leave any other shape to the engine: readWire
// reports false without changing its receiver, and the caller then
// decodes with the engine. TestReadWire and FuzzReadWire hold them to the engine.

// members is jsonscan.Members with names without their quotes.
func members(data, known []byte, f func(name, v []byte) bool) bool {
	return jsonscan.Members(data, known, func(name, v []byte) bool { return f(name[1:len(name)-1], v) })
}

// grow returns dst with room for n more bytes: dst itself when it has
// the room, else a copy in memory of its own, made in one allocation (the
// buffer of a hand-written encoder is sized once, before it writes).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	b := make([]byte, len(dst), len(dst)+n)
	copy(b, dst)
	return b
}

// plainText returns the string whose raw JSON is v when it has no escape
// and is plain text (valid UTF-8, no control character).
func plainText(v []byte) (string, bool) {
	s, ok := jsonscan.PlainString(v)
	if !ok {
		return "", false
	}
	// Printable ASCII is taken a word at a time; past the first byte
	// that is not, the rest is checked a byte at a time.
	if i := jsonscan.PlainRun(s, 0); i < len(s) {
		for _, c := range s[i:] {
			if c < ' ' {
				return "", false
			}
		}
		if !utf8.Valid(s[i:]) {
			return "", false
		}
	}
	return string(s), true
}

// text returns the string whose raw JSON is v, unescaped.
func text(v []byte) (string, bool) {
	if s, ok := plainText(v); ok {
		return s, true
	}
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	u, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return "", false
	}
	return string(u), true
}

// readWire decodes p from data when it has no members but _meta, name (a
// string: it is required) and arguments (an object); _meta only if metas
// holds it decoded (the envelope a client sends with every request).
func (p *CallToolParams) readWire(data []byte, metas *capsCache) bool {
	var out CallToolParams
	named := false
	ok := members(data, metas.lastText(), func(name, v []byte) bool {
		switch string(name) {
		case "_meta":
			return metas.readMeta(v, &out.Meta)
		case "name":
			s, ok := plainText(v)
			out.Name, named = s, ok
			return ok
		case "arguments":
			if v[0] != '{' {
				return false
			}
			out.Arguments = bytes.Clone(v)
			return true
		}
		return false
	})
	if ok && named {
		*p = out
	}
	return ok && named
}

// readWire decodes r from data when its members are _meta (see
// readResultMeta), content (text blocks only), structuredContent (an
// object), isError and resultType.
func (r *CallToolResult) readWire(data []byte, metas *capsCache) bool {
	var out CallToolResult
	ok := members(data, metas.resultText(), func(name, v []byte) bool {
		switch string(name) {
		case "_meta":
			return metas.readResultMeta(v, &out.Meta)
		case "content":
			c, ok := readTextBlocks(v)
			out.Content = c
			return ok
		case "structuredContent":
			if v[0] != '{' {
				return false
			}
			out.StructuredContent = bytes.Clone(v)
			return true
		case "isError":
			switch string(v) {
			case "true":
				out.IsError = true
			case "false":
				out.IsError = false
			default:
				return false
			}
			return true
		case "resultType":
			if string(v) == `"complete"` {
				out.ResultType = ResultTypeComplete // no allocation for the usual one
				return true
			}
			s, ok := plainText(v)
			out.ResultType = ResultType(s)
			return ok
		}
		return false
	})
	if ok {
		*r = out
	}
	return ok
}

// readTextBlocks decodes an array of text blocks ({"type":"text","text":
// ...}, nothing else).
func readTextBlocks(v []byte) (Contents, bool) {
	if v[0] != '[' {
		return nil, false
	}
	out := Contents{}
	i := jsonscan.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end := jsonscan.ValueEnd(v, i)
		if end <= i {
			return nil, false
		}
		var t TextContent
		typed := false
		if !members(v[i:end], nil, func(name, v []byte) bool {
			switch string(name) {
			case "type":
				typed = string(v) == `"text"`
				return typed
			case "text":
				s, ok := text(v)
				t.Text = s
				return ok
			}
			return false
		}) || !typed {
			return nil, false
		}
		out = append(out, &t)
		if i = jsonscan.SkipSpace(v, end); i < len(v) && v[i] == ',' {
			i = jsonscan.SkipSpace(v, i+1)
		}
	}
	return out, i < len(v)
}

// meta returns the decoded _meta whose text is raw, if c holds it.
func (c *capsCache) meta(raw []byte) (Meta, bool) {
	if c == nil {
		return Meta{}, false
	}
	if l := c.last.Load(); l != nil && string(l.text) == string(raw) {
		return l.meta, true
	}
	c.mu.Lock()
	m, ok := c.metas[string(raw)]
	c.mu.Unlock()
	return m, ok
}

// readMeta sets *m to the decoded _meta whose text is raw and reports
// true, if c holds it (a readWire's _meta member).
func (c *capsCache) readMeta(raw []byte, m *Meta) bool {
	cached, ok := c.meta(raw)
	*m = cached
	return ok
}

// lastText returns the text of the _meta c decoded last, or nil.
func (c *capsCache) lastText() []byte {
	if c == nil {
		return nil
	}
	return c.last.Load().textOf()
}

// textOf returns l's text, or nil for no l.
func (l *cachedMeta) textOf() []byte {
	if l == nil {
		return nil
	}
	return l.text
}

// readResultMeta sets *m to the decoded _meta of a result whose text is
// raw: the one c decoded last, shared, when raw is its text (a server's
// identity, the same in every result of the stateless era), else raw
// decoded anew, which c keeps when it holds the server's identity alone.
// It reports false for a _meta the engine refuses, which it reports.
func (c *capsCache) readResultMeta(raw []byte, m *Meta) bool {
	if c != nil {
		if l := c.result.Load(); l != nil && string(l.text) == string(raw) {
			*m = l.meta
			return true
		}
	}
	var out Meta
	if unmarshalWith(raw, &out, wire().received...) != nil {
		return false
	}
	if c != nil && len(raw) <= maxCachedText && onlyServerInfo(&out) {
		c.result.Store(&cachedMeta{text: bytes.Clone(raw), meta: out})
	}
	*m = out
	return true
}

// onlyServerInfo reports whether m holds the server's identity and
// nothing else.
func onlyServerInfo(m *Meta) bool {
	rest := *m
	rest.ServerInfo = nil
	return m.ServerInfo != nil && rest.IsZero()
}

// resultText returns the text of the result's _meta c holds, or nil.
func (c *capsCache) resultText() []byte {
	if c == nil {
		return nil
	}
	return c.result.Load().textOf()
}

// readFinal decodes res into o.result with its hand-written decoder when
// that takes it and it is a final result (no task, no input rounds: its
// resultType absent or complete), sparing the client's searches of res
// for those; it reports whether it did.
func readFinal(o *outgoing, res []byte, metas *capsCache) bool {
	r, ok := o.result.(wireReader)
	if !ok || !r.readWire(res, metas) {
		return false
	}
	rt := *o.result.resultType()
	return rt == "" || rt == ResultTypeComplete
}

// appendWire appends the encoding of t when its _meta is nothing or the
// server's identity (see wireMeta), it has no error or input
// requests, its times encode (years 0 to 9999) and its result is compact
// JSON: the answer to tasks/get of a working or completed task.
func (t *DetailedTask) appendWire(dst []byte) ([]byte, bool) {
	meta, ok := wireMeta(&t.Meta)
	if !ok || t.Error != nil || len(t.InputRequests) != 0 ||
		!rfc3339OK(t.CreatedAt) || !rfc3339OK(t.LastUpdatedAt) ||
		t.Result != nil && !jsonscan.Compact(t.Result) {
		return dst, false
	}
	dst = grow(dst, metaLen(meta)+len(t.TaskID)+len(t.StatusMessage)+len(t.Result)+256) // 256: names, punctuation, times, numbers
	var err error
	dst = append(dst, '{')
	dst = appendMeta(dst, meta)
	if t.ResultType != "" {
		dst = append(dst, `"resultType":`...)
		if dst, err = jsonscan.AppendQuote(dst, t.ResultType); err != nil {
			return dst, false
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"taskId":`...)
	if dst, err = jsonscan.AppendQuote(dst, t.TaskID); err != nil {
		return dst, false
	}
	dst = append(dst, `,"status":`...)
	if dst, err = jsonscan.AppendQuote(dst, t.Status); err != nil {
		return dst, false
	}
	if t.StatusMessage != "" {
		dst = append(dst, `,"statusMessage":`...)
		if dst, err = jsonscan.AppendQuote(dst, t.StatusMessage); err != nil {
			return dst, false
		}
	}
	dst = append(dst, `,"createdAt":"`...)
	dst = t.CreatedAt.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","lastUpdatedAt":"`...)
	dst = t.LastUpdatedAt.AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","ttlMs":`...)
	if t.TTLMs == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, *t.TTLMs, 10)
	}
	if t.PollIntervalMs != nil {
		dst = append(dst, `,"pollIntervalMs":`...)
		dst = strconv.AppendInt(dst, *t.PollIntervalMs, 10)
	}
	if r := string(t.Result); r != "" && r != "{}" && r != "[]" && r != `""` && r != "null" { // omitempty omits empty JSON
		dst = append(dst, `,"result":`...)
		dst = append(dst, t.Result...)
	}
	return append(dst, '}'), true
}

// rfc3339OK reports whether RFC 3339 writes t as it is: a year of four
// digits and an offset of whole minutes under a day (the engine refuses
// the others).
func rfc3339OK(t time.Time) bool {
	y := t.Year()
	_, off := t.Zone()
	return y >= 0 && y <= 9999 && off%60 == 0 && off > -24*3600 && off < 24*3600
}

// readWire decodes p from data when it has no members but _meta (only if
// metas holds it decoded) and taskId, a string: it is required.
func (p *GetTaskParams) readWire(data []byte, metas *capsCache) bool {
	var out GetTaskParams
	named := false
	ok := members(data, metas.lastText(), func(name, v []byte) bool {
		switch string(name) {
		case "_meta":
			return metas.readMeta(v, &out.Meta)
		case "taskId":
			s, ok := plainText(v)
			out.TaskID, named = s, ok
			return ok
		}
		return false
	})
	if ok && named {
		*p = out
	}
	return ok && named
}
