package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/rpclink"
)

// Message is a JSON-RPC 2.0 message: a [*Request] (which includes
// notifications), a [*Response], or a [Batch] of them. The interface is
// sealed: only this package's types implement it.
//
// Messages are immutable once sent or received; a Stream may hand the same
// value to the peer without copying.
type Message interface {
	isMessage()
}

// Request is a call or, when ID is absent, a notification.
type Request struct {
	// ID is the request's id; the zero ID marks a notification.
	ID ID
	// Method names the operation.
	Method string
	// Params holds the raw JSON of the params member (an object or array),
	// or nil when absent.
	Params json.RawMessage
	// Extra carries transport-supplied information about the message, such
	// as the HTTP request that carried it. It never goes on the wire.
	Extra any

	// frame, when not nil, holds Params with room before it for the
	// envelope (see EncodeMessage); it is used only while Params is still
	// its value.
	frame *rpclink.Framed
}

// IsNotification reports whether the request expects no response.
func (r *Request) IsNotification() bool { return !r.ID.IsValid() }

// Response answers a request. Exactly one of Result and Error is set.
type Response struct {
	// ID echoes the request's id. It is absent only for an error answering a
	// message whose id could not be read.
	ID ID
	// Result holds the raw JSON result of a successful call.
	Result json.RawMessage
	// Error describes a failed call.
	Error *Error
	// Extra carries transport-supplied information; never on the wire.
	Extra any

	// frame, when not nil, holds Result with room before it for the
	// envelope (see EncodeMessage); it is used only while Result is still
	// its value.
	frame *rpclink.Framed
}

// Batch is a JSON-RPC batch: an array of requests or of responses. MCP
// allows batches only in revision 2025-03-26. An element that failed to
// decode is a [*DecodeError].
type Batch []Message

func (*Request) isMessage()     {}
func (*Response) isMessage()    {}
func (Batch) isMessage()        {}
func (*DecodeError) isMessage() {}

// DecodeError reports a message that could not be decoded. Err carries the
// code to answer with (CodeParseError or CodeInvalidRequest); ID is the
// message's id when it could be read, so the answer can name it.
//
// A DecodeError is also a [Message] so that a [Batch] can hold the failed
// elements in place.
type DecodeError struct {
	ID  ID
	Err *Error
	// Cause is the reason in typed form when there is one, such as a
	// [*LimitError] for a message over the [DecodeLimits]; nil otherwise.
	Cause error
	// Input holds the first bytes of a message that is not JSON (at
	// most MaxDecodeErrorInput), for reports of stray output; nil
	// otherwise.
	Input []byte
	// Response is set when the message, refused for a limit, is a JSON
	// object with an id and no "method" member: a response, which must
	// not be answered. A [Conn] fails the call it answers with this
	// error instead.
	Response bool
}

// Error implements error.
func (e *DecodeError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying *Error and the Cause, if any.
func (e *DecodeError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// wireMessage is the union of every member a message may have.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      jsontext.Value  `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

// DecodeMessage decodes one message, or a batch when data is a JSON array.
// Params and results stay raw JSON for the receiver to decode into its own
// types; they are copies, so the caller may reuse data. The envelope is
// read without reflection (see decodeOne). The message must keep within
// the default [DecodeLimits]; use [DecodeLimits.DecodeMessage] for others.
//
// Errors are [*DecodeError] values wrapping an [*Error] with
// CodeParseError (not JSON) or CodeInvalidRequest (not JSON-RPC 2.0, or
// over a limit).
func DecodeMessage(data []byte) (Message, error) {
	return (*DecodeLimits)(nil).decode(data, false, nil)
}

func decodeBatch(data []byte) (Message, error) {
	var elems []jsontext.Value
	if err := jsonv2.Unmarshal(data, &elems); err != nil {
		return nil, parseError(data, err)
	}
	if len(elems) == 0 {
		return nil, &DecodeError{Err: &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}}
	}
	b := make(Batch, len(elems))
	for i, e := range elems {
		if e.Kind() == '[' {
			b[i] = &DecodeError{Err: &Error{Code: CodeInvalidRequest, Message: "invalid request: nested batch"}}
			continue
		}
		m, err := decodeOne(e, true, nil) // e is a copy of its own
		if err != nil {
			b[i] = err.(*DecodeError)
			continue
		}
		b[i] = m
	}
	return b, nil
}

func parseError(data []byte, err error) *DecodeError {
	return &DecodeError{Err: &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}, Input: inputHead(data)}
}

