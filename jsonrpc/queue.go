package jsonrpc

// lazyQueue is a bounded FIFO drained by a worker goroutine that exists
// only while items wait, so that an idle connection holds no goroutine
// for it. The connection's mutex guards it.
type lazyQueue[T any] struct {
	items   []T
	running bool // a worker is draining the queue
	// room, when not nil, is closed (and cleared) when an item leaves the
	// queue, for a producer waiting until it is shorter than its bound.
	room chan struct{}
}

// push appends v unless the queue already holds max items (a negative max
// means no bound). It reports whether v was queued, and whether the
// caller must start a worker (none was running).
func (q *lazyQueue[T]) push(v T, max int) (queued, start bool) {
	if max >= 0 && len(q.items) >= max {
		return false, false
	}
	q.items = append(q.items, v)
	if q.running {
		return true, false
	}
	q.running = true
	return true, true
}

// wait returns a channel closed when an item next leaves the queue.
func (q *lazyQueue[T]) wait() <-chan struct{} {
	if q.room == nil {
		q.room = make(chan struct{})
	}
	return q.room
}

// pop removes and returns the oldest item. When the queue is empty, or
// stop is set (the connection closed), it drops what is left, records
// that the worker has stopped and reports false: the worker must return.
func (q *lazyQueue[T]) pop(stop bool) (T, bool) {
	var zero T
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	if len(q.items) == 0 || stop {
		clear(q.items)
		q.items = q.items[:0]
		q.running = false
		return zero, false
	}
	v := q.items[0]
	q.items[0] = zero // let it go
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = q.items[:0:cap(q.items)]
	}
	return v, true
}
