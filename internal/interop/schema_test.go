package interop

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// schema is a JSON Schema decoded loosely.
type schema = map[string]any

func parseSchema(raw []byte) (schema, error) {
	if len(raw) == 0 {
		return schema{}, nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s, nil
}

// argsFromSchema builds tool arguments from an inputSchema: every
// required property gets a value of its type (see sampleValue).
func argsFromSchema(s schema) map[string]any {
	args := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		p, _ := props[name].(map[string]any)
		args[name] = sampleValue(name, p, false)
	}
	return args
}

// sampleValue returns a value that fits the JSON Schema s. With
// preferLast it picks the last enumerated choice rather than the first
// (so that elicitation answers differ from the schema's defaults).
func sampleValue(name string, s schema, preferLast bool) any {
	pick := func(n int) int {
		if preferLast {
			return n - 1
		}
		return 0
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[pick(len(e))]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			alt, _ := alts[pick(len(alts))].(map[string]any)
			return sampleValue(name, alt, preferLast)
		}
	}
	typ, _ := s["type"].(string)
	if types, ok := s["type"].([]any); ok {
		for _, t := range types {
			if t != "null" {
				typ, _ = t.(string)
				break
			}
		}
	}
	num := func(def float64) float64 {
		lo, hasLo := s["minimum"].(float64)
		hi, hasHi := s["maximum"].(float64)
		switch {
		case hasLo && hasHi:
			return lo + (hi-lo)/2
		case hasLo:
			return lo + 1
		case hasHi:
			return hi - 1
		}
		return def
	}
	switch typ {
	case "string":
		switch s["format"] {
		case "email":
			return "interop@example.com"
		case "uri":
			return "https://example.com/mcpkit-interop"
		case "date":
			return "2001-02-03"
		case "date-time":
			return "2001-02-03T04:05:06Z"
		}
		return "interop " + name
	case "integer":
		return int64(num(7))
	case "number":
		return num(2.5)
	case "boolean":
		return true
	case "array":
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return []any{}
		}
		return []any{sampleValue(name, items, preferLast)}
	case "object":
		return argsFromSchema(s)
	}
	return "interop " + name
}

// fillForm answers a form elicitation: a value for every property of the
// requested schema, not only the required ones.
func fillForm(s schema) map[string]any {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		out[name] = sampleValue(name, p, true)
	}
	return out
}

// mustJSON encodes v or panics: for test inputs built in code.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint("mustJSON: ", err))
	}
	return b
}

// sameJSON reports whether a and b encode to the same JSON value once
// normalised through encoding/json.
func sameJSON(a, b any) bool {
	norm := func(v any) string {
		var x any
		if err := json.Unmarshal(mustJSON(v), &x); err != nil {
			return "<invalid>"
		}
		return string(mustJSON(x))
	}
	return norm(a) == norm(b)
}
