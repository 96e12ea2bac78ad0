package jsonscan

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// validCases are texts with the answer Valid must give; "decoder" marks
// valid text that Valid leaves to the decoder (it answers false).
var validCases = []struct {
	text string
	want bool
}{
	{`{}`, true},
	{` {"a":1} `, true},
	{`[]`, true},
	{`[1,-2,3.5,4e10,5E-3,6.0e+2,0,-0]`, true},
	{`"plain"`, true},
	{`"esc \" \\ \/ \b \f \n \r \t \u00e9 \u0000"`, true},
	{`"héllo ☃ 😀"`, true},
	{`true`, true}, {`false`, true}, {`null`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{}}}},"name":"echo","arguments":{"message":"hello"}}}`, true},
	{`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, true}, // the same name in different objects
	{"\t\r\n{\"a\" : [ 1 , 2 ] }\n", true},

	{``, false},
	{` `, false},
	{`{`, false},
	{`{"a"}`, false},
	{`{"a":}`, false},
	{`{"a":1,}`, false},
	{`[1,]`, false},
	{`[1 2]`, false},
	{`{"a":1}x`, false},
	{`{"a":1}{}`, false},
	{`01`, false},
	{`1.`, false},
	{`.5`, false},
	{`1e`, false},
	{`-`, false},
	{`+1`, false},
	{`tru`, false},
	{`truex`, false},
	{`"unterminated`, false},
	{"\"ctl \x01\"", false},
	{"\"bad utf8 \xff\"", false},
	{"\"surrogate in utf8 \xed\xa0\x80\"", false},
	{`"bad escape \x"`, false},
	{`"short \u12"`, false},
	{`{"a":1,"a":2}`, false},
	{`{"a":1,"b":{"c":1,"c":2}}`, false},
	{"\ufeff{}", false},
	{`'a'`, false},
	{`NaN`, false},

	// Valid, but left to the decoder.
	{`"\ud83d\ude00"`, false},
	{`{"\u0061":1}`, false},
	{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), false},
}

func TestValid(t *testing.T) {
	for _, c := range validCases {
		if got := Valid([]byte(c.text)); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.text, got, c.want)
		}
		if Valid([]byte(c.text)) && !jsontext.Value(c.text).IsValid() {
			t.Errorf("Valid(%q) but the decoder refuses it", c.text)
		}
	}
}

// TestValidManyNames: an object of more members than Valid tracks is
// left to the decoder; one just within is decided.
func TestValidManyNames(t *testing.T) {
	obj := func(n int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
		}
		b.WriteByte('}')
		return b.String()
	}
	if !Valid([]byte(obj(maxNames))) {
		t.Errorf("an object of %d members: not decided", maxNames)
	}
	if Valid([]byte(obj(maxNames + 1))) {
		t.Errorf("an object of %d members: decided, want it left to the decoder", maxNames+1)
	}
}

// FuzzValid holds Valid to the decoder: whatever it accepts, the decoder
// accepts.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.text))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) && !jsontext.Value(b).IsValid() {
			t.Fatalf("Valid(%q) but the decoder refuses it", b)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	msg := []byte(validCases[10].text)
	b.Run("Valid", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			Valid(msg)
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			jsontext.Value(msg).IsValid()
		}
	})
}

