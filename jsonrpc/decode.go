package jsonrpc

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeOne decodes one message. The common shape (a valid JSON object
// whose envelope members have plain names and whose jsonrpc and method
// values are strings without escapes) is read by hand, after one
// validating pass, with no reflection and the params or result copied
// once. Anything else goes to decodeOneReflect, which gives the same
// result for every input and the error for a malformed one; the fuzz
// test FuzzDecodeFast holds the two to that.
func decodeOne(data []byte) (Message, error) {
	if m, ok := decodeOneFast(data); ok {
		return m, nil
	}
	return decodeOneReflect(data)
}

// wireFields are the envelope members of a message as raw JSON; a nil
// field was absent.
type wireFields struct {
	jsonrpc, id, method, params, result, error []byte
}

// decodeOneFast decodes data by hand. It reports false when data is not
// of the common shape, leaving the decision to decodeOneReflect.
func decodeOneFast(data []byte) (Message, bool) {
	if !jsontext.Value(data).IsValid() {
		return nil, false
	}
	// data is valid JSON from here on: the scanning below needs no checks.
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	var f wireFields
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		end, escaped := scanString(data, i)
		if escaped {
			return nil, false
		}
		name := data[i+1 : end-1]
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // past ':'
		vend := scanValue(data, i)
		v := data[i:vend]
		switch string(name) {
		case "jsonrpc":
			f.jsonrpc = v
		case "id":
			f.id = v
		case "method":
			f.method = v
		case "params":
			f.params = v
		case "result":
			f.result = v
		case "error":
			f.error = v
		default:
			if isEnvelopeName(name) {
				return nil, false // a near miss, such as "Method": let the decoder judge
			}
		}
		i = skipSpace(data, vend)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return f.message()
}

// message builds the message from its members, as decodeOneReflect would,
// or reports false when a member is not of the plain kind this path
// handles (including every malformed message).
func (f *wireFields) message() (Message, bool) {
	if string(f.jsonrpc) != `"2.0"` {
		return nil, false
	}
	var id ID
	if f.id != nil {
		var err error
		var null bool
		if id, null, err = parseID(f.id); err != nil || null {
			return nil, false
		}
	}
	if f.method != nil && !isNull(f.method) {
		method, ok := plainString(f.method)
		if !ok || len(method) == 0 || f.result != nil || f.error != nil {
			return nil, false
		}
		var params jsontext.Value
		if f.params != nil {
			if k := f.params[0]; k != '{' && k != '[' {
				return nil, false
			}
			params = bytes.Clone(f.params)
		}
		return &Request{ID: id, Method: internMethod(method), Params: params}, true
	}
	if !id.IsValid() {
		return nil, false
	}
	switch {
	case f.result != nil && f.error == nil:
		return &Response{ID: id, Result: bytes.Clone(f.result)}, true
	case f.error != nil && f.result == nil && f.error[0] == '{':
		e := new(Error)
		if err := json.Unmarshal(f.error, e); err != nil {
			return nil, false
		}
		return &Response{ID: id, Error: e}, true
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

// plainString returns the contents of v, a JSON string without escapes;
// it reports false for anything else.
func plainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

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

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index just past the valid JSON string starting
// at data[i], and whether it contains escapes.
func scanString(data []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(data), escaped
}

// scanValue returns the index just past the valid JSON value starting at
// data[i].
func scanValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		end, _ := scanString(data, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _ := scanString(data, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	}
	// A number, true, false or null.
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
