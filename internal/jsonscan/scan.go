package jsonscan

import "bytes"

// The byte scanners below read JSON text that is known to be valid, or
// that a decoder will refuse anyway, without decoding it: they find where
// things end. They never allocate.

// SkipSpace returns the index of the first byte of b at or after i that
// is not JSON white space.
func SkipSpace(b []byte, i int) int {
	// Most calls meet a byte past the space at once: one comparison
	// tells it from the four space characters.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index just past the JSON string whose opening
// quote is b[i], or -1 when it does not end. It goes from quote to quote:
// a quote after an odd run of backslashes is escaped.
func StringEnd(b []byte, i int) int {
	start := i + 1
	for j := start; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		bs := 0
		for p := j - 1; p >= start && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
	}
}

// ValueEnd returns the index just past the JSON value that starts at
// b[i], or -1 when it does not end.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = StringEnd(b, j); j < 0 {
					return -1
				}
				j-- // the loop steps past the closing quote
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(b)
}

// Members calls f with the raw name (quoted, as in the input) and the raw
// value of each member of obj, a JSON object known to be valid, and
// reports whether obj is an object that f took whole (f returns false to
// stop). A value that starts with known, the text of a whole JSON value,
// ends with it, which spares scanning it. On text that is not valid JSON
// it never fails badly, but what it reports is meaningless.
func Members(obj, known []byte, f func(name, value []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return SkipSpace(obj, i+1) == len(obj)
	}
	for i < len(obj) && obj[i] == '"' {
		end := StringEnd(obj, i)
		if end < 0 {
			return false
		}
		name := obj[i:end]
		if i = SkipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = SkipSpace(obj, i+1)
		if len(known) > 0 && bytes.HasPrefix(obj[i:], known) {
			end = i + len(known)
		} else {
			end = ValueEnd(obj, i)
		}
		if end <= i || !f(name, obj[i:end]) {
			return false
		}
		if i = SkipSpace(obj, end); i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = SkipSpace(obj, i+1)
		case '}':
			return SkipSpace(obj, i+1) == len(obj)
		default:
			return false
		}
	}
	return false
}
