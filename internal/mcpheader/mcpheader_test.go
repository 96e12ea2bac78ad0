package mcpheader

import (
	"encoding/base64"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"echo", "echo", true},
		{"with space\tand tab", "with space\tand tab", true},
		{"", "", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64??=", "", true},
		{"=?base64?SGVsbG8?=", "", false},     // padding missing
		{"=?base64?SGVs!!!bG8=?=", "", false}, // not the alphabet
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"SGVsbG8=?=", "SGVsbG8=?=", true},
		{"caf\xc3\xa9", "", false}, // not visible ASCII
		{"line\nbreak", "", false},
		{"\x7f", "", false},
	}
	for _, tt := range tests {
		got, ok := Decode(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzDecode checks that Decode never panics, that what it accepts
// without Base64 is the value itself, and that a Base64 form of any value
// decodes to that value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"echo", "=?base64?SGVsbG8=?=", "=?base64?", "?=", "\x00", "caf\xc3\xa9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, ok := Decode(v); ok && got != v && len(v) < len("=?base64??=") {
			t.Fatalf("Decode(%q) = %q", v, got)
		}
		enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
		if got, ok := Decode(enc); !ok || got != v {
			t.Fatalf("Decode(%q) = %q, %v; want %q", enc, got, ok, v)
		}
	})
}

// TestEncode checks that Encode leaves plain values as they are, encodes the
// others, and that Decode gives back every value Encode wrote.
func TestEncode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"echo", "echo"},
		{"get weather", "get weather"},
		{"", ""},
		{" lead", "=?base64?IGxlYWQ=?="},
		{"café", "=?base64?Y2Fmw6k=?="},
		{"=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="},
		{"line\nbreak", "=?base64?bGluZQpicmVhaw==?="},
	} {
		got := Encode(tc.in)
		if got != tc.want {
			t.Errorf("Encode(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, ok := Decode(got); !ok || back != tc.in {
			t.Errorf("Decode(Encode(%q)) = %q, %v", tc.in, back, ok)
		}
	}
}
