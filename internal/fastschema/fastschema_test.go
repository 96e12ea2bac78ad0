package fastschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
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
		// The single pass over the text agrees, error for error.
		jerr := v.ValidateJSON([]byte(tt.value))
		var fe *Error
		switch {
		case tt.wantErr == "" && jerr != nil:
			t.Errorf("ValidateJSON(%s) = %v, want nil", tt.value, jerr)
		case tt.wantErr != "" && (!errors.As(jerr, &fe) || jerr.Error() != err.Error()):
			t.Errorf("ValidateJSON(%s) = %v, want %v", tt.value, jerr, err)
		}
	}
}

// TestValidateJSON covers what only the pass over the text meets: escapes,
// syntax errors (which win over validation failures, as when the text is
// decoded first), values compared with enum or const, and the order of
// failures.
func TestValidateJSON(t *testing.T) {
	many := make([]string, 70)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprint("p", i))
	}
	manySchema := `{"type":"object","required":[` + strings.Join(many, ",") + `]}`
	all := "{" + strings.Join(many, ":1,") + ":1}"
	allButLast := "{" + strings.Join(many[:69], ":1,") + ":1}"
	const obj = `{"type":"object","properties":{
		"s":{"type":"string","maxLength":2,"pattern":"^a"},
		"a/b":{"type":"integer"},
		"e":{"enum":[{"x":1},[1,2],"q",2,true,null]},
		"c":{"const":{"k":[1]}},
		"n":{"type":"number"},
		"arr":{"type":"array","items":{"type":"object","required":["id"]}},
		"sub":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}
	},"required":["s","s"],"additionalProperties":false}`
	tests := []struct {
		schema, value string
		wantErr       string // substring; "" for valid
		syntax        bool   // an error other than a validation failure
	}{
		{obj, `{"s":"aé"}`, "", false},
		{obj, `{"s":"aéx"}`, "/s: must be at most 2 characters", false},
		{obj, `{"s":"ab"}`, "", false},
		{obj, `{"s":"b"}`, "/s: must match pattern", false},
		{obj, `{"s":"a","a\/b":1.5}`, "/a~1b: want integer, got number", false},
		{obj, `{"s":"a","e":{"x":1.0}}`, "", false},
		{obj, `{"s":"a","e":[1,2]}`, "", false},
		{obj, `{"s":"a","e":2.0}`, "", false},
		{obj, `{"s":"a","e":null}`, "", false},
		{obj, `{"s":"a","e":"q"}`, "", false},
		{obj, `{"s":"a","e":{"x":2}}`, "/e: must be one of", false},
		{obj, `{"s":"a","e":false}`, "/e: must be one of", false},
		{obj, `{"s":"a","c":{"k":[1]}}`, "", false},
		{obj, `{"s":"a","c":{"k":[2]}}`, "/c: must be", false},
		{obj, `{"s":"a","n":1e400}`, "out of range", true},
		{obj, `{"s":"a","arr":[{"id":1},{}]}`, `/arr/1: missing required property "id"`, false},
		{obj, `{"s":"a","sub":{"x":"y"}}`, "/sub/x: want integer, got string", false},
		{obj, `{"s":"a","sub":{}}`, `/sub: missing required property "x"`, false},
		// A missing required property is reported before a bad member.
		{obj, `{"n":"x"}`, `missing required property "s"`, false},
		{obj, `{"s":"a","zz":1}`, `unexpected property "zz"`, false},
		// Syntax errors win, even after a validation failure.
		{obj, `{"s":1,"n":}`, "invalid character", true},
		{obj, `{"s":"a","zz":1,`, "unexpected EOF", true},
		{obj, `{"s":"a","s":"a"}`, "duplicate", true},
		{obj, "{\"s\":\"a\xff\"}", "UTF-8", true},
		{obj, `{"s":"a"} {}`, "after top-level value", true},
		{obj, `{"s":"a"}x`, "invalid character", true},
		{obj, `{"s":2}x`, "invalid character", true},
		{obj, ``, "EOF", true},
		{manySchema, all, "", false},
		{manySchema, allButLast, `missing required property "p69"`, false},
	}
	for _, tt := range tests {
		v, ok := Compile(mustSchema(t, tt.schema))
		if !ok {
			t.Fatalf("schema not compiled: %s", tt.schema)
		}
		err := v.ValidateJSON([]byte(tt.value))
		var fe *Error
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateJSON(%s) = %v, want nil", tt.value, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ValidateJSON(%s) = %v, want error containing %q", tt.value, err, tt.wantErr)
		case err != nil && errors.As(err, &fe) == tt.syntax:
			t.Errorf("ValidateJSON(%s) = %T %v, want a validation failure: %v", tt.value, err, err, !tt.syntax)
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

func BenchmarkValidateJSON(b *testing.B) {
	var sc jsonschema.Schema
	json.Unmarshal([]byte(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`), &sc)
	v, _ := Compile(&sc)
	data := []byte(`{"message":"hello"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.ValidateJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzValidateJSON holds ValidateJSON to decoding the text with jsonv2
// and calling Validate: the same texts are rejected as not JSON, and the
// others pass or fail alike.
func FuzzValidateJSON(f *testing.F) {
	const schema = `{"type":"object","properties":{
		"s":{"type":"string","minLength":1,"maxLength":3,"pattern":"^[a-z]"},
		"n":{"type":"integer","minimum":0},
		"e":{"enum":["a",1,null,{"k":[1]}]},
		"a":{"type":"array","items":{"type":"object","required":["id"],"additionalProperties":false,"properties":{"id":{"type":"number"}}},"maxItems":2},
		"m":{"type":"object","additionalProperties":{"type":"boolean"}}
	},"required":["s"]}`
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &sc); err != nil {
		f.Fatal(err)
	}
	v, ok := Compile(&sc)
	if !ok {
		f.Fatal("schema not compiled")
	}
	for _, s := range []string{`{"s":"a"}`, `{"s":"ab","n":1,"e":{"k":[1.0]},"a":[{"id":1}],"m":{"x":true}}`,
		`{"s":"\u0061","a":[{"id":1,"x":2}]}`, `{"s":1`, `{"s":"a","s":"b"}`, `[]`, `{"n":-1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		jerr := v.ValidateJSON([]byte(text))
		var fe *Error
		var x any
		if err := jsonv2.Unmarshal([]byte(text), &x); err != nil {
			if jerr == nil || errors.As(jerr, &fe) {
				t.Fatalf("ValidateJSON(%q) = %v; jsonv2 rejects it: %v", text, jerr, err)
			}
			return
		}
		err := v.Validate(x)
		if (err == nil) != (jerr == nil) || jerr != nil && !errors.As(jerr, &fe) {
			t.Fatalf("ValidateJSON(%q) = %v; Validate = %v", text, jerr, err)
		}
	})
}
