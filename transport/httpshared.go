//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// pushEnd is what the server-side HTTP connections share: they push the
// messages that arrive on HTTP requests to their jsonrpc.Conn (see
// [jsonrpc.PushStream]) instead of having it wait in Read.
type pushEnd struct {
	done chan struct{} // closed when the connection closes

	recvMu  sync.Mutex // serialises receive calls
	receive func(jsonrpc.Message)
	end     func(error)
}

func newPushEnd() pushEnd { return pushEnd{done: make(chan struct{})} }

// BindContext implements the jsonrpc connection's context binding (an
// unexported interface of package jsonrpc) for the server-side HTTP
// connections: a request that carries an [*HTTPRequestInfo] in its Extra
// gets it in its handler's context (see [HTTPRequestInfo.bind]).
func (p *pushEnd) BindContext(ctx context.Context, cancel context.CancelCauseFunc, req *jsonrpc.Request) context.Context {
	if i, ok := req.Extra.(*HTTPRequestInfo); ok {
		return i.bind(ctx, cancel)
	}
	return ctx
}

// ReleaseContext implements the other half of the jsonrpc connection's
// context binding: the handler whose context BindContext returned has
// returned.
func (p *pushEnd) ReleaseContext(bound context.Context) {
	if c, ok := bound.(*infoContext); ok && c.cancel != nil {
		c.release()
	}
}

// Push implements [jsonrpc.PushStream].
func (p *pushEnd) Push(receive func(jsonrpc.Message), end func(error)) {
	p.recvMu.Lock()
	p.receive, p.end = receive, end
	p.recvMu.Unlock()
}

// Read implements [Conn]. The connection pushes its messages, so Read only
// waits for it to close.
func (p *pushEnd) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return nil, ErrClosed
	}
}

// push passes m (perhaps a batch) to the connection, one call at a time,
// and reports false when it cannot: nothing is listening yet, or closed
// reports the connection closed.
func (p *pushEnd) push(m jsonrpc.Message, closed func() bool) bool {
	p.recvMu.Lock()
	defer p.recvMu.Unlock()
	if p.receive == nil || closed() {
		return false
	}
	p.receive(m)
	return true
}

// ended tells the connection that no more messages will arrive, and why.
func (p *pushEnd) ended(reason error) {
	p.recvMu.Lock()
	end := p.end
	p.recvMu.Unlock()
	if end != nil {
		end(reason)
	}
}

// readSized reads r to its end like [io.ReadAll], making use of size, the
// length the peer announced (negative when it announced none): the
// buffer starts with room for min(size, trust) bytes and, while the body
// keeps coming, grows fourfold toward size, so that a body of announced
// length costs few allocations and copies and one of at most trust bytes
// exactly one. trust bounds what is reserved on the peer's word alone: a
// server reading requests passes a small value, so that peers announcing
// large bodies and sending little cannot make it reserve much.
//
// Unless limit is negative, it reads no more than limit+1 bytes, as
// through an [io.LimitedReader] of that size: a result longer than limit
// says that the body is too large.
func readSized(r io.Reader, size, trust, limit int64) ([]byte, error) {
	n := int64(512)
	if size >= 0 {
		n = min(size, trust) + 1 // +1: room to see the end without growing
	}
	if limit >= 0 {
		n = min(n, limit+1)
	}
	b := make([]byte, 0, n)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) < cap(b) {
			continue
		}
		if limit >= 0 && int64(len(b)) > limit {
			return b, nil // past the limit: the caller refuses it
		}
		want := 2 * int64(cap(b)) // past the announced length, or none
		if size > int64(len(b)) {
			want = min(int64(cap(b))*4, size+1)
		}
		if limit >= 0 {
			want = min(want, limit+1)
		}
		grown := make([]byte, len(b), max(want, int64(len(b))+1))
		copy(grown, b)
		b = grown
	}
}

// readBodyPrealloc is what a server's readSized reserves on a client's
// word.
const readBodyPrealloc = 64 << 10

// setHeaderValues sets in h the headers given as pairs of a name in canonical
// form and a value, leaving out those with an empty value. It is
// h.Set for each, with one allocation for all the values.
func setHeaderValues(h http.Header, kv ...string) {
	n := 0
	for i := 1; i < len(kv); i += 2 {
		if kv[i] != "" {
			n++
		}
	}
	vals := make([]string, 0, n)
	for i := 0; i+1 < len(kv); i += 2 {
		if v := kv[i+1]; v != "" {
			vals = append(vals, v)
			h[kv[i]] = vals[len(vals)-1 : len(vals) : len(vals)]
		}
	}
}

// headerValue is h.Get(key) for a key already in canonical form (every
// header name this package looks up is a constant in that form): the
// first value, or "". Unlike h.Get it does not canonicalize key again on
// every call, which a request's handling did some ten times.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
