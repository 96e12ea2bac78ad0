package schema

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxParseDepth bounds the nesting of a schema given to Parse.
const maxParseDepth = 512

// Parse decodes a JSON Schema written for draft 2020-12 or for draft-07
// (which older MCP peers send). Draft-07 constructs are rewritten to their
// 2020-12 equivalents: definitions becomes $defs (and references to it
// follow), an array-valued items becomes prefixItems with additionalItems
// as items, and dependencies splits into dependentRequired and
// dependentSchemas. The $schema keyword is dropped.
func Parse(data []byte) (*jsonschema.Schema, error) {
	var v any
	if err := stdjson.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("schema: not JSON: %w", err)
	}
	switch v.(type) {
	case bool, map[string]any:
	default:
		return nil, errors.New("schema: a schema must be an object or a boolean")
	}
	v, err := normalize(v, 0)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "$schema")
	}
	norm, err := stdjson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var s jsonschema.Schema
	if err := stdjson.Unmarshal(norm, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &s, nil
}

// subschemaKeys name keywords whose value is a schema; subschemaMaps
// name keywords whose value maps names to schemas; subschemaLists name
// keywords whose value is a list of schemas.
var (
	subschemaKeys  = []string{"additionalProperties", "items", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	subschemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
)

func normalize(v any, depth int) (any, error) {
	if depth > maxParseDepth {
		return nil, errors.New("schema: nested too deeply")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil // true, false, or a non-schema value
	}
	if d, ok := m["definitions"]; ok {
		if _, has := m["$defs"]; !has {
			m["$defs"] = d
		}
		delete(m, "definitions")
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/definitions/") {
		m["$ref"] = "#/$defs/" + strings.TrimPrefix(ref, "#/definitions/")
	}
	if items, ok := m["items"].([]any); ok {
		m["prefixItems"] = items
		delete(m, "items")
		if ai, ok := m["additionalItems"]; ok {
			m["items"] = ai
		}
		delete(m, "additionalItems")
	} else {
		delete(m, "additionalItems") // meaningless without array-form items
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		req, sch := map[string]any{}, map[string]any{}
		for k, d := range deps {
			if _, isList := d.([]any); isList {
				req[k] = d
			} else {
				sch[k] = d
			}
		}
		if len(req) > 0 {
			m["dependentRequired"] = req
		}
		if len(sch) > 0 {
			m["dependentSchemas"] = sch
		}
		delete(m, "dependencies")
	}
	var err error
	for _, k := range subschemaKeys {
		if sub, ok := m[k]; ok {
			if m[k], err = normalize(sub, depth+1); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range subschemaMaps {
		if subs, ok := m[k].(map[string]any); ok {
			for name, sub := range subs {
				if subs[name], err = normalize(sub, depth+1); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, k := range subschemaLists {
		if subs, ok := m[k].([]any); ok {
			for i, sub := range subs {
				if subs[i], err = normalize(sub, depth+1); err != nil {
					return nil, err
				}
			}
		}
	}
	return m, nil
}
