package jsonscan

import "testing"

func TestScanners(t *testing.T) {
	tests := []struct {
		in                  string
		at                  int
		stringEnd, valueEnd int
	}{
		{`"abc",`, 0, 5, 5},
		{`"a\"b"x`, 0, 6, 6},
		{`"a\\"x`, 0, 5, 5},
		{`"a\\\"b"`, 0, 8, 8},
		{`"open`, 0, -1, -1},
		{`{"a":[1,"]"]} ,`, 0, -1, 13},
		{`[1,[2,{}]]`, 0, -1, 10},
		{`true,`, 0, -1, 4},
		{`-1.5e3}`, 0, -1, 6},
		{`12`, 0, -1, 2},
		{`{"a":`, 0, -1, -1},
		// Escapes near the quotes and far from them.
		{`"0123456789abcde"`, 0, 17, 17},
		{`"0123456789abcdef"`, 0, 18, 18},
		{`"0123456789abcdefg"x`, 0, 19, 19},
		{`"0123456789abcdefghijklmnop"`, 0, 28, 28},
		{`"0123456789abcd\\"x`, 0, 18, 18},
		{`"0123456789abcd\"x`, 0, -1, -1},
		{`"0123456789abcde\"x"`, 0, 20, 20},
		{`"0123456789abcdef\"x"`, 0, 21, 21},
		{`"0123456789abcdefghijk\\"x`, 0, 25, 25},
		{`"\\"`, 0, 4, 4},
		{`"\"`, 0, -1, -1},
		{`"0123456789abcdefghij`, 0, -1, -1},
		{`x"ab"`, 1, 5, 5},
	}
	for _, tt := range tests {
		if tt.in[tt.at] == '"' {
			if got := StringEnd([]byte(tt.in), tt.at); got != tt.stringEnd {
				t.Errorf("StringEnd(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.stringEnd)
			}
		}
		if got := ValueEnd([]byte(tt.in), tt.at); got != tt.valueEnd {
			t.Errorf("ValueEnd(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.valueEnd)
		}
	}
	for _, tt := range []struct {
		in   string
		at   int
		want int
	}{
		{" \t\r\n x", 0, 5},
		{"x", 0, 0},
		{"", 0, 0},
		{"  ", 0, 2},
		{"a  ", 1, 3},
		// Bytes under the space that JSON does not count as space.
		{" \x00", 0, 1},
		{"\v", 0, 0},
		{"\f ", 0, 0},
		{"\t\x1f", 0, 1},
		{"\x7f", 0, 0},
	} {
		if got := SkipSpace([]byte(tt.in), tt.at); got != tt.want {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.want)
		}
	}
}

// FuzzStringEnd holds StringEnd, which goes from quote to quote and
// counts the backslashes before each, to a plain reading of the string a
// byte at a time, on any input.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"0123456789abcdef\"x"`, `"0123456789abcde\\"`, `"open`, `"\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		want := -1
		for j := 1; j < len(b); j++ {
			if b[j] == '\\' {
				j++
			} else if b[j] == '"' {
				want = j + 1
				break
			}
		}
		if got := StringEnd(b, 0); got != want {
			t.Fatalf("StringEnd(%q, 0) = %d, want %d", b, got, want)
		}
	})
}
