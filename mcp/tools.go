package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ToolHandler handles tools/call for one tool registered with
// [Server.AddTool]. The arguments are in req.Params.Arguments, raw.
//
// Return an error for a failure the model should see (it becomes a result
// with isError set and the error's text), including the failure of a
// request the handler made to the client; return a [*jsonrpc.Error] or a
// [ProtocolError] itself, not wrapped, to answer with a JSON-RPC error.
// [ProtocolError] documents the rule.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

// TypedToolHandler handles tools/call for a tool registered with
// [AddTool]: in holds the validated arguments, with schema defaults
// applied. The returned Out becomes the result's structuredContent, and
// its JSON a text block, unless Out implements [ToolContenter].
//
// Errors are treated as for [ToolHandler].
type TypedToolHandler[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// ToolContenter is implemented by a typed tool's output type to choose the
// content blocks sent alongside the structured output (by default, one
// text block holding the output's JSON).
type ToolContenter interface {
	ToolContent() []Content
}

// serverTool is a registered tool.
type serverTool struct {
	tool    *Tool
	handler ToolHandler
	headers []headerParam // its x-mcp-header marks
	// complete, when set, returns tool with the schemas [AddTool] left
	// to encode on first use (see newToolValidator), made once.
	complete func() (*Tool, error)
}

// definition returns the tool as tools/list shows it.
func (t *serverTool) definition() (*Tool, error) {
	if t.complete == nil {
		return t.tool, nil
	}
	return t.complete()
}

// AddTool registers a tool whose input schema is given in t.InputSchema
// (raw JSON; an empty schema means {"type":"object"}) and whose handler
// reads raw arguments. The name must follow the MCP tool-name rules
// (1-128 characters of A-Z a-z 0-9 _ - .). Adding a tool with the name of
// an existing one replaces it: that is how a running server updates a
// tool. The same name added twice before the server first connects, or
// twice in one [Server.Batch], is almost always a mistake, and is logged
// at warning level (the second still replaces the first). Connected
// clients are told the tool list changed.
//
// Clients learn at initialize whether the server has tools: one that
// connected while the server had none will not use tools added later
// unless [ServerOptions.Capabilities] declares the tools capability.
func (s *Server) AddTool(t *Tool, h ToolHandler) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddTool needs a tool and a handler")
	}
	if err := ValidateToolName(t.Name); err != nil {
		return err
	}
	tool := *t
	if len(tool.InputSchema) == 0 {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	} else if !json.Valid(tool.InputSchema) {
		return fmt.Errorf("mcp: tool %q: input schema is not valid JSON", t.Name)
	}
	headers, err := headerParams(tool.InputSchema)
	if err != nil {
		return fmt.Errorf("mcp: tool %q: %w", t.Name, err)
	}
	tool.wire = newToolWire(&tool)
	s.addTool(&serverTool{tool: &tool, handler: h, headers: headers})
	return nil
}

// addTool registers t, whose name and input schema are valid. Connected
// clients are told the tool list changed. With none connected or
// listening, nobody is owed that: a session that connects later lists
// the tools as they are then. So a server setting up its tools before it
// runs arms no timer (see [ServerOptions.ListChangedDelay]), which would
// be one more thing to do before its first answer.
func (s *Server) addTool(t *serverTool) {
	s.mu.Lock()
	replaced := s.tools.add(t.tool.Name, t)
	s.noteAddedLocked("tool", t.tool.Name, replaced)
	alone := len(s.sessions) == 0 && len(s.listeners) == 0 && s.bus == nil
	if alone {
		s.generation++
	}
	s.mu.Unlock()
	if !alone {
		s.broadcast(NotificationToolListChanged, &ToolListChangedParams{}, nil)
	}
}

// RemoveTools removes the named tools; connected clients are told the
// list changed if any existed.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	removed := s.tools.remove(names...)
	s.mu.Unlock()
	if removed {
		s.broadcast(NotificationToolListChanged, &ToolListChangedParams{}, nil)
	}
}

// ToolNameError reports a tool name that breaks the MCP naming rules.
type ToolNameError struct {
	Name   string
	Reason string
}

// Error implements error.
func (e *ToolNameError) Error() string {
	return fmt.Sprintf("mcp: invalid tool name %q: %s", e.Name, e.Reason)
}

