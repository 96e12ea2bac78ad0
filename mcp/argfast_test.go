package mcp

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/mcpkit/mcpkit/schema"
)

// fastIn is the input struct of the fast path's tests.
type fastIn struct {
	S string `json:"s"`
	B bool   `json:"b,omitempty"`
	N int    `json:"n,omitzero"`
	M int64  `json:"m,omitempty"`
	X string `json:"-"`
}

// TestFastArgsEligible: the fast path is made for plain structs of string,
// bool and int fields with their inferred schema, and for nothing else.
func TestFastArgsEligible(t *testing.T) {
	type named string
	type inner struct{ A string }
	cases := []struct {
		name string
		fast bool
		make func() (*fastArgs, error)
	}{
		{"plain", true, func() (*fastArgs, error) {
			b, err := newArgBinder[fastIn](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"untagged", true, func() (*fastArgs, error) {
			b, err := newArgBinder[struct{ Query string }](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a float", false, func() (*fastArgs, error) {
			b, err := newArgBinder[struct {
				F float64 `json:"f"`
			}](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a named string", false, func() (*fastArgs, error) {
			b, err := newArgBinder[struct {
				S named `json:"s"`
			}](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a nested struct", false, func() (*fastArgs, error) {
			b, err := newArgBinder[struct {
				I inner `json:"i"`
			}](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"the string option", false, func() (*fastArgs, error) {
			b, err := newArgBinder[struct {
				N int `json:"n,string"`
			}](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"embedded", false, func() (*fastArgs, error) {
			b, err := newArgBinder[struct{ inner }](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a pointer", false, func() (*fastArgs, error) {
			b, err := newArgBinder[*fastIn](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a map", false, func() (*fastArgs, error) {
			b, err := newArgBinder[map[string]any](&schema.Reflector{}, nil)
			return fast(b, err)
		}},
		{"a schema given", false, func() (*fastArgs, error) {
			b, err := newArgBinder[fastIn](&schema.Reflector{}, json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","minLength":3}},"required":["s"]}`))
			return fast(b, err)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			if (f != nil) != c.fast {
				t.Fatalf("fast path %v, want %v", f != nil, c.fast)
			}
		})
	}
}

// fast returns the fast path of an argBinder.
func fast[In any](b *argBinder[In], err error) (*fastArgs, error) {
	if err != nil {
		return nil, err
	}
	return b.fast, nil
}

// TestFastArgsBind: what the fast path takes and what it leaves to the
// validator, and that bind's answer is the same either way.
func TestFastArgsBind(t *testing.T) {
	b, err := newArgBinder[fastIn](&schema.Reflector{}, nil)
	if err != nil || b.fast == nil {
		t.Fatalf("no fast path: %v", err)
	}
	cases := []struct {
		args string
		fast bool
		ok   bool // bind succeeds
		want fastIn
	}{
		{`{"s":"hi"}`, true, true, fastIn{S: "hi"}},
		{` { "n" : -42 , "s":"x", "b":true, "m":9007199254740993 } `, true, true, fastIn{S: "x", B: true, N: -42, M: 9007199254740993}},
		{`{"s":"h\u00e9"}`, false, true, fastIn{S: "hé"}},      // an escape: the decoder's
		{`{"s":"hi","other":1}`, false, true, fastIn{S: "hi"}}, // an unknown member: the decoder's
		{`{"s":"hi","n":1.0}`, false, false, fastIn{}},         // the decoder refuses a fraction for an int
		{`{"s":"hi","n":1.5}`, false, false, fastIn{}},
		{`{"s":"hi","n":99999999999999999999}`, false, false, fastIn{}},
		{`{"s":"hi","n":01}`, false, false, fastIn{}},
		{`{"b":true}`, false, false, fastIn{}}, // s is required
		{`{"s":null}`, false, false, fastIn{}},
		{`{"s":"a","s":"b"}`, false, false, fastIn{}},
		{`{"s":"hi","b":"true"}`, false, false, fastIn{}},
		{`{"s":"hi"} x`, false, false, fastIn{}},
		{"{\"s\":\"\xff\"}", false, false, fastIn{}},
		{`{"s":"hi","X":"no"}`, false, true, fastIn{S: "hi"}},
	}
	for _, c := range cases {
		var got fastIn
		if fast := b.fast.bind([]byte(c.args), unsafe.Pointer(&got)); fast != c.fast {
			t.Errorf("fast path took %s: %v, want %v", c.args, fast, c.fast)
		}
		in, err := b.bind(json.RawMessage(c.args))
		if (err == nil) != c.ok || err == nil && in != c.want {
			t.Errorf("bind(%s) = %+v, %v; want %+v, ok %v", c.args, in, err, c.want, c.ok)
		}
	}
}

// FuzzFastArgs: what the fast path takes, the validator and the decoder
// take too, with the same result.
func FuzzFastArgs(f *testing.F) {
	for _, s := range []string{`{"s":"hi"}`, `{"s":"x","b":false,"n":0,"m":-1}`, `{"s":"a\"b"}`, `{"n":1}`, `{"s":"","n":-0}`, `{}`, `[]`, `{"s":"hi","s":"ho"}`} {
		f.Add([]byte(s))
	}
	b, err := newArgBinder[fastIn](&schema.Reflector{}, nil)
	if err != nil || b.fast == nil {
		f.Fatalf("no fast path: %v", err)
	}
	slow := &argBinder[fastIn]{toolValidator: b.toolValidator}
	f.Fuzz(func(t *testing.T, args []byte) {
		var got fastIn
		if !b.fast.bind(args, unsafe.Pointer(&got)) {
			return
		}
		want, err := slow.bind(json.RawMessage(args))
		if err != nil {
			t.Fatalf("the fast path took %q, which the validator or the decoder refuses: %v", args, err)
		}
		if got != want {
			t.Fatalf("%q: the fast path got %+v, the decoder %+v", args, got, want)
		}
	})
}
