package transport

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Streamable HTTP of 2026-07-28 and later. Every message is a POST of its
// own, with no session: a POST without Mcp-Session-Id whose
// MCP-Protocol-Version header names such a revision is served as an
// exchange on its own, beside the sessions of the handshake era, on the
// same endpoint. Before the body reaches the connection, the headers that
// mirror it are checked against it (-32020 HeaderMismatch, 400), and so
// are the _meta members every such request carries (-32602, 400); the
// connection's answers get the status the revision gives their error
// codes (see modernStatus).

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
// check the headers that mirror them.
type modernBody struct {
	Name *string `json:"name"`
	URI  *string `json:"uri"`
	Meta *struct {
		ProtocolVersion    jsontext.Value `json:"io.modelcontextprotocol/protocolVersion"`
		ClientCapabilities jsontext.Value `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

// serveModern serves a POST of the stateless era, for which an exchange
// slot was reserved.
func (h *StreamableHTTPHandler) serveModern(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, msgs []jsonrpc.Message, requests []jsonrpc.ID, isBatch bool, info *HTTPRequestInfo) {
	version := r.Header.Get(headerProtocolVersion)
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
	if code, message := checkModernRequest(r.Header, req, version); code != 0 {
		writeJSONRPCError(w, http.StatusBadRequest, req.ID, code, message)
		return
	}
	s := h.newSession("", info.Principal, true, version, nil)
	s.modern = true
	defer s.terminate(ErrSessionTerminated)
	if err := h.connect(r.Context(), statelessConn{s}); err != nil {
		h.logger.Error("mcp http: connect failed", "err", err)
		writeJSONRPCError(w, http.StatusInternalServerError, req.ID, jsonrpc.CodeInternalError, "Internal Server Error")
		return
	}
	s.serveExchange(w, r, msg, msgs, requests, info, false)
}

// checkModernRequest checks the headers of a modern request against its
// body, and the _meta members every such request carries, returning the
// error code and message to refuse it with, or 0.
func checkModernRequest(header http.Header, req *jsonrpc.Request, version string) (int64, string) {
	method, ok := header[headerMethod]
	switch {
	case !ok || len(method) != 1:
		return codeHeaderMismatch, "Header mismatch: missing Mcp-Method header"
	case method[0] != req.Method:
		return codeHeaderMismatch, "Header mismatch: Mcp-Method header value '" + method[0] + "' does not match body value '" + req.Method + "'"
	}
	var p modernBody
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return jsonrpc.CodeInvalidParams, "invalid params: " + err.Error()
		}
	}
	if p.Meta == nil || len(p.Meta.ProtocolVersion) == 0 {
		return jsonrpc.CodeInvalidParams, "invalid params: missing _meta member io.modelcontextprotocol/protocolVersion"
	}
	var bodyVersion string
	if json.Unmarshal(p.Meta.ProtocolVersion, &bodyVersion) != nil {
		return jsonrpc.CodeInvalidParams, "invalid params: _meta member io.modelcontextprotocol/protocolVersion must be a string"
	}
	if bodyVersion != version {
		return codeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header value '" + version + "' does not match body value '" + bodyVersion + "'"
	}
	if len(p.Meta.ClientCapabilities) == 0 || p.Meta.ClientCapabilities.Kind() != '{' {
		return jsonrpc.CodeInvalidParams, "invalid params: missing _meta member io.modelcontextprotocol/clientCapabilities"
	}
	var source *string
	switch req.Method {
	case "tools/call", "prompts/get":
		source = p.Name
	case "resources/read":
		source = p.URI
	default:
		return 0, ""
	}
	name, ok := header[headerName]
	if !ok || len(name) != 1 {
		return codeHeaderMismatch, "Header mismatch: missing Mcp-Name header"
	}
	value, ok := DecodeHeaderValue(name[0])
	if !ok {
		return codeHeaderMismatch, "Header mismatch: Mcp-Name header value is not valid"
	}
	if source == nil || value != *source {
		return codeHeaderMismatch, "Header mismatch: Mcp-Name header does not match the body"
	}
	return 0, ""
}

// DecodeHeaderValue decodes the value of a header that mirrors a request
// body value in Streamable HTTP of 2026-07-28 (Mcp-Name, Mcp-Param-*):
// Base64 between =?base64? and ?= (strictly: padding and alphabet), or
// else the value as it is, which must be visible ASCII, space or tab. It
// reports false for a value that is neither.
func DecodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", false
		}
	}
	return v, true
}

// modernStatus is the HTTP status of a modern exchange's JSON answer:
// 404 for a method the server does not have, 400 for the errors the
// revision gives that status, 200 otherwise.
func modernStatus(body []byte) int {
	if !bytes.Contains(body, []byte(`"error"`)) {
		return http.StatusOK
	}
	var res struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &res) != nil || res.Error == nil {
		return http.StatusOK
	}
	switch res.Error.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case codeHeaderMismatch, codeMissingRequiredClientCapability, codeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
