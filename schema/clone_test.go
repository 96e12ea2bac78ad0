package schema

import (
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestCloneSchema checks that cloneSchema copies as CloneSchemas does:
// an equal schema, whose subschemas are copies too, for inferred schemas
// (copied without reflection) and for others (left to CloneSchemas).
func TestCloneSchema(t *testing.T) {
	var r Reflector
	var schemas []*jsonschema.Schema
	for _, f := range []func() (*jsonschema.Schema, error){
		func() (*jsonschema.Schema, error) { return For[tagged](&r) },
		func() (*jsonschema.Schema, error) { return For[node](&r) },
		func() (*jsonschema.Schema, error) { return For[Base](&Reflector{Nullable: true}) },
		func() (*jsonschema.Schema, error) {
			return For[tagged](&Reflector{AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}})
		},
	} {
		s, err := f()
		if err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	schemas = append(schemas,
		nil,
		&jsonschema.Schema{},
		&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Defs: map[string]*jsonschema.Schema{"n": nil}},
		&jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}},
		// Left to CloneSchemas.
		&jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}}, Properties: map[string]*jsonschema.Schema{"a": {If: &jsonschema.Schema{}}}},
		&jsonschema.Schema{Type: "string", Types: []string{"string"}},
	)
	for i, s := range schemas {
		got, want := cloneSchema(s), s.CloneSchemas()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d: cloneSchema = %+v, want %+v", i, got, want)
		}
		if s != nil && !disjoint(s, got) {
			t.Errorf("%d: the copy shares a subschema with the original", i)
		}
	}
}

// disjoint reports whether the schema trees a and b have no schema in
// common, following the subschemas simple allows.
func disjoint(a, b *jsonschema.Schema) bool {
	if a == nil || b == nil {
		return true
	}
	if a == b {
		return false
	}
	for k, s := range a.Properties {
		if !disjoint(s, b.Properties[k]) {
			return false
		}
	}
	for k, s := range a.Defs {
		if !disjoint(s, b.Defs[k]) {
			return false
		}
	}
	return disjoint(a.Items, b.Items) && disjoint(a.AdditionalProperties, b.AdditionalProperties) && disjoint(a.Not, b.Not)
}

// TestSimpleKnowsEverySubschema checks that simple refuses a schema with
// any subschema that cloneSimple (and appendSchema) do not handle, over
// every field of jsonschema.Schema that holds schemas: a new one in a
// later jsonschema-go fails this test instead of being shared by copies,
// or left out of an encoding.
func TestSimpleKnowsEverySubschema(t *testing.T) {
	handled := map[string]bool{"Defs": true, "Properties": true, "Items": true, "AdditionalProperties": true, "Not": true}
	ptr := reflect.TypeFor[*jsonschema.Schema]()
	for _, f := range reflect.VisibleFields(reflect.TypeFor[jsonschema.Schema]()) {
		var v reflect.Value
		switch f.Type {
		case ptr:
			v = reflect.ValueOf(&jsonschema.Schema{})
		case reflect.SliceOf(ptr):
			v = reflect.ValueOf([]*jsonschema.Schema{{}})
		case reflect.MapOf(reflect.TypeFor[string](), ptr):
			v = reflect.ValueOf(map[string]*jsonschema.Schema{"a": {}})
		default:
			continue
		}
		var s jsonschema.Schema
		reflect.ValueOf(&s).Elem().FieldByIndex(f.Index).Set(v)
		if simple(&s, 0) != handled[f.Name] {
			t.Errorf("with %s set, simple = %v", f.Name, !handled[f.Name])
		}
	}
}

// TestReflectCachedAllocs bounds the allocations of Reflect for a cached
// type, a copy of the cached schema: 22 for tagged, where CloneSchemas,
// which goes by reflection, allocated 112 times.
func TestReflectCachedAllocs(t *testing.T) {
	var r Reflector
	if _, err := For[tagged](&r); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := For[tagged](&r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 30 {
		t.Errorf("Reflect of a cached type allocates %v times, want at most 30", allocs)
	}
}
