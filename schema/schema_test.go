package schema

import (
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
)

func marshal(t *testing.T, s *jsonschema.Schema) string {
	t.Helper()
	b, err := stdjson.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type level int

func (l level) MarshalText() ([]byte, error) { return []byte("x"), nil }

type custom struct{ A int }

func (custom) MarshalJSON() ([]byte, error) { return []byte(`"c"`), nil }

type Base struct {
	ID string `json:"id"`
}

type tagged struct {
	Base
	Query  string             `json:"query" jsonschema:"what to search for, in plain words"`
	Limit  int                `json:"limit,omitempty" schema:"minimum=1,maximum=100,default=10"`
	Sort   string             `json:"sort,omitzero" schema:"enum=asc|desc,default=asc"`
	When   time.Time          `json:"when" schema:"title=When"`
	Note   string             `json:"note,omitempty" schema:"pattern='^[a-z, ]+$',maxLength=200"`
	Tags   []string           `json:"tags" schema:"minItems=1,optional"`
	Ptr    *int               `json:"ptr,omitempty"`
	Null   *string            `json:"null,omitempty" schema:"nullable"`
	Raw    stdjson.RawMessage `json:"raw,omitempty"`
	Value  jsontext.Value     `json:"value,omitempty"`
	Bytes  []byte             `json:"bytes,omitempty"`
	Level  level              `json:"level,omitempty"`
	Custom custom             `json:"custom,omitempty"`
	Map    map[string]int     `json:"map,omitempty"`
	Hidden string             `json:"-"`
	//lint:ignore U1000 an unexported field, which the reflector must skip
	private int
}

func TestReflect(t *testing.T) {
	var r Reflector
	s, err := For[tagged](&r)
	if err != nil {
		t.Fatal(err)
	}
	props := s.Properties
	checks := map[string]string{
		"id":     `{"type":"string"}`,
		"query":  `{"type":"string","description":"what to search for, in plain words"}`,
		"limit":  `{"type":"integer","default":10,"minimum":1,"maximum":100}`,
		"sort":   `{"type":"string","default":"asc","enum":["asc","desc"]}`,
		"when":   `{"type":"string","title":"When","format":"date-time"}`,
		"note":   `{"type":"string","maxLength":200,"pattern":"^[a-z, ]+$"}`,
		"tags":   `{"type":"array","items":{"type":"string"},"minItems":1}`,
		"ptr":    `{"type":"integer"}`,
		"null":   `{"type":["null","string"]}`,
		"raw":    `true`,
		"value":  `true`,
		"bytes":  `{"type":"string","contentEncoding":"base64"}`,
		"level":  `{"type":"string"}`,
		"custom": `true`,
		"map":    `{"type":"object","additionalProperties":{"type":"integer"}}`,
	}
	for name, want := range checks {
		p, ok := props[name]
		if !ok {
			t.Errorf("missing property %s", name)
			continue
		}
		if got := marshal(t, p); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	if _, ok := props["Hidden"]; ok {
		t.Error("json:\"-\" field described")
	}
	if _, ok := props["private"]; ok {
		t.Error("unexported field described")
	}
	if got := strings.Join(s.Required, ","); got != "id,query,when" {
		t.Errorf("required = %s", got)
	}
}

func TestTagErrors(t *testing.T) {
	type bad1 struct {
		N int `json:"n" schema:"default=ten"`
	}
	type bad2 struct {
		S string `json:"s" schema:"minimum=3"`
	}
	type bad3 struct {
		S string `json:"s" schema:"colour=red"`
	}
	type bad4 struct {
		S string `json:"s" schema:"pattern='unclosed"`
	}
	type bad5 struct {
		N int `json:"n" schema:"maxLength=2"`
	}
	type bad6 struct {
		S string `json:"s" schema:"required=yes"`
	}
	type bad7 struct {
		S string `json:"s" schema:"pattern=[z-a]"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[bad1](), reflect.TypeFor[bad2](), reflect.TypeFor[bad3](), reflect.TypeFor[bad4](), reflect.TypeFor[bad5](), reflect.TypeFor[bad6](), reflect.TypeFor[bad7]()} {
		_, err := (&Reflector{}).Reflect(typ)
		var te *TagError
		if !errors.As(err, &te) {
			t.Errorf("%v: err = %v, want a TagError", typ, err)
		}
	}
}

type node struct {
	Value    int     `json:"value"`
	Children []*node `json:"children,omitempty"`
}

func TestRecursive(t *testing.T) {
	s, err := For[node](nil)
	if err != nil {
		t.Fatal(err)
	}
	got := marshal(t, s)
	if !strings.Contains(got, `"$ref":"#/$defs/node"`) || s.Defs["node"] == nil {
		t.Fatalf("recursive schema: %s", got)
	}
	c, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateJSON([]byte(`{"value":1,"children":[{"value":2,"children":[{"value":"x"}]}]}`)); err == nil {
		t.Error("nested bad value accepted")
	}
}

func TestNullableAndOverrides(t *testing.T) {
	type T struct {
		P    *int      `json:"p"`
		L    []int     `json:"l"`
		When time.Time `json:"when"`
	}
	r := &Reflector{Nullable: true, Overrides: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time](): {Type: "integer", Description: "unix seconds"},
	}}
	s, err := For[T](r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"p":{"type":["null","integer"]},"l":{"type":["null","array"],"items":{"type":"integer"}},"when":{"type":"integer","description":"unix seconds"}},"required":["p","l","when"]}`
	if got := marshal(t, s); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestCacheReflectsOnce(t *testing.T) {
	var r Reflector
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := For[tagged](&r)
			if err != nil {
				t.Error(err)
			}
			s.Description = "changed by a caller" // copies: must not leak into the cache
		}()
	}
	wg.Wait()
	r.mu.Lock()
	n, cached := len(r.cache), r.cache[reflect.TypeFor[tagged]()]
	r.mu.Unlock()
	if n != 1 || cached.Description != "" {
		t.Errorf("cache has %d entries, description %q", n, cached.Description)
	}
}

func TestValidateAndDefaults(t *testing.T) {
	s, err := For[tagged](nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, err string }{
		{`{"id":"1","query":"q","when":"2024-01-01T00:00:00Z"}`, ""},
		{`{"id":"1","query":"q"}`, `missing required property "when"`},
		{`{"id":"1","query":3,"when":"x"}`, "/query: want string, got integer"},
		{`{"id":"1","query":"q","when":"x","limit":500}`, "/limit: must be <= 100"},
		{`{"id":"1","query":"q","when":"x","sort":"up"}`, "/sort: must be one of"},
		{`{"id":"1","query":"q","when":"x","note":"UPPER"}`, "/note: must match pattern"},
	}
	for _, tt := range tests {
		err := c.ValidateJSON([]byte(tt.in))
		var ve *ValidationError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.err != "" && (!errors.As(err, &ve) || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: err = %v, want %q", tt.in, err, tt.err)
		}
	}
	m := map[string]any{"id": "1"}
	if err := c.ApplyDefaults(m); err != nil {
		t.Fatal(err)
	}
	if m["limit"] != float64(10) || m["sort"] != "asc" {
		t.Errorf("defaults: %v", m)
	}
}

func TestParseDraft07(t *testing.T) {
	draft07 := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"definitions":{"pos":{"type":"integer","minimum":0}},
		"properties":{"n":{"$ref":"#/definitions/pos"},"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}},
		"dependencies":{"a":["b"]}}`
	c, err := CompileJSON([]byte(draft07))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{`{"n":1,"pair":["x",2]}`, true},
		{`{"n":-1}`, false},
		{`{"pair":["x","y"]}`, false},
		{`{"pair":["x",1,3]}`, false},
		{`{"a":1}`, false},
		{`{"a":1,"b":2}`, true},
	} {
		if err := c.ValidateJSON([]byte(tt.in)); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
	if _, err := Parse([]byte(`[1]`)); err == nil {
		t.Error("array accepted as a schema")
	}
	if _, err := CompileJSON([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)); err == nil {
		t.Error("dangling $ref accepted")
	}
}

func FuzzParseTag(f *testing.F) {
	for _, s := range []string{"minimum=1,maximum=2", "enum=a|b,default=a", "pattern='a,b'", "required", "='", "a=,", ",,", "x='y'z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		items, err := parseTag(tag)
		if err != nil {
			return
		}
		for _, it := range items {
			if it.key == "" {
				t.Fatalf("empty key from %q", tag)
			}
		}
		s := &jsonschema.Schema{Type: "string"}
		applyTag(s, reflect.TypeFor[string](), tag) // must not panic
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `true`, `{"definitions":{"a":{}},"$ref":"#/definitions/a"}`, `{"items":[{}],"additionalItems":{}}`, `{"dependencies":{"a":["b"],"c":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		Compile(s) // must not panic; errors are fine
	})
}

func BenchmarkReflectCached(b *testing.B) {
	var r Reflector
	For[tagged](&r)
	b.ReportAllocs()
	for b.Loop() {
		For[tagged](&r)
	}
}

func BenchmarkValidate(b *testing.B) {
	type In struct {
		Message string `json:"message"`
	}
	s, _ := For[In](nil)
	c, _ := Compile(s)
	v := map[string]any{"message": "hi"}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}
