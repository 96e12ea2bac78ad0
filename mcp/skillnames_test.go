package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// TestSkillNameChecks checks isSkillName and isRegName against the
// regular expressions they are written out from.
func TestSkillNameChecks(t *testing.T) {
	skillRE := regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
	regRE := regexp.MustCompile(`^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$`)
	for _, s := range []string{
		"", "a", "pdf-processing", "-a", "a-", "a--b", "A", "a_b", "a.b", "9", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"acme", "acme.example", "x%41y", "x%4", "%", "%zz", "a b", "a/b", "sub-delims!$&'()*+,;=", "ünï", "x%4g",
	} {
		if got, want := isSkillName(s), skillRE.MatchString(s) && !strings.Contains(s, "--"); got != want {
			t.Errorf("isSkillName(%q) = %v, want %v", s, got, want)
		}
		if got, want := isRegName(s), regRE.MatchString(s); got != want {
			t.Errorf("isRegName(%q) = %v, want %v", s, got, want)
		}
	}
}
