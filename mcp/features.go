package mcp

import (
	"encoding/base64"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// features is a set of named items kept in name order, so pages are
// stable while items come and go. It is guarded by the Server's mutex.
type features[T any] struct {
	byName map[string]T
	names  []string // sorted
}

func (f *features[T]) len() int { return len(f.names) }

func (f *features[T]) get(name string) (T, bool) {
	v, ok := f.byName[name]
	return v, ok
}

// add inserts or replaces the item called name, and reports whether it
// replaced one.
func (f *features[T]) add(name string, v T) (replaced bool) {
	if f.byName == nil {
		f.byName = make(map[string]T)
	}
	if _, replaced = f.byName[name]; !replaced {
		i, _ := slices.BinarySearch(f.names, name)
		f.names = slices.Insert(f.names, i, name)
	}
	f.byName[name] = v
	return replaced
}

// remove deletes the named items and reports whether any existed. Many
// go in one pass over the items.
func (f *features[T]) remove(names ...string) bool {
	if len(names) <= 16 {
		removed := false
		for _, name := range names {
			if _, ok := f.byName[name]; !ok {
				continue
			}
			delete(f.byName, name)
			if i, found := slices.BinarySearch(f.names, name); found {
				f.names = slices.Delete(f.names, i, i+1)
			}
			removed = true
		}
		return removed
	}
	n := len(f.byName)
	for _, name := range names {
		delete(f.byName, name)
	}
	if len(f.byName) == n {
		return false
	}
	f.names = slices.DeleteFunc(f.names, func(name string) bool {
		_, ok := f.byName[name]
		return !ok
	})
	return true
}

// all returns the items in name order.
func (f *features[T]) all() []T {
	out := make([]T, len(f.names))
	for i, n := range f.names {
		out[i] = f.byName[n]
	}
	return out
}

// page returns up to size items after cursor, and the cursor of the next
// page ("" on the last page). Cursors are opaque to clients: the
// base64url encoding of the last name served.
func (f *features[T]) page(cursor string, size int) ([]T, string, error) {
	start := 0
	if cursor != "" {
		last, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: invalid cursor"}
		}
		start, _ = slices.BinarySearchFunc(f.names, string(last), func(a, b string) int {
			if c := strings.Compare(a, b); c != 0 {
				return c
			}
			return -1 // land after an equal name
		})
	}
	end := min(start+size, len(f.names))
	out := make([]T, 0, end-start)
	for _, n := range f.names[start:end] {
		out = append(out, f.byName[n])
	}
	next := ""
	if end < len(f.names) {
		next = base64.RawURLEncoding.EncodeToString([]byte(f.names[end-1]))
	}
	return out, next, nil
}
