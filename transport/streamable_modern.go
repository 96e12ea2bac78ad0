//go:build !mcpkit_nohttp

package transport

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/mcpheader"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Streamable HTTP of 2026-07-28 and later. Every message is a POST of its
// own, with no session: a POST whose MCP-Protocol-Version header names
// such a revision is served as an exchange on its own, beside the sessions
// of the handshake era, on the same endpoint, and an Mcp-Session-Id it
// carries is ignored (that revision has no sessions; served on the session
// named, it would escape the checks below). Before the body reaches the
// connection, the headers that mirror it are checked against it (-32020
// HeaderMismatch, 400), and so are the _meta members every such request
// carries (-32602, 400); the connection's answers get the status the
// revision gives their error codes (see modernStatus).

const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
	// firstModernVersion is the first revision without the handshake.
	firstModernVersion = "2026-07-28"

	codeHeaderMismatch                  = -32020
	codeMissingRequiredClientCapability = -32021
	codeUnsupportedProtocolVersion      = -32022
)

// isModernVersion reports whether an MCP-Protocol-Version header names a
// revision of the stateless era, known or not (a revision is a date, and
// later ones sort after it).
func isModernVersion(v string) bool { return v >= firstModernVersion }

// modernBody is what the transport reads of a modern request's params to
// check the headers that mirror them: raw JSON values, nil when absent.
type modernBody struct {
	// Mirrored is the member whose value the Mcp-Name header mirrors (see
	// mirroredMember).
	Mirrored, Meta                      jsontext.Value
	ProtocolVersion, ClientCapabilities jsontext.Value // members of Meta
}

// scanModernBody reads the members of params that modernBody holds, the
// member named member (none when "") as Mirrored, in one pass that decodes
// nothing else. The values are slices of params. A _meta equal to the one
// memo holds (a client sends the same with every request) is neither
// scanned to its end nor read again; memo may be nil.
func scanModernBody(params []byte, member string, memo *metaMemo) (modernBody, error) {
	var b modernBody
	last := memo.load()
	var known []byte
	if last != nil {
		known = last.text
	}
	err := scanMembers(params, known, func(name []byte, v jsontext.Value) {
		switch {
		case string(name) == `"_meta"`:
			b.Meta = v
		case member != "" && isMemberName(name, member):
			b.Mirrored = v
		}
	})
	if err != nil || b.Meta.Kind() != '{' {
		return b, err
	}
	if last != nil && bytes.Equal(b.Meta, last.text) {
		b.ProtocolVersion, b.ClientCapabilities = last.at(b.Meta)
		return b, nil
	}
	err = scanMembers(b.Meta, nil, func(name []byte, v jsontext.Value) {
		switch string(name) {
		case `"io.modelcontextprotocol/protocolVersion"`:
			b.ProtocolVersion = v
		case `"io.modelcontextprotocol/clientCapabilities"`:
			b.ClientCapabilities = v
		}
	})
	if err == nil {
		memo.store(b.Meta, b.ProtocolVersion, b.ClientCapabilities)
	}
	return b, err
}

// leadingMember is the short way to what scanModernBody and mirroredName
// look for in the params of a request as mcpkit's client writes them:
// {"_meta":KNOWN,"MEMBER":"VALUE",... where KNOWN, the _meta of the last
// request (the memo's), is the same text with every request. When params
// begin so, it returns the _meta's text and the raw string VALUE (nil
// when member is "", or when the _meta is followed by another member or
// ends params), with nothing after them read: the arguments, however
// large, are not scanned to find a member written before them. Otherwise
// ok is false and the caller scans. The params come from a message the
// JSON-RPC layer decoded, whose objects have no name twice, so the member
// found here is the only one of its name.
func leadingMember(params, known []byte, member string) (meta, value jsontext.Value, ok bool) {
	const head = `{"_meta":`
	if len(known) == 0 || !bytes.HasPrefix(params, []byte(head)) || !bytes.HasPrefix(params[len(head):], known) {
		return nil, nil, false
	}
	meta = params[len(head) : len(head)+len(known) : len(head)+len(known)]
	rest := params[len(head)+len(known):]
	if member == "" || len(rest) < len(member)+4 || rest[0] != ',' || rest[1] != '"' ||
		string(rest[2:2+len(member)]) != member || rest[2+len(member)] != '"' || rest[3+len(member)] != ':' {
		return meta, nil, member == ""
	}
	rest = rest[4+len(member):]
	if len(rest) == 0 || rest[0] != '"' {
		return nil, nil, false // not a string: left to the scan, which says so
	}
	end := jsonscan.StringEnd(rest, 0)
	if end < 0 || end >= len(rest) || rest[end] != ',' && rest[end] != '}' {
		return nil, nil, false
	}
	return meta, rest[:end:end], true
}

