package mcp

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// appendWire appends the encoding of r when its _meta is nothing or the
// server's identity (see wireMeta) and each of its tools is in the shape
// Tool.appendWire writes: the answer to tools/list, which a client asks
// for at the start of every session. The engine spends most of its time
// there on the tools' schemas, which it checks and rewrites member by
// member. This writer copies a tool a server registered from the
// encoding made at registration (see toolWire), and any other tool's
// schemas as they are once jsonscan.Compact has found them to be what
// the engine would write: for 50 tools of a typical size,
// BenchmarkListToolsEncode measures about a nineteenth of the engine's
// time for registered tools and half of it for the others.
func (r *ListToolsResult) appendWire(dst []byte) ([]byte, bool) {
	return appendList(dst, &r.Meta, r.ResultType, r.TTLMs, r.CacheScope, `"tools":[`, r.Tools, r.NextCursor,
		func(t *Tool) int {
			return len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema) + len(t.OutputSchema) + 96
		})
}

// listItem is an item of a list result that has a hand-written encoder.
type listItem interface {
	*Tool | *Resource
	wireAppender
}

// appendList appends the encoding of a list result (its _meta as
// wireMeta takes it) whose items, which go in the member that open names
// (its name and '['), all have hand-written encodings; size tells about
// how many bytes an item takes besides its names and punctuation, to size
// dst once.
func appendList[T listItem](dst []byte, meta *Meta, rt ResultType, ttl *int64, scope CacheScope, open string, items []T, next string, size func(T) int) ([]byte, bool) {
	env, ok := wireMeta(meta)
	if !ok {
		return dst, false
	}
	n := metaLen(env) + len(next) + 64 // the member names and punctuation
	for _, it := range items {
		if it != nil {
			n += size(it)
		}
	}
	dst = grow(dst, n)
	dst, ok = appendListHead(dst, env, rt, ttl, scope)
	if !ok {
		return dst, false
	}
	dst = append(dst, open...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = it.appendWire(dst); !ok {
			return dst, false
		}
	}
	return appendListTail(dst, next)
}

