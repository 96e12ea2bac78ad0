package mcp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMemoryStateClaimer checks the in-memory claimer: a state is claimed
// once; a claim is held until its end and then dropped; at the bound a
// claim is refused with ErrStateClaimsFull and none held is dropped to
// make room; bad IDs are refused.
func TestMemoryStateClaimer(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := NewMemoryStateClaimer(&MemoryStateClaimerOptions{MaxClaims: 3, Now: func() time.Time { return now }})
	ctx := t.Context()
	type step struct {
		advance time.Duration // the clock moves first
		id      string
		until   time.Duration // from the clock
		ok      bool
		err     error // checked with errors.Is; errAny for any error
		held    int   // claims held after
	}
	errAny := errors.New("any error")
	steps := []step{
		{0, "a", time.Minute, true, nil, 1},
		{0, "a", time.Minute, false, nil, 1},
		{0, "b", 2 * time.Minute, true, nil, 2},
		{0, "c", 3 * time.Minute, true, nil, 3},
		{0, "d", time.Minute, false, ErrStateClaimsFull, 3}, // full: refused, none dropped
		{0, "a", time.Minute, false, nil, 3},                // still claimed
		{time.Minute, "d", time.Minute, true, nil, 3},       // a ended: room for d
		{0, "a", time.Minute, false, ErrStateClaimsFull, 3}, // a was dropped, but b, c, d fill it
		{0, "e", time.Minute, false, ErrStateClaimsFull, 3},
		{10 * time.Minute, "e", -time.Second, true, nil, 0}, // all ended; an ended state's claim is not held
		{0, "", time.Minute, false, errAny, 0},
		{0, strings.Repeat("x", maxStateIDBytes+1), time.Minute, false, errAny, 0},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		ok, err := c.Claim(ctx, s.id, now.Add(s.until))
		switch {
		case s.err == errAny && err == nil, s.err != errAny && !errors.Is(err, s.err):
			t.Fatalf("step %d (%q): error %v, want %v", i, s.id, err, s.err)
		case ok != s.ok:
			t.Fatalf("step %d (%q): claimed %v, want %v", i, s.id, ok, s.ok)
		case c.Len() != s.held:
			t.Fatalf("step %d (%q): %d claims held, want %d", i, s.id, c.Len(), s.held)
		}
	}
}

// TestMemoryStateClaimerConcurrent claims one ID from many goroutines:
// exactly one wins.
func TestMemoryStateClaimerConcurrent(t *testing.T) {
	c := NewMemoryStateClaimer(nil)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range 50 {
		wg.Go(func() {
			ok, err := c.Claim(t.Context(), "state-1", time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d claims won, want 1", wins)
	}
}

// BenchmarkMemoryStateClaimer measures a claim of a fresh ID in a claimer
// that holds many, each ending in turn.
func BenchmarkMemoryStateClaimer(b *testing.B) {
	now := time.Unix(1_000_000, 0)
	c := NewMemoryStateClaimer(&MemoryStateClaimerOptions{Now: func() time.Time { return now }})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		now = now.Add(time.Millisecond)
		if ok, err := c.Claim(b.Context(), fmt.Sprint(i), now.Add(time.Minute)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
