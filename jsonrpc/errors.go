package jsonrpc

import (
	"context"
	"errors"
	"fmt"

	"encoding/json"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700 // the message is not valid JSON
	CodeInvalidRequest = -32600 // valid JSON, but not a valid JSON-RPC message
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the params do not fit the method
	CodeInternalError  = -32603 // the handler failed
)

// Error codes in the implementation-defined range used by MCP and by this package.
const (
	// CodeResourceNotFound is MCP's "resource not found" code in the
	// handshake-era revisions (up to 2025-11-25). 2026-07-28 retired it in
	// favour of CodeInvalidParams.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired tells the client a URL-mode elicitation must
	// complete before the request can succeed (MCP 2025-11-25).
	CodeURLElicitationRequired = -32042
	// CodeRequestCancelled is used locally for calls ended by cancellation.
	// It is never sent: MCP says a cancelled request gets no response.
	CodeRequestCancelled = -32800
	// CodeServerOverloaded is sent when a request arrives while the maximum
	// number of requests are already in flight.
	CodeServerOverloaded = -32000
	// CodeConnectionClosed reports a call that ended because the connection closed.
	CodeConnectionClosed = -32001
	// CodeHeaderMismatch: HTTP header and body disagree (MCP 2026-07-28).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability the client did not declare (MCP 2026-07-28).
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the requested revision is not served (MCP 2026-07-28).
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error object. It is the single error type that crosses
// the wire: handlers return it (or wrap it) to choose the code, and calls
// return it when the peer answered with an error.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitzero"`
}

// Error implements error.
func (e *Error) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError returns an *Error with the given code and a formatted message.
func NewError(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinel errors for errors.Is checks against a peer's error codes.
var (
	ErrParse          = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal       = &Error{Code: CodeInternalError, Message: "internal error"}
	// ErrClosed is returned by calls pending when the connection closed.
	ErrClosed = &Error{Code: CodeConnectionClosed, Message: "connection closed"}
	// ErrOverloaded is returned to a peer that exceeds the in-flight limit.
	ErrOverloaded = &Error{Code: CodeServerOverloaded, Message: "too many requests in flight"}
)

// ToWire converts any error into the *Error sent on the wire. It is the one
// place where Go errors become JSON-RPC codes: an *Error found with
// errors.As keeps its code, context cancellation and deadlines become
// CodeRequestCancelled and CodeInternalError, and anything else becomes
// CodeInternalError with the error's text.
func ToWire(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var we interface{ WireError() *Error }
	if errors.As(err, &we) {
		if e := we.WireError(); e != nil {
			return e
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeInternalError, Message: "request timed out"}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
