package schema

import (
	"errors"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/internal/fastschema"
)

// Compiled is a schema prepared for validation. It is immutable and safe
// for concurrent use.
type Compiled struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	fast     *fastschema.Validator // nil when the schema needs the general validator
}

// Compile prepares s for validation. Schemas within the subset Go types
// infer to are checked by a fast, allocation-free path; others by the
// general validator.
func Compile(s *jsonschema.Schema) (*Compiled, error) {
	if s == nil {
		return nil, errors.New("schema: nil schema")
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	fast, _ := fastschema.Compile(s)
	return &Compiled{schema: s, resolved: r, fast: fast}, nil
}

// CompileJSON parses a schema (2020-12 or draft-07, see [Parse]) and
// compiles it.
func CompileJSON(data []byte) (*Compiled, error) {
	s, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Compile(s)
}

// Schema returns the compiled schema. It must not be modified.
func (c *Compiled) Schema() *jsonschema.Schema { return c.schema }

// ValidationError reports a value that does not match a schema. Path is
// a JSON Pointer to the offending value ("" for the whole value).
type ValidationError struct {
	Path    string
	Message string
}

// Error implements error.
func (e *ValidationError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// Validate checks a value decoded from JSON (map[string]any, []any,
// float64, string, bool, nil). Failures are [*ValidationError] values.
func (c *Compiled) Validate(v any) error {
	if c.fast != nil {
		return fromFast(c.fast.Validate(v))
	}
	return c.validateGeneral(v)
}

func (c *Compiled) validateGeneral(v any) error {
	if err := c.resolved.Validate(v); err != nil {
		return &ValidationError{Message: strings.TrimPrefix(err.Error(), "validating root: ")}
	}
	return nil
}

// fromFast converts an error of the fast path.
func fromFast(err error) error {
	if err == nil {
		return nil
	}
	var fe *fastschema.Error
	if errors.As(err, &fe) {
		return &ValidationError{Path: fe.Path, Message: fe.Message}
	}
	return &ValidationError{Message: err.Error()}
}

// ValidateJSON validates data, the text of one JSON value. The text must
// be strict JSON as github.com/go-json-experiment/json decodes it by
// default: valid UTF-8, no duplicate member names, nothing after the
// value; other text fails with a [*ValidationError] whose message begins
// "not JSON: ". Within the subset Go types infer to, the text is checked
// in one pass over its tokens, without decoding it into Go values, so
// that a caller can then decode it once, into its own type.
func (c *Compiled) ValidateJSON(data []byte) error {
	if c.fast != nil {
		err := c.fast.ValidateJSON(data)
		var fe *fastschema.Error
		if err != nil && !errors.As(err, &fe) {
			return &ValidationError{Message: "not JSON: " + err.Error()}
		}
		return fromFast(err)
	}
	var v any
	if err := jsonv2.Unmarshal(data, &v); err != nil {
		return &ValidationError{Message: "not JSON: " + err.Error()}
	}
	return c.validateGeneral(v)
}

// ApplyDefaults fills in properties missing from m (recursively, into
// objects that are present) that the schema gives defaults for.
func (c *Compiled) ApplyDefaults(m map[string]any) error {
	if m == nil {
		return nil
	}
	return c.resolved.ApplyDefaults(&m)
}