// appendListHead appends the opening of a list result's object and the
// members that come before its items: _meta (meta, its encoding; see
// wireMeta), resultType, ttlMs and cacheScope, each when set, each
// followed by a comma.
func appendListHead(dst []byte, meta jsontext.Value, rt ResultType, ttl *int64, scope CacheScope) ([]byte, bool) {
	ok := true
	dst = append(dst, '{')
	dst = appendMeta(dst, meta)
	if rt != "" {
		if dst, ok = appendQuoted(dst, `"resultType":`, rt); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	if ttl != nil {
		dst = append(dst, `"ttlMs":`...)
		dst = strconv.AppendInt(dst, *ttl, 10)
		dst = append(dst, ',')
	}
	if scope != "" {
		if dst, ok = appendQuoted(dst, `"cacheScope":`, scope); !ok {
			return dst, false
		}
		dst = append(dst, ',')
	}
	return dst, true
}

// appendListTail closes the items' array of a list result and appends
// nextCursor, when set, and the end of the object.
func appendListTail(dst []byte, next string) ([]byte, bool) {
	dst = append(dst, ']')
	if next != "" {
		var ok bool
		if dst, ok = appendQuoted(dst, `,"nextCursor":`, next); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// toolWire is the encoding of a tool as a server registered it, with a
// copy of what it was written from: a tools/list result copies it for a
// tool that still holds the same (see matches), instead of checking the
// tool's schemas again, which is most of the work of encoding it. A
// server's tools are shared by all its sessions and not changed in place,
// but the check costs little (the text of a schema is compared, not
// parsed), so that a tool changed after all, or a copy of it that was,
// is written as it is now.
type toolWire struct {
	name, title, description string
	input, output            []byte // copies: equal bytes, not the same slice
	annotations              *ToolAnnotations
	execution                *ToolExecution
	data                     []byte
}

// newToolWire returns the encoding of t, or nil when t has _meta or
// icons (which matches does not compare) or does not encode. A tool
// whose schemas the hand-written encoder leaves to the engine (written
// with white space, say) is encoded by the engine, once.
func newToolWire(t *Tool) *toolWire {
	if !t.Meta.IsZero() || len(t.Icons) != 0 {
		return nil
	}
	data, ok := t.appendFields(nil)
	if !ok {
		var err error
		if data, err = marshalWith(t, wire().marshal); err != nil {
			return nil
		}
	}
	w := &toolWire{name: t.Name, title: t.Title, description: t.Description,
		input: bytes.Clone(t.InputSchema), output: bytes.Clone(t.OutputSchema), data: data}
	if a := t.Annotations; a != nil {
		c := *a
		c.DestructiveHint, c.OpenWorldHint = clonePtr(a.DestructiveHint), clonePtr(a.OpenWorldHint)
		w.annotations = &c
	}
	if e := t.Execution; e != nil {
		c := *e
		w.execution = &c
	}
	return w
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// matches reports whether t holds what w was written from.
func (w *toolWire) matches(t *Tool) bool {
	return t.Meta.IsZero() && len(t.Icons) == 0 &&
		t.Name == w.name && t.Title == w.title && t.Description == w.description &&
		bytes.Equal(t.InputSchema, w.input) && (t.InputSchema == nil) == (w.input == nil) &&
		bytes.Equal(t.OutputSchema, w.output) && (t.OutputSchema == nil) == (w.output == nil) &&
		equalAnnotations(t.Annotations, w.annotations) &&
		(t.Execution == nil) == (w.execution == nil) && (t.Execution == nil || *t.Execution == *w.execution)
}

// equalAnnotations reports whether a and b are both nil or hold the same:
// the values their hints point to, and the rest of the struct.
func equalAnnotations(a, b *ToolAnnotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := *a, *b
	ca.DestructiveHint, ca.OpenWorldHint, cb.DestructiveHint, cb.OpenWorldHint = nil, nil, nil, nil
	return ca == cb && equalPtr(a.DestructiveHint, b.DestructiveHint) && equalPtr(a.OpenWorldHint, b.OpenWorldHint)
}

// equalPtr reports whether a and b are both nil or point to equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// appendWire appends the encoding of t when t is not nil, has no _meta
// and no icons, and its schemas are compact JSON (jsonscan.Compact): the
// tools of nearly every server. A tool a server registered, unchanged
// since, is its toolWire's copy.
func (t *Tool) appendWire(dst []byte) ([]byte, bool) {
	if t == nil {
		return dst, false
	}
	if w := t.wire; w != nil && w.matches(t) {
		return append(dst, w.data...), true
	}
	return t.appendFields(dst)
}

// appendFields is appendWire without the registered tool's copy.
func (t *Tool) appendFields(dst []byte) ([]byte, bool) {
	if !t.Meta.IsZero() || len(t.Icons) != 0 || !jsonscan.Compact(t.InputSchema) ||
		t.OutputSchema != nil && !jsonscan.Compact(t.OutputSchema) {
		return dst, false
	}
	dst, ok := appendQuoted(dst, `{"name":`, t.Name)
	if !ok {
		return dst, false
	}
	if t.Title != "" {
		if dst, ok = appendQuoted(dst, `,"title":`, t.Title); !ok {
			return dst, false
		}
	}
	if t.Description != "" {
		if dst, ok = appendQuoted(dst, `,"description":`, t.Description); !ok {
			return dst, false
		}
	}
	dst = append(dst, `,"inputSchema":`...)
	dst = append(dst, t.InputSchema...)
	if t.OutputSchema != nil {
		dst = append(dst, `,"outputSchema":`...)
		dst = append(dst, t.OutputSchema...)
	}
	if a := t.Annotations; a != nil {
		dst = append(dst, `,"annotations":{`...)
		n := len(dst)
		if a.Title != "" {
			if dst, ok = appendQuoted(dst, `"title":`, a.Title); !ok {
				return dst, false
			}
		}
		dst = appendHint(dst, n, "readOnlyHint", a.ReadOnlyHint, true)
		if a.DestructiveHint != nil {
			dst = appendHint(dst, n, "destructiveHint", *a.DestructiveHint, false)
		}
		dst = appendHint(dst, n, "idempotentHint", a.IdempotentHint, true)
		if a.OpenWorldHint != nil {
			dst = appendHint(dst, n, "openWorldHint", *a.OpenWorldHint, false)
		}
		dst = append(dst, '}')
	}
	if e := t.Execution; e != nil {
		dst = append(dst, `,"execution":{`...)
		if e.TaskSupport != "" {
			if dst, ok = appendQuoted(dst, `"taskSupport":`, e.TaskSupport); !ok {
				return dst, false
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), true
}

// appendQuoted appends prefix and the JSON string of s; it reports false
// for s that is not valid UTF-8, which the engine refuses.
func appendQuoted[S ~string](dst []byte, prefix string, s S) ([]byte, bool) {
	dst = append(dst, prefix...)
	dst, err := jsonscan.AppendQuote(dst, s)
	return dst, err == nil
}

// appendHint appends the member name of an object begun at dst[start:],
// with the boolean v, leaving a false out when omitFalse (an omitzero
// bool; a *bool that is set is written either way).
func appendHint(dst []byte, start int, name string, v, omitFalse bool) []byte {
	if omitFalse && !v {
		return dst
	}
	if len(dst) > start {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, `":`...)
	return strconv.AppendBool(dst, v)
}

// readWire decodes r from data when its members are tools (an array of
// tools readTool takes), _meta (see readResultMeta), nextCursor,
// resultType, ttlMs (an integer) and cacheScope: the answer to tools/list
// from nearly every server, whose schemas it copies as they came instead
// of decoding them member by member as the engine does.
func (r *ListToolsResult) readWire(data []byte, metas *capsCache) bool {
	// Decoded in place, not into a value of its own that r then takes:
	// the pointers listHead holds would move that value to the heap, a
	// second result a call. What r held comes back when the decoder
	// does not take data.
	saved := *r
	*r = ListToolsResult{}
	tools, ok := readList(data, listHead{&r.Meta, metas, &r.ResultType, &r.TTLMs, &r.CacheScope, &r.NextCursor}, "tools", readTool)
	if !ok {
		*r = saved
		return false
	}
	r.Tools = tools
	return true
}

// readList decodes a list result whose items, in the member named
// member, each decode with one, and whose other members are h's. It
// reports whether it took every member and found the items.
func readList[T any](data []byte, h listHead, member string, one func([]byte) (T, bool)) ([]T, bool) {
	var items []T
	listed := false
	ok := members(data, h.metas.resultText(), func(name, v []byte) bool {
		if string(name) == member {
			items, listed = readArray(v, one)
			return listed
		}
		return h.read(name, v)
	})
	return items, ok && listed
}

// listHead points to the members of a list result besides its items,
// for its hand-written decoder.
type listHead struct {
	meta  *Meta
	metas *capsCache // see readResultMeta
	rt    *ResultType
	ttl   **int64
	scope *CacheScope
	next  *string
}

// read decodes the member name of a list result whose value is v into
// its place in h, and reports whether it took it: one of h's members, in
// the shape the engine decodes the same way.
func (h listHead) read(name, v []byte) bool {
	switch string(name) {
	case "_meta":
		return h.metas.readResultMeta(v, h.meta)
	case "nextCursor":
		s, ok := text(v)
		*h.next = s
		return ok
	case "resultType":
		if string(v) == `"complete"` {
			*h.rt = ResultTypeComplete
			return true
		}
		s, ok := plainText(v)
		*h.rt = ResultType(s)
		return ok
	case "ttlMs":
		n, ok := plainInt(v)
		*h.ttl = &n
		return ok
	case "cacheScope":
		s, ok := plainText(v)
		*h.scope = CacheScope(s)
		return ok
	}
	return false
}

// plainInt returns the integer whose raw JSON is v when v is written as
// digits alone, with a leading '-' at most, and fits an int64.
func plainInt(v []byte) (int64, bool) {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// readArray decodes an array of the items one decodes, all of them.
func readArray[T any](v []byte, one func([]byte) (T, bool)) ([]T, bool) {
	if v[0] != '[' {
		return nil, false
	}
	out := []T{}
	i := jsonscan.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end := jsonscan.ValueEnd(v, i)
		if end <= i {
			return nil, false
		}
		it, ok := one(v[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, it)
		if i = jsonscan.SkipSpace(v, end); i < len(v) && v[i] == ',' {
			i = jsonscan.SkipSpace(v, i+1)
		}
	}
	return out, i < len(v)
}

// readTool decodes a tool whose members are name (required), title,
// description, inputSchema (an object, required), outputSchema (an
// object), annotations and execution (objects of the members they
// define).
func readTool(v []byte) (*Tool, bool) {
	var t Tool
	named, schema := false, false
	ok := members(v, nil, func(name, v []byte) bool {
		switch string(name) {
		case "name":
			s, ok := text(v)
			t.Name, named = s, ok
			return ok
		case "title":
			s, ok := text(v)
			t.Title = s
			return ok
		case "description":
			s, ok := text(v)
			t.Description = s
			return ok
		case "inputSchema":
			t.InputSchema, schema = bytes.Clone(v), v[0] == '{'
			return schema
		case "outputSchema":
			t.OutputSchema = bytes.Clone(v)
			return v[0] == '{'
		case "annotations":
			a, ok := readToolAnnotations(v)
			t.Annotations = a
			return ok
		case "execution":
			var e ToolExecution
			t.Execution = &e
			return members(v, nil, func(name, v []byte) bool {
				if string(name) != "taskSupport" {
					return false
				}
				s, ok := plainText(v)
				e.TaskSupport = s
				return ok
			})
		}
		return false
	})
	return &t, ok && named && schema
}

// readToolAnnotations decodes tool annotations whose members are the
// title and the four hints (booleans).
func readToolAnnotations(v []byte) (*ToolAnnotations, bool) {
	var a ToolAnnotations
	ok := members(v, nil, func(name, v []byte) bool {
		var b bool
		switch string(v) {
		case "true":
			b = true
		case "false":
		default:
			if string(name) != "title" {
				return false
			}
			s, ok := text(v)
			a.Title = s
			return ok
		}
		switch string(name) {
		case "readOnlyHint":
			a.ReadOnlyHint = b
		case "destructiveHint":
			a.DestructiveHint = &b
		case "idempotentHint":
			a.IdempotentHint = b
		case "openWorldHint":
			a.OpenWorldHint = &b
		default:
			return false
		}
		return true
	})
	return &a, ok
}

// appendWire appends the encoding of r when its _meta is nothing or the
// server's identity (see wireMeta) and each of its resources is in the
// shape Resource.appendWire writes: a page of resources/list holds up to
// PageSize of them (1,000 by default), which the engine encodes by
// reflection, member by member (BenchmarkListResourcesEncode: a sixth of
// the engine's time for 1,000).
func (r *ListResourcesResult) appendWire(dst []byte) ([]byte, bool) {
	return appendList(dst, &r.Meta, r.ResultType, r.TTLMs, r.CacheScope, `"resources":[`, r.Resources, r.NextCursor,
		func(res *Resource) int {
			return len(res.URI) + len(res.Name) + len(res.Title) + len(res.Description) + len(res.MIMEType) + 64
		})
}

// appendWire appends the encoding of r when r is not nil and has no
// _meta, annotations or icons.
func (r *Resource) appendWire(dst []byte) ([]byte, bool) {
	if r == nil || !r.Meta.IsZero() || r.Annotations != nil || len(r.Icons) != 0 {
		return dst, false
	}
	dst, ok := appendQuoted(dst, `{"uri":`, r.URI)
	if ok {
		dst, ok = appendQuoted(dst, `,"name":`, r.Name)
	}
	for _, m := range [...]struct{ name, v string }{
		{`,"title":`, r.Title}, {`,"description":`, r.Description}, {`,"mimeType":`, r.MIMEType},
	} {
		if ok && m.v != "" {
			dst, ok = appendQuoted(dst, m.name, m.v)
		}
	}
	if !ok {
		return dst, false
	}
	if r.Size != 0 {
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, r.Size, 10)
	}
	return append(dst, '}'), true
}

// readWire decodes r from data when its members are resources (an array
// of resources readResource takes), _meta, nextCursor, resultType, ttlMs
// and cacheScope: a page of resources/list, up to a thousand resources,
// which the engine decodes member by member by reflection.
func (r *ListResourcesResult) readWire(data []byte, metas *capsCache) bool {
	// Decoded in place, not into a value of its own that r then takes:
	// the pointers listHead holds would move that value to the heap, a
	// second result a call. What r held comes back when the decoder
	// does not take data.
	saved := *r
	*r = ListResourcesResult{}
	resources, ok := readList(data, listHead{&r.Meta, metas, &r.ResultType, &r.TTLMs, &r.CacheScope, &r.NextCursor}, "resources", readResource)
	if !ok {
		*r = saved
		return false
	}
	r.Resources = resources
	return true
}

// readResource decodes a resource whose members are uri, name, title,
// description, mimeType and size (an integer). Like the engine, it lets
// a result lack members the protocol requires.
func readResource(v []byte) (*Resource, bool) {
	r := new(Resource)
	ok := members(v, nil, func(name, v []byte) bool {
		var ok bool
		switch string(name) {
		case "uri":
			r.URI, ok = text(v)
		case "name":
			r.Name, ok = text(v)
		case "title":
			r.Title, ok = text(v)
		case "description":
			r.Description, ok = text(v)
		case "mimeType":
			r.MIMEType, ok = text(v)
		case "size":
			r.Size, ok = plainInt(v)
		}
		return ok
	})
	return r, ok
}
