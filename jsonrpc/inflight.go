package jsonrpc

// inflight is a Conn's table of the incoming requests being handled. A
// connection usually handles one request at a time (a connection per
// exchange, as Streamable HTTP of 2026-07-28 makes, handles exactly one),
// so the first is held inline and the map is made only when a second
// runs beside it. Guarded by the Conn's mu.
type inflight struct {
	id ID
	in *incomingRequest // the inline entry; nil when there is none
	m  map[ID]*incomingRequest
}

// get returns the request with id, or nil.
func (t *inflight) get(id ID) *incomingRequest {
	if t.in != nil && t.id == id {
		return t.in
	}
	return t.m[id] // a nil map holds nothing
}

// add records in under id, which no entry has.
func (t *inflight) add(id ID, in *incomingRequest) {
	if t.in == nil && t.m[id] == nil {
		t.id, t.in = id, in
		return
	}
	if t.m == nil {
		t.m = make(map[ID]*incomingRequest)
	}
	t.m[id] = in
}

// remove forgets the entry of id.
func (t *inflight) remove(id ID) {
	if t.in != nil && t.id == id {
		t.id, t.in = ID{}, nil
		return
	}
	delete(t.m, id)
}

// len returns the number of entries.
func (t *inflight) len() int {
	n := len(t.m)
	if t.in != nil {
		n++
	}
	return n
}

// each calls f for every entry.
func (t *inflight) each(f func(*incomingRequest)) {
	if t.in != nil {
		f(t.in)
	}
	for _, in := range t.m {
		f(in)
	}
}
