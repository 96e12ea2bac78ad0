package examples

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The documents whose Go blocks the tests below check, relative to this
// directory.
var documents = []string{"../README.md", "../docs/*.md"}

// goBlock is a Go code block of a Markdown document.
type goBlock struct {
	doc     string // the document's path
	example string // the Example it shows, "dir/ExampleName", or empty
	code    string // the block's text
}

// goBlockRE finds the Go blocks of a document, each with the marker
// naming the Example whose body the Go block after it is,
// as <!-- example: mcp/Example_tools -->: the directory of the package,
// from the repository's root, and the function's name.
var goBlockRE = regexp.MustCompile("(?s)(?:<!-- example: ([^ ]+) -->\n)?```go\n(.*?)```")

// goBlocks returns the Go blocks of the documents.
func goBlocks(t *testing.T) []goBlock {
	t.Helper()
	var blocks []goBlock
	for _, pattern := range documents {
		docs, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			text, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range goBlockRE.FindAllStringSubmatch(string(text), -1) {
				blocks = append(blocks, goBlock{doc: doc, example: m[1], code: m[2]})
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go code blocks")
	}
	return blocks
}

// TestREADMESnippetsCompile checks that every Go code block of README.md
// and docs/ that shows no Example appears in one of the programs under
// readme/, which the build compiles: a snippet that stops compiling, or is
// edited without its program, fails here. Comments and layout are ignored
// in the comparison.
func TestREADMESnippetsCompile(t *testing.T) {
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
	for _, b := range goBlocks(t) {
		if b.example != "" {
			continue // TestREADMEExamples
		}
		snippet := normalizeGo(b.code)
		found := false
		for _, p := range programs {
			if strings.Contains(p, snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: snippet is in no program under examples/readme (nor marked as an Example's body):\n%s", b.doc, b.code)
		}
	}
}

// TestREADMEExamples checks that each Go block marked as an Example's body
// (<!-- example: mcp/Example_tools --> on the line before it) is that body
// word for word, output comment included, so that a snippet that stops
// compiling or printing what it says fails, and that every example of the
// feature tour (mcp/example_tour_test.go) is shown in README.md.
func TestREADMEExamples(t *testing.T) {
	bodies := map[string]string{} // "dir/Name" -> body
	for _, dir := range []string{"mcp", "transport", "jsonrpc", "auth", "otelmcp"} {
		files, err := filepath.Glob(filepath.Join("..", dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			for name, body := range exampleBodies(t, f) {
				bodies[dir+"/"+name] = body
			}
		}
	}
	shown := map[string]bool{}
	for _, b := range goBlocks(t) {
		if b.example == "" {
			continue
		}
		want, ok := bodies[b.example]
		if !ok {
			t.Errorf("%s: a Go block shows %s, which does not exist", b.doc, b.example)
			continue
		}
		if b.doc == "../README.md" {
			shown[b.example] = true
		}
		if b.code != want {
			t.Errorf("%s: the Go block marked %s differs from the Example's body; make them the same.\nblock:\n%s\nbody:\n%s", b.doc, b.example, b.code, want)
		}
	}
	tour := exampleBodies(t, "../mcp/example_tour_test.go")
	if len(tour) == 0 {
		t.Fatal("mcp/example_tour_test.go has no examples")
	}
	for name := range tour {
		if !shown["mcp/"+name] {
			t.Errorf("README.md does not show the tour's %s (<!-- example: mcp/%s --> before a Go block)", name, name)
		}
	}
}

// exampleBodies returns the bodies of the Example functions of the Go file
// path, by name: the text between the braces, one tab of indentation
// removed, as a Go block of a document shows it.
func exampleBodies(t *testing.T, path string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		start := fset.Position(fn.Body.Lbrace).Offset + 1
		end := fset.Position(fn.Body.Rbrace).Offset
		lines := strings.Split(strings.Trim(string(src[start:end]), "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
		out[fn.Name.Name] = strings.Join(lines, "\n") + "\n"
	}
	return out
}

// TestREADMETestCommand checks that the command README.md gives for the
// full test suite is the one .ci/run runs.
func TestREADMETestCommand(t *testing.T) {
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for l := range strings.Lines(string(ci)) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "go test ") && strings.HasSuffix(l, " ./...") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) == 0 {
		t.Fatal(".ci/run runs no go test ./... command")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := cmds[len(cmds)-1] // the last: the full suite
	if !slices.Contains(strings.Split(string(readme), "\n"), want) {
		t.Errorf("README.md does not give .ci/run's test command %q on a line of its own", want)
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

// TestDocLinks checks that the relative links of README.md and docs/
// lead to files that exist and, with a #fragment, to a heading of the
// Markdown file they name, so that moving a section breaks a test rather
// than a reader's link.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, pattern := range documents {
		docs, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			text, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range link.FindAllStringSubmatch(withoutCode(string(text)), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, fragment, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.Join(filepath.Dir(doc), file)
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s: link %s: %v", doc, target, err)
						continue
					}
				}
				if fragment == "" {
					continue
				}
				md, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s: link %s: %v", doc, target, err)
					continue
				}
				if !slices.Contains(anchors(string(md)), fragment) {
					t.Errorf("%s: link %s: %s has no heading #%s", doc, target, path, fragment)
				}
			}
		}
	}
}

// withoutCode drops the code blocks of a Markdown text.
func withoutCode(md string) string {
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
}

// anchors returns the fragments GitHub gives the headings of a Markdown
// text: lower case, spaces to hyphens, punctuation but hyphens and
// underscores dropped.
func anchors(md string) []string {
	var out []string
	for l := range strings.Lines(withoutCode(md)) {
		h, ok := strings.CutPrefix(l, "#")
		if !ok {
			continue
		}
		h = strings.TrimSpace(strings.TrimLeft(h, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
