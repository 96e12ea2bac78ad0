package mcp

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// fastArgs binds the arguments of a tool whose input is a plain struct of
// string, bool and int fields, with the schema inferred from it (types
// and required members only), without the schema validator or
// reflection: one pass over the arguments' members, each written to its
// field. It takes only arguments that are plainly valid (each member
// known, given once and of its field's type; strings without escapes;
// integers as plain decimals; every required member present) and leaves
// anything else to the validator and the decoder (which take what it
// takes in the same way, and say what is wrong with the rest), so the
// result is the same either way; FuzzFastArgs holds the two to that.
type fastArgs struct {
	fields   []fastField
	required uint64 // a bit per field the schema requires
}

// fastField is a field of a fastArgs struct.
type fastField struct {
	name   string // its JSON name
	offset uintptr
	kind   reflect.Kind // String, Bool, Int or Int64
}

// newFastArgs returns the fastArgs of t with the schema s inferred from
// it, or nil when t or s is anything else: a struct with another kind of
// field, an embedded field, tag options other than omitempty and
// omitzero, more than 64 fields, or a schema with more than types,
// required members, titles and descriptions.
func newFastArgs(t reflect.Type, s *jsonschema.Schema) *fastArgs {
	if t.Kind() != reflect.Struct || t.NumField() > 64 || s == nil {
		return nil
	}
	f := &fastArgs{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous || !sf.IsExported() {
			return nil
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue // not a member
		}
		for o := range strings.SplitSeq(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil
			}
		}
		if name == "" {
			name = sf.Name
		}
		switch sf.Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
		default:
			return nil
		}
		if sf.Type.PkgPath() != "" {
			return nil // a named type, which may decode itself
		}
		f.fields = append(f.fields, fastField{name: name, offset: sf.Offset, kind: sf.Type.Kind()})
	}
	if !f.matches(s) {
		return nil
	}
	return f
}

// matches reports whether s is the schema of f's fields: an object with
// exactly their properties, each with its type (and at most a title and
// a description), and required members among them; it sets f.required.
func (f *fastArgs) matches(s *jsonschema.Schema) bool {
	data, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(data, &m) != nil || m.Type != "object" || len(m.Properties) != len(f.fields) {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for k := range top {
		switch k {
		case "type", "properties", "required", "title", "description":
		default:
			return false
		}
	}
	for i, fd := range f.fields {
		raw, ok := m.Properties[fd.name]
		if !ok {
			return false
		}
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) != nil {
			return false
		}
		for k := range p {
			if k != "type" && k != "title" && k != "description" {
				return false
			}
		}
		want := map[reflect.Kind]string{reflect.String: `"string"`, reflect.Bool: `"boolean"`, reflect.Int: `"integer"`, reflect.Int64: `"integer"`}[fd.kind]
		if string(p["type"]) != want {
			return false
		}
		if slices.Contains(m.Required, fd.name) {
			f.required |= 1 << i
		}
	}
	for _, r := range m.Required {
		if !slices.ContainsFunc(f.fields, func(fd fastField) bool { return fd.name == r }) {
			return false
		}
	}
	return true
}

// bind writes the arguments raw into the struct at p and reports whether
// it took them; when it did not, what it wrote is to be discarded.
func (f *fastArgs) bind(raw []byte, p unsafe.Pointer) bool {
	var seen uint64
	ok := jsonscan.Members(raw, nil, func(name, v []byte) bool {
		name = name[1 : len(name)-1]
		i := -1
		for j := range f.fields {
			if f.fields[j].name == string(name) {
				i = j
				break
			}
		}
		if i < 0 || seen&(1<<i) != 0 {
			return false // unknown (left to the decoder, which checks what it skips), or twice
		}
		seen |= 1 << i
		fd := &f.fields[i]
		at := unsafe.Add(p, fd.offset)
		switch fd.kind {
		case reflect.String:
			s, ok := plainText(v)
			if !ok {
				return false
			}
			*(*string)(at) = s
		case reflect.Bool:
			switch string(v) {
			case "true":
				*(*bool)(at) = true
			case "false":
				*(*bool)(at) = false
			default:
				return false
			}
		case reflect.Int, reflect.Int64:
			n, ok := plainInt(v)
			if !ok {
				return false
			}
			if fd.kind == reflect.Int {
				if int64(int(n)) != n {
					return false // past a 32-bit int
				}
				*(*int)(at) = int(n)
			} else {
				*(*int64)(at) = n
			}
		}
		return true
	})
	return ok && seen&f.required == f.required
}
