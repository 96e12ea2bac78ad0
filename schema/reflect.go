package schema

import (
	"encoding"
	stdjson "encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
)

// Reflector infers schemas from Go types. Its zero value is ready to use
// and it is safe for concurrent use; each type is reflected once and the
// result cached. Set its fields before first use.
type Reflector struct {
	// Nullable makes pointers, slices and maps accept null, as
	// {"type":["null", ...]}. By default they do not.
	Nullable bool
	// Overrides gives the schema to use for a type wherever it appears.
	Overrides map[reflect.Type]*jsonschema.Schema
	// AdditionalProperties, when set, is used for every struct's
	// additionalProperties. Nil leaves it unset, so unknown properties are
	// allowed (and ignored when decoding), which is the friendlier choice
	// for tool arguments written by a model.
	AdditionalProperties *jsonschema.Schema

	mu    sync.Mutex
	cache map[reflect.Type]*jsonschema.Schema
}

// For returns the schema of T, reflected once by r (a nil r uses a fresh
// default Reflector). The result is a copy the caller may change.
func For[T any](r *Reflector) (*jsonschema.Schema, error) {
	if r == nil {
		r = &Reflector{}
	}
	return r.Reflect(reflect.TypeFor[T]())
}

// Reflect returns the schema of t. The result is a copy the caller may
// change.
func (r *Reflector) Reflect(t reflect.Type) (*jsonschema.Schema, error) {
	if t == nil {
		return nil, fmt.Errorf("schema: nil type")
	}
	r.mu.Lock()
	s, ok := r.cache[t]
	r.mu.Unlock()
	if !ok {
		b := &builder{r: r, defs: map[reflect.Type]string{}, active: map[reflect.Type]bool{}}
		var err error
		if s, err = b.root(t); err != nil {
			return nil, err
		}
		r.mu.Lock()
		if r.cache == nil {
			r.cache = make(map[reflect.Type]*jsonschema.Schema)
		}
		r.cache[t] = s
		r.mu.Unlock()
	}
	return cloneSchema(s), nil
}

// cloneSchema returns what s.CloneSchemas returns: a copy of s, shallow
// but for its subschemas, which are copied in turn. The schemas the
// Reflector infers, those [simple] accepts (whose only subschemas are
// Defs, Properties, Items, AdditionalProperties and Not), are copied
// here without reflection: CloneSchemas goes over every field of Schema
// by reflection, for every subschema, which in a process that has just
// started is a fifth of the cost of inferring a tool's schema.
func cloneSchema(s *jsonschema.Schema) *jsonschema.Schema {
	if !simple(s, 0) {
		return s.CloneSchemas()
	}
	return cloneSimple(s)
}

// cloneSimple copies s, which simple accepts, as CloneSchemas does.
func cloneSimple(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Defs = cloneSchemaMap(s.Defs)
	c.Properties = cloneSchemaMap(s.Properties)
	c.Items = cloneSimple(s.Items)
	c.AdditionalProperties = cloneSimple(s.AdditionalProperties)
	c.Not = cloneSimple(s.Not)
	return &c
}

func cloneSchemaMap(m map[string]*jsonschema.Schema) map[string]*jsonschema.Schema {
	if m == nil {
		return nil
	}
	c := make(map[string]*jsonschema.Schema, len(m))
	for k, s := range m {
		c[k] = cloneSimple(s)
	}
	return c
}

// builder reflects one root type; defs collects recursive types.
type builder struct {
	r      *Reflector
	defs   map[reflect.Type]string // recursive types and their $defs names
	active map[reflect.Type]bool   // structs being reflected (for cycles)
	out    map[string]*jsonschema.Schema
}

func (b *builder) root(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := b.schema(t)
	if err != nil {
		return nil, err
	}
	if len(b.out) > 0 {
		s.Defs = b.out
	}
	return s, nil
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	rawMessageType    = reflect.TypeFor[stdjson.RawMessage]()
	jsontextValueType = reflect.TypeFor[jsontext.Value]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMarshalerType = reflect.TypeFor[stdjson.Marshaler]()
)

