package transport

import "github.com/mcpkit/mcpkit/jsonrpc"

// routeTable maps the ids of a session's requests in flight to the
// streams that answer them. Most sessions have one request in flight at a
// time, and an exchange of 2026-07-28 (a session of one POST) has exactly
// one: the first route is held inline, and the map is made only when a
// second is in flight beside it. Guarded by the session's mu.
type routeTable struct {
	id jsonrpc.ID
	st *httpStream // the inline route's stream; nil when there is none
	m  map[jsonrpc.ID]*httpStream
}

// get returns the stream answering id, or nil.
func (t *routeTable) get(id jsonrpc.ID) *httpStream {
	if t.st != nil && t.id == id {
		return t.st
	}
	return t.m[id] // a nil map holds nothing
}

// set routes id to st, replacing any route of id.
func (t *routeTable) set(id jsonrpc.ID, st *httpStream) {
	switch {
	case t.st != nil && t.id == id:
		t.st = st
	case t.st == nil && t.m[id] == nil:
		t.id, t.st = id, st
	default:
		if t.m == nil {
			t.m = make(map[jsonrpc.ID]*httpStream)
		}
		t.m[id] = st
	}
}

// remove forgets the route of id.
func (t *routeTable) remove(id jsonrpc.ID) {
	if t.st != nil && t.id == id {
		t.id, t.st = jsonrpc.ID{}, nil
		return
	}
	delete(t.m, id)
}

// len returns the number of routes.
func (t *routeTable) len() int {
	n := len(t.m)
	if t.st != nil {
		n++
	}
	return n
}

// removeStream forgets every route to st and returns their ids, in no
// particular order, appended to ids.
func (t *routeTable) removeStream(st *httpStream, ids []jsonrpc.ID) []jsonrpc.ID {
	if t.st == st {
		ids = append(ids, t.id)
		t.id, t.st = jsonrpc.ID{}, nil
	}
	for id, to := range t.m {
		if to == st {
			delete(t.m, id)
			ids = append(ids, id)
		}
	}
	return ids
}
