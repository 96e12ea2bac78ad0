package schema

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestMarshalMatches checks Marshal against jsonschema-go's encoding
// through jsonv2, byte for byte, on inferred schemas and on hand-made ones that use every
// keyword Marshal writes itself, and some it leaves to MarshalJSON.
func TestMarshalMatches(t *testing.T) {
	var r Reflector
	var inferred []*jsonschema.Schema
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
		if !simple(s, 0) {
			t.Errorf("an inferred schema is left to MarshalJSON: %s", marshal(t, s))
		}
		inferred = append(inferred, s)
	}
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	var konst any = map[string]any{"a<b": []any{1.5, "&"}}
	var nullConst any
	handmade := []*jsonschema.Schema{
		{},
		{Not: &jsonschema.Schema{}},
		{Types: []string{}},
		{Types: []string{"string", "null"}, Title: "T <x> & y", Description: "line\nbreak \u2028 \"q\" \\ \x01", Format: "uri", ContentEncoding: "base64", ContentMediaType: "image/png"},
		{Type: "number", Minimum: f(1e21), Maximum: f(0.000001), ExclusiveMinimum: f(-0.5), ExclusiveMaximum: f(123456789), Default: stdjson.RawMessage(` { "a" : "<" } `)},
		{Type: "string", MinLength: n(0), MaxLength: n(7), Pattern: `^<[a-z]+>$`, Enum: []any{"a", 1.0, true, nil, map[string]any{"k": "v"}}, Examples: []any{"x"}},
		{Const: &konst, Deprecated: true, ReadOnly: true, WriteOnly: true},
		{Const: &nullConst},
		{Enum: []any{1e-7, 5e-324, math.Copysign(0, -1), 1e20, 123.456, -1e21, 3, int64(-4), uint8(5), []any{"x", 1.0}}, Description: "bad \xff utf-8"},
		{Type: "array", Items: &jsonschema.Schema{}, MinItems: n(1), MaxItems: n(2)},
		{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: []string{}},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"b": {Type: "string"}, "a": nil, "c/<": {}, "d": {Type: "integer"}},
			PropertyOrder: []string{"d", "missing", "b"}, Required: []string{"d"}, AdditionalProperties: &jsonschema.Schema{Type: "integer"}},
		{Ref: "#/$defs/x", Defs: map[string]*jsonschema.Schema{"z": {Type: "string"}, "x": {Ref: "#/$defs/z"}, "n": nil}},
		{Defs: map[string]*jsonschema.Schema{}},
		// Left to MarshalJSON.
		{Type: "object", AnyOf: []*jsonschema.Schema{{Type: "string"}}, Extra: map[string]any{"x-a": 1}},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {OneOf: []*jsonschema.Schema{{}}}}},
		{ID: "https://example.com/s", Schema: "https://json-schema.org/draft/2020-12/schema", MultipleOf: f(2)},
	}
	for _, s := range append(inferred, handmade...) {
		want, err := jsonv2.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(s)
		if err != nil {
			t.Errorf("Marshal(%s): %v", want, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Marshal:\n got %s\nwant %s", got, want)
		}
	}
}

// TestMarshalErrors checks that Marshal rejects what MarshalJSON rejects.
func TestMarshalErrors(t *testing.T) {
	nan := math.NaN()
	for _, s := range []*jsonschema.Schema{
		{Type: "string", Types: []string{"null"}},
		{Type: "object", PropertyOrder: []string{"a", "a"}, Properties: map[string]*jsonschema.Schema{"a": {}}},
		{Items: &jsonschema.Schema{Type: "x", Types: []string{"y"}}},
		{Type: "number", Minimum: &nan},
		{Default: stdjson.RawMessage(`{bad`)},
	} {
		if _, err := Marshal(s); err == nil {
			t.Errorf("Marshal(%+v) succeeded", s)
		}
	}
}
