package mcptest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update is the flag that rewrites golden files; see CompareGolden. Its
// name has the package's prefix so that it cannot clash with a flag of
// the test binary's own.
var update = flag.Bool("mcptest.update", false, "rewrite the golden files that mcptest compares transcripts with")

// updateEnv is the environment variable that rewrites golden files, for
// go test ./... over packages some of which do not import mcptest (and
// so would refuse the flag).
const updateEnv = "MCPTEST_UPDATE"

// updating reports whether golden files are to be rewritten: by the flag
// -mcptest.update, by a boolean flag -update that the test binary defines
// itself (the usual name for it), or by MCPTEST_UPDATE=1 in the
// environment.
func updating() bool {
	if *update {
		return true
	}
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if b, ok := g.Get().(bool); ok && b {
				return true
			}
		}
	}
	b, _ := strconv.ParseBool(os.Getenv(updateEnv))
	return b
}

// CompareGolden compares the transcript's text (see [Transcript.Text])
// with the golden file at path, conventionally under testdata, and fails
// t with the lines that differ. When golden files are being updated it
// writes the file instead (creating its directory): run
//
//	go test -run TestName -mcptest.update
//
// and review the change. The flag is prefixed so as not to clash with a
// flag of the test's own: a test binary that defines a boolean -update
// flag (as many do for their golden files) rewrites transcripts with it
// too. Over several packages, some of which do not import mcptest and
// would refuse the flag, set the environment variable instead:
//
//	MCPTEST_UPDATE=1 go test ./...
func (tr *Transcript) CompareGolden(t testing.TB, path string) {
	t.Helper()
	compareGolden(t, path, tr.Text())
}

// compareGolden compares got with the file at path, or writes it there.
func compareGolden(t testing.TB, path, got string) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("mcptest: %v", err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("mcptest: %v", err)
		}
		t.Logf("mcptest: wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("mcptest: golden file %s does not exist; run the test with -mcptest.update to write it", path)
	}
	if err != nil {
		t.Fatalf("mcptest: %v", err)
	}
	if string(want) == got {
		return
	}
	t.Errorf("mcptest: the transcript differs from %s (-want +got; run the test with -mcptest.update to accept it):\n%s", path, diff(string(want), got))
}

// diff returns the lines that differ between want and got, as "-" and "+"
// lines with up to two lines of context, each hunk headed by its line
// numbers in want and got. Inputs too large for the quadratic method
// are compared from their first difference on.
func diff(want, got string) string {
	a, b := lines(want), lines(got)
	// Common prefix and suffix first: a transcript usually changes in one
	// place.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	type op struct {
		kind byte // ' ', '-', '+'
		line string
	}
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	if len(ma)*len(mb) > 4<<20 {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	} else {
		// Longest common subsequence, by dynamic programming from the end.
		w := len(mb) + 1
		lcs := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				ops = append(ops, op{'-', ma[i]})
				i++
			default:
				ops = append(ops, op{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}

	// Print the changes with their context.
	const context = 2
	var out strings.Builder
	la, lb := 1, 1 // line numbers of ops[k] in want and got
	last := -2     // the last op printed
	for k, o := range ops {
		near := false
		for d := -context; d <= context; d++ {
			if k+d >= 0 && k+d < len(ops) && ops[k+d].kind != ' ' {
				near = true
				break
			}
		}
		if near {
			if last != k-1 {
				fmt.Fprintf(&out, "@@ want line %d, got line %d\n", la, lb)
			}
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			out.WriteByte('\n')
			last = k
		}
		if o.kind != '+' {
			la++
		}
		if o.kind != '-' {
			lb++
		}
	}
	return out.String()
}

// lines splits s into lines, without their "\n".
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
