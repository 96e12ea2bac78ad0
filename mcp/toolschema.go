package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/schema"
)

// validator is a compiled JSON Schema: its wire form, and what validates
// against it.
type validator struct {
	schemaJSON  json.RawMessage
	compiled    *schema.Compiled
	hasDefaults bool
}

// newValidator infers the schema of t (or uses override, when given) and
// compiles it once.
func newValidator(r *schema.Reflector, t reflect.Type, override json.RawMessage) (*validator, error) {
	if len(override) > 0 {
		return compileSchema(override)
	}
	s, err := r.Reflect(t)
	if err != nil {
		return nil, err
	}
	return compileParsed(s)
}

// compileSchema compiles a schema given as JSON (2020-12 or draft-07).
func compileSchema(raw []byte) (*validator, error) {
	s, err := schema.Parse(raw)
	if err != nil {
		return nil, err
	}
	return compileParsed(s)
}

func compileParsed(s *jsonschema.Schema) (*validator, error) {
	data, err := schema.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	c, err := schema.Compile(s)
	if err != nil {
		return nil, err
	}
	return &validator{schemaJSON: data, compiled: c, hasDefaults: hasDefaults(s)}, nil
}

// hasDefaults reports whether any property schema declares a default.
func hasDefaults(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	for _, p := range s.Properties {
		if p.Default != nil || hasDefaults(p) {
			return true
		}
	}
	return false
}

// validate checks a decoded JSON value.
func (v *validator) validate(x any) error { return v.compiled.Validate(x) }

// validateJSON checks JSON text.
func (v *validator) validateJSON(data []byte) error { return v.compiled.ValidateJSON(data) }

// applyDefaults fills in missing properties that have defaults.
func (v *validator) applyDefaults(m map[string]any) {
	if v.hasDefaults {
		v.compiled.ApplyDefaults(m)
	}
}

// toolValidator is the validator of a typed tool's input or output,
// which may be made on first use: see [newToolValidator].
type toolValidator struct {
	// hasDefaults is as for validator, known without compiling.
	hasDefaults bool
	// inferred is the schema inferred from the Go type alone; nil for
	// one that comes from the user.
	inferred *jsonschema.Schema
	// get returns the validator, made once; the same error every time
	// if it cannot be made.
	get func() (*validator, error)
}

// newToolValidator returns the validator of a typed tool's input or
// output, for [AddTool]. A schema that comes from the user (override, or
// a Reflector with Overrides or AdditionalProperties) is compiled here,
// so that AddTool reports a bad one. A schema inferred from t alone is
// inferred here, which reports the Go types and struct tags that have no
// schema, but encoded and compiled on first use (the tool's first
// tools/list or tools/call): those steps cannot fail for what the
// Reflector infers, and they are most of what registering a tool costs,
// which a process pays before its first answer. Should one fail all the
// same, the tool's every listing and call fails with its error.
func newToolValidator(r *schema.Reflector, t reflect.Type, override json.RawMessage) (*toolValidator, error) {
	if len(override) > 0 || r.Overrides != nil || r.AdditionalProperties != nil {
		v, err := newValidator(r, t, override)
		if err != nil {
			return nil, err
		}
		return &toolValidator{hasDefaults: v.hasDefaults, get: func() (*validator, error) { return v, nil }}, nil
	}
	s, err := r.Reflect(t)
	if err != nil {
		return nil, err
	}
	return &toolValidator{
		hasDefaults: hasDefaults(s),
		inferred:    s,
		get:         sync.OnceValues(func() (*validator, error) { return compileParsed(s) }),
	}, nil
}

// argBinder validates tool arguments and binds them to In.
type argBinder[In any] struct {
	*toolValidator
	fast *fastArgs // for a plain struct with its inferred schema; nil otherwise
}

func newArgBinder[In any](r *schema.Reflector, override json.RawMessage) (*argBinder[In], error) {
	t := reflect.TypeFor[In]()
	if k := derefKind(t); k != reflect.Struct && k != reflect.Map && k != reflect.Interface {
		return nil, fmt.Errorf("input type %v must be a struct or a map", t)
	}
	v, err := newToolValidator(r, t, override)
	if err != nil {
		return nil, err
	}
	b := &argBinder[In]{toolValidator: v}
	if v.inferred != nil && !v.hasDefaults {
		b.fast = newFastArgs(t, v.inferred)
	}
	return b, nil
}

// bind validates raw arguments, applies defaults and decodes them into In.
// Its errors are meant for the model: they say what to fix.
//
// Without defaults to apply, the arguments are validated as text (in one
// pass over their tokens, for the schemas Go types infer to; see
// schema.Compiled.ValidateJSON) and decoded once, into In. With defaults,
// they are decoded into a map, the defaults added, and the result
// validated and encoded again for In.
//
// The caller has made the validator already (b.get, whose error is not
// the model's to fix).
func (b *argBinder[In]) bind(raw json.RawMessage) (In, error) {
	var in In
	v, err := b.get()
	if err != nil {
		return in, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if !b.hasDefaults && firstByte(raw) == '{' {
		if b.fast != nil {
			if b.fast.bind(raw, unsafe.Pointer(&in)) {
				return in, nil
			}
			var zero In
			in = zero
		}
		if err := v.compiled.ValidateJSON(raw); err != nil {
			return in, fmt.Errorf("invalid arguments: %w", err)
		}
		if err := jsonv2.Unmarshal(raw, &in); err != nil {
			return in, fmt.Errorf("invalid arguments: %w", err)
		}
		return in, nil
	}
	var x any
	if err := jsonv2.Unmarshal(raw, &x); err != nil {
		return in, fmt.Errorf("invalid arguments: %w", err)
	}
	m, isObject := x.(map[string]any)
	if !isObject {
		return in, fmt.Errorf("invalid arguments: must be a JSON object")
	}
	if b.hasDefaults {
		v.compiled.ApplyDefaults(m)
	}
	if err := v.compiled.Validate(m); err != nil {
		return in, fmt.Errorf("invalid arguments: %w", err)
	}
	if b.hasDefaults {
		var err error
		if raw, err = jsonv2.Marshal(m); err != nil {
			return in, fmt.Errorf("invalid arguments: %w", err)
		}
	}
	if err := jsonv2.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("invalid arguments: %w", err)
	}
	return in, nil
}

// firstByte returns the first byte of data that is not JSON whitespace,
// or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}