func TestCompact(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"a":[1,"b c",{"d":null}]}`, true},
		{`"q\" b\\ \b\f\n\r\t"`, true},
		{` {}`, false},
		{`{} `, false},
		{`{"a": 1}`, false},
		{"[1,\n2]", false},
		{`"\u00e9"`, false},
		{`"\/"`, false},
		{`"\\u"`, true}, // an escaped backslash, then u
		{`{"a":1,"a":2}`, false},
	} {
		if got := Compact([]byte(c.text)); got != c.want {
			t.Errorf("Compact(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// FuzzCompact holds Compact to the encoder: what it passes, the encoder
// writes unchanged.
func FuzzCompact(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.text))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !Compact(b) {
			return
		}
		var out bytes.Buffer
		enc := jsontext.NewEncoder(&out)
		if err := enc.WriteValue(b); err != nil {
			t.Fatalf("Compact(%q) but the encoder refuses it: %v", b, err)
		}
		if got := bytes.TrimSuffix(out.Bytes(), []byte("\n")); !bytes.Equal(got, b) {
			t.Fatalf("Compact(%q) but the encoder writes %q", b, got)
		}
	})
}

// FuzzMembers holds Members to a jsontext.Decoder on valid JSON: the same
// members, raw, in order; on any text it never fails badly.
func FuzzMembers(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.text))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got [][]byte
		ok := Members(b, nil, func(name, v []byte) bool {
			got = append(got, name, v)
			return true
		})
		if !jsontext.Value(b).IsValid() {
			return
		}
		d := jsontext.NewDecoder(bytes.NewReader(b))
		var want [][]byte
		isObject := jsontext.Value(b).Kind() == '{'
		if isObject {
			d.ReadToken()
			for d.PeekKind() != '}' {
				n, _ := d.ReadValue()
				want = append(want, bytes.Clone(n)) // before the next read reuses the buffer
				v, _ := d.ReadValue()
				want = append(want, bytes.Clone(v))
			}
		}
		if ok != isObject {
			t.Fatalf("Members(%q) = %v, want %v", b, ok, isObject)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("Members(%q): %q, want %q", b, got, want)
		}
		for i := range got {
			// The decoder's raw values are compact only if the input was.
			if !bytes.Equal(got[i], want[i]) && !bytes.Equal(bytes.TrimSpace(got[i]), want[i]) {
				t.Fatalf("Members(%q): %q, want %q", b, got, want)
			}
		}
	})
}

// FuzzValidObject holds ValidObject to Valid and to Members: the same
// answer for an object, false for any other value, and the members Members
// finds, in order, recorded up to the room given.
func FuzzValidObject(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.text))
	}
	f.Add([]byte(`{"a":1,"b":2,"c":3,"d":4}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"e","_meta":{"a":{"b":[1,2]},"c":"d"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"m","params":{"name":"f","_meta":{"a":{"b":[1,2]},"c":"d"}}}`))
	f.Add([]byte(`{"params":{"_meta":{"a":{"b":[1,2]},"c":"d"},"_meta":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"s":{"name":"n"}},"content":[]}}`))
	f.Add([]byte(`{"result":{"_meta":{"s":{"name":"n"}},"_meta":2},"params":{"_meta":{"s":{"name":"n"}}}}`))
	memo := new(Memo) // through the whole run, as on a connection
	f.Fuzz(func(t *testing.T, b []byte) {
		var top, top2 [3]Member
		// With a memo: the same answer, or true where the memo spared
		// text that the validator would leave to the decoder; never a
		// true for text the decoder refuses.
		for range 2 { // the first may fill the memo, the second use it
			n2, ok2 := ValidObject(b, top2[:], memo)
			if n, ok := ValidObject(b, top[:], nil); ok && (!ok2 || n2 != n || top2 != top) {
				t.Fatalf("ValidObject(%q) with memo %q = %d %v %v, without %d %v %v", b, memo.p.Load(), n2, ok2, top2, n, ok, top)
			}
			if ok2 && !jsontext.Value(b).IsValid() {
				t.Fatalf("ValidObject(%q) with memo %q: true for invalid text", b, memo.p.Load())
			}
		}
		n, ok := ValidObject(b, top[:], nil)
		i := SkipSpace(b, 0)
		isObject := i < len(b) && b[i] == '{'
		if want := Valid(b) && isObject; ok != want {
			t.Fatalf("ValidObject(%q) = %v, want %v", b, ok, want)
		}
		if !ok {
			return
		}
		var want [][2][]byte
		Members(b, nil, func(name, v []byte) bool {
			want = append(want, [2][]byte{name, v})
			return true
		})
		if n != len(want) {
			t.Fatalf("ValidObject(%q): %d members, want %d", b, n, len(want))
		}
		for k := range min(n, len(top)) {
			m := top[k]
			if got := b[m.Name.Start:m.Name.End]; !bytes.Equal(got, want[k][0]) {
				t.Fatalf("ValidObject(%q): name %d %q, want %q", b, k, got, want[k][0])
			}
			if got := b[m.Value.Start:m.Value.End]; !bytes.Equal(got, want[k][1]) {
				t.Fatalf("ValidObject(%q): value %d %q, want %q", b, k, got, want[k][1])
			}
		}
	})
}

// TestMemoReplacement checks what a Memo keeps: the first params._meta
// (or result._meta) validated, until memoEvery differing ones have
// passed; then the last.
func TestMemoReplacement(t *testing.T) {
	msg := func(meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":` + meta + `,"x":1}}`)
	}
	var m Memo
	var top [4]Member
	kept := func() string {
		if p := m.p.Load(); p != nil {
			return string(*p)
		}
		return ""
	}
	if _, ok := ValidObject(msg(`{"a":1}`), top[:], &m); !ok || kept() != `{"a":1}` {
		t.Fatalf("first: kept %q", kept())
	}
	for k := 1; k < memoEvery; k++ {
		if _, ok := ValidObject(msg(`{"b":`+strconv.Itoa(k)+`}`), top[:], &m); !ok || kept() != `{"a":1}` {
			t.Fatalf("miss %d: kept %q, want the first still", k, kept())
		}
	}
	if _, ok := ValidObject(msg(`{"c":3}`), top[:], &m); !ok || kept() != `{"c":3}` {
		t.Fatalf("miss %d: kept %q, want it replaced", memoEvery, kept())
	}
	// A hit changes nothing, and an invalid message is never kept.
	if _, ok := ValidObject(msg(`{"c":3}`), top[:], &m); !ok || kept() != `{"c":3}` {
		t.Fatalf("hit: kept %q", kept())
	}
	for range 2 * memoEvery {
		if _, ok := ValidObject(msg(`{"d":1,"d":2}`), top[:], &m); ok {
			t.Fatal("a duplicate name passed")
		}
	}
	if kept() != `{"c":3}` {
		t.Fatalf("after invalid messages: kept %q", kept())
	}
	// A response's result._meta is kept as a request's params._meta is
	// (a server sends the same with every result); a _meta deeper down is
	// not.
	m.p.Store(nil)
	resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"s":1},"content":[{"_meta":{"t":2}}]}}`)
	if _, ok := ValidObject(resp, top[:], &m); !ok || kept() != `{"s":1}` {
		t.Fatalf("result: kept %q", kept())
	}
	if _, ok := ValidObject(resp, top[:], &m); !ok || kept() != `{"s":1}` {
		t.Fatalf("result again: kept %q", kept())
	}
}
