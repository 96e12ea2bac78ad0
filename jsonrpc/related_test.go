package jsonrpc

import (
	"context"
	"testing"
	"time"
)

// TestWithoutRelatedRequest: the related request is dropped, and nothing
// else: values, deadline and cancellation stay.
func TestWithoutRelatedRequest(t *testing.T) {
	type key struct{}
	base, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	defer cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{
		{"related", withRelatedRequest(base, &incomingRequest{req: &Request{ID: Int64ID(7)}})},
		{"unrelated", base},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := WithoutRelatedRequest(c.ctx)
			if id, ok := RelatedRequest(ctx); ok {
				t.Fatalf("related request %v after WithoutRelatedRequest", id)
			}
			if ctx.Value(key{}) != "v" {
				t.Error("a value was lost")
			}
			if d, ok := ctx.Deadline(); !ok || d.IsZero() {
				t.Error("the deadline was lost")
			}
		})
	}
	ctx := WithoutRelatedRequest(withRelatedRequest(base, &incomingRequest{req: &Request{ID: Int64ID(7)}}))
	cancel()
	if ctx.Err() == nil {
		t.Error("not cancelled with its parent")
	}
}
