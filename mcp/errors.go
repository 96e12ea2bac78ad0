package mcp

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ErrNotInitialized is returned for a request that arrives before the
// session's initialize handshake, and by session methods used before it.
var ErrNotInitialized = errors.New("mcp: session not initialized")

// ErrSessionClosed reports that an MCP session has ended, whatever the
// transport and whoever ended it: requests and notifications sent on a
// [ClientSession] or [ServerSession] whose connection has closed (by
// Close, by the peer ending it, or by a transport failure) fail with an
// error that matches it, as do requests still waiting for an answer when
// it closed. The reason is wrapped alongside where there is one, such as
// io.EOF, a *transport.ExitError for a server subprocess that failed, or
// transport.ErrSessionTerminated for an HTTP session the server ended.
// It is the same value as jsonrpc.ErrClosed, so errors.Is matches either.
var ErrSessionClosed = jsonrpc.ErrClosed

// CapabilityError reports an operation the peer did not declare a
// capability for, such as sampling from a client without the sampling
// capability. Nothing is sent in that case.
type CapabilityError struct {
	// Method is the method that was not sent.
	Method string
	// Capability names the missing capability, e.g. "sampling".
	Capability string
	// Peer is "client" or "server".
	Peer string

	discover bool // the server declared its capabilities in server/discover (2026-07-28)
}

// Error implements error. For a server's capability it says where the
// server declared its capabilities (at initialize, or in its
// server/discover answer in 2026-07-28) and how a server fixes it: the
// client learns the capabilities once, when it connects, so a server that
// registers features after clients connect must declare them up front.
func (e *CapabilityError) Error() string {
	msg := fmt.Sprintf("mcp: %s did not declare the %q capability needed for %s", e.Peer, e.Capability, e.Method)
	if e.Peer == "server" {
		where := "at initialize"
		if e.discover {
			where = "in its server/discover answer"
		}
		feature, _, _ := strings.Cut(e.Capability, ".")
		msg += fmt.Sprintf(" %s; a server that adds %s after clients connect must declare the capability up front (mcpkit: ServerOptions.Capabilities)", where, feature)
	}
	return msg
}

// ResourceNotFoundError is returned by resource handlers for an unknown
// URI. It is sent with the code of the session's revision: -32002 in the
// handshake era, -32602 with the URI in 2026-07-28. A client's
// ReadResource returns it for either answer (and -32002 from a server of
// any revision); errors.As finds the [*jsonrpc.Error] it came as, too.
type ResourceNotFoundError struct {
	URI string

	wire error // the peer's error, on the client side
}

// Error implements error.
func (e *ResourceNotFoundError) Error() string {
	if e.wire != nil {
		return "resource not found: " + e.URI + " (" + e.wire.Error() + ")"
	}
	return "resource not found: " + e.URI
}

// Unwrap returns the peer's error a client received, or nil.
func (e *ResourceNotFoundError) Unwrap() error { return e.wire }

// resourceNotFound returns err as a *ResourceNotFoundError when it is the
// answer of a server that has no resource at uri: -32002, or -32602
// naming uri in its data (2026-07-28); otherwise err.
func resourceNotFound(err error, uri string) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err
	}
	switch je.Code {
	case jsonrpc.CodeResourceNotFound:
	case jsonrpc.CodeInvalidParams:
		var d struct {
			URI string `json:"uri"`
		}
		if len(je.Data) == 0 || json.Unmarshal(je.Data, &d) != nil || d.URI != uri {
			return err
		}
	default:
		return err
	}
	return &ResourceNotFoundError{URI: uri, wire: err}
}

// WireError implements the conversion to a JSON-RPC error.
func (e *ResourceNotFoundError) WireError() *jsonrpc.Error {
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{e.URI})
	return &jsonrpc.Error{Code: jsonrpc.CodeResourceNotFound, Message: "Resource not found", Data: data}
}

// URLElicitationRequiredError is returned by a request handler that cannot
// proceed until the user completes one or more URL-mode elicitations
// (MCP 2025-11-25). It is sent as error -32042 carrying the elicitations;
// a client receives it as the same type from errors.As.
type URLElicitationRequiredError struct {
	Message      string
	Elicitations []*ElicitParams

	wire error // the peer's error, on the client side
}

// Unwrap returns the [*jsonrpc.Error] a client received, or nil.
func (e *URLElicitationRequiredError) Unwrap() error { return e.wire }

// Error implements error.
func (e *URLElicitationRequiredError) Error() string {
	if e.Message != "" {
		return "mcp: URL elicitation required: " + e.Message
	}
	return "mcp: URL elicitation required"
}

type urlElicitationData struct {
	Elicitations []*ElicitParams `json:"elicitations"`
}

// WireError implements the conversion to a JSON-RPC error.
func (e *URLElicitationRequiredError) WireError() *jsonrpc.Error {
	msg := e.Message
	if msg == "" {
		msg = "This request requires more information."
	}
	data, err := json.Marshal(urlElicitationData{Elicitations: e.Elicitations})
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode elicitations"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeURLElicitationRequired, Message: msg, Data: data}
}

// fromWire turns a peer's error into the typed error that describes it,
// when there is one; otherwise it returns err unchanged.
func fromWire(err error) error {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case jsonrpc.CodeURLElicitationRequired:
		var d urlElicitationData
		if len(e.Data) > 0 && json.Unmarshal(e.Data, &d) == nil {
			return &URLElicitationRequiredError{Message: e.Message, Elicitations: d.Elicitations, wire: err}
		}
	}
	return err
}

// MissingClientCapabilityError is the error of an ask (Elicit,
// CreateMessage, ListRoots) on a 2026-07-28 request whose client did not
// declare the capability it needs. Returned by the handler, it is sent as
// error -32021 naming the capability; errors.As finds the
// [*CapabilityError] it wraps.
type MissingClientCapabilityError struct {
	Err *CapabilityError
}

// Error implements error.
func (e *MissingClientCapabilityError) Error() string { return e.Err.Error() }

// Unwrap returns the CapabilityError.
func (e *MissingClientCapabilityError) Unwrap() error { return e.Err }

// WireError implements [ProtocolError]: -32021 with the required
// capabilities.
func (e *MissingClientCapabilityError) WireError() *jsonrpc.Error {
	required := &ClientCapabilities{}
	switch top, sub, _ := strings.Cut(e.Err.Capability, "."); top {
	case "sampling":
		required.Sampling = &SamplingCapabilities{}
		if sub == "tools" {
			required.Sampling.Tools = &struct{}{}
		}
	case "elicitation":
		required.Elicitation = &ElicitationCapabilities{}
		switch sub {
		case "url":
			required.Elicitation.URL = &URLElicitationCapabilities{}
		case "form":
			required.Elicitation.Form = &FormElicitationCapabilities{}
		}
	case "roots":
		required.Roots = &RootsCapabilities{}
	case "extensions":
		// An extension's identifier, as "extensions.io.modelcontextprotocol/tasks".
		required.Extensions = map[string]stdjson.RawMessage{sub: stdjson.RawMessage("{}")}
	}
	data, _ := json.Marshal(&MissingRequiredClientCapabilityData{RequiredCapabilities: required})
	return &jsonrpc.Error{Code: CodeMissingRequiredClientCapability, Message: "Missing required client capability: " + e.Err.Capability, Data: data}
}
