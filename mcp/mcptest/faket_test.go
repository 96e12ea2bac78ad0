package mcptest_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeT is a testing.TB whose failures are recorded instead of failing
// the test, and whose cleanups run when the test calls finish: the tests
// of what mcptest reports use it.
type fakeT struct {
	testing.TB // the real test, for what fakeT does not override

	mu       sync.Mutex
	failures []string
	cleanups []func()
}

// newFakeT returns a fakeT over t.
func newFakeT(t *testing.T) *fakeT { return &fakeT{TB: t} }

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

func (f *fakeT) Error(args ...any) { f.Errorf("%s", fmt.Sprint(args...)) }

// Fatalf records the failure and ends the goroutine, as testing.T does;
// run code that may call it with run.
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

func (f *fakeT) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fakeT) Logf(string, ...any) {}

func (f *fakeT) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// run calls fn on a goroutine of its own, as a test body, and reports
// whether it returned (rather than ended with Fatal).
func (f *fakeT) run(fn func()) bool {
	done := make(chan bool)
	go func() {
		returned := false
		defer func() { done <- returned }()
		fn()
		returned = true
	}()
	return <-done
}

// finish runs the cleanups, last first, and returns the failures.
func (f *fakeT) finish() []string {
	f.mu.Lock()
	cleanups := slices.Clone(f.cleanups)
	f.cleanups = nil
	f.mu.Unlock()
	for _, fn := range slices.Backward(cleanups) {
		f.run(fn)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.failures)
}

// wantFailure fails t unless exactly one of failures contains want, or,
// for want "", unless there are none.
func wantFailure(t *testing.T, failures []string, want string) {
	t.Helper()
	if want == "" {
		if len(failures) > 0 {
			t.Errorf("failures:\n%s\nwant none", strings.Join(failures, "\n"))
		}
		return
	}
	n := 0
	for _, f := range failures {
		if strings.Contains(f, want) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("failures:\n%s\nwant one containing %q", strings.Join(failures, "\n"), want)
	}
}
