// Command jsongen writes mcp/jsonmethods.go: the JSON plumbing that makes
// every protocol type of package mcp encode and decode the same through
// encoding/json as through the JSON engine the SDK uses on the wire.
//
// For each exported struct type declared in the source files below it
// emits unexported marshalJSONTo and unmarshalJSONFrom methods (the
// engine's fast path, through an unexported copy of the type that has no
// methods) and the exported MarshalJSON and UnmarshalJSON (encoding/json's,
// which call the engine). A type whose source has marshalJSONTo and
// unmarshalJSONFrom of its own (such as Meta or Contents) gets only the
// encoding/json pair. A struct type also gets marshalWire and
// unmarshalWire, which encode and decode it at the top of a value through
// its method-free copy. And it writes jsonMarshalers and jsonUnmarshalers,
// which register with the engine the unexported methods of the types met
// inside other values (a field of any struct of the package, a content
// block, a type with methods of its own), for the options that package
// mcp encodes and decodes with (see mcp/jsonstd.go): the engine's own
// method hooks, MarshalJSONTo and UnmarshalJSONFrom, would put its
// pre-release types into the API. Registering only those keeps the
// registry short, which every process pays for once and every type's
// first lookup scans.
//
// Run it from the module root with go generate ./mcp; a test in this
// package fails when the file in the tree is out of date.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// sources are the files, relative to the mcp package, whose types get
// methods.
var sources = []string{"protocol.go", "content.go", "meta.go", "mrtr.go", "skills.go", "tasks.go"}

// The files written, relative to the mcp package: the methods, and the
// list of types for the tests.
const (
	output     = "jsonmethods.go"
	testOutput = "jsonmethods_test.go"
)

// The names of the unexported methods that encode and decode a type for
// the wire.
const (
	marshalMethod   = "marshalJSONTo"
	unmarshalMethod = "unmarshalJSONFrom"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	src, test, err := generate(dir)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, output), src, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, testOutput), test, 0o644); err != nil {
		log.Fatal(err)
	}
}

