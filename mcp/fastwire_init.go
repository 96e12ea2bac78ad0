package mcp

import "github.com/mcpkit/mcpkit/internal/jsonscan"

// The initialize handshake in its common shape, written and read by hand
// as the calls are (see fastwire.go): capabilities whose members are
// MCP's own (no experimental, tasks or extensions members), an
// implementation without icons, no _meta. Any other shape goes to the
// engine, and each encoder gives the engine's bytes for what it takes
// (TestAppendWireInitialize, FuzzReadWireInitialize). Without them a
// session's setup spent a tenth of its instructions in the engine's
// reflection for four small values.

// appendWire appends the encoding of i when it has no icons.
func (i *Implementation) appendWire(dst []byte) ([]byte, bool) {
	if i == nil || len(i.Icons) != 0 {
		return dst, false
	}
	dst, ok := appendQuoted(dst, `{"name":`, i.Name)
	if ok && i.Title != "" {
		dst, ok = appendQuoted(dst, `,"title":`, i.Title)
	}
	if ok {
		dst, ok = appendQuoted(dst, `,"version":`, i.Version)
	}
	if ok && i.Description != "" {
		dst, ok = appendQuoted(dst, `,"description":`, i.Description)
	}
	if ok && i.WebsiteURL != "" {
		dst, ok = appendQuoted(dst, `,"websiteUrl":`, i.WebsiteURL)
	}
	return append(dst, '}'), ok
}

// appendMember appends a member of an object begun at dst[start:]: its
// name (quoted, with the colon) and value.
func appendMember(dst []byte, start int, name, value string) []byte {
	if len(dst) > start {
		dst = append(dst, ',')
	}
	dst = append(dst, name...)
	return append(dst, value...)
}

// appendSet appends an object whose members are those of names whose
// set is true, each with value: the true ones of omitzero bools ("true"),
// or the non-nil ones of omitzero *struct{} ("{}").
func appendSet(dst []byte, names []string, value string, set ...bool) []byte {
	dst = append(dst, '{')
	start := len(dst)
	for k, on := range set {
		if on {
			dst = appendMember(dst, start, names[k], value)
		}
	}
	return append(dst, '}')
}

// appendWire appends the encoding of c when it has no experimental, tasks
// or extensions member.
func (c *ClientCapabilities) appendWire(dst []byte) ([]byte, bool) {
	if c == nil || c.Experimental != nil || c.Tasks != nil || c.Extensions != nil {
		return dst, false
	}
	dst = append(dst, '{')
	start := len(dst)
	if r := c.Roots; r != nil {
		dst = appendMember(dst, start, `"roots":`, "")
		dst = appendSet(dst, []string{`"listChanged":`}, "true", r.ListChanged)
	}
	if s := c.Sampling; s != nil {
		dst = appendMember(dst, start, `"sampling":`, "")
		dst = appendSet(dst, []string{`"context":`, `"tools":`}, "{}", s.Context != nil, s.Tools != nil)
	}
	if e := c.Elicitation; e != nil {
		dst = appendMember(dst, start, `"elicitation":`, "")
		dst = appendSet(dst, []string{`"form":`, `"url":`}, "{}", e.Form != nil, e.URL != nil)
	}
	return append(dst, '}'), true
}

// appendWire appends the encoding of c when it has no experimental, tasks
// or extensions member.
func (c *ServerCapabilities) appendWire(dst []byte) ([]byte, bool) {
	if c == nil || c.Experimental != nil || c.Tasks != nil || c.Extensions != nil {
		return dst, false
	}
	dst = append(dst, '{')
	start := len(dst)
	if c.Logging != nil {
		dst = appendMember(dst, start, `"logging":`, "{}")
	}
	if c.Completions != nil {
		dst = appendMember(dst, start, `"completions":`, "{}")
	}
	if p := c.Prompts; p != nil {
		dst = appendMember(dst, start, `"prompts":`, "")
		dst = appendSet(dst, []string{`"listChanged":`}, "true", p.ListChanged)
	}
	if r := c.Resources; r != nil {
		dst = appendMember(dst, start, `"resources":`, "")
		dst = appendSet(dst, []string{`"subscribe":`, `"listChanged":`}, "true", r.Subscribe, r.ListChanged)
	}
	if t := c.Tools; t != nil {
		dst = appendMember(dst, start, `"tools":`, "")
		dst = appendSet(dst, []string{`"listChanged":`}, "true", t.ListChanged)
	}
	return append(dst, '}'), true
}

// appendOrNull appends v's encoding, or null when v is nil (a member
// without omitzero).
func appendOrNull[T any, PT interface {
	*T
	wireAppender
}](dst []byte, v PT) ([]byte, bool) {
	if v == nil {
		return append(dst, "null"...), true
	}
	return v.appendWire(dst)
}

