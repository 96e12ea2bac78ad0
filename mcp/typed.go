package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// ElicitAs asks the client, on behalf of req, to have the user fill in a
// form for a T, and decodes the answer into a T. The form's schema is
// inferred from T with the server's schema reflector (see
// [ServerOptions.SchemaReflector]), as for a tool's input; T must be a
// struct whose fields are strings, numbers, integers, booleans or slices
// of enumerated strings, the flat kind MCP elicitation allows. Field
// defaults in the schema are applied by the client.
//
// When the user accepts, ElicitAs returns the decoded answer and
// [ElicitActionAccept]; when they decline or cancel, the zero T and that
// action, with a nil error. An error means no answer: the client lacks
// the capability, refused the request, or sent content that does not
// decode into T.
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, ElicitAs returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func ElicitAs[T any, P Params](ctx context.Context, req *ServerRequest[P], message string) (T, ElicitAction, error) {
	var zero T
	v, err := newValidator(req.Session.server.reflector, reflect.TypeFor[T](), nil)
	if err != nil {
		return zero, "", fmt.Errorf("mcp: elicitation schema of %v: %w", reflect.TypeFor[T](), err)
	}
	if _, err := restrictedSchema(v.schemaJSON); err != nil {
		return zero, "", fmt.Errorf("mcp: %v cannot be elicited: %w", reflect.TypeFor[T](), err)
	}
	res, err := req.Elicit(ctx, &ElicitParams{Mode: ElicitModeForm, Message: message, RequestedSchema: v.schemaJSON})
	if err != nil {
		return zero, "", err
	}
	if res.Action != ElicitActionAccept {
		return zero, res.Action, nil
	}
	data, err := marshalStd(res.Content)
	if err != nil {
		return zero, res.Action, fmt.Errorf("mcp: elicitation answer: %w", err)
	}
	var out T
	if err := unmarshalStd(data, &out); err != nil {
		return zero, res.Action, fmt.Errorf("mcp: decoding elicitation answer into %v: %w", reflect.TypeFor[T](), err)
	}
	return out, res.Action, nil
}

// ToolError is returned by [CallToolAs] when the tool reported a failure
// (a result with isError set). Result is the tool's result; the error's
// text is that of its text content.
type ToolError struct {
	// Name is the tool's name.
	Name string
	// Result is the tool's result, with IsError set.
	Result *CallToolResult
}

// Error implements error.
func (e *ToolError) Error() string {
	var b strings.Builder
	for _, c := range e.Result.Content {
		if t, ok := c.(*TextContent); ok {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t.Text)
		}
	}
	return fmt.Sprintf("mcp: tool %q failed: %s", e.Name, b.String())
}

// CallToolOptions are the options of a call by [CallToolAs]. The zero
// value, like a nil *CallToolOptions, makes a plain call.
type CallToolOptions struct {
	// Progress, if set, receives the progress notifications the server
	// sends about this call: the call carries a progress token the
	// session makes up (or Meta.ProgressToken, if set), and every
	// notifications/progress with that token is passed to Progress, in
	// the order received, after ClientOptions.ProgressHandler.
	// Notifications that arrive after the call returned are not passed.
	Progress func(ctx context.Context, p *ProgressParams)
	// Meta is the _meta of the request: data for the server beside the
	// arguments (see [Meta]). In 2026-07-28 the session adds its envelope
	// (revision, capabilities, identity, log level) to it.
	Meta Meta
}

// CallToolAs calls the tool name with args and decodes the result's
// structuredContent into an Out, the Go type of the tool's output. args
// is encoded as JSON (a [json.RawMessage] is sent as is; nil sends no
// arguments). opts may be nil.
//
// When Out is string and the result has no structured content, the
// output is the result's text content (the text blocks joined with
// newlines), as [AddTool] answers for a tool whose output is a string.
//
// It returns the result alongside the decoded output. A tool that
// reports a failure gives a [*ToolError]; a result without structured
// content (or, for a string, without text), or whose structured content
// does not decode into Out, gives an error and the result. Any other error is as [ClientSession]
// describes, with a nil result.
func CallToolAs[Out any](ctx context.Context, cs *ClientSession, name string, args any, opts *CallToolOptions) (Out, *CallToolResult, error) {
	var zero Out
	params := &CallToolParams{Name: name}
	switch a := args.(type) {
	case nil:
	case json.RawMessage:
		params.Arguments = a
	default:
		data, err := marshalStd(a)
		if err != nil {
			return zero, nil, fmt.Errorf("mcp: encoding arguments of tool %q: %w", name, err)
		}
		params.Arguments = data
	}
	if opts != nil {
		params.Meta = opts.Meta
		if opts.Progress != nil {
			tok := params.Meta.ProgressToken
			if !tok.IsValid() {
				tok = cs.newProgressToken()
				params.Meta.ProgressToken = tok
			}
			defer cs.watchProgress(tok, opts.Progress)()
		}
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return zero, nil, err
	}
	if res.IsError {
		return zero, res, &ToolError{Name: name, Result: res}
	}
	var out Out
	if len(res.StructuredContent) == 0 {
		// A tool whose output is a string (AddTool with Out string)
		// answers with text content only: read it back as such.
		if p, ok := any(&out).(*string); ok {
			if text, ok := textOf(res); ok {
				*p = text
				return out, res, nil
			}
		}
		return zero, res, fmt.Errorf("mcp: tool %q returned no structured content", name)
	}
	if err := unmarshalStd(res.StructuredContent, &out); err != nil {
		return zero, res, fmt.Errorf("mcp: decoding structured content of tool %q into %v: %w", name, reflect.TypeFor[Out](), err)
	}
	return out, res, nil
}

// textOf returns the text blocks of res joined with newlines, and whether
// it has any.
func textOf(res *CallToolResult) (string, bool) {
	var b strings.Builder
	found := false
	for _, c := range res.Content {
		if t, ok := c.(*TextContent); ok {
			if found {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
			found = true
		}
	}
	return b.String(), found
}
