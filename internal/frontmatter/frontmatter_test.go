package frontmatter

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the frontmatter as JSON
		body string
	}{
		{"minimal", "---\nname: pdf\ndescription: Reads PDFs.\n---\nBody.\n", `{"name":"pdf","description":"Reads PDFs."}`, "Body.\n"},
		{"crlf and bom", "\uFEFF---\r\nname: a\r\n---\r\nx", `{"name":"a"}`, "x"},
		{"empty block", "---\n---\n", `{}`, ""},
		{"closed at end of file", "---\nname: a\n---", `{"name":"a"}`, ""},
		{"scalars", "---\nn: ~\nb: true\nf: False\ni: 42\nx: -1.5e3\nh: 0x1F\ns: hello world # comment\nv: 1.0\nq: \"1.0\"\n---\n",
			`{"n":null,"b":true,"f":false,"i":42,"x":-1500,"h":31,"s":"hello world","v":1,"q":"1.0"}`, ""},
		{"quoted", "---\nd: \"a \\\"b\\\" \\u00e9\\n\"\ns: 'it''s # not a comment'\n\"k: x\": 1\n---\n",
			`{"d":"a \"b\" é\n","s":"it's # not a comment","k: x":1}`, ""},
		{"plain continued", "---\ndescription: Extract text from PDFs. Use when\n  working with PDF files.\nname: a\n---\n",
			`{"description":"Extract text from PDFs. Use when working with PDF files.","name":"a"}`, ""},
		{"nested map", "---\nmetadata:\n  author: me\n  version: \"1.0\"\n  deep:\n    x: 1\nname: a\n---\n",
			`{"metadata":{"author":"me","version":"1.0","deep":{"x":1}},"name":"a"}`, ""},
		{"lists", "---\ntools:\n  - Read\n  - \"Bash(git:*)\"\nsame:\n- a\n- b\nflow: [a, 'b', 3]\nempty: []\nemap: {}\n---\n",
			`{"tools":["Read","Bash(git:*)"],"same":["a","b"],"flow":["a","b",3],"empty":[],"emap":{}}`, ""},
		{"list of maps", "---\nitems:\n  - name: a\n    size: 1\n  - name: b\n  -\n    name: c\n  - - x\n    - y\n---\n",
			`{"items":[{"name":"a","size":1},{"name":"b"},{"name":"c"},["x","y"]]}`, ""},
		{"literal", "---\nd: |\n  line one\n    indented\n\n  line three\nn: 1\n---\n",
			`{"d":"line one\n  indented\n\nline three\n","n":1}`, ""},
		{"literal strip keep", "---\na: |-\n  x\n\nb: |+\n  y\n\nc: 1\n---\n", `{"a":"x","b":"y\n\n","c":1}`, ""},
		{"folded", "---\nd: >\n  one\n  two\n\n  three\n    more\n  four\ne: >-\n  x\n  y\n---\n",
			`{"d":"one two\nthree\n  more\nfour\n","e":"x y"}`, ""},
		{"null value", "---\na:\nb: # nothing\n---\n", `{"a":null,"b":null}`, ""},
		{"comments and blank lines", "---\n# a comment\n\nname: a\n  # indented comment\n---\n", `{"name":"a"}`, ""},
		{"url value", "---\nhome: https://example.com/x\n---\n", `{"home":"https://example.com/x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, body, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got %s\nwant %s", g, tt.want)
			}
			if string(body) != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		is        error
	}{
		{"no frontmatter", "# Title\n", 0, ErrNoFrontmatter},
		{"unclosed", "---\nname: a\n", 0, ErrNoFrontmatter},
		{"anchor", "---\na: &x 1\n---\n", 2, nil},
		{"alias", "---\na: 1\nb: *x\n---\n", 3, nil},
		{"tag", "---\na: !!str 1\n---\n", 2, nil},
		{"complex key", "---\n? a\n: b\n---\n", 2, nil},
		{"duplicate", "---\na: 1\nb: 2\na: 3\n---\n", 4, nil},
		{"tab", "---\na:\n\tb: 1\n---\n", 3, nil},
		{"multi-line quoted", "---\na: \"one\n  two\"\n---\n", 2, nil},
		{"flow map", "---\na: {b: 1}\n---\n", 2, nil},
		{"nested flow", "---\na: [[1]]\n---\n", 2, nil},
		{"not a mapping", "---\n- a\n---\n", 2, nil},
		{"scalar top", "---\nhello\n---\n", 2, nil},
		{"bad indentation", "---\na: 1\n  b: 2\n---\n", 3, nil},
		{"colon in plain", "---\na: b: c\n---\n", 2, nil},
		{"inf", "---\na: .inf\n---\n", 2, nil},
		{"bad escape", "---\na: \"\\q\"\n---\n", 2, nil},
		{"text after quote", "---\na: \"x\" y\n---\n", 2, nil},
		{"invalid utf8", "---\na: \xff\n---\n", 2, nil},
		{"too large", "---\n" + strings.Repeat("a: 1\n", 20000) + "---\n", 0, ErrTooLarge},
		{"too deep", "---\n" + deep(MaxDepth+2) + "---\n", 0, ErrTooLarge},
		{"too deep on one line", "---\na:\n" + strings.Repeat("- ", 10000) + "x\n---\n", 0, ErrTooLarge},
		{"too deep in items", "---\na:\n" + deepItems(MaxDepth+2) + "---\n", 0, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tt.src))
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse = %v, want errors.Is %v", err, tt.is)
			}
			if tt.line != 0 && fe.Line != tt.line {
				t.Errorf("Parse = %v: line %d, want %d", err, fe.Line, tt.line)
			}
		})
	}
}

// deep returns a mapping nested n levels.
func deep(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "k: 1\n")
	return b.String()
}

// deepItems returns sequence items holding mappings, nested n levels.
func deepItems(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat("  ", i+1) + "- k:\n")
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nbody"))
	f.Add([]byte("---\nm:\n  - x: 1\n    y: [a, 'b']\n  - |\n    lit\n---\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, body, err := Parse(src)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if len(body) > len(src) {
			t.Fatalf("body longer than the file")
		}
		// What Parse returns is JSON, and reads back the same.
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("result is not JSON: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, m) && !strings.Contains(string(b), `\ufffd`) {
			t.Fatalf("result does not survive JSON: %s", b)
		}
	})
}
