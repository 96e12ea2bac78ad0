package frontmatter

import (
	"regexp"
	"testing"
)

// numberRE is the YAML 1.2 core schema's decimal number, which isNumber
// implements by hand.
var numberRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// TestIsNumber checks isNumber against the regular expression it
// replaces.
func TestIsNumber(t *testing.T) {
	for _, s := range []string{
		"", "0", "12", "-3", "+4", "1.", ".5", "-.5", "1.25", "1e5", "1E-5", "2.5e+3", ".5e1",
		".", "-", "+", "-.", "e5", "1e", "1e+", "1.2.3", "1x", "x1", " 1", "1 ", "0x10", "1_000", "--1", "1e5.0",
	} {
		if got, want := isNumber(s), numberRE.MatchString(s); got != want {
			t.Errorf("isNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzIsNumber compares isNumber with the regular expression on any input.
func FuzzIsNumber(f *testing.F) {
	for _, s := range []string{"1.5e3", "-.5", "1.", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isNumber(s), numberRE.MatchString(s); got != want {
			t.Errorf("isNumber(%q) = %v, want %v", s, got, want)
		}
	})
}
