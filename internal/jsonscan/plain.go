package jsonscan

import (
	"math/bits"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// PlainRun returns the index of the first byte of b at or after i that a
// JSON string does not hold as it is: a quote, a backslash, a control
// character, or a byte of a multi-byte UTF-8 sequence; len(b) when there
// is none. It reads eight bytes at a time, so that a validator or a
// string check spends about one instruction per byte of plain ASCII text
// rather than four or five.
func PlainRun[T ~string | ~[]byte](b T, i int) int {
	for ; i+8 <= len(b); i += 8 {
		// The compiler makes one load of the eight.
		w := b[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if m := special8(x); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// Word-at-a-time constants: a one, and the high bit, in every byte.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 returns, for the eight bytes of x (the first in its low
// byte), a word whose lowest set bit is the high bit of the first byte
// that is not plain (see plain), or 0 when all eight are. Each test is
// the classic "has a byte less than n" one, (y - n*ones) &^ y & highs: a
// byte borrows from the next only when it passes the test, so the lowest
// byte flagged is always a true one; bytes above it may be flagged
// falsely, which the caller, taking the lowest, never reads.
func special8(x uint64) uint64 {
	q := x ^ ('"' * ones)   // zero where x has a quote
	bs := x ^ ('\\' * ones) // zero where x has a backslash
	return ((x-' '*ones)&^x | (q-ones)&^q | (bs-ones)&^bs | x) & highs
}

// plain marks the bytes a string holds as they are: printable ASCII but
// for the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendQuote appends s as a JSON string to dst, as jsontext.AppendQuote
// does with its default options: text of printable ASCII and valid UTF-8,
// the common kind, is copied between quotes in one go after a scan a word
// at a time; text with a quote, a backslash, a control character or
// invalid UTF-8 goes to jsontext.AppendQuote, which escapes it (and
// reports invalid UTF-8, which it replaces). FuzzAppendQuote holds the
// two to the same output.
func AppendQuote[S ~string](dst []byte, s S) ([]byte, error) {
	for i := PlainRun(s, 0); i < len(s); i = PlainRun(s, i) {
		if s[i] < utf8.RuneSelf {
			return jsontext.AppendQuote(dst, s) // a quote, a backslash or a control character
		}
		r, n := utf8.DecodeRuneInString(string(s[i:]))
		if r == utf8.RuneError && n == 1 {
			return jsontext.AppendQuote(dst, s)
		}
		i += n
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}
