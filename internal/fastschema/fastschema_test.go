package fastschema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func mustSchema(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

func TestValidate(t *testing.T) {
	const obj = `{"type":"object","properties":{
		"name":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"},
		"n":{"type":"integer","minimum":1,"maximum":10},
		"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"color":{"enum":["red","green"]},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2},
		"opt":{"type":["string","null"]},
		"k":{"const":3},
		"sub":{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":false},
		"m":{"type":"object","additionalProperties":{"type":"integer"}}
	},"required":["name"]}`
	tests := []struct {
		value, wantErr string // wantErr: substring, "" for valid
	}{
		{`{"name":"abc"}`, ""},
		{`{"name":"abc","n":3,"x":0.5,"color":"red","tags":["a"],"opt":null,"k":3,"sub":{"a":true},"m":{"q":1}}`, ""},
		{`{"name":"abc","n":3.0}`, ""},
		{`{}`, `missing required property "name"`},
		{`{"name":1}`, "/name: want string, got integer"},
		{`{"name":"a"}`, "/name: must be at least 2 characters"},
		{`{"name":"abcdef"}`, "/name: must be at most 5 characters"},
		{`{"name":"ABC"}`, "/name: must match pattern"},
		{`{"name":"abc","n":2.5}`, "/n: want integer, got number"},
		{`{"name":"abc","n":0}`, "/n: must be >= 1"},
		{`{"name":"abc","n":11}`, "/n: must be <= 10"},
		{`{"name":"abc","x":0}`, "/x: must be > 0"},
		{`{"name":"abc","x":1}`, "/x: must be < 1"},
		{`{"name":"abc","color":"blue"}`, "/color: must be one of"},
		{`{"name":"abc","tags":[]}`, "/tags: must have at least 1 items"},
		{`{"name":"abc","tags":["a","b","c"]}`, "/tags: must have at most 2 items"},
		{`{"name":"abc","tags":["a",2]}`, "/tags/1: want string, got integer"},
		{`{"name":"abc","opt":3}`, "/opt: want string or null"},
		{`{"name":"abc","k":4}`, "/k: must be 3"},
		{`{"name":"abc","sub":{"b":1}}`, `/sub: unexpected property "b"`},
		{`{"name":"abc","m":{"q":"x"}}`, "/m/q: want integer"},
		{`[]`, "want object, got array"},
	}
	v, ok := Compile(mustSchema(t, obj))
	if !ok {
		t.Fatal("schema not compiled")
	}
	for _, tt := range tests {
		var x any
		if err := json.Unmarshal([]byte(tt.value), &x); err != nil {
			t.Fatal(err)
		}
		err := v.Validate(x)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Validate(%s) = %v, want nil", tt.value, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Validate(%s) = %v, want error containing %q", tt.value, err, tt.wantErr)
		}
	}
}

func TestCompileFallsBack(t *testing.T) {
	for _, s := range []string{
		`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}`,
		`{"type":"string","pattern":"(?<=a)b"}`,
		`{"type":"array","uniqueItems":true}`,
	} {
		if _, ok := Compile(mustSchema(t, s)); ok {
			t.Errorf("Compile(%s) claimed support", s)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	var sc jsonschema.Schema
	json.Unmarshal([]byte(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`), &sc)
	v, _ := Compile(&sc)
	x := map[string]any{"message": "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(x); err != nil {
			b.Fatal(err)
		}
	}
}
