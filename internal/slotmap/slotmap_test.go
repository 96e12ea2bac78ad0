package slotmap

import (
	"maps"
	"testing"
)

// TestMap drives a Map and a plain map with the same operations, in
// orders that move entries between the inline slot and the map, and
// checks that they agree after each step: Get for every key, Len, and
// which entries DeleteFunc visits and removes.
func TestMap(t *testing.T) {
	type op struct {
		kind string // set, delete, deleteValue (DeleteFunc removing value v)
		k    int
		v    string
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"one", []op{{"set", 1, "a"}, {"delete", 1, ""}}},
		{"two, first deleted first", []op{{"set", 1, "a"}, {"set", 2, "a"}, {"delete", 1, ""}, {"set", 3, "b"}, {"delete", 2, ""}, {"delete", 3, ""}}},
		{"two, second deleted first", []op{{"set", 1, "a"}, {"set", 2, "b"}, {"delete", 2, ""}, {"set", 2, "b"}, {"delete", 1, ""}, {"delete", 2, ""}}},
		{"a key in the map while the slot is free", []op{{"set", 1, "a"}, {"set", 2, "b"}, {"delete", 1, ""}, {"set", 2, "a"}, {"set", 1, "b"}}},
		{"replace in the slot", []op{{"set", 1, "a"}, {"set", 1, "b"}}},
		{"zero value stored", []op{{"set", 1, ""}, {"set", 2, "x"}, {"delete", 1, ""}}},
		{"DeleteFunc", []op{{"set", 1, "a"}, {"set", 2, "b"}, {"set", 3, "a"}, {"deleteValue", 0, "a"}, {"set", 4, "a"}, {"deleteValue", 0, "b"}, {"deleteValue", 0, "a"}}},
		{"delete unknown", []op{{"delete", 9, ""}, {"set", 1, "a"}, {"delete", 9, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Map[int, string]
			ref := map[int]string{}
			for i, o := range tt.ops {
				switch o.kind {
				case "set":
					m.Set(o.k, o.v)
					ref[o.k] = o.v
				case "delete":
					m.Delete(o.k)
					delete(ref, o.k)
				case "deleteValue":
					visited := map[int]string{}
					m.DeleteFunc(func(k int, v string) bool {
						if _, dup := visited[k]; dup {
							t.Fatalf("op %d: DeleteFunc visits %d twice", i, k)
						}
						visited[k] = v
						return v == o.v
					})
					if !maps.Equal(visited, ref) {
						t.Fatalf("op %d: DeleteFunc visits %v, want %v", i, visited, ref)
					}
					maps.DeleteFunc(ref, func(_ int, v string) bool { return v == o.v })
				}
				if m.Len() != len(ref) {
					t.Fatalf("op %d: Len %d, want %d", i, m.Len(), len(ref))
				}
				for k := 0; k < 10; k++ {
					got, ok := m.Get(k)
					want, wantOK := ref[k]
					if got != want || ok != wantOK {
						t.Fatalf("op %d: Get(%d) = %q, %v; want %q, %v", i, k, got, ok, want, wantOK)
					}
				}
			}
		})
	}
}
