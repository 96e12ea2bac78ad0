package authtest

import (
	"testing"
	"time"
)

func TestIDSet(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newIDSet(2)
	steps := []struct {
		id   string
		exp  time.Duration
		at   time.Duration
		want error
	}{
		{"a", time.Minute, 0, nil},
		{"a", time.Minute, 0, errSeen},
		{"b", 2 * time.Minute, 0, nil},
		{"c", time.Minute, 0, errFull},                     // full of live identifiers
		{"c", 3 * time.Minute, time.Minute, nil},           // "a" expired and is swept
		{"a", time.Minute, time.Minute, errFull},           // "b" and "c" are live
		{"b", 3 * time.Minute, 2 * time.Minute, nil},       // "b" expired: usable again
		{"d", 4 * time.Minute, 2*time.Minute + 1, errFull}, // "b" and "c" are live
		{"c", 4 * time.Minute, 2*time.Minute + 1, errSeen},
		{"c", 5 * time.Minute, 3*time.Minute + time.Second, nil}, // both expired
	}
	for i, st := range steps {
		if err := s.add(st.id, now.Add(st.exp), now.Add(st.at)); err != st.want {
			t.Errorf("step %d: add(%s) = %v, want %v", i, st.id, err, st.want)
		}
	}
	if !s.has("c", now.Add(4*time.Minute)) || s.has("c", now.Add(5*time.Minute)) || s.has("b", now) {
		t.Error("has ignores expiry")
	}
}