func (b *builder) schema(t reflect.Type) (*jsonschema.Schema, error) {
	if o, ok := b.r.Overrides[t]; ok {
		return o.CloneSchemas(), nil
	}
	switch t {
	case timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}, nil
	case rawMessageType, jsontextValueType:
		return &jsonschema.Schema{}, nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if t.Implements(textMarshalerType) || pt.Implements(textMarshalerType) {
			return &jsonschema.Schema{Type: "string"}, nil
		}
		if t.Implements(jsonMarshalerType) || pt.Implements(jsonMarshalerType) {
			return &jsonschema.Schema{}, nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &jsonschema.Schema{Type: "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}, nil
	case reflect.String:
		return &jsonschema.Schema{Type: "string"}, nil
	case reflect.Interface:
		return &jsonschema.Schema{}, nil
	case reflect.Pointer:
		s, err := b.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return b.nullable(s), nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return b.nullable(&jsonschema.Schema{Type: "string", ContentEncoding: "base64"}), nil
		}
		items, err := b.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &jsonschema.Schema{Type: "array", Items: items}
		if t.Kind() == reflect.Array {
			n := t.Len()
			s.MinItems, s.MaxItems = &n, &n
			return s, nil
		}
		return b.nullable(s), nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			if !t.Key().Implements(textMarshalerType) {
				return nil, fmt.Errorf("schema: map key type %v cannot be a JSON object key", t.Key())
			}
		}
		vals, err := b.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return b.nullable(&jsonschema.Schema{Type: "object", AdditionalProperties: vals}), nil
	case reflect.Struct:
		return b.structRef(t)
	}
	return nil, fmt.Errorf("schema: cannot describe %v (%v) in JSON Schema", t, t.Kind())
}

// nullable widens s to accept null when the Reflector asks for it.
func (b *builder) nullable(s *jsonschema.Schema) *jsonschema.Schema {
	if b.r.Nullable {
		makeNullable(s)
	}
	return s
}

func makeNullable(s *jsonschema.Schema) {
	switch {
	case s.Type != "" && s.Type != "null":
		s.Types = []string{"null", s.Type}
		s.Type = ""
	case len(s.Types) > 0 && !contains(s.Types, "null"):
		s.Types = append([]string{"null"}, s.Types...)
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// structRef describes a struct inline, or as a $ref when it is recursive.
func (b *builder) structRef(t reflect.Type) (*jsonschema.Schema, error) {
	if name, ok := b.defs[t]; ok {
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	if b.active[t] {
		// t refers to itself: describe it once under $defs.
		name := defName(t, b.defs)
		b.defs[t] = name
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	b.active[t] = true
	s, err := b.structSchema(t)
	delete(b.active, t)
	if err != nil {
		return nil, err
	}
	if name, ok := b.defs[t]; ok {
		if b.out == nil {
			b.out = map[string]*jsonschema.Schema{}
		}
		b.out[name] = s
		return &jsonschema.Schema{Ref: "#/$defs/" + name}, nil
	}
	return s, nil
}

func defName(t reflect.Type, taken map[reflect.Type]string) string {
	base := t.Name()
	if base == "" {
		base = "anonymous"
	}
	name := base
	for i := 2; ; i++ {
		clash := false
		for _, n := range taken {
			if n == name {
				clash = true
				break
			}
		}
		if !clash {
			return name
		}
		name = fmt.Sprintf("%s%d", base, i)
	}
}

// structSchema describes a struct's fields, flattening embedded ones.
func (b *builder) structSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	if b.r.AdditionalProperties != nil {
		s.AdditionalProperties = b.r.AdditionalProperties.CloneSchemas()
	}
	var order []string
	if err := b.fields(t, s, &order, 0); err != nil {
		return nil, err
	}
	s.PropertyOrder = order
	return s, nil
}

func (b *builder) fields(t reflect.Type, s *jsonschema.Schema, order *[]string, depth int) error {
	if depth > 32 {
		return fmt.Errorf("schema: %v: embedding too deep", t)
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, hasTag := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && !hasTag {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := b.fields(ft, s, order, depth+1); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs, err := b.schema(f.Type)
		if err != nil {
			return fmt.Errorf("schema: %v.%s: %w", t, f.Name, err)
		}
		required := !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,")
		if d, ok := f.Tag.Lookup("jsonschema"); ok {
			fs.Description = d
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			req, err := applyTag(fs, f.Type, tag)
			if err != nil {
				return &TagError{Type: t, Field: f.Name, Tag: tag, Err: err}
			}
			if req != nil {
				required = *req
			}
		}
		if _, dup := s.Properties[name]; !dup {
			*order = append(*order, name)
		}
		s.Properties[name] = fs
		if required && !contains(s.Required, name) {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}

// TagError reports a malformed or misplaced schema struct tag.
type TagError struct {
	Type  reflect.Type
	Field string
	Tag   string
	Err   error
}

// Error implements error.
func (e *TagError) Error() string {
	return fmt.Sprintf("schema: %v.%s: tag %q: %v", e.Type, e.Field, e.Tag, e.Err)
}

// Unwrap returns the underlying error.
func (e *TagError) Unwrap() error { return e.Err }
