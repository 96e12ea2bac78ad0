package jsonrpc

import "testing"

// TestLazyQueue checks the queue's order, its bound, and when a worker
// must start and stop.
func TestLazyQueue(t *testing.T) {
	var q lazyQueue[int]
	if ok, start := q.push(1, 2); !ok || !start {
		t.Fatalf("first push: queued %v, start %v; want true, true", ok, start)
	}
	if ok, start := q.push(2, 2); !ok || start {
		t.Fatalf("second push: queued %v, start %v; want true, false (a worker runs)", ok, start)
	}
	if ok, _ := q.push(3, 2); ok {
		t.Fatal("push past the bound was queued")
	}
	for _, want := range []int{1, 2} {
		if v, ok := q.pop(false); !ok || v != want {
			t.Fatalf("pop = %d, %v; want %d, true", v, ok, want)
		}
	}
	if _, ok := q.pop(false); ok || q.running {
		t.Fatal("pop of an empty queue did not stop the worker")
	}
	if _, start := q.push(4, 2); !start {
		t.Fatal("push after the worker stopped did not ask for a new one")
	}
	q.push(5, 2)
	if _, ok := q.pop(true); ok || len(q.items) != 0 || q.running {
		t.Fatalf("pop with stop: ok %v, %d items left, running %v", ok, len(q.items), q.running)
	}
}