// ValidateToolName checks a tool name against the rules of SEP-986: 1 to
// 128 characters, each an ASCII letter, digit, '_', '-' or '.'.
func ValidateToolName(name string) error {
	if name == "" {
		return &ToolNameError{Name: name, Reason: "empty"}
	}
	if len(name) > 128 {
		return &ToolNameError{Name: name, Reason: "longer than 128 characters"}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return &ToolNameError{Name: name, Reason: fmt.Sprintf("character %q at offset %d is not allowed (use A-Z a-z 0-9 _ - .)", c, i)}
		}
	}
	return nil
}

// AddTool registers a typed tool on s. The input schema is inferred from
// In and the output schema from Out, once (set t.InputSchema or
// t.OutputSchema to override either). Before h runs, arguments are
// validated against the input schema (a failure becomes an isError result
// the model can read and correct) and schema defaults are applied. After
// it, the output is validated against the output schema.
//
// AddTool reports the types and struct tags that have no schema, and
// schemas given in t or in the server's [schema.Reflector] that do not
// compile. An inferred schema is encoded and compiled when it is first
// needed, by the tool's first listing or call, not here: that is most of
// the cost of registering a tool, which a server would otherwise pay
// before its first answer.
//
// As for [Server.AddTool], a server that adds its first tool after clients
// connected must declare the tools capability in [ServerOptions.Capabilities].
//
// In is the type the arguments (always a JSON object) decode into: a
// struct, a map, a pointer to either, or an interface type such as any.
// An interface type has no inferred schema (it is the schema true, which
// accepts anything), so give t.InputSchema for it; any other kind of type
// (int, a slice) makes AddTool return an error.
//
// Out chooses the shape of the result:
//   - a struct, a map or a pointer to either: the value, encoded as JSON,
//     becomes structuredContent and is validated against the output
//     schema; an interface type is accepted too, with the unconstrained
//     output schema true unless t.OutputSchema is given, and its dynamic
//     value must encode as a JSON object;
//   - string: a result with one text block, and no output schema;
//   - *CallToolResult: sent as it is, with no output schema.
//
// Any other kind of type (a number, a slice) makes AddTool return an error.
func AddTool[In, Out any](s *Server, t *Tool, h TypedToolHandler[In, Out]) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddTool needs a tool and a handler")
	}
	if err := ValidateToolName(t.Name); err != nil {
		return err
	}
	tool := *t
	in, err := newArgBinder[In](s.reflector, tool.InputSchema)
	if err != nil {
		return fmt.Errorf("mcp: tool %q input: %w", t.Name, err)
	}
	outType := reflect.TypeFor[Out]()
	var out *toolValidator
	switch {
	case outType == reflect.TypeFor[*CallToolResult](), outType.Kind() == reflect.String:
	default:
		if k := derefKind(outType); k != reflect.Struct && k != reflect.Map && k != reflect.Interface {
			return fmt.Errorf("mcp: tool %q: output type %v must be a struct, a map, string or *CallToolResult", t.Name, outType)
		}
		if out, err = newToolValidator(s.reflector, outType, tool.OutputSchema); err != nil {
			return fmt.Errorf("mcp: tool %q output: %w", t.Name, err)
		}
	}
	// The validators, made on first use; their errors are the server's,
	// not the model's: the call fails with -32603.
	validators := func() (inV, outV *validator, err error) {
		if inV, err = in.get(); err != nil {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcp: tool %q input schema: %v", tool.Name, err)}
		}
		if out != nil {
			if outV, err = out.get(); err != nil {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcp: tool %q output schema: %v", tool.Name, err)}
			}
		}
		return inV, outV, nil
	}
	raw := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		_, outV, err := validators()
		if err != nil {
			return nil, err
		}
		args, err := in.bind(req.Params.Arguments)
		if err != nil {
			return errorResult(err), nil
		}
		o, err := h(ctx, req, args)
		if err != nil {
			return nil, err
		}
		return toolResult(o, outV)
	}
	if len(tool.InputSchema) > 0 && (out == nil || len(tool.OutputSchema) > 0) {
		return s.AddTool(&tool, raw) // nothing inferred
	}
	// The input schema, when given, is valid JSON (it compiled); an
	// inferred one has no x-mcp-header marks.
	headers, err := headerParams(tool.InputSchema)
	if err != nil {
		return fmt.Errorf("mcp: tool %q: %w", t.Name, err)
	}
	st := &serverTool{tool: &tool, handler: raw, headers: headers}
	st.complete = sync.OnceValues(func() (*Tool, error) {
		inV, outV, err := validators()
		if err != nil {
			return nil, err
		}
		def := tool
		if len(def.InputSchema) == 0 {
			def.InputSchema = inV.schemaJSON
		}
		if outV != nil && len(def.OutputSchema) == 0 {
			def.OutputSchema = outV.schemaJSON
		}
		def.wire = newToolWire(&def)
		return &def, nil
	})
	s.addTool(st)
	return nil
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// toolResult turns a typed tool's output into its result.
func toolResult(o any, out *validator) (*CallToolResult, error) {
	switch o := o.(type) {
	case *CallToolResult:
		if o == nil {
			return &CallToolResult{Content: []Content{}}, nil
		}
		return o, nil
	case string:
		return newTextResult(o), nil
	}
	data, err := marshalStd(o)
	if err != nil {
		return nil, fmt.Errorf("mcp: encoding tool output: %w", err)
	}
	if out != nil {
		if err := out.validateJSON(data); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tool output does not match its output schema: " + err.Error()}
		}
	}
	res := &CallToolResult{StructuredContent: json.RawMessage(data)}
	if c, ok := o.(ToolContenter); ok {
		res.Content = c.ToolContent()
	} else {
		res.Content = []Content{&TextContent{Text: string(data)}}
	}
	return res, nil
}

