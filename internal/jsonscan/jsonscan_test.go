package jsonscan

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestDecoderReadsInPlace(t *testing.T) {
	data := []byte(`{"a":"x"} `)
	d := Get(data)
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		t.Fatalf("ReadToken = %v, %v", tok, err)
	}
	name, _ := d.ReadValue()
	v, err := d.ReadValue()
	d.Release()
	if err != nil || string(name) != `"a"` || string(v) != `"x"` {
		t.Fatalf("read %s: %s, %v", name, v, err)
	}
	if &v[0] != &data[5] {
		t.Error("the value is a copy, not a slice of the input")
	}
	// A decoder from the pool starts afresh on its new input.
	d = Get([]byte(`[1]`))
	defer d.Release()
	if k := d.PeekKind(); k != '[' {
		t.Errorf("PeekKind = %v", k)
	}
}

// TestDuplicateNames checks that only GetValidated's decoders let a
// member name twice through, also when a pooled decoder served both.
func TestDuplicateNames(t *testing.T) {
	const dup = `{"a":1,"a":2}`
	for _, tt := range []struct {
		name string
		get  func([]byte) *Decoder
		ok   bool
	}{
		{"Get", Get, false},
		{"GetValidated", GetValidated, true},
		{"Get after GetValidated", Get, false},
	} {
		d := tt.get([]byte(dup))
		_, err := d.ReadValue()
		d.Release()
		if (err == nil) != tt.ok {
			t.Errorf("%s: ReadValue(%s) error %v, want ok %v", tt.name, dup, err, tt.ok)
		}
	}
}

func TestPlainString(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"text"`, "text", true},
		{`""`, "", true},
		{`"t\u0065xt"`, "", false},
		{`5`, "", false},
		{`"`, "", false},
		{``, "", false},
	} {
		got, ok := PlainString(jsontext.Value(tt.in))
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("PlainString(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
