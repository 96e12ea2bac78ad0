package mcp

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// elicit answers elicitation/create: it checks the request against the
// spec's rules, runs the user's handler and checks what it returns.
func (cs *ClientSession) elicit(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
	h := cs.client.opts.ElicitationHandler
	if h == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: client does not support elicitation"}
	}
	p := req.Params
	var v *validator
	switch p.Mode {
	case ElicitModeURL:
		if !cs.client.opts.URLElicitation {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: client does not support URL-mode elicitation"}
		}
		if p.URL == "" || p.ElicitationID == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: URL-mode elicitation needs url and elicitationId"}
		}
	case "", ElicitModeForm:
		var err error
		if v, err = restrictedSchema(p.RequestedSchema); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: requestedSchema: " + err.Error()}
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: unknown elicitation mode %q", p.Mode)}
	}
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "elicitation handler returned no result"}
	}
	switch res.Action {
	case ElicitActionAccept:
		if v == nil {
			res.Content = nil // URL mode carries no content
			break
		}
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		v.applyDefaults(res.Content)
		if err := v.validate(res.Content); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "elicitation content does not match the requested schema: " + err.Error()}
		}
	case ElicitActionDecline, ElicitActionCancel:
		res.Content = nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("elicitation handler returned unknown action %q", res.Action)}
	}
	return res, nil
}

// restrictedSchema checks that a form elicitation's schema is the flat
// kind MCP allows (an object of primitive properties, or arrays of
// enumerated strings) and compiles it.
func restrictedSchema(raw []byte) (*validator, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("missing")
	}
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf(`type must be "object", not %q`, s.Type)
	}
	for name, prop := range s.Properties {
		t, _ := prop["type"].(string)
		switch t {
		case "string", "number", "integer", "boolean":
		case "array":
			items, _ := prop["items"].(map[string]any)
			if items == nil {
				return nil, fmt.Errorf("property %q: an array needs items with enum or anyOf", name)
			}
			if _, ok := items["enum"]; !ok {
				if _, ok := items["anyOf"]; !ok {
					return nil, fmt.Errorf("property %q: array items must be enumerated strings", name)
				}
			}
		default:
			return nil, fmt.Errorf("property %q: type %q is not allowed (string, number, integer, boolean, or array of enums)", name, t)
		}
	}
	return compileSchema(raw)
}

// lackingMember returns the path of a required member that r, a result
// received from the peer, lacks or has as null: what nilMember finds, and
// the action of an elicitation's answer, which nilMember (generated, for
// object members) cannot see. An answer without one ({} or null) is no
// answer: the caller refuses it (a [*ResultError]) or, in 2026-07-28, asks
// again; it never reaches a handler as a decline.
func lackingMember(r Result) string {
	if m := r.nilMember(); m != "" {
		return m
	}
	if e, ok := r.(*ElicitResult); ok && e.Action == "" {
		return "action"
	}
	return ""
}
