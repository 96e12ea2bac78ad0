package jsonrpc

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/internal/rpclink"
)

// TestAnswerEarly checks the early answer package mcp gives a tools/call
// that becomes a task while its handler runs: the caller gets the early
// result at once, what the handler returns later goes nowhere, the
// request no longer counts against MaxInFlight nor holds up Wait, and a
// request can be answered early only once.
func TestAnswerEarly(t *testing.T) {
	checkGoroutines(t)
	release, returned := make(chan struct{}), make(chan struct{})
	var again, could atomic.Bool
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method != "slow" {
			return req.Params, nil
		}
		could.Store(rpclink.CanAnswer(ctx))
		if !rpclink.Answer(ctx, []byte(`{"early":true}`)) {
			return nil, &Error{Code: 1, Message: "not answered early"}
		}
		again.Store(rpclink.Answer(ctx, []byte(`{"twice":true}`)) || rpclink.CanAnswer(ctx))
		<-release
		defer close(returned)
		return json.RawMessage(`{"late":true}`), nil
	})
	client, srv := connPair(t, h, &ConnOptions{MaxInFlight: 1})
	ctx := t.Context()
	res, err := client.Call(ctx, "slow", nil)
	if err != nil || string(res) != `{"early":true}` {
		t.Fatalf("slow: %s, %v; want the early answer", res, err)
	}
	if !could.Load() || again.Load() {
		t.Fatalf("CanAnswer before: %v; a second answer (or CanAnswer after): %v", could.Load(), again.Load())
	}
	// The handler still runs, yet the connection serves another request
	// (MaxInFlight 1).
	if res, err := client.Call(ctx, "echo", json.RawMessage(`[1]`)); err != nil || string(res) != `[1]` {
		t.Fatalf("echo while the early-answered handler runs: %s, %v", res, err)
	}
	close(release)
	<-returned
	// Its late result went nowhere: the next answer the client reads is
	// the next call's.
	if res, err := client.Call(ctx, "echo", json.RawMessage(`[2]`)); err != nil || string(res) != `[2]` {
		t.Fatalf("echo after: %s, %v", res, err)
	}
	_ = srv
}

// TestRelatedRequestRoute checks that a context related to a request
// through rpclink.Relate routes like it but cannot answer it.
func TestRelatedRequestRoute(t *testing.T) {
	checkGoroutines(t)
	var routed, answered atomic.Bool
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		rel := rpclink.Relate(context.Background(), ctx)
		id, ok := RelatedRequest(rel)
		routed.Store(ok && id == req.ID)
		answered.Store(rpclink.CanAnswer(rel) || rpclink.Answer(rel, []byte(`{}`)))
		return json.RawMessage(`{}`), nil
	})
	client, _ := connPair(t, h, nil)
	if _, err := client.Call(t.Context(), "x", nil); err != nil {
		t.Fatal(err)
	}
	if !routed.Load() || answered.Load() {
		t.Fatalf("related: routed %v, answerable %v; want true, false", routed.Load(), answered.Load())
	}
}
