//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// A handler's context ends when the HTTP request it is linked to does,
// however the handler looks (Done, Err, a derived context, AfterFunc,
// before or after the request ended), with the cause the info names,
// and never through the link once the handler has returned.
func TestInfoContextLink(t *testing.T) {
	checkLeaks(t)
	why := errors.New("gone")
	tests := []struct {
		name string
		// look is what the handler does before the request ends (nil:
		// nothing); after is what it does after, which reports the end.
		look  func(ctx context.Context) func() error
		after func(ctx context.Context, looked func() error) error
	}{
		{"Done after the end", nil, func(ctx context.Context, _ func() error) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}},
		{"Done before the end", func(ctx context.Context) func() error {
			done := ctx.Done()
			return func() error { <-done; return context.Cause(ctx) }
		}, func(_ context.Context, looked func() error) error { return looked() }},
		{"Err only", nil, func(ctx context.Context, _ func() error) error {
			if err := ctx.Err(); !errors.Is(err, context.Canceled) {
				return err
			}
			return context.Cause(ctx)
		}},
		{"a derived context", func(ctx context.Context) func() error {
			child, cancel := context.WithCancel(ctx)
			return func() error { defer cancel(); <-child.Done(); return context.Cause(child) }
		}, func(_ context.Context, looked func() error) error { return looked() }},
		{"AfterFunc", func(ctx context.Context) func() error {
			got := make(chan error, 1)
			context.AfterFunc(ctx, func() { got <- context.Cause(ctx) })
			return func() error { return <-got }
		}, func(_ context.Context, looked func() error) error { return looked() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, end := context.WithCancel(context.Background())
			defer end()
			base, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			info := &HTTPRequestInfo{cancelOn: req, cancelWhy: why}
			ctx := info.bind(base, cancel)
			release := func() { (*pushEnd)(nil).ReleaseContext(ctx) }
			defer release()
			if HTTPRequestInfoFromContext(ctx) != info {
				t.Fatal("the info is not in the context")
			}
			var looked func() error
			if tt.look != nil {
				looked = tt.look(ctx)
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("Err before the end: %v", err)
			}
			end()
			if got := tt.after(ctx, looked); got != why {
				t.Fatalf("cause %v, want %v", got, why)
			}
		})
	}
}

// Once released, the link cancels nothing, whether it was made or not.
func TestInfoContextReleased(t *testing.T) {
	checkLeaks(t)
	for _, linked := range []bool{false, true} {
		req, end := context.WithCancel(context.Background())
		var mu sync.Mutex
		calls := 0
		cancel := func(error) { mu.Lock(); calls++; mu.Unlock() }
		info := &HTTPRequestInfo{cancelOn: req, cancelWhy: errors.New("gone")}
		ctx := info.bind(context.Background(), cancel)
		release := func() { (*pushEnd)(nil).ReleaseContext(ctx) }
		if linked {
			ctx.Done()
		}
		release()
		end()
		if err := ctx.Err(); err != nil {
			t.Errorf("linked %v: Err after release %v", linked, err)
		}
		ctx.Done()
		mu.Lock()
		if calls != 0 {
			t.Errorf("linked %v: cancel called %d times after release", linked, calls)
		}
		mu.Unlock()
	}
}

// Without a request to end with, the context is the handler's own.
func TestInfoContextUnlinked(t *testing.T) {
	base, cancel := context.WithCancelCause(context.Background())
	info := &HTTPRequestInfo{}
	ctx := info.bind(base, cancel)
	release := func() { (*pushEnd)(nil).ReleaseContext(ctx) }
	defer release()
	if ctx.Done() != base.Done() {
		t.Fatal("Done is not the handler's")
	}
	why := errors.New("stop")
	cancel(why)
	if context.Cause(ctx) != why || !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("cause %v, Err %v", context.Cause(ctx), ctx.Err())
	}
}
