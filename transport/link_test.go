//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"testing"
)

// TestLink: a request's context has its caller's values and not the
// connection's, and ends when the connection does, whether the caller's
// context can end (a context of its own, linked) or not (a connBound);
// and so do contexts derived from it, as net/http derives one.
func TestLink(t *testing.T) {
	type key string
	for _, c := range []struct {
		name        string
		cancellable bool
	}{{"never ends", false}, {"can end", true}} {
		t.Run(c.name, func(t *testing.T) {
			conn := newHTTPClientCore(context.WithValue(context.Background(), key("connect"), "c"), nil, nil, 1<<20)
			ctx := context.WithValue(context.Background(), key("call"), "v")
			if c.cancellable {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			rctx, release := conn.link(ctx)
			defer release()
			if _, isBound := rctx.(*connBound); isBound == c.cancellable {
				t.Fatalf("link gave a %T for a context that can end: %v", rctx, c.cancellable)
			}
			if got := rctx.Value(key("call")); got != "v" {
				t.Errorf("the caller's value: %v, want v", got)
			}
			if got := rctx.Value(key("connect")); got != nil {
				t.Errorf("the connection's value: %v, want none", got)
			}
			if _, ok := rctx.Deadline(); ok {
				t.Error("a deadline, want none")
			}
			child, cancelChild := context.WithCancelCause(rctx)
			defer cancelChild(nil)
			select {
			case <-rctx.Done():
				t.Fatal("done before the connection ended")
			default:
			}
			conn.cancel()
			<-rctx.Done()
			<-child.Done()
			if !errors.Is(rctx.Err(), context.Canceled) || !errors.Is(context.Cause(child), context.Canceled) {
				t.Errorf("Err %v, the child's cause %v; want context.Canceled", rctx.Err(), context.Cause(child))
			}
		})
	}
}

// TestLinkCallerEnds: a call's own end still ends its request.
func TestLinkCallerEnds(t *testing.T) {
	conn := newHTTPClientCore(context.Background(), nil, nil, 1<<20)
	defer conn.cancel()
	ctx, cancel := context.WithCancel(context.Background())
	rctx, release := conn.link(ctx)
	defer release()
	cancel()
	<-rctx.Done()
	select {
	case <-conn.ctx.Done():
		t.Fatal("the call's end ended the connection")
	default:
	}
}
