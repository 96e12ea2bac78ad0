package mcptest_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestCheckGoroutines: the goroutines f starts, and those they start, are
// checked at the end of the test, after the cleanups registered later;
// other goroutines of the test binary are not.
func TestCheckGoroutines(t *testing.T) {
	tests := []struct {
		name string
		run  func(t testing.TB, wait time.Duration, release <-chan struct{})
		fail bool
	}{{
		name: "ended",
		run: func(t testing.TB, wait time.Duration, _ <-chan struct{}) {
			mcptest.CheckGoroutinesWait(t, wait, "", func(context.Context) {
				done := make(chan struct{})
				go close(done)
				<-done
			})
		},
	}, {
		name: "still running",
		run: func(t testing.TB, wait time.Duration, release <-chan struct{}) {
			mcptest.CheckGoroutinesWait(t, wait, "", func(context.Context) {
				go lingerUntil(release)
			})
		},
		fail: true,
	}, {
		name: "started by a goroutine f started",
		run: func(t testing.TB, wait time.Duration, release <-chan struct{}) {
			mcptest.CheckGoroutinesWait(t, wait, "", func(context.Context) {
				started := make(chan struct{})
				go func() {
					go lingerUntil(release)
					close(started)
				}()
				<-started
			})
		},
		fail: true,
	}, {
		name: "started outside f",
		run: func(t testing.TB, wait time.Duration, release <-chan struct{}) {
			mcptest.CheckGoroutinesWait(t, wait, "", func(context.Context) {})
			go lingerUntil(release)
		},
	}, {
		name: "ended by a later cleanup",
		run: func(t testing.TB, wait time.Duration, _ <-chan struct{}) {
			stop := make(chan struct{})
			mcptest.CheckGoroutinesWait(t, wait, "", func(context.Context) {
				go lingerUntil(stop)
			})
			t.Cleanup(func() { close(stop) })
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			ft := newFakeT(t)
			ft.run(func() { tc.run(ft, waitFor(tc.fail), release) })
			failures := ft.finish()
			if !tc.fail {
				wantFailure(t, failures, "")
				return
			}
			wantFailure(t, failures, "mcptest_test.lingerUntil")
		})
	}
}

// waitFor returns how long a test waits for goroutines to end: not long
// when it expects one to be left running (that one never ends before the
// test releases it), as long as mcptest does when it expects none.
func waitFor(leak bool) time.Duration {
	if leak {
		return 50 * time.Millisecond
	}
	return 5 * time.Second
}
