package transport

import (
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestRouteTable drives a routeTable and a plain map with the same
// operations, in orders that move routes between the inline slot and the
// map, and checks that they agree after each step.
func TestRouteTable(t *testing.T) {
	a, b := &httpStream{}, &httpStream{}
	id := func(n int64) jsonrpc.ID { return jsonrpc.Int64ID(n) }
	type op struct {
		kind string // set, remove, removeStream
		id   int64
		st   *httpStream
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"one route", []op{{"set", 1, a}, {"remove", 1, nil}}},
		{"two routes, first removed first", []op{{"set", 1, a}, {"set", 2, a}, {"remove", 1, nil}, {"set", 3, b}, {"remove", 2, nil}, {"remove", 3, nil}}},
		{"second removed first", []op{{"set", 1, a}, {"set", 2, b}, {"remove", 2, nil}, {"set", 2, b}, {"remove", 1, nil}}},
		{"an id in the map while the slot is free", []op{{"set", 1, a}, {"set", 2, b}, {"remove", 1, nil}, {"set", 2, a}, {"set", 1, b}}},
		{"replace in the slot", []op{{"set", 1, a}, {"set", 1, b}}},
		{"removeStream", []op{{"set", 1, a}, {"set", 2, b}, {"set", 3, a}, {"removeStream", 0, a}, {"set", 4, a}, {"removeStream", 0, b}}},
		{"remove unknown", []op{{"remove", 9, nil}, {"set", 1, a}, {"remove", 9, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rt routeTable
			ref := map[jsonrpc.ID]*httpStream{}
			for i, o := range tt.ops {
				switch o.kind {
				case "set":
					rt.set(id(o.id), o.st)
					ref[id(o.id)] = o.st
				case "remove":
					rt.remove(id(o.id))
					delete(ref, id(o.id))
				case "removeStream":
					got := rt.removeStream(o.st, nil)
					var want []jsonrpc.ID
					for k, v := range ref {
						if v == o.st {
							want = append(want, k)
							delete(ref, k)
						}
					}
					cmp := func(x, y jsonrpc.ID) int {
						m, _ := x.Int64()
						n, _ := y.Int64()
						return int(m - n)
					}
					slices.SortFunc(got, cmp)
					slices.SortFunc(want, cmp)
					if !slices.Equal(got, want) {
						t.Fatalf("op %d: removeStream = %v, want %v", i, got, want)
					}
				}
				if rt.len() != len(ref) {
					t.Fatalf("op %d: len %d, want %d", i, rt.len(), len(ref))
				}
				for n := int64(0); n < 10; n++ {
					if got, want := rt.get(id(n)), ref[id(n)]; got != want {
						t.Fatalf("op %d: get(%d) = %p, want %p", i, n, got, want)
					}
				}
			}
		})
	}
}
