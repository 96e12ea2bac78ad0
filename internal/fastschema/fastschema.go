// Package fastschema validates decoded JSON values against the common
// subset of JSON Schema that Go types infer to (type, properties,
// required, additionalProperties, items, enum, const, numeric and length
// bounds, pattern), compiled once into a tree of checks. It exists
// because tool arguments are validated on every call: a general
// validator's per-call cost dominated a tools/call round trip.
//
// Compile reports ok=false for a schema that uses anything outside the
// subset; callers then use a general validator.
package fastschema

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Validator checks values against a compiled schema. It is immutable and
// safe for concurrent use.
type Validator struct {
	root *node
}

type node struct {
	types      []string // allowed JSON types; empty means any
	props      map[string]*node
	required   []string
	fields     map[string]field // props and required, for ValidateJSON
	addlFalse  bool             // additionalProperties: false
	addl       *node            // additionalProperties schema
	items      *node
	enum       []any
	hasConst   bool
	constVal   any
	min, max   *float64
	xmin, xmax *float64
	minLen     *int
	maxLen     *int
	minItems   *int
	maxItems   *int
	pattern    *regexp.Regexp
}

// field is what ValidateJSON needs to know of a member name.
type field struct {
	node *node // nil: not in properties
	req  int   // index in required; -1: not required
}

// Compile compiles s, or reports ok=false when s uses keywords outside
// the supported subset.
func Compile(s *jsonschema.Schema) (v *Validator, ok bool) {
	n, ok := compile(s, 0)
	if !ok {
		return nil, false
	}
	return &Validator{root: n}, true
}

func compile(s *jsonschema.Schema, depth int) (*node, bool) {
	if s == nil {
		return &node{}, true
	}
	if depth > 64 {
		return nil, false
	}
	if s.Ref != "" || s.DynamicRef != "" || len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil ||
		s.If != nil || len(s.PrefixItems) > 0 || s.Contains != nil || len(s.PatternProperties) > 0 ||
		s.PropertyNames != nil || len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil || s.UniqueItems || s.MultipleOf != nil ||
		s.MinProperties != nil || s.MaxProperties != nil || s.MinContains != nil || s.MaxContains != nil ||
		len(s.Extra) > 0 || len(s.Defs) > 0 || len(s.Definitions) > 0 || s.AdditionalItems != nil || s.Items != nil && s.ItemsArray != nil {
		return nil, false
	}
	n := &node{
		required: dedup(s.Required),
		enum:     s.Enum,
		min:      s.Minimum, max: s.Maximum,
		xmin: s.ExclusiveMinimum, xmax: s.ExclusiveMaximum,
		minLen: s.MinLength, maxLen: s.MaxLength,
		minItems: s.MinItems, maxItems: s.MaxItems,
	}
	if s.Const != nil {
		n.hasConst, n.constVal = true, *s.Const
	}
	switch {
	case s.Type != "":
		n.types = []string{s.Type}
	case len(s.Types) > 0:
		n.types = s.Types
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil, false // ECMA-262 syntax Go cannot compile: use the general validator
		}
		n.pattern = re
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*node, len(s.Properties))
		for name, ps := range s.Properties {
			pn, ok := compile(ps, depth+1)
			if !ok {
				return nil, false
			}
			n.props[name] = pn
		}
	}
	if len(n.props) > 0 || len(n.required) > 0 {
		n.fields = make(map[string]field, len(n.props)+len(n.required))
		for name, pn := range n.props {
			n.fields[name] = field{node: pn, req: -1}
		}
		for i, name := range n.required {
			f, ok := n.fields[name]
			if !ok {
				f.node = nil
			}
			f.req = i
			n.fields[name] = f
		}
	}
	if a := s.AdditionalProperties; a != nil {
		if isFalse(a) {
			n.addlFalse = true
		} else {
			an, ok := compile(a, depth+1)
			if !ok {
				return nil, false
			}
			n.addl = an
		}
	}
	if s.Items != nil {
		in, ok := compile(s.Items, depth+1)
		if !ok {
			return nil, false
		}
		n.items = in
	}
	return n, true
}