// metaMemo remembers the _meta of the last 2026-07-28 request scanned and
// where its members are. It is safe for concurrent use; a nil *metaMemo
// remembers nothing.
type metaMemo struct{ p atomic.Pointer[scannedMeta] }

// scannedMeta is a _meta's text and the offsets in it of its
// protocolVersion and clientCapabilities values ({0, 0}: absent).
type scannedMeta struct {
	text          []byte
	version, caps [2]int
}

func (m *metaMemo) load() *scannedMeta {
	if m == nil {
		return nil
	}
	return m.p.Load()
}

// store remembers meta, whose members version and caps are slices.
func (m *metaMemo) store(meta, version, caps []byte) {
	if m == nil || len(meta) > maxMemoMeta {
		return
	}
	offsets := func(v []byte) [2]int {
		if len(v) == 0 {
			return [2]int{}
		}
		start := cap(meta) - cap(v) // v is a slice of meta
		return [2]int{start, start + len(v)}
	}
	m.p.Store(&scannedMeta{text: bytes.Clone(meta), version: offsets(version), caps: offsets(caps)})
}

// at returns the protocolVersion and clientCapabilities values in meta, a
// copy of s.text.
func (s *scannedMeta) at(meta []byte) (version, caps jsontext.Value) {
	if s.version[1] > 0 {
		version = meta[s.version[0]:s.version[1]:s.version[1]]
	}
	if s.caps[1] > 0 {
		caps = meta[s.caps[0]:s.caps[1]:s.caps[1]]
	}
	return version, caps
}

// maxMemoMeta bounds the _meta a metaMemo keeps.
const maxMemoMeta = 4 << 10

// scanMembers calls member with the raw name (quoted, as it is in the
// input; names with escapes match nothing MCP defines) and the raw value
// of each member of obj, a JSON object; anything else is an error. obj
// comes from a message the JSON-RPC layer decoded (or this package
// encoded), so it is valid JSON, which the byte scan relies on. A value
// that starts with known, a whole JSON value, ends with it.
func scanMembers(obj, known []byte, member func(name []byte, v jsontext.Value)) error {
	if !jsonscan.Members(obj, known, func(name, v []byte) bool {
		member(name, v)
		return true
	}) {
		return errors.New("not a JSON object")
	}
	return nil
}

// jsonStringIs reports whether v, a raw JSON value, is the string s.
func jsonStringIs(v jsontext.Value, s string) bool {
	if plain, ok := jsonscan.PlainString(v); ok {
		return string(plain) == s
	}
	u, ok := jsonString(v)
	return ok && u == s
}

// jsonString returns the string v, a raw JSON value, holds.
func jsonString(v jsontext.Value) (string, bool) {
	if plain, ok := jsonscan.PlainString(v); ok {
		return string(plain), true
	}
	if v.Kind() != '"' {
		return "", false
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return string(u), err == nil
}

// serveModern serves a POST of the stateless era, for which an exchange
// slot was reserved.
func (h *StreamableHTTPHandler) serveModern(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, isBatch bool, info *HTTPRequestInfo) {
	version := headerValue(r.Header, headerProtocolVersion)
	if isBatch {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: batches are not allowed in protocol version "+version)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		if de, isDecode := msg.(*jsonrpc.DecodeError); isDecode {
			writeJSONRPCError(w, http.StatusBadRequest, de.ID, de.Err.Code, de.Err.Message)
			return
		}
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Bad Request: a client sends no responses in protocol version "+version)
		return
	}
	if len(requests) == 0 {
		// This revision defines no notification for a client to POST
		// (cancellation is closing the response): accept and drop.
		acceptNoRequests(w, msgs)
		return
	}
	if h.modernVers != nil && !slices.Contains(h.modernVers, version) {
		data, _ := json.Marshal(struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{h.modernVers, version})
		writeJSONRPCErrorData(w, http.StatusBadRequest, req.ID, codeUnsupportedProtocolVersion, "Unsupported protocol version: "+version, data)
		return
	}
	if code, message := checkModernRequest(r.Header, req, version, &h.metaMemo); code != 0 {
		writeJSONRPCError(w, http.StatusBadRequest, req.ID, code, message)
		return
	}
	s := h.newSession("", info.Principal, true, version, nil)
	s.modern = true
	// The POST's values, not its cancellation: a handler's context links
	// to the POST's only when the handler asks (HTTPRequestInfo.bind), so
	// that most exchanges register nothing with it.
	s.exchangeCtx = context.WithoutCancel(r.Context())
	defer s.terminate(ErrSessionTerminated)
	if err := h.connect(r.Context(), statelessConn{s}); err != nil {
		h.logger.Error("mcp http: connect failed", "err", err)
		writeJSONRPCError(w, http.StatusInternalServerError, req.ID, jsonrpc.CodeInternalError, "Internal Server Error")
		return
	}
	s.serveExchange(w, r, msg, msgs, requests, info, false)
}

