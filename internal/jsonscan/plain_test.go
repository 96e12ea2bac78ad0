package jsonscan

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// plainRunBytes is PlainRun a byte at a time: the reference.
func plainRunBytes(b []byte, i int) int {
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

func TestPlainRun(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5)
	for _, c := range []struct {
		text string
		from int
		want int
	}{
		{"", 0, 0},
		{"abc", 0, 3},
		{"abc", 3, 3},
		{long, 0, len(long)},
		{long + `"`, 0, len(long)},
		{long + `\n`, 0, len(long)},
		{"abcdefg\x1f", 0, 7},
		{"abcdefgh\x00", 0, 8},
		{"a\x7fb", 0, 3},                  // DEL is printable as far as JSON goes
		{"abcdefg\x7f\x80", 0, 8},         // ... and 0x80 is not plain
		{"abc\u00e9defghijk", 0, 3},       // a multi-byte character
		{"abcdefghijk\u00e9", 0, 11},      // the same past the first word
		{`ab"cdefghijk`, 0, 2},            // a quote in the first word
		{`abcdefghij\k`, 0, 10},           // a backslash in the second
		{"\x1f\"\\\x80abcdefgh", 0, 0},    // every kind at once: the first wins
		{"aaaaaaa\x20aaaaaaa\x19", 0, 15}, // space is plain, 0x19 is not
		{"\x21\x21\x21\x21\x21\x21\x21\x21\x00", 0, 8},
		{"\xff\xff\xff\xff\xff\xff\xff\xff", 0, 0},
		{"a\x00\x00\x00\x00\x00\x00\x00", 0, 1}, // borrows above the first hit
		{"a\x21\x00\x22\x5c\x1f\xe0\x01", 0, 2},
		{long, 9, len(long)},
		{"xxxxxxxxxxxx\"", 5, 12},
	} {
		if got := PlainRun([]byte(c.text), c.from); got != c.want {
			t.Errorf("PlainRun(%q, %d) = %d, want %d", c.text, c.from, got, c.want)
		}
		if got := PlainRun(c.text, c.from); got != c.want {
			t.Errorf("PlainRun(string %q, %d) = %d, want %d", c.text, c.from, got, c.want)
		}
		if ref := plainRunBytes([]byte(c.text), c.from); ref != c.want {
			t.Errorf("the reference on (%q, %d) = %d, want %d: a wrong case", c.text, c.from, ref, c.want)
		}
	}
}

// TestPlainRunEveryByte puts each of the 256 byte values at each place
// of a 16-byte run of plain text.
func TestPlainRunEveryByte(t *testing.T) {
	for c := range 256 {
		for at := range 16 {
			b := []byte(strings.Repeat("m", 16))
			b[at] = byte(c)
			if got, want := PlainRun(b, 0), plainRunBytes(b, 0); got != want {
				t.Fatalf("PlainRun with byte %#x at %d = %d, want %d", c, at, got, want)
			}
		}
	}
}

// FuzzPlainRun holds PlainRun to the byte-at-a-time loop.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`), 2)
	f.Add([]byte("caf\u00e9 \x01 \"q\" \\"), 0)
	f.Fuzz(func(t *testing.T, b []byte, from int) {
		if from < 0 || from > len(b) {
			return
		}
		if got, want := PlainRun(b, from), plainRunBytes(b, from); got != want {
			t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, from, got, want)
		}
	})
}

func BenchmarkPlainRun(b *testing.B) {
	text := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100) + `"`)
	b.Run("words", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			PlainRun(text, 0)
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			plainRunBytes(text, 0)
		}
	})
}

func TestAppendQuote(t *testing.T) {
	for _, s := range []string{
		"", "echo", "hello, world", strings.Repeat("abcdefgh", 9),
		"caf\u00e9", "\u2028 and \u2029", "<a href=\"x\">&amp;</a>", "tab\there", "nul\x00",
		"back\\slash", "\x7f", "\xff invalid", "ok \xed\xa0\x80 surrogate", "\U0001F600 emoji",
		strings.Repeat("\u00e9", 20) + "\"",
	} {
		got, gerr := AppendQuote([]byte("x"), s)
		want, werr := jsontext.AppendQuote([]byte("x"), s)
		if string(got) != string(want) || (gerr == nil) != (werr == nil) {
			t.Errorf("AppendQuote(%q) = %q, %v; jsontext gives %q, %v", s, got, gerr, want, werr)
		}
	}
}

// FuzzAppendQuote holds AppendQuote to jsontext.AppendQuote.
func FuzzAppendQuote(f *testing.F) {
	f.Add("hello, world")
	f.Add("caf\u00e9 \u2028 \"q\" \\ \x01 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := AppendQuote(nil, s)
		want, werr := jsontext.AppendQuote(nil, s)
		if string(got) != string(want) || (gerr == nil) != (werr == nil) {
			t.Fatalf("AppendQuote(%q) = %q, %v; jsontext gives %q, %v", s, got, gerr, want, werr)
		}
	})
}

func BenchmarkAppendQuote(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"short", "hello, world"},
		{"text", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)},
	} {
		buf := make([]byte, 0, len(c.s)+2)
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf, _ = AppendQuote(buf[:0], c.s)
			}
		})
		b.Run(c.name+"/jsontext", func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf, _ = jsontext.AppendQuote(buf[:0], c.s)
			}
		})
	}
}
