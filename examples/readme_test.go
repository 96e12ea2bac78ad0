package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMESnippetsCompile checks that every Go code block of README.md
// appears in one of the programs under readme/, which the build compiles:
// a README snippet that stops compiling, or is edited without its
// program, fails here. Comments and layout are ignored in the comparison.
func TestREADMESnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("readme/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var programs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		programs = append(programs, normalizeGo(string(b)))
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go code blocks")
	}
	for _, b := range blocks {
		snippet := normalizeGo(b[1])
		found := false
		for _, p := range programs {
			if strings.Contains(p, snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md snippet is in no program under examples/readme:\n%s", b[1])
		}
	}
}

var (
	lineComment = regexp.MustCompile(`(?m)(^|\s)//.*$`)
	space       = regexp.MustCompile(`\s+`)
)

// normalizeGo drops comments and all white space from Go source.
func normalizeGo(src string) string {
	return space.ReplaceAllString(lineComment.ReplaceAllString(src, ""), "")
}