// mirroredMember returns the params member whose value the Mcp-Name
// header of a request of method mirrors, or "" when it has none.
func mirroredMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

// isMemberName reports whether name, a member's name as the JSON text
// scanMembers passes (quotes included, unescaped), is member.
func isMemberName(name []byte, member string) bool {
	return len(name) == len(member)+2 && string(name[1:len(name)-1]) == member
}

// leadingModernBody is scanModernBody for params that begin with the
// memo's _meta and member (see leadingMember); ok is false for other
// params, which the caller scans.
func leadingModernBody(params []byte, member string, memo *metaMemo) (b modernBody, ok bool) {
	last := memo.load()
	if last == nil {
		return b, false
	}
	meta, value, ok := leadingMember(params, last.text, member)
	if !ok {
		return b, false
	}
	b.Meta, b.Mirrored = meta, value
	b.ProtocolVersion, b.ClientCapabilities = last.at(meta)
	return b, true
}

// checkModernRequest checks the headers of a modern request against its
// body, and the _meta members every such request carries, returning the
// error code and message to refuse it with, or 0.
func checkModernRequest(header http.Header, req *jsonrpc.Request, version string, memo *metaMemo) (int64, string) {
	method, ok := header[headerMethod]
	switch {
	case !ok || len(method) != 1:
		return codeHeaderMismatch, "Header mismatch: missing Mcp-Method header"
	case method[0] != req.Method:
		return codeHeaderMismatch, "Header mismatch: Mcp-Method header value '" + method[0] + "' does not match body value '" + req.Method + "'"
	}
	// The tasks extension routes a task's requests by its ID, which
	// Mcp-Name mirrors as it does a tool's name.
	member := mirroredMember(req.Method)
	p, ok := leadingModernBody(req.Params, member, memo)
	if !ok && len(req.Params) > 0 {
		var err error
		if p, err = scanModernBody(req.Params, member, memo); err != nil {
			return jsonrpc.CodeInvalidParams, "invalid params: " + err.Error()
		}
	}
	if p.Meta.Kind() != '{' || len(p.ProtocolVersion) == 0 {
		return jsonrpc.CodeInvalidParams, "invalid params: missing _meta member io.modelcontextprotocol/protocolVersion"
	}
	if !jsonStringIs(p.ProtocolVersion, version) {
		bodyVersion, ok := jsonString(p.ProtocolVersion)
		if !ok {
			return jsonrpc.CodeInvalidParams, "invalid params: _meta member io.modelcontextprotocol/protocolVersion must be a string"
		}
		return codeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header value '" + version + "' does not match body value '" + bodyVersion + "'"
	}
	if p.ClientCapabilities.Kind() != '{' {
		return jsonrpc.CodeInvalidParams, "invalid params: missing _meta member io.modelcontextprotocol/clientCapabilities"
	}
	if member == "" {
		return 0, ""
	}
	name, ok := header[headerName]
	if !ok || len(name) != 1 {
		return codeHeaderMismatch, "Header mismatch: missing Mcp-Name header"
	}
	value, ok := mcpheader.Decode(name[0])
	if !ok {
		return codeHeaderMismatch, "Header mismatch: Mcp-Name header value is not valid"
	}
	if !jsonStringIs(p.Mirrored, value) {
		return codeHeaderMismatch, "Header mismatch: Mcp-Name header does not match the body"
	}
	return 0, ""
}

// modernStatus is the HTTP status of a modern exchange's JSON answer m:
// 404 for a method the server does not have, 400 for the errors the
// revision gives that status, 200 otherwise.
func modernStatus(m jsonrpc.Message) int {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.Error == nil {
		return http.StatusOK
	}
	switch r.Error.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case codeHeaderMismatch, codeMissingRequiredClientCapability, codeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