// dedup returns names without repeats, in their order.
func dedup(names []string) []string {
	var out []string
	for i, s := range names {
		if slices.Contains(names[:i], s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// isFalse reports whether s is the schema false ({"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && isEmpty(s.Not) && isEmptyExceptNot(s)
}

func isEmpty(s *jsonschema.Schema) bool {
	b, err := s.MarshalJSON()
	return err == nil && (string(b) == "{}" || string(b) == "true")
}

func isEmptyExceptNot(s *jsonschema.Schema) bool {
	c := *s
	c.Not = nil
	return isEmpty(&c)
}

// Error is a validation failure at a JSON Pointer path.
type Error struct {
	Path    string // JSON Pointer to the offending value; "" for the root
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// Validate checks v, a value decoded from JSON (maps, slices, float64,
// string, bool, nil; json.Number and integer types are accepted too).
func (v *Validator) Validate(x any) error {
	return v.root.check(x, "")
}

func typeOf(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case int, int64, int32, uint, uint64:
		return "integer"
	case float32:
		return typeOf(float64(x))
	}
	return fmt.Sprintf("%T", x)
}

func number(x any) (float64, bool) {
	switch x := x.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case interface{ String() string }: // json.Number
		f, err := strconv.ParseFloat(x.String(), 64)
		return f, err == nil
	}
	return 0, false
}

func (n *node) check(x any, path string) error {
	t := typeOf(x)
	if len(n.types) > 0 && !slices.Contains(n.types, t) && !(t == "integer" && slices.Contains(n.types, "number")) {
		return &Error{Path: path, Message: fmt.Sprintf("want %s, got %s", strings.Join(n.types, " or "), t)}
	}
	if n.hasConst && !equal(x, n.constVal) {
		return &Error{Path: path, Message: fmt.Sprintf("must be %v", n.constVal)}
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return equal(x, e) }) {
		return &Error{Path: path, Message: fmt.Sprintf("must be one of %v, got %v", n.enum, x)}
	}
	switch x := x.(type) {
	case string:
		return n.checkString(x, path)
	case map[string]any:
		return n.checkObject(x, path)
	case []any:
		return n.checkArray(x, path)
	}
	if f, ok := number(x); ok {
		return n.checkNumber(f, path)
	}
	return nil
}

func (n *node) checkNumber(f float64, path string) error {
	switch {
	case n.min != nil && f < *n.min:
		return &Error{Path: path, Message: fmt.Sprintf("must be >= %v, got %v", *n.min, f)}
	case n.max != nil && f > *n.max:
		return &Error{Path: path, Message: fmt.Sprintf("must be <= %v, got %v", *n.max, f)}
	case n.xmin != nil && f <= *n.xmin:
		return &Error{Path: path, Message: fmt.Sprintf("must be > %v, got %v", *n.xmin, f)}
	case n.xmax != nil && f >= *n.xmax:
		return &Error{Path: path, Message: fmt.Sprintf("must be < %v, got %v", *n.xmax, f)}
	}
	return nil
}

func (n *node) checkString(s string, path string) error {
	if n.minLen != nil || n.maxLen != nil {
		l := utf8.RuneCountInString(s)
		if n.minLen != nil && l < *n.minLen {
			return &Error{Path: path, Message: fmt.Sprintf("must be at least %d characters, got %d", *n.minLen, l)}
		}
		if n.maxLen != nil && l > *n.maxLen {
			return &Error{Path: path, Message: fmt.Sprintf("must be at most %d characters, got %d", *n.maxLen, l)}
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return &Error{Path: path, Message: fmt.Sprintf("must match pattern %q", n.pattern.String())}
	}
	return nil
}

func (n *node) checkObject(m map[string]any, path string) error {
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			return &Error{Path: path, Message: fmt.Sprintf("missing required property %q", r)}
		}
	}
	for k, v := range m {
		p, known := n.props[k]
		switch {
		case known:
		case n.addlFalse:
			return &Error{Path: path, Message: fmt.Sprintf("unexpected property %q", k)}
		case n.addl != nil:
			p = n.addl
		default:
			continue
		}
		if err := p.check(v, path+"/"+escape(k)); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) checkArray(a []any, path string) error {
	if n.minItems != nil && len(a) < *n.minItems {
		return &Error{Path: path, Message: fmt.Sprintf("must have at least %d items, got %d", *n.minItems, len(a))}
	}
	if n.maxItems != nil && len(a) > *n.maxItems {
		return &Error{Path: path, Message: fmt.Sprintf("must have at most %d items, got %d", *n.maxItems, len(a))}
	}
	if n.items != nil {
		for i, v := range a {
			if err := n.items.check(v, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// escape escapes a JSON Pointer reference token.
func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// equal compares JSON values, numbers by value.
func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if w, ok := bm[k]; !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !equal(a[i], ba[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
