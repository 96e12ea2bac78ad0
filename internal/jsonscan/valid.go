package jsonscan

import (
	"bytes"
	"sync/atomic"
	"unicode/utf8"
)

// Valid reports whether b is one JSON value, with white space around it
// allowed, that a jsontext.Decoder with its default options accepts:
// RFC 8259 syntax, strings of valid UTF-8, and no object with a member
// name twice. It decides the common shapes of text in one pass without
// allocating, several times faster than the decoder; a false is either
// invalid text or text it leaves to the decoder to judge: an escaped
// surrogate (\uD800), an escape in a member name, an object with more
// than maxNames members open at once, nesting deeper than maxDepth. So
// true is final and false is not: the caller then decodes with jsontext,
// which gives the answer and its error.
func Valid(b []byte) bool {
	var v validator
	i := v.value(b, SkipSpace(b, 0), 0)
	return i >= 0 && SkipSpace(b, i) == len(b)
}

// Span is the text b[Start:End] of a larger text b.
type Span struct{ Start, End int }

// Member is a member of an object: its name with its quotes, and its
// value.
type Member struct{ Name, Value Span }

// ValidObject is Valid for text that holds one JSON object, which also
// gives where the object's own members are, so that the caller need not
// scan the text again to find them: the first len(top) go into top, and
// n is how many there are. ok is false where Valid's would be, and for
// a value that is not an object.
//
// With a memo, the value of params._meta or result._meta (the _meta
// object in the params or result object of a JSON-RPC message) that
// starts with the text memo holds ends with it, unread: that text was an
// object ValidObject validated at the same place. A _meta it validates
// there goes into memo when it differs. (A client of MCP 2026-07-28 sends
// the same _meta with every request, and a server the same with every
// result.)
// The answer is the same with or without a memo, but that text the memo
// spares may take ValidObject past the bounds where it would otherwise
// leave the text to the decoder.
func ValidObject(b []byte, top []Member, memo *Memo) (n int, ok bool) {
	v := validator{top: top, params: -1}
	if memo != nil {
		v.memoOn = true
		if p := memo.p.Load(); p != nil {
			v.memo = *p
		}
	}
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = v.value(b, i, 0)
	if i < 0 || SkipSpace(b, i) != len(b) {
		return v.ntop, false
	}
	if m := v.meta; m.End > 0 && m.End-m.Start <= maxMemo && (len(v.memo) == 0 || memo.misses.Add(1)%memoEvery == 0) {
		text := bytes.Clone(b[m.Start:m.End])
		memo.p.Store(&text)
	}
	return v.ntop, true
}

// Memo remembers the text of a params._meta or result._meta that
// ValidObject validated (see there): the first, then one in every
// memoEvery that differ from it, so that messages whose _meta keeps
// changing (from several clients, or with a progress token in it) cost no
// copy each. It is safe for concurrent use.
type Memo struct {
	p      atomic.Pointer[[]byte]
	misses atomic.Uint32
}

// memoEvery is how many _meta objects that differ from a Memo's it takes
// to replace it.
const memoEvery = 16

// maxMemo bounds the text a Memo keeps.
const maxMemo = 4 << 10

// Bounds past which Valid leaves the text to the decoder.
const (
	maxDepth = 64 // nesting of objects and arrays
	maxNames = 64 // member names of the objects open at once
)

// validator holds the member names of the objects being read, to find a
// name given twice.
type validator struct {
	names [maxNames]span
	n     int // names in use

	top  []Member // where ValidObject records the members of the outer object
	ntop int      // the outer object's members

	memoOn bool   // ValidObject was given a memo
	memo   []byte // its text, a _meta validated before
	params int    // the index of the '{' of the outer object's params or result, or -1
	meta   Span   // the _meta validated here, to remember
}

// span is a member name: b[start:end], between its quotes, with no escape.
type span struct{ start, end int }

// value reads the value at b[i] and returns the index past it, or -1.
func (v *validator) value(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{':
		if depth >= maxDepth {
			return -1
		}
		return v.object(b, i, depth+1)
	case '[':
		if depth >= maxDepth {
			return -1
		}
		return v.array(b, i, depth+1)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return number(b, i)
		}
		return -1
	}
}

// object reads the object whose '{' is b[i].
func (v *validator) object(b []byte, i, depth int) int {
	first := v.n
	end := v.members(b, i, depth, first)
	v.n = first
	return end
}

// members reads the members of the object whose '{' is b[i]; its names
// go into v.names from first.
func (v *validator) members(b []byte, i, depth, first int) int {
	obj := i
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		end, escaped := stringEnd(b, i)
		if end < 0 || escaped || v.n == maxNames {
			return -1 // an escaped name is left to the decoder, which unescapes it to compare
		}
		name := b[i+1 : end-1]
		for _, s := range v.names[first:v.n] {
			if string(b[s.start:s.end]) == string(name) {
				return -1
			}
		}
		v.names[v.n] = span{i + 1, end - 1}
		v.n++
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		start := SkipSpace(b, i+1)
		if v.memoOn && depth == 1 && (string(name) == "params" || string(name) == "result") && start < len(b) && b[start] == '{' {
			v.params = start
		}
		if v.memoOn && depth == 2 && obj == v.params && string(name) == "_meta" {
			i = v.metaValue(b, start, depth)
		} else {
			i = v.value(b, start, depth)
		}
		if i < 0 {
			return -1
		}
		if depth == 1 && v.top != nil {
			if v.ntop < len(v.top) {
				v.top[v.ntop] = Member{Span{end - len(name) - 2, end}, Span{start, i}}
			}
			v.ntop++
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// metaValue reads the value of params._meta or result._meta at b[start]:
// the memo's text, when it starts there, ends with it unread; a valid
// object read here is noted for ValidObject to remember.
func (v *validator) metaValue(b []byte, start, depth int) int {
	if len(v.memo) > 0 && bytes.HasPrefix(b[start:], v.memo) {
		return start + len(v.memo)
	}
	i := v.value(b, start, depth)
	if i > start && b[start] == '{' {
		v.meta = Span{start, i}
	}
	return i
}

// array reads the array whose '[' is b[i].
func (v *validator) array(b []byte, i, depth int) int {
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = v.value(b, i, depth); i < 0 {
			return -1
		}
		i = SkipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// stringEnd reads the string whose opening quote is b[i] and returns the
// index past its closing quote, or -1, and whether it has escapes.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	i++
	for {
		i = PlainRun(b, i)
		if i >= len(b) {
			return -1, escaped
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return -1, escaped
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok || r >= 0xD800 && r <= 0xDFFF {
					return -1, escaped // a surrogate: left to the decoder, which pairs them
				}
				i += 6
			default:
				return -1, escaped
			}
		case c < ' ':
			return -1, escaped
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return -1, escaped
			}
			i += n
		}
	}
}

// hex4 decodes the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// literal reads lit at b[i].
func literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// number reads the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits returns the index past the digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// Compact reports whether b is one JSON value that Valid passes, written
// as a jsontext.Encoder writes it by default: no white space outside
// strings and no escape in a string but the shortest ones (\" \\ \b \f \n
// \r \t; never \/ or \u, which the encoder rewrites).
func Compact(b []byte) bool {
	if !Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			end := StringEnd(b, i)
			for j := i + 1; j < end-1; j++ {
				if b[j] == '\\' {
					if c := b[j+1]; c == 'u' || c == '/' {
						return false
					}
					j++
				}
			}
			i = end - 1
		}
	}
	return true
}
