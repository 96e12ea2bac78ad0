package jsonrpc

import (
	"bytes"
	"encoding/json"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// decodeOne decodes one message. The common shape (a JSON object whose
// envelope members have plain names and whose jsonrpc and method values
// are strings without escapes) is read token by token, in one validating
// pass with no reflection, keeping copies of the raw params or result.
// Anything else goes to decodeOneReflect, which gives the same result for
// every input and the error for a malformed one; the fuzz test
// FuzzDecodeFast holds the two to that. When owned, the message may keep
// slices of data instead of copies.
func decodeOne(data []byte, owned bool, memo *jsonscan.Memo) (Message, error) {
	if m, ok := decodeOneFast(data, owned, memo); ok {
		return m, nil
	}
	return decodeOneReflect(data)
}

// wireFields are the envelope members of a message; the raw values are
// the decoder's, valid until it reads on.
type wireFields struct {
	owned bool // keep slices of the input rather than copies

	hasID, hasMethod, hasParams, hasResult, hasError bool

	id     ID
	idNull bool
	method string
	params json.RawMessage
	result json.RawMessage
	error  *Error
}

// decodeOneFast decodes data token by token. It reports false when data
// is not of the common shape, leaving the decision to decodeOneReflect.
// Text that jsonscan.ValidObject passes with at most envelopeMembers
// members (most messages) is read from the places of its members; other
// text by a jsontext.Decoder, which validates as it reads.
func decodeOneFast(data []byte, owned bool, memo *jsonscan.Memo) (Message, bool) {
	f := wireFields{owned: owned}
	var top [envelopeMembers]jsonscan.Member
	if n, ok := jsonscan.ValidObject(data, top[:], memo); ok && n <= len(top) {
		if !f.readMembers(data, top[:n]) {
			return nil, false
		}
		return f.message()
	}
	dec := jsonscan.Get(data)
	ok := f.read(&dec.Decoder)
	dec.Release()
	if !ok {
		return nil, false
	}
	return f.message()
}

// read reads one JSON object holding a message into f, and the end of
// the input after it.
func (f *wireFields) read(dec *jsontext.Decoder) bool {
	if dec.PeekKind() != '{' {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	jsonrpcOK := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return false
		}
		if !isMemberName(name) {
			if isEnvelopeName(name[1 : len(name)-1]) {
				return false // a near miss, such as "Method": let the decoder judge
			}
			if err := dec.SkipValue(); err != nil {
				return false
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil || !f.member(name, v, &jsonrpcOK) {
			return false
		}
	}
	if !jsonrpcOK || dec.PeekKind() != '}' {
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return false // more input after the object, or an error
	}
	return true
}

// envelopeMembers is the number of members of a message whose places
// decodeOneFast takes from the validation: the envelope's four, and room
// for a few others.
const envelopeMembers = 8

// readMembers reads the envelope of the message b from its members, as
// jsonscan.ValidObject found them (their names have no escapes: the
// validator leaves those to the decoder).
func (f *wireFields) readMembers(b []byte, members []jsonscan.Member) bool {
	jsonrpcOK := false
	for _, m := range members {
		name := b[m.Name.Start:m.Name.End]
		if isMemberName(name) {
			if !f.member(name, b[m.Value.Start:m.Value.End], &jsonrpcOK) {
				return false
			}
		} else if isEnvelopeName(name[1 : len(name)-1]) {
			return false // a near miss, such as "Method": let the decoder judge
		}
	}
	return jsonrpcOK
}

// isMemberName reports whether name, quoted, is an envelope member's.
func isMemberName(name []byte) bool {
	switch string(name) {
	case `"jsonrpc"`, `"id"`, `"method"`, `"params"`, `"result"`, `"error"`:
		return true
	}
	return false
}

// member takes the value v of the envelope member name (quoted) into f,
// setting *jsonrpcOK for a jsonrpc member of "2.0". It reports false for a
// value the fast path leaves to the decoder.
func (f *wireFields) member(name []byte, v jsontext.Value, jsonrpcOK *bool) bool {
	switch string(name) {
	case `"jsonrpc"`:
		*jsonrpcOK = string(v) == `"2.0"`
	case `"id"`:
		f.hasID = true
		var err error
		if f.id, f.idNull, err = parseID(v); err != nil {
			return false
		}
	case `"method"`:
		if v.Kind() == 'n' {
			break // as if absent
		}
		method, ok := jsonscan.PlainString(v)
		if !ok || len(method) == 0 {
			return false
		}
		f.hasMethod, f.method = true, internMethod(method)
	case `"params"`:
		f.hasParams, f.params = true, f.keep(v)
	case `"result"`:
		f.hasResult, f.result = true, f.keep(v)
	case `"error"`:
		f.hasError = true
		if v.Kind() != '{' {
			return false
		}
		f.error = new(Error)
		if err := jsonv2.Unmarshal(v, (*wireError)(f.error)); err != nil {
			return false
		}
	}
	return true
}

// keep returns v, or a copy of it unless the input is owned.
func (f *wireFields) keep(v []byte) []byte {
	if f.owned {
		return v[:len(v):len(v)]
	}
	return bytes.Clone(v)
}

// message builds the message from its members, as decodeOneReflect would,
// or reports false for a combination this path leaves to it (every
// malformed message among them).
func (f *wireFields) message() (Message, bool) {
	if f.idNull {
		return nil, false
	}
	if f.hasMethod {
		if f.hasResult || f.hasError {
			return nil, false
		}
		if f.hasParams {
			if k := jsontext.Value(f.params).Kind(); k != '{' && k != '[' {
				return nil, false
			}
		}
		return &Request{ID: f.id, Method: f.method, Params: f.params}, true
	}
	if !f.hasID {
		return nil, false
	}
	switch {
	case f.hasResult && !f.hasError:
		return &Response{ID: f.id, Result: f.result}, true
	case f.hasError && !f.hasResult:
		return &Response{ID: f.id, Error: f.error}, true
	}
	return nil, false
}

// isEnvelopeName reports whether name equals an envelope member's name
// but for case.
func isEnvelopeName(name []byte) bool {
	for _, n := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
		if bytes.EqualFold(name, []byte(n)) {
			return true
		}
	}
	return false
}

// internMethod returns method as a string, sharing the string of a
// method name MCP defines so that decoding a request does not allocate
// one.
func internMethod(method []byte) string {
	for _, m := range mcpMethods {
		if m == string(method) {
			return m
		}
	}
	return string(method)
}

// mcpMethods are the method names of MCP messages, most frequent first.
var mcpMethods = [...]string{
	"tools/call", "notifications/progress", "notifications/message",
	"tools/list", "ping", "initialize", "notifications/initialized",
	"notifications/cancelled", "resources/read", "resources/list",
	"resources/templates/list", "prompts/get", "prompts/list",
	"completion/complete", "sampling/createMessage", "elicitation/create",
	"roots/list", "logging/setLevel", "resources/subscribe",
	"resources/unsubscribe", "notifications/resources/updated",
	"notifications/resources/list_changed", "notifications/tools/list_changed",
	"notifications/prompts/list_changed", "notifications/roots/list_changed",
}