// appendWire appends the encoding of p when it has no _meta and its
// capabilities and client's identity are in their common shape.
func (p *InitializeParams) appendWire(dst []byte) ([]byte, bool) {
	if p == nil || !p.Meta.IsZero() {
		return dst, false
	}
	dst = grow(dst, len(p.ProtocolVersion)+256) // 256: names, punctuation, capabilities, identity
	dst, ok := appendQuoted(dst, `{"protocolVersion":`, p.ProtocolVersion)
	if ok {
		dst = append(dst, `,"capabilities":`...)
		dst, ok = appendOrNull(dst, p.Capabilities)
	}
	if ok {
		dst = append(dst, `,"clientInfo":`...)
		dst, ok = appendOrNull(dst, p.ClientInfo)
	}
	return append(dst, '}'), ok
}

// appendWire appends the encoding of r when it has no _meta and its
// capabilities and server's identity are in their common shape.
func (r *InitializeResult) appendWire(dst []byte) ([]byte, bool) {
	if r == nil || !r.Meta.IsZero() {
		return dst, false
	}
	dst = grow(dst, len(r.ProtocolVersion)+len(r.Instructions)+256)
	dst = append(dst, '{')
	ok := true
	if r.ResultType != "" {
		if dst, ok = appendQuoted(dst, `"resultType":`, r.ResultType); ok {
			dst = append(dst, ',')
		}
	}
	if ok {
		dst, ok = appendQuoted(dst, `"protocolVersion":`, r.ProtocolVersion)
	}
	if ok {
		dst = append(dst, `,"capabilities":`...)
		dst, ok = appendOrNull(dst, r.Capabilities)
	}
	if ok {
		dst = append(dst, `,"serverInfo":`...)
		dst, ok = appendOrNull(dst, r.ServerInfo)
	}
	if ok && r.Instructions != "" {
		dst, ok = appendQuoted(dst, `,"instructions":`, r.Instructions)
	}
	return append(dst, '}'), ok
}

// readImplementation decodes an implementation without icons.
func readImplementation(v []byte) (*Implementation, bool) {
	var out Implementation
	named, versioned := false, false
	ok := members(v, nil, func(name, v []byte) bool {
		var s string
		var ok bool
		if s, ok = text(v); !ok {
			return false
		}
		switch string(name) {
		case "name":
			out.Name, named = s, true
		case "title":
			out.Title = s
		case "version":
			out.Version, versioned = s, true
		case "description":
			out.Description = s
		case "websiteUrl":
			out.WebsiteURL = s
		default:
			return false
		}
		return true
	})
	// Without name or version the engine's decoding, which reports the
	// missing member, decides.
	return &out, ok && named && versioned
}

// isEmptyObject reports whether v is {} (possibly with space inside).
func isEmptyObject(v []byte) bool {
	return len(v) >= 2 && v[0] == '{' && jsonscan.SkipSpace(v, 1) == len(v)-1
}

// readFlags decodes an object whose members are the booleans named in
// names, into flags.
func readFlags(v []byte, names []string, flags ...*bool) bool {
	return members(v, nil, func(name, v []byte) bool {
		for k, n := range names {
			if string(name) == n {
				switch string(v) {
				case "true":
					*flags[k] = true
				case "false":
					*flags[k] = false
				default:
					return false
				}
				return true
			}
		}
		return false
	})
}

// readPresent decodes an object whose members are the empty objects named
// in names, reporting which are present.
func readPresent(v []byte, names []string, present ...*bool) bool {
	return members(v, nil, func(name, v []byte) bool {
		for k, n := range names {
			if string(name) == n && isEmptyObject(v) {
				*present[k] = true
				return true
			}
		}
		return false
	})
}

// readClientCapabilities decodes client capabilities of the shape
// ClientCapabilities.appendWire writes.
func readClientCapabilities(v []byte) (*ClientCapabilities, bool) {
	var out ClientCapabilities
	ok := members(v, nil, func(name, v []byte) bool {
		switch string(name) {
		case "roots":
			out.Roots = &RootsCapabilities{}
			return readFlags(v, []string{"listChanged"}, &out.Roots.ListChanged)
		case "sampling":
			var ctx, tools bool
			if !readPresent(v, []string{"context", "tools"}, &ctx, &tools) {
				return false
			}
			out.Sampling = &SamplingCapabilities{}
			if ctx {
				out.Sampling.Context = &struct{}{}
			}
			if tools {
				out.Sampling.Tools = &struct{}{}
			}
			return true
		case "elicitation":
			var form, url bool
			if !readPresent(v, []string{"form", "url"}, &form, &url) {
				return false
			}
			out.Elicitation = &ElicitationCapabilities{}
			if form {
				out.Elicitation.Form = &FormElicitationCapabilities{}
			}
			if url {
				out.Elicitation.URL = &URLElicitationCapabilities{}
			}
			return true
		}
		return false
	})
	return &out, ok
}