// generate returns the contents of the two files for the mcp package in
// dir.
func generate(dir string) (src, test []byte, err error) {
	fset := token.NewFileSet()
	var structs []string
	fields := map[string]*ast.StructType{}
	types := map[string]bool{} // every exported type declared
	// Types with hand-written engine methods: the method names found.
	own := map[string]map[string]bool{}
	block := map[string]bool{} // content blocks: types with contentType()
	for _, name := range sources {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() || ts.TypeParams != nil {
						continue
					}
					types[ts.Name.Name] = true
					if st, ok := ts.Type.(*ast.StructType); ok {
						structs = append(structs, ts.Name.Name)
						fields[ts.Name.Name] = st
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil {
					continue
				}
				t := d.Recv.List[0].Type
				if st, ok := t.(*ast.StarExpr); ok {
					t = st.X
				}
				id, ok := t.(*ast.Ident)
				if !ok {
					continue
				}
				switch d.Name.Name {
				case marshalMethod, unmarshalMethod:
					if own[id.Name] == nil {
						own[id.Name] = map[string]bool{}
					}
					own[id.Name][d.Name.Name] = true
				case "MarshalJSONTo", "UnmarshalJSONFrom":
					return nil, nil, fmt.Errorf("%s: %s.%s puts the engine's types into the API: name it %s or %s",
						fset.Position(d.Pos()), id.Name, d.Name.Name, marshalMethod, unmarshalMethod)
				case "contentType":
					block[id.Name] = true
				}
			}
		}
	}
	sort.Strings(structs)
	nested, err := nestedTypes(dir, types)
	if err != nil {
		return nil, nil, err
	}
	// The registered types: those the engine meets inside another value
	// (a field of any struct of the package, or a content block inside
	// Contents), and the other types with methods of their own (such as
	// Contents). A type met only at the top (params, results) is encoded
	// there through its marshalWire and unmarshalWire methods, which give
	// the engine its method-free copy: registering it too would only make
	// the registry longer, which every process pays for at its start and
	// every type's first lookup scans.
	var registered []string
	for _, t := range structs {
		if nested[t] || block[t] || own[t] != nil {
			registered = append(registered, t)
		}
	}
	for t, m := range own {
		if !m[marshalMethod] || !m[unmarshalMethod] {
			return nil, nil, fmt.Errorf("%s has only one of %s and %s", t, marshalMethod, unmarshalMethod)
		}
		if !types[t] {
			return nil, nil, fmt.Errorf("%s has %s but is not an exported type of the sources", t, marshalMethod)
		}
		if fields[t] == nil {
			registered = append(registered, t)
		}
	}
	sort.Strings(registered)
	// The types that get methods: every struct, and the other types with
	// methods of their own.
	emitted := slices.Clone(structs)
	for t := range own {
		if fields[t] == nil {
			emitted = append(emitted, t)
		}
	}
	sort.Strings(emitted)

	var b bytes.Buffer
	b.WriteString(`// Code generated by internal/jsongen; DO NOT EDIT.

package mcp

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The wire encoding of each protocol type is its marshalJSONTo and
// unmarshalJSONFrom methods, which the engine calls through
// jsonMarshalers and jsonUnmarshalers (see jsonstd.go); MarshalJSON and
// UnmarshalJSON give encoding/json the same encoding.
`)
	b.WriteString("\n// jsonMarshalers registers the marshalJSONTo method of every protocol type met inside another value.\n")
	b.WriteString("func jsonMarshalers() *jsonv2.Marshalers {\nreturn jsonv2.JoinMarshalers(\n")
	for _, t := range registered {
		fmt.Fprintf(&b, "jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, x *%s) error { return x.%s(enc) }),\n", t, marshalMethod)
	}
	b.WriteString(")\n}\n")
	b.WriteString("\n// jsonUnmarshalers registers the unmarshalJSONFrom method of every protocol type met inside another value.\n")
	b.WriteString("func jsonUnmarshalers() *jsonv2.Unmarshalers {\nreturn jsonv2.JoinUnmarshalers(\n")
	for _, t := range registered {
		fmt.Fprintf(&b, "jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, x *%s) error { return x.%s(dec) }),\n", t, unmarshalMethod)
	}
	b.WriteString(")\n}\n")
	for _, t := range emitted {
		if own[t] != nil {
			fmt.Fprintf(&b, `
// MarshalJSON implements encoding/json.Marshaler with the SDK's encoding.
func (x %[1]s) MarshalJSON() ([]byte, error) { return marshalStd(&x) }

// UnmarshalJSON implements encoding/json.Unmarshaler with the SDK's decoding.
func (x *%[1]s) UnmarshalJSON(data []byte) error { return unmarshalStd(data, x) }
`, t)
			continue
		}
		w := "wire" + t
		fmt.Fprintf(&b, `
// %[2]s is %[1]s without methods, for the default struct encoding.
type %[2]s %[1]s
`, t, w)
		if block[t] {
			fmt.Fprintf(&b, `
// %[3]s encodes x for the wire, its "type" member first.
func (x *%[1]s) %[3]s(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, &typedBlock[%[2]s]{x.contentType(), (*%[2]s)(x)})
}
`, t, w, marshalMethod)
		} else {
			fmt.Fprintf(&b, `
// %[3]s encodes x for the wire.
func (x *%[1]s) %[3]s(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, (*%[2]s)(x))
}
`, t, w, marshalMethod)
		}
		if !block[t] {
			fmt.Fprintf(&b, `
// marshalWire encodes x at the top of a value (see marshalWith).
func (x *%[1]s) marshalWire(opts jsonv2.Options) ([]byte, error) {
	return jsonv2.Marshal((*%[2]s)(x), opts)
}

// unmarshalWire decodes x at the top of a value (see unmarshalWith).
func (x *%[1]s) unmarshalWire(data []byte, opts ...jsonv2.Options) error {
	return jsonv2.Unmarshal(data, (*%[2]s)(x), opts...)
}
`, t, w)
		}
		fmt.Fprintf(&b, `
// %[3]s decodes x from the wire.
func (x *%[1]s) %[3]s(dec *jsontext.Decoder) error {
	return jsonv2.UnmarshalDecode(dec, (*%[2]s)(x))
}

// MarshalJSON implements encoding/json.Marshaler with the SDK's encoding.
func (x %[1]s) MarshalJSON() ([]byte, error) { return marshalStd(&x) }

// UnmarshalJSON implements encoding/json.Unmarshaler with the SDK's decoding.
func (x *%[1]s) UnmarshalJSON(data []byte) error { return unmarshalStd(data, x) }
`, t, w, unmarshalMethod)
	}
	writeNilMembers(&b, structs, fields)
	if src, err = format.Source(b.Bytes()); err != nil {
		return nil, nil, err
	}

	var tb bytes.Buffer
	tb.WriteString(`// Code generated by internal/jsongen; DO NOT EDIT.

package mcp

// protocolTypes lists a pointer to a zero value of every protocol type
// that has generated JSON methods.
var protocolTypes = []any{
`)
	for _, t := range structs {
		fmt.Fprintf(&tb, "\tnew(%s),\n", t)
	}
	tb.WriteString("}\n")
	if test, err = format.Source(tb.Bytes()); err != nil {
		return nil, nil, err
	}
	return src, test, nil
}

// A check is what a nilMember method looks at in one field.
type check struct {
	field, name string
	kind        int    // one of the check kinds below
	elem        string // the struct type to descend into, or ""
	required    bool   // a nil value is missing
}

const (
	checkPointer = iota // *T, or an interface (elem "")
	checkValue          // T, a struct
	checkSlice          // []*T, []T or Contents
)

