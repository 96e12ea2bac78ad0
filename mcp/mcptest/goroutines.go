package mcptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// labelKey is the profiler label that marks the goroutines
// CheckGoroutines tracks.
const labelKey = "mcptest.goroutines"

// leakWait bounds how long CheckGoroutines waits at the end of a test for
// the goroutines it tracks to return.
const leakWait = 5 * time.Second

// CheckGoroutines runs f and fails t if a goroutine that f started, or
// that one of those started in turn, is still running at the end of the
// test, once the cleanups registered after this call have run. It waits
// up to 5 seconds for them to return, then reports each with its stack.
// [Connect] calls it around the connection of the client and the server,
// so that every goroutine of either session is checked.
//
// Goroutines are told apart by a profiler label (see [runtime/pprof.Do])
// that f's goroutine carries while it runs and that the goroutines it
// starts inherit, so the other goroutines of the test binary, those of
// parallel tests included, are never counted. A goroutine is not tracked
// if code replaces its labels (pprof.Do or pprof.SetGoroutineLabels with
// a context that does not descend from the one f gets), nor if it is
// started by a runtime timer (time.AfterFunc) rather than a tracked
// goroutine. f receives a context that carries the label, for code that
// starts goroutines from contexts.
func CheckGoroutines(t testing.TB, f func(ctx context.Context)) {
	t.Helper()
	checkGoroutines(t, leakWait, "", f)
}

// checkGoroutines is CheckGoroutines waiting up to wait, with a hint
// added to the failure.
func checkGoroutines(t testing.TB, wait time.Duration, hint string, f func(ctx context.Context)) {
	t.Helper()
	id := rand.Text()
	t.Cleanup(func() {
		t.Helper()
		if stacks := waitGoroutines(id, wait); stacks != "" {
			t.Errorf("mcptest: goroutines still running at the end of the test%s:\n%s", hint, stacks)
		}
	})
	pprof.Do(context.Background(), pprof.Labels(labelKey, id), f)
}

// waitGoroutines waits up to wait for the goroutines labelled id to end
// and returns the goroutine profile's records of those left, or "". It
// polls the profile, more slowly as time passes. A profile with none of
// them is taken again before it is believed: under load, a profile was
// seen to miss a goroutine that the next one, taken at once, listed.
func waitGoroutines(id string, wait time.Duration) string {
	deadline := time.Now().Add(wait)
	pause := 100 * time.Microsecond
	for {
		stacks := labelledGoroutines(id)
		if stacks == "" {
			stacks = labelledGoroutines(id)
		}
		if stacks == "" || time.Now().After(deadline) {
			return stacks
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// labelledGoroutines returns the records of the goroutine profile (in its
// text form, debug=1) whose labels mark them as tracked under id, or "".
// A record is a group of goroutines with one stack and one label set:
// its first line counts them, "# labels: {...}" follows, then the frames.
func labelledGoroutines(id string) string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return "" // cannot happen for the goroutine profile written to a buffer
	}
	mark := []byte(strconv.Quote(labelKey) + ":" + strconv.Quote(id))
	var out bytes.Buffer
	for record := range bytes.SplitSeq(buf.Bytes(), []byte("\n\n")) {
		_, rest, _ := bytes.Cut(record, []byte("\n"))
		if bytes.HasPrefix(rest, []byte("# labels: ")) {
			labels, _, _ := bytes.Cut(rest, []byte("\n"))
			if bytes.Contains(labels, mark) {
				out.Write(bytes.TrimSpace(record))
				out.WriteString("\n\n")
			}
		}
	}
	return out.String()
}
