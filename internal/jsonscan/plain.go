package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// PlainRun returns the index of the first byte of b at or after i that a
// JSON string does not hold as it is: a quote, a backslash, a control
// character, or a byte of a multi-byte UTF-8 sequence; len(b) when there
// is none. It reads eight bytes at a time, so that a validator or a
// string check spends about one instruction per byte of plain ASCII text
// rather than four or five.
func PlainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
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