// textResult is a result of one text block, its parts allocated as one.
type textResult struct {
	res     CallToolResult
	content [1]Content
	text    TextContent
}

// newTextResult returns the result of one text block holding text, made
// with one allocation rather than three (the result, its content slice
// and the block).
func newTextResult(text string) *CallToolResult {
	t := &textResult{text: TextContent{Text: text}}
	t.content[0] = &t.text
	t.res.Content = t.content[:]
	return &t.res
}

// errorResult is the isError result for a tool error the model should see.
func errorResult(err error) *CallToolResult {
	return &CallToolResult{IsError: true, Content: []Content{&TextContent{Text: err.Error()}}}
}

func (ss *ServerSession) listTools(_ context.Context, req *ServerRequest[*ListToolsParams]) (*ListToolsResult, error) {
	s := ss.server
	s.mu.RLock()
	items, next, err := s.tools.page(req.Params.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &ListToolsResult{Tools: make([]*Tool, 0, len(items)), NextCursor: next}
	for _, t := range items {
		def, err := t.definition()
		if err != nil {
			// A schema AddTool left for first use that cannot be
			// encoded: the other tools are still listed, and calls of
			// this one fail with the same error.
			s.logger.Error("mcp: tool left out of tools/list", "tool", t.tool.Name, "err", err)
			continue
		}
		res.Tools = append(res.Tools, def)
	}
	return res, nil
}

func (ss *ServerSession) callTool(ctx context.Context, req *CallToolRequest) (Result, error) {
	s := ss.server
	s.mu.RLock()
	t, ok := s.tools.get(req.Params.Name)
	s.mu.RUnlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool: " + req.Params.Name}
	}
	if len(t.headers) > 0 && req.Params.Meta.ProtocolVersion != "" && req.Extra != nil && req.Extra.Header != nil {
		// A 2026-07-28 call over HTTP: the mirrored arguments must agree.
		if err := checkHeaderParams(t.headers, req.Extra.Header, req.Params.Arguments); err != nil {
			return nil, err
		}
	}
	if s.tasks != nil && (taskSupport(t.tool) != TaskForbidden || req.Params.Task != nil && req.Params.Meta.ProtocolVersion == "") {
		if res, ok, err := ss.callToolTask(ctx, req, t); ok {
			return res, err
		}
	}
	res, err := ss.runToolHandler(ctx, req, t)
	if res == nil {
		return nil, err
	}
	return res, err
}

// runToolHandler runs a tool's handler and makes its return the answer:
// an error the model should see becomes an isError result.
func (ss *ServerSession) runToolHandler(ctx context.Context, req *CallToolRequest, t *serverTool) (*CallToolResult, error) {
	res, err := t.handler(ctx, req)
	if err != nil {
		if isProtocolError(err) || isCancellation(ctx, err) {
			return nil, err
		}
		return errorResult(err), nil
	}
	if res == nil {
		res = &CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res, nil
}
