package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBreaker steps a breaker through its states: Failures consecutive
// failures open it (a success between resets the count), an open breaker
// refuses without trying, lets one probe through after Cooldown (others
// are refused meanwhile), a failed probe opens it again, a neutral one
// frees the probe, and a successful one closes it.
func TestBreaker(t *testing.T) {
	b := NewBreaker(&BreakerOptions{Failures: 3, Cooldown: time.Hour})
	bd := &bounds{timeout: time.Second, breaker: b}
	ctx := context.Background()
	run := func(err error) error {
		c := bd.op(ctx)
		if c.refuse {
			return c.end(nil)
		}
		return c.end(err)
	}
	fail := &net.OpError{Op: "read", Err: syscall.ECONNRESET}
	for i, err := range []error{fail, fail, nil, fail, fail} {
		if got := run(err); !errors.Is(got, fail) && err != nil {
			t.Fatalf("step %d: %v", i, got)
		}
	}
	if b.Open() {
		t.Fatal("open after two consecutive failures (a success reset the count)")
	}
	run(fail)
	if !b.Open() {
		t.Fatal("closed after three consecutive failures")
	}
	if err := run(nil); !errors.Is(err, ErrBreakerOpen) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("an operation on the open breaker: %v, want ErrBreakerOpen and ErrUnavailable", err)
	}
	probe := func() call {
		b.openUntil.Store(time.Now().Add(-time.Millisecond).UnixNano()) // the cooldown has passed
		c := bd.op(ctx)
		if c.refuse {
			t.Fatal("no probe after the cooldown")
		}
		if other := bd.op(ctx); !other.refuse {
			t.Fatal("a second operation let through during the probe")
		}
		return c
	}
	probe().end(fail)
	if !b.Open() {
		t.Fatal("closed after a failed probe")
	}
	cctx, cancel := context.WithCancel(ctx)
	b.openUntil.Store(time.Now().Add(-time.Millisecond).UnixNano())
	c := bd.op(cctx)
	cancel()
	c.end(context.Canceled) // the caller gave up: neither way
	probe().end(nil)        // the probe after the neutral one
	if b.Open() || run(nil) != nil {
		t.Fatal("open after a successful probe")
	}
}

// TestClassify checks which errors count as Redis failures (marked
// ErrUnavailable, counted by the breaker), which are answers, and which
// are refusals of Redis that mark ErrUnavailable without counting.
func TestClassify(t *testing.T) {
	parent := context.Background()
	gone, cancel := context.WithCancel(parent)
	cancel()
	oom := replyErr("OOM command not allowed when used memory > 'maxmemory'.")
	tests := []struct {
		name        string
		parent      context.Context
		err         error
		want        outcome
		unavailable bool
	}{
		{"nil", parent, nil, succeeded, false},
		{"redis.Nil", parent, redis.Nil, succeeded, false},
		{"deadline", parent, context.DeadlineExceeded, failed, true},
		{"i/o timeout", parent, &net.OpError{Op: "read", Err: timeoutErr{}}, failed, true},
		{"EOF", parent, io.EOF, failed, true},
		{"refused", parent, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, failed, true},
		{"pool timeout", parent, redis.ErrPoolTimeout, failed, true},
		{"OOM", parent, oom, neutral, true},
		{"LOADING", parent, replyErr("LOADING Redis is loading the dataset in memory"), neutral, true},
		{"WRONGTYPE", parent, replyErr("WRONGTYPE Operation against a key holding the wrong kind of value"), succeeded, false},
		{"script error", parent, replyErr("ERR user_script:1: bad"), succeeded, false},
		{"caller gone", gone, context.Canceled, neutral, false},
		{"wrapped", parent, fmt.Errorf("x: %w", io.EOF), failed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.parent, tt.err); got != tt.want {
				t.Errorf("classify: %d, want %d", got, tt.want)
			}
			bd := &bounds{timeout: time.Second, breaker: NewBreaker(nil)}
			c := bd.op(tt.parent)
			err := c.end(tt.err)
			if errors.Is(err, ErrUnavailable) != tt.unavailable || !errors.Is(err, tt.err) {
				t.Errorf("end: %v; want ErrUnavailable %v, wrapping %v", err, tt.unavailable, tt.err)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// replyErr is an error reply of Redis.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}
