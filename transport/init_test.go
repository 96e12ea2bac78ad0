package transport

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestPackageInitAllocatesNothing checks that initialising the package
// does no work a process would pay for at start, before it could answer
// its first request (issue 20, cold start): with GODEBUG=inittrace=1, the
// runtime reports every package initialiser that runs, with its
// allocations; this package's must allocate nothing. The test binary runs
// again, with no test, to have its initialisation traced.
func TestPackageInitAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation adds to the package's initialisation")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init github\.com/mcpkit/mcpkit/transport @.*, (\d+) bytes, (\d+) allocs$`).FindSubmatch(out)
	if line != nil && (string(line[1]) != "0" || string(line[2]) != "0") {
		t.Errorf("the package's initialisation allocates: %s", line[0])
	}
}
