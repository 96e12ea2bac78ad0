// Package slotmap provides Map, a map for tables that usually hold one
// entry: the first is kept inline, and a Go map is made only when a second
// is added beside it. mcpkit keeps its tables of requests in flight in
// one (a connection's incoming requests, a Streamable HTTP session's
// routes), since a connection usually handles one request at a time and a
// 2026-07-28 exchange exactly one, where a Go map would cost two
// allocations per request.
package slotmap

// Map maps keys to values. The zero value is an empty map. It is not safe
// for concurrent use.
type Map[K comparable, V any] struct {
	full bool // the inline slot holds an entry
	k    K
	v    V
	m    map[K]V
}

// Get returns the value of k and whether there is one.
func (t *Map[K, V]) Get(k K) (V, bool) {
	if t.full && t.k == k {
		return t.v, true
	}
	v, ok := t.m[k] // a nil map holds nothing
	return v, ok
}

// Set sets the value of k.
func (t *Map[K, V]) Set(k K, v V) {
	if t.full && t.k == k {
		t.v = v
		return
	}
	if _, inMap := t.m[k]; !t.full && !inMap {
		t.full, t.k, t.v = true, k, v
		return
	}
	if t.m == nil {
		t.m = make(map[K]V)
	}
	t.m[k] = v
}

// Delete removes the entry of k, if any.
func (t *Map[K, V]) Delete(k K) {
	if t.full && t.k == k {
		var zk K
		var zv V
		t.full, t.k, t.v = false, zk, zv
		return
	}
	delete(t.m, k)
}

// Len returns the number of entries.
func (t *Map[K, V]) Len() int {
	n := len(t.m)
	if t.full {
		n++
	}
	return n
}

// DeleteFunc removes every entry for which del returns true, calling it
// once for each entry, in no particular order.
func (t *Map[K, V]) DeleteFunc(del func(K, V) bool) {
	if t.full && del(t.k, t.v) {
		t.Delete(t.k)
	}
	for k, v := range t.m {
		if del(k, v) {
			delete(t.m, k)
		}
	}
}