// MaxDecodeErrorInput is how much of a message that is not JSON a
// [DecodeError] keeps in Input.
const MaxDecodeErrorInput = 200

// inputHead returns a copy of the first MaxDecodeErrorInput bytes of data.
func inputHead(data []byte) []byte {
	return bytes.Clone(data[:min(len(data), MaxDecodeErrorInput)])
}

// decodeOneReflect decodes one message with the reflection-based decoder,
// which also judges every malformed message; see decodeOne.
func decodeOneReflect(data []byte) (Message, error) {
	var w wireMessage
	if err := jsonv2.Unmarshal(data, &w); err != nil {
		var se *jsonv2.SemanticError
		if errors.As(err, &se) && jsontext.Value(data).IsValid() {
			// Valid JSON of the wrong shape: not a JSON-RPC message.
			return nil, invalid(ID{}, "invalid request: "+se.Error())
		}
		return nil, parseError(data, err)
	}
	var id ID
	idNull := false
	if w.ID != nil {
		var err error
		if id, idNull, err = parseID(w.ID); err != nil {
			return nil, invalid(ID{}, "invalid request: id must be a string or a number")
		}
	}
	if w.JSONRPC != "2.0" {
		return nil, invalid(id, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if w.Method != nil {
		if w.Result != nil || w.Error != nil {
			return nil, invalid(id, "invalid request: a request cannot carry result or error")
		}
		if idNull {
			return nil, invalid(id, "invalid request: id must not be null")
		}
		if *w.Method == "" {
			return nil, invalid(id, "invalid request: empty method")
		}
		if w.Params != nil {
			if k := jsontext.Value(w.Params).Kind(); k != '{' && k != '[' {
				return nil, invalid(id, "invalid request: params must be an object or an array")
			}
		}
		return &Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if w.ID == nil {
		return nil, invalid(id, `invalid request: missing "method" or "id"`)
	}
	switch {
	case w.Result != nil && w.Error != nil:
		return nil, invalid(id, "invalid response: both result and error")
	case w.Error != nil:
		return &Response{ID: id, Error: (*Error)(w.Error)}, nil
	case w.Result != nil:
		if idNull {
			return nil, invalid(id, "invalid response: a result needs an id")
		}
		return &Response{ID: id, Result: w.Result}, nil
	}
	return nil, invalid(id, "invalid response: missing result or error")
}

func invalid(id ID, msg string) *DecodeError {
	return &DecodeError{ID: id, Err: &Error{Code: CodeInvalidRequest, Message: msg}}
}

// AppendMessage appends the JSON encoding of m to dst. It writes the
// envelope by hand, so only params, results and error data (already raw
// JSON) are copied; nothing is reflected.
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case *Request:
		return appendRequest(dst, m)
	case *Response:
		return appendResponse(dst, m)
	case Batch:
		if len(m) == 0 {
			return dst, errors.New("jsonrpc: cannot encode an empty batch")
		}
		dst = append(dst, '[')
		for i, e := range m {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendMessage(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *DecodeError:
		return appendResponse(dst, &Response{ID: m.ID, Error: m.Err})
	case nil:
		return dst, errors.New("jsonrpc: cannot encode a nil message")
	}
	return dst, fmt.Errorf("jsonrpc: cannot encode %T", m)
}

// EncodeMessage returns the JSON encoding of m.
func EncodeMessage(m Message) ([]byte, error) {
	switch m := m.(type) {
	case *Response:
		if m.frame != nil && m.Error == nil && m.ID.IsValid() {
			if data, ok := encodeInFrame(m.frame, m.Result, `{"jsonrpc":"2.0","id":`, m.ID.raw, `,"result":`, "", ""); ok {
				return data, nil
			}
		}
	case *Request:
		if m.frame != nil && m.ID.IsValid() && plainMethod(m.Method) {
			if data, ok := encodeInFrame(m.frame, m.Params, `{"jsonrpc":"2.0","id":`, m.ID.raw, `,"method":"`, m.Method, `","params":`); ok {
				return data, nil
			}
		}
	}
	return AppendMessage(make([]byte, 0, encodedSizeHint(m)), m)
}

// plainMethod reports whether a method name is encoded as itself between
// quotes: printable ASCII but the quote and the backslash.
func plainMethod(m string) bool {
	return jsonscan.PlainRun(m, 0) == len(m)
}

// encodeInFrame encodes a message whose one raw member, value (a
// response's result or a request's params), package mcp encoded with room
// before it (rpclink.Framed): head, id and the rest of the envelope go
// into the room, and the closing brace after the value, so the value is
// not copied: head, id, mid, method and tail, one after the other, are
// the envelope before the value. It reports false when value is no longer
// the frame's, the room or the capacity after it is too small, or an
// encoding before this one used the room.
func encodeInFrame(f *rpclink.Framed, value []byte, head, id, mid, method, tail string) ([]byte, bool) {
	v := f.Value()
	if len(value) == 0 || len(v) != len(value) || &v[0] != &value[0] || cap(f.Buf) == len(f.Buf) {
		return nil, false
	}
	n := len(head) + len(id) + len(mid) + len(method) + len(tail)
	if n > int(f.Off) || !f.Claim() {
		return nil, false
	}
	out := f.Buf[int(f.Off)-n : len(f.Buf)+1]
	i := copy(out, head)
	i += copy(out[i:], id)
	i += copy(out[i:], mid)
	i += copy(out[i:], method)
	copy(out[i:], tail)
	out[len(out)-1] = '}'
	return out, true
}

// encodedSizeHint estimates the size of m's encoding, so that it is
// usually encoded into one allocation.
func encodedSizeHint(m Message) int {
	const envelope = 64 // {"jsonrpc":"2.0","id":,"method":"","params":} and some escapes
	switch m := m.(type) {
	case *Request:
		return envelope + len(m.ID.raw) + len(m.Method) + len(m.Params)
	case *Response:
		n := envelope + len(m.ID.raw) + len(m.Result)
		if m.Error != nil {
			n += len(m.Error.Message) + len(m.Error.Data)
		}
		return n
	}
	return 512
}

func appendRequest(dst []byte, r *Request) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if r.ID.IsValid() {
		dst = append(dst, `"id":`...)
		dst = append(dst, r.ID.raw...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	var err error
	if dst, err = jsonscan.AppendQuote(dst, r.Method); err != nil {
		return dst, fmt.Errorf("jsonrpc: method name: %w", err)
	}
	if len(r.Params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, r.Params...)
	}
	return append(dst, '}'), nil
}

func appendResponse(dst []byte, r *Response) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if r.ID.IsValid() {
		dst = append(dst, r.ID.raw...)
	} else {
		dst = append(dst, "null"...)
	}
	if r.Error != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, r.Error.Code, 10)
		dst = append(dst, `,"message":`...)
		var err error
		if dst, err = jsonscan.AppendQuote(dst, r.Error.Message); err != nil {
			return dst, fmt.Errorf("jsonrpc: error message: %w", err)
		}
		if len(r.Error.Data) > 0 {
			dst = append(dst, `,"data":`...)
			dst = append(dst, r.Error.Data...)
		}
		return append(dst, "}}"...), nil
	}
	dst = append(dst, `,"result":`...)
	if len(r.Result) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, r.Result...)
	}
	return append(dst, '}'), nil
}
