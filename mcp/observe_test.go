package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestObserveSend: members an observer adds reach the peer's _meta on
// each message of the observed request only, and the caller's params stay
// as they were; SessionOf describes the session of a received request.
func TestObserveSend(t *testing.T) {
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string // the "k" member of each tools/call received
			var views []mcp.SessionView
			var gotIDs, sentIDs []string // the JSON-RPC ids of observed messages, as received and as the observer learnt them
			s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
				Middleware: []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
						if req.Method() == "tools/call" {
							v, _ := mcp.SessionOf(req)
							mu.Lock()
							seen = append(seen, string(mcp.MetaOf(req.Parameters()).Other["k"]))
							views = append(views, v)
							if id, ok := jsonrpc.RelatedRequest(ctx); ok && len(mcp.MetaOf(req.Parameters()).Other["k"]) > 0 {
								gotIDs = append(gotIDs, id.String())
							}
							mu.Unlock()
						}
						return next(ctx, req)
					}
				}},
			})
			err := s.AddTool(&mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if _, err := req.Elicit(mcp.WithInputKey(ctx, "x"), &mcp.ElicitParams{Message: "x?", RequestedSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var rounds []int
			var outer context.Context
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				Era: era,
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
				},
				SendingMiddleware: []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
						if req.Method() != "tools/call" || outer != nil {
							return next(ctx, req)
						}
						ctx = mcp.ObserveSend(ctx, req, func(_ context.Context, w *mcp.WireSend) func(error) {
							rounds = append(rounds, w.Round)
							w.Meta = map[string]json.RawMessage{"k": json.RawMessage(`"v"`)}
							return func(error) {
								mu.Lock()
								sentIDs = append(sentIDs, w.ID.String())
								mu.Unlock()
							}
						})
						outer = ctx
						return next(ctx, req)
					}
				}},
			})
			ct, st := transport.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := s.Connect(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := c.Connect(ctx, ct)
			if err != nil {
				t.Fatal(err)
			}
			p := &mcp.CallToolParams{Name: "ask", Meta: mcp.Meta{Other: map[string]json.RawMessage{"mine": json.RawMessage(`1`)}}}
			if _, err := cs.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
			// Another request under the observed context is not observed.
			if _, err := cs.CallTool(outer, &mcp.CallToolParams{Name: "ask"}); err != nil {
				t.Fatal(err)
			}
			_ = cs.Close()
			_ = ss.Wait()
			if len(p.Meta.Other) != 1 {
				t.Errorf("the caller's _meta became %v", p.Meta.Other)
			}
			wantSeen, wantRounds := []string{`"v"`, ""}, []int{0}
			if era == mcp.EraModern {
				wantSeen, wantRounds = []string{`"v"`, `"v"`, "", ""}, []int{0, 1}
			}
			if len(seen) != len(wantSeen) || len(rounds) != len(wantRounds) {
				t.Fatalf("server saw %q, observer saw rounds %v; want %q and %v", seen, rounds, wantSeen, wantRounds)
			}
			for i := range seen {
				if seen[i] != wantSeen[i] {
					t.Errorf("message %d: k = %s, want %s", i, seen[i], wantSeen[i])
				}
			}
			for i := range rounds {
				if rounds[i] != wantRounds[i] {
					t.Errorf("rounds %v, want %v", rounds, wantRounds)
				}
			}
			if !slices.Equal(gotIDs, sentIDs) || len(sentIDs) != len(wantRounds) {
				t.Errorf("the observer learnt the ids %q; the server got %q", sentIDs, gotIDs)
			}
			for _, v := range views {
				if v.ProtocolVersion == "" || (v.ID == "") != (era == mcp.EraModern) || v.Done == nil {
					t.Errorf("SessionOf: %+v", v)
				}
			}
		})
	}
}
