package redisstore

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// TestTimeout checks that each operation on a Redis that never answers
// ends with an error wrapping the deadline of the store's Timeout, not
// blocking its caller.
func TestTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A server that accepts connections and reads, never answering.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				buf := make([]byte, 512)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	c := redis.NewClient(&redis.Options{Addr: l.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s, err := NewTaskStore(c, &TaskStoreOptions{Timeout: 20 * time.Millisecond,
		// Each operation times out: the breaker does not refuse them.
		Breaker: NewBreaker(&BreakerOptions{Failures: 1000})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ops := map[string]func() error{
		"Create": func() error { return s.Create(ctx, &mcp.TaskRecord{Owner: "alice"}) },
		"Get":    func() error { _, err := s.Get(ctx, "alice", "x"); return err },
		"Update": func() error {
			return s.Update(ctx, &mcp.TaskRecord{ID: "x", Owner: "alice", Status: mcp.TaskWorking, Version: 1})
		},
		"Delete": func() error { return s.Delete(ctx, "alice", "x") },
		"List":   func() error { _, _, err := s.List(ctx, "alice", ""); return err },
		"Watch":  func() error { return s.Watch(ctx, "alice", "x", 1) },
	}
	for name, op := range ops {
		err := op()
		var ne net.Error
		if err == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s on a Redis that never answers: %v; want a timeout, ErrUnavailable", name, err)
		}
	}
}