// writeNilMembers writes, for each struct type, the nilMember method the
// session calls on every result it receives (see ResultError): it returns
// the path of the first required object member that is nil, or of the
// first null element of a list, looking through the protocol types. The
// methods are generated so that no reflection runs per call.
func writeNilMembers(b *bytes.Buffer, structs []string, fields map[string]*ast.StructType) {
	checks := map[string][]check{}
	for _, t := range structs {
		checks[t] = fieldChecks(fields[t], fields)
	}
	// A check is kept only if it can find something: it tests for nil,
	// or descends into a type with checks of its own. Dropping checks can
	// leave more types with none, so repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, t := range structs {
			kept := checks[t][:0]
			for _, c := range checks[t] {
				if c.elem != "" && len(checks[c.elem]) == 0 {
					c.elem, changed = "", true
				}
				if c.required || c.elem != "" {
					kept = append(kept, c)
				} else {
					changed = true
				}
			}
			checks[t] = kept
		}
	}
	b.WriteString("\n// The nilMember methods find a required object member that is nil, or a\n// null list element, in a result (see ResultError).\n")
	for _, t := range structs {
		fmt.Fprintf(b, "\nfunc (x *%s) nilMember() string {\n", t)
		for _, c := range checks[t] {
			name := strconv.Quote(c.name)
			switch c.kind {
			case checkPointer:
				if c.required {
					fmt.Fprintf(b, "if x.%s == nil { return %s }\n", c.field, name)
				}
				if c.elem != "" {
					fmt.Fprintf(b, "if x.%s != nil { if m := x.%[1]s.nilMember(); m != \"\" { return memberPath(%s, m) } }\n", c.field, name)
				}
			case checkValue:
				fmt.Fprintf(b, "if m := x.%s.nilMember(); m != \"\" { return memberPath(%s, m) }\n", c.field, name)
			case checkSlice:
				fmt.Fprintf(b, "for i, e := range x.%s {\n", c.field)
				if c.required { // elements that can be nil
					fmt.Fprintf(b, "if e == nil { return elemPath(%s, i, \"\") }\n", name)
				}
				if c.elem != "" {
					fmt.Fprintf(b, "if m := e.nilMember(); m != \"\" { return elemPath(%s, i, m) }\n", name)
				}
				b.WriteString("}\n")
			}
		}
		b.WriteString("return \"\"\n}\n")
	}
}

// fieldChecks returns the checks of the fields of st. For slices,
// required means that the elements can be nil (pointers or interfaces).
func fieldChecks(st *ast.StructType, structs map[string]*ast.StructType) []check {
	var out []check
	for _, f := range st.Fields.List {
		if len(f.Names) != 1 || !f.Names[0].IsExported() {
			continue
		}
		field := f.Names[0].Name
		name, required := field, true
		if f.Tag != nil {
			tag, _ := strconv.Unquote(f.Tag.Value)
			n, opts, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if n == "-" && opts == "" {
				continue
			}
			if n != "" {
				name = n
			}
			required = !strings.Contains(opts, "omitzero") && !strings.Contains(opts, "omitempty")
		}
		isStruct := func(e ast.Expr) string {
			if id, ok := e.(*ast.Ident); ok && structs[id.Name] != nil {
				return id.Name
			}
			return ""
		}
		switch t := f.Type.(type) {
		case *ast.StarExpr:
			if el := isStruct(t.X); el != "" {
				out = append(out, check{field, name, checkPointer, el, required})
			}
		case *ast.Ident:
			switch {
			case structs[t.Name] != nil:
				out = append(out, check{field, name, checkValue, t.Name, false})
			case t.Name == "Content" || t.Name == "any":
				if required {
					out = append(out, check{field, name, checkPointer, "", true})
				}
			case t.Name == "Contents":
				out = append(out, check{field, name, checkSlice, "", true})
			}
		case *ast.ArrayType:
			switch el := t.Elt.(type) {
			case *ast.StarExpr:
				if s := isStruct(el.X); s != "" {
					out = append(out, check{field, name, checkSlice, s, true})
				}
			case *ast.Ident:
				if s := isStruct(el); s != "" {
					out = append(out, check{field, name, checkSlice, s, false})
				} else if el.Name == "Content" || el.Name == "any" {
					out = append(out, check{field, name, checkSlice, "", true})
				}
			}
		}
	}
	return out
}

// nestedTypes returns the exported types of types that some struct type
// of the package in dir (any file but tests, exported or not, named or
// a literal) has a field of: directly, through pointers, slices, arrays
// or map values.
func nestedTypes(dir string, types map[string]bool) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	nested := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				t := fld.Type
			unwrap:
				for {
					switch x := t.(type) {
					case *ast.StarExpr:
						t = x.X
					case *ast.ArrayType:
						t = x.Elt
					case *ast.MapType:
						t = x.Value
					default:
						break unwrap
					}
				}
				if id, ok := t.(*ast.Ident); ok && types[id.Name] {
					nested[id.Name] = true
				}
			}
			return true
		})
	}
	return nested, nil
}
