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
	if got := SkipSpace([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("SkipSpace = %d, want 5", got)
	}
}
