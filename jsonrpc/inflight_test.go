package jsonrpc

import "testing"

// TestInflight drives an inflight table and a plain map with the same
// operations, in orders that move entries between the inline slot and
// the map, and checks that they agree after each step.
func TestInflight(t *testing.T) {
	type op struct {
		add bool // else remove
		id  int64
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"one", []op{{true, 1}, {false, 1}}},
		{"two, first removed first", []op{{true, 1}, {true, 2}, {false, 1}, {true, 3}, {false, 2}, {false, 3}}},
		{"two, second removed first", []op{{true, 1}, {true, 2}, {false, 2}, {true, 2}, {false, 1}, {false, 2}}},
		{"slot free, map in use", []op{{true, 1}, {true, 2}, {false, 1}, {true, 1}, {false, 2}}},
		{"remove unknown", []op{{false, 9}, {true, 1}, {false, 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tab inflight
			ref := map[ID]*incomingRequest{}
			for i, o := range tt.ops {
				id := Int64ID(o.id)
				if o.add {
					in := &incomingRequest{}
					tab.add(id, in)
					ref[id] = in
				} else {
					tab.remove(id)
					delete(ref, id)
				}
				if tab.len() != len(ref) {
					t.Fatalf("op %d: len %d, want %d", i, tab.len(), len(ref))
				}
				seen := 0
				tab.each(func(in *incomingRequest) {
					seen++
					found := false
					for _, r := range ref {
						found = found || r == in
					}
					if !found {
						t.Fatalf("op %d: each visits an entry that was removed", i)
					}
				})
				if seen != len(ref) {
					t.Fatalf("op %d: each visits %d, want %d", i, seen, len(ref))
				}
				for n := int64(0); n < 10; n++ {
					if got, want := tab.get(Int64ID(n)), ref[Int64ID(n)]; got != want {
						t.Fatalf("op %d: get(%d) = %p, want %p", i, n, got, want)
					}
				}
			}
		})
	}
}
