package mcptest

import (
	"testing"
	"time"
)

// TestClock: a Clock starts at a fixed instant and moves only by Advance.
func TestClock(t *testing.T) {
	var c Clock
	start := c.Now()
	if !start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !c.Now().Equal(start) {
		t.Fatalf("a new Clock reads %v, then %v", start, c.Now())
	}
	for _, d := range []time.Duration{time.Nanosecond, time.Hour, 0} {
		before := c.Now()
		c.Advance(d)
		if got := c.Now(); got.Sub(before) != d {
			t.Fatalf("Advance(%v) moved the clock by %v", d, got.Sub(before))
		}
	}
}
