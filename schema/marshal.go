package schema

import (
	stdjson "encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
)

// Marshal returns the JSON encoding of s, byte for byte what
// github.com/go-json-experiment/json's Marshal gives: s.MarshalJSON's
// output, reformatted by jsontext (so without encoding/json's HTML
// escapes). The keywords that inferred schemas use are written directly;
// a schema with any other keyword is encoded by s.MarshalJSON. The
// difference matters at start-up: the first s.MarshalJSON in a process
// builds encoding/json's description of the whole Schema type, which
// costs more CPU than the rest of a server's start.
func Marshal(s *jsonschema.Schema) ([]byte, error) {
	if s == nil || !simple(s, 0) {
		return jsonv2.Marshal(s)
	}
	b, err := appendSchema(nil, s)
	if err != nil {
		return jsonv2.Marshal(s) // for its error, or its replacements of invalid UTF-8
	}
	v := jsontext.Value(b)
	if err := v.Format(); err != nil {
		return jsonv2.Marshal(s)
	}
	return v, nil
}

// simple reports whether s and its subschemas use only the keywords that
// appendSchema writes.
func simple(s *jsonschema.Schema, depth int) bool {
	if s == nil {
		return true
	}
	if depth > 64 {
		return false
	}
	if s.ID != "" || s.Schema != "" || s.Comment != "" || s.Definitions != nil ||
		s.DependencySchemas != nil || s.DependencyStrings != nil || s.Anchor != "" || s.DynamicAnchor != "" ||
		s.DynamicRef != "" || s.Vocabulary != nil || s.MultipleOf != nil || s.PrefixItems != nil ||
		s.ItemsArray != nil || s.AdditionalItems != nil || s.UniqueItems || s.Contains != nil ||
		s.MinContains != nil || s.MaxContains != nil || s.UnevaluatedItems != nil || s.MinProperties != nil ||
		s.MaxProperties != nil || s.DependentRequired != nil || s.PatternProperties != nil ||
		s.PropertyNames != nil || s.UnevaluatedProperties != nil || s.AllOf != nil || s.AnyOf != nil ||
		s.OneOf != nil || s.If != nil || s.Then != nil || s.Else != nil || s.DependentSchemas != nil ||
		s.ContentSchema != nil || s.Extra != nil {
		return false
	}
	if s.Type != "" && s.Types != nil || s.Defs != nil && s.Definitions != nil || hasRepeat(s.PropertyOrder) {
		return false // s.MarshalJSON reports the error
	}
	for _, sub := range s.Defs {
		if !simple(sub, depth+1) {
			return false
		}
	}
	for _, sub := range s.Properties {
		if !simple(sub, depth+1) {
			return false
		}
	}
	return simple(s.Items, depth+1) && simple(s.AdditionalProperties, depth+1) && simple(s.Not, depth+1)
}

func hasRepeat(names []string) bool {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return true
		}
	}
	return false
}

// appendSchema appends s, which simple accepts, in the order of
// s.MarshalJSON: type, properties, items, then the other keywords in the
// order of the Schema struct's fields. Marshal then reformats the result
// as jsonv2 does, so strings may be escaped in any valid way here; numbers
// are not reformatted, so they are written as encoding/json writes them.
func appendSchema(b []byte, s *jsonschema.Schema) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	start := len(b)
	b = append(b, '{')
	var err error
	key := func(name string) {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	value := func(v any) {
		if err == nil {
			b, err = appendValue(b, v)
		}
	}
	sub := func(name string, s *jsonschema.Schema) {
		if s == nil || err != nil {
			return
		}
		key(name)
		b, err = appendSchema(b, s)
	}
	schemaMap := func(name string, m map[string]*jsonschema.Schema, order []string) {
		if m == nil || err != nil {
			return
		}
		key(name)
		b = append(b, '{')
		n := 0
		entry := func(k string) {
			if err != nil {
				return
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			value(k)
			b = append(b, ':')
			if err == nil {
				b, err = appendSchema(b, m[k])
			}
		}
		for _, k := range order {
			if _, ok := m[k]; ok {
				entry(k)
			}
		}
		var rest []string
		for k := range m {
			if !slices.Contains(order, k) {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range rest {
			entry(k)
		}
		b = append(b, '}')
	}
	str := func(name, v string) {
		if v != "" {
			key(name)
			value(v)
		}
	}
	flag := func(name string, v bool) {
		if v {
			key(name)
			b = append(b, "true"...)
		}
	}
	num := func(name string, v *float64) {
		if v != nil {
			key(name)
			value(*v)
		}
	}
	count := func(name string, v *int) {
		if v != nil {
			key(name)
			b = strconv.AppendInt(b, int64(*v), 10)
		}
	}
	values := func(name string, v []any) {
		if len(v) > 0 {
			key(name)
			value(v)
		}
	}

	switch {
	case s.Type != "":
		key("type")
		value(s.Type)
	case s.Types != nil:
		key("type")
		value(s.Types)
	}
	schemaMap("properties", s.Properties, s.PropertyOrder)
	sub("items", s.Items)
	str("$ref", s.Ref)
	if len(s.Defs) > 0 {
		schemaMap("$defs", s.Defs, nil)
	}
	str("title", s.Title)
	str("description", s.Description)
	if len(s.Default) > 0 {
		key("default")
		value(s.Default)
	}
	flag("deprecated", s.Deprecated)
	flag("readOnly", s.ReadOnly)
	flag("writeOnly", s.WriteOnly)
	values("examples", s.Examples)
	values("enum", s.Enum)
	if s.Const != nil {
		key("const")
		value(s.Const)
	}
	num("minimum", s.Minimum)
	num("maximum", s.Maximum)
	num("exclusiveMinimum", s.ExclusiveMinimum)
	num("exclusiveMaximum", s.ExclusiveMaximum)
	count("minLength", s.MinLength)
	count("maxLength", s.MaxLength)
	str("pattern", s.Pattern)
	count("minItems", s.MinItems)
	count("maxItems", s.MaxItems)
	if len(s.Required) > 0 {
		key("required")
		value(s.Required)
	}
	sub("additionalProperties", s.AdditionalProperties)
	sub("not", s.Not)
	str("contentEncoding", s.ContentEncoding)
	str("contentMediaType", s.ContentMediaType)
	str("format", s.Format)
	if err != nil {
		return nil, fmt.Errorf("schema: encoding: %w", err)
	}
	b = append(b, '}')
	// {} is written true and {"not":true} false, as by s.MarshalJSON.
	switch string(b[start:]) {
	case `{}`:
		b = append(b[:start], "true"...)
	case `{"not":true}`:
		b = append(b[:start], "false"...)
	}
	return b, nil
}

// appendValue appends v as encoding/json encodes it, up to the escaping
// of strings; the common types without reflection.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsontext.AppendQuote(b, v)
	case bool:
		return strconv.AppendBool(b, v), nil
	case float64:
		return appendFloat(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case stdjson.RawMessage:
		return append(b, v...), nil // checked and compacted by Marshal's Format
	case []string:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = jsontext.AppendQuote(b, x); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, x); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case *any:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendValue(b, *v)
	}
	data, err := stdjson.Marshal(v)
	return append(b, data...), err
}

// appendFloat appends f as encoding/json writes a float64.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("unsupported value %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
