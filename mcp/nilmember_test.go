package mcp

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The reflection walk below is what the generated nilMember methods
// replaced on the hot path; it stays here as their oracle.

// walkField is a struct field nilMember looks at.
type walkField struct {
	index   int
	name    string
	nilBad  bool // a required pointer or interface member
	descend bool // a struct, pointer or slice that may hold more
}

// reflectWalkPlans caches, per struct type, the fields nilMember looks at. It
// is derived from types alone, like encoding/json's caches.
var reflectWalkPlans sync.Map // reflect.Type -> []walkField

func walkPlan(t reflect.Type) []walkField {
	if p, ok := reflectWalkPlans.Load(t); ok {
		return p.([]walkField)
	}
	required := map[string]bool{}
	for _, m := range requiredMembers(t) {
		required[m.name] = true
	}
	var plan []walkField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		k := f.Type.Kind()
		wf := walkField{
			index: i,
			name:  name,
			// A nil pointer to a number or a string encodes null, a
			// value of the members that have such a type (ttl: number |
			// null); a nil object or interface is a member missing.
			nilBad:  required[name] && (k == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct || k == reflect.Interface),
			descend: mayHoldNil(f.Type),
		}
		if wf.nilBad || wf.descend {
			plan = append(plan, wf)
		}
	}
	reflectWalkPlans.Store(t, plan)
	return plan
}

// mayHoldNil reports whether a value of type t can hold a nil that
// nilMember reports: a struct, a pointer to one, or a slice of pointers,
// interfaces or structs.
func mayHoldNil(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Pointer:
		return t.Elem().Kind() == reflect.Struct
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Struct:
			return true
		}
	}
	return false
}

// nilMember returns the path of the first required object member of v
// that is nil, or of the first nil element of a list in v, or "". It
// looks through structs, pointers and slices of the protocol types, not
// into maps or interfaces, and does not allocate unless it finds one.
func reflectNilMember(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return reflectNilMember(v.Elem())
	case reflect.Struct:
		for _, f := range walkPlan(v.Type()) {
			fv := v.Field(f.index)
			if f.nilBad && fv.IsNil() {
				return f.name
			}
			if f.descend {
				if m := reflectNilMember(fv); m != "" {
					if m[0] == '[' {
						return f.name + m
					}
					return f.name + "." + m
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			if (e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface) && e.IsNil() {
				return fmt.Sprintf("[%d]", i)
			}
			if e.Kind() != reflect.Interface {
				if m := reflectNilMember(e); m != "" {
					if m[0] == '[' {
						return fmt.Sprintf("[%d]%s", i, m)
					}
					return fmt.Sprintf("[%d].%s", i, m)
				}
			}
		}
	}
	return ""
}

// nilSpots returns setters that each put a nil in one place of v: a
// pointer or interface field, or a pointer or interface list element,
// looking through structs, pointers and slices.
func nilSpots(v reflect.Value, depth int) []func() {
	if depth > 6 {
		return nil
	}
	var out []func()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = append(out, nilSpots(v.Elem(), depth+1)...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && !f.IsNil() {
				out = append(out, func() { f.Set(reflect.Zero(f.Type())) })
			}
			out = append(out, nilSpots(f, depth+1)...)
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			if (e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface) && !e.IsNil() {
				out = append(out, func() { e.Set(reflect.Zero(e.Type())) })
			}
			if e.Kind() != reflect.Interface {
				out = append(out, nilSpots(e, depth+1)...)
			}
		}
	}
	return out
}

// TestNilMemberMatchesReflection puts a nil in each place of a fully
// filled value of every protocol type, in turn, and checks that the
// generated nilMember method reports what the reflection walk reports.
func TestNilMemberMatchesReflection(t *testing.T) {
	type checker interface{ nilMember() string }
	spots := 0
	for _, p := range protocolTypes {
		typ := reflect.TypeOf(p).Elem()
		fresh := func() reflect.Value {
			v := reflect.New(typ)
			fill(v.Elem(), 0)
			return v
		}
		v := fresh()
		if got, want := v.Interface().(checker).nilMember(), reflectNilMember(v); got != want {
			t.Errorf("%s filled: nilMember %q, reflection %q", typ.Name(), got, want)
		}
		for i := range len(nilSpots(v, 0)) {
			v := fresh()
			nilSpots(v, 0)[i]()
			spots++
			got, want := v.Interface().(checker).nilMember(), reflectNilMember(v)
			if got != want {
				t.Errorf("%s, nil #%d: nilMember %q, reflection %q", typ.Name(), i, got, want)
			}
		}
	}
	if spots == 0 {
		t.Fatal("no place to put a nil was found")
	}
	t.Logf("%d values compared", spots)
}