// readServerCapabilities decodes server capabilities of the shape
// ServerCapabilities.appendWire writes.
func readServerCapabilities(v []byte) (*ServerCapabilities, bool) {
	var out ServerCapabilities
	ok := members(v, nil, func(name, v []byte) bool {
		switch string(name) {
		case "logging":
			out.Logging = &LoggingCapabilities{}
			return isEmptyObject(v)
		case "completions":
			out.Completions = &CompletionCapabilities{}
			return isEmptyObject(v)
		case "prompts":
			out.Prompts = &PromptCapabilities{}
			return readFlags(v, []string{"listChanged"}, &out.Prompts.ListChanged)
		case "resources":
			out.Resources = &ResourceCapabilities{}
			return readFlags(v, []string{"subscribe", "listChanged"}, &out.Resources.Subscribe, &out.Resources.ListChanged)
		case "tools":
			out.Tools = &ToolCapabilities{}
			return readFlags(v, []string{"listChanged"}, &out.Tools.ListChanged)
		}
		return false
	})
	return &out, ok
}

// handshake holds the members of initialize's params and result as
// their readWire decodes them.
type handshake struct {
	version      string
	versioned    bool
	clientCaps   *ClientCapabilities
	serverCaps   *ServerCapabilities
	info         *Implementation // the client's or the server's
	instructions string
	resultType   ResultType
}

// read decodes the members of data, params (result false: the client's
// capabilities come from caps when it holds their text) or a result. It
// reports false for any member it does not take: another name, null, a
// shape of capabilities or identity the decoders leave to the engine.
func (h *handshake) read(data []byte, result bool, caps *capsCache) bool {
	return members(data, nil, func(name, v []byte) bool {
		var ok bool
		switch n := string(name); {
		case n == "protocolVersion":
			h.version, ok = text(v)
			h.versioned = ok
		case n == "capabilities" && result:
			h.serverCaps, ok = readServerCapabilities(v)
		case n == "capabilities":
			h.clientCaps, ok = caps.clientCapabilities(v)
		case n == "serverInfo" && result, n == "clientInfo" && !result:
			h.info, ok = readImplementation(v)
		case n == "instructions" && result:
			h.instructions, ok = text(v)
		case n == "resultType" && result:
			var rt string
			rt, ok = text(v)
			h.resultType = ResultType(rt)
		}
		return ok
	})
}

// readWire decodes p from data when it has every member (protocol
// version, capabilities and client identity, none null) in the common
// shape, and no other. The capabilities come from the server's cache when
// it holds their text (see capsCache).
func (p *InitializeParams) readWire(data []byte, caps *capsCache) bool {
	var h handshake
	if !h.read(data, false, caps) || !h.versioned || h.clientCaps == nil || h.info == nil {
		return false
	}
	*p = InitializeParams{ProtocolVersion: h.version, Capabilities: h.clientCaps, ClientInfo: h.info}
	return true
}

// readWire decodes r from data when it has every member (protocol
// version, capabilities and server identity, none null) in the common
// shape, and no other but instructions and resultType.
func (r *InitializeResult) readWire(data []byte, _ *capsCache) bool {
	var h handshake
	if !h.read(data, true, nil) || !h.versioned || h.serverCaps == nil || h.info == nil {
		return false
	}
	*r = InitializeResult{ResultType: h.resultType, ProtocolVersion: h.version, Capabilities: h.serverCaps, ServerInfo: h.info, Instructions: h.instructions}
	return true
}

// clientCapabilities returns the capabilities whose text is raw: from c
// when it holds them, else decoded by hand (and then kept, within c's
// bounds); false for a shape readClientCapabilities does not take. A nil
// c keeps nothing.
func (c *capsCache) clientCapabilities(raw []byte) (*ClientCapabilities, bool) {
	if cached := c.cachedCaps(raw); cached != nil {
		return cached, true
	}
	caps, ok := readClientCapabilities(raw)
	if !ok {
		return nil, false
	}
	if c != nil && len(raw) <= maxCachedText {
		c.keepCaps(raw, caps)
	}
	return caps, true
}

// cachedCaps returns the capabilities kept as the decoding of raw, or
// nil; a nil c keeps nothing.
func (c *capsCache) cachedCaps(raw []byte) *ClientCapabilities {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[string(raw)]
}

// keepCaps keeps caps as the decoding of raw, starting the cache afresh
// when it is full.
func (c *capsCache) keepCaps(raw []byte, caps *ClientCapabilities) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedCaps {
		c.m = make(map[string]*ClientCapabilities)
	}
	c.m[string(raw)] = caps
	c.mu.Unlock()
}
