package mcptest_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestConnect connects in every revision, and with the zero Options,
// and calls a tool: the session speaks the revision asked for, in its
// era, with the client's options kept.
func TestConnect(t *testing.T) {
	versions := append(append([]string{""}, mcp.SupportedVersions()...), mcp.Version20260728)
	for _, v := range versions {
		want, wantEra := v, mcp.EraHandshake
		if v == "" || v == mcp.Version20260728 {
			want, wantEra = mcp.Version20260728, mcp.EraModern
		}
		t.Run("v="+v, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			cs := mcptest.Connect(t, newServer(t), &mcptest.Options{
				ProtocolVersion: v,
				ClientInfo:      &mcp.Implementation{Name: "tester", Version: "2"},
				Client: &mcp.ClientOptions{
					Era: mcp.EraAuto, // overridden by ProtocolVersion
					SendingMiddleware: []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
						return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
							mu.Lock()
							sent = append(sent, req.Method())
							mu.Unlock()
							return next(ctx, req)
						}
					}},
				},
			})
			if got := cs.ProtocolVersion(); got != want {
				t.Errorf("ProtocolVersion() = %q; want %q", got, want)
			}
			if got := cs.Era(); got != wantEra {
				t.Errorf("Era() = %v; want %v", got, wantEra)
			}
			if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)})); got != `{"sum":5}` {
				t.Errorf("add = %s", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(sent, mcp.MethodToolsCall) {
				t.Errorf("the client's sending middleware saw %v, not tools/call", sent)
			}
		})
	}
}

// TestConnectUnknownRevision: Connect fails the test at once for a
// revision it does not know.
func TestConnectUnknownRevision(t *testing.T) {
	ft := newFakeT(t)
	if ft.run(func() { mcptest.Connect(ft, newServer(t), &mcptest.Options{ProtocolVersion: "2023-01-01"}) }) {
		t.Error("Connect returned")
	}
	wantFailure(t, ft.finish(), `unknown protocol revision "2023-01-01"`)
}

// TestConnectGoroutines: a goroutine a tool leaves running fails the test
// at its end, in both eras, with its stack; one that ends with the
// session does not.
func TestConnectGoroutines(t *testing.T) {
	for _, v := range mcptest.Eras() {
		for _, leak := range []bool{false, true} {
			t.Run(v, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				s := newServer(t)
				mcp.AddTool(s, &mcp.Tool{Name: "spawn"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
					started := make(chan struct{})
					go func() {
						close(started)
						if leak {
							lingerUntil(release)
						} else {
							lingerUntil(ctx.Done())
						}
					}()
					<-started
					return "spawned", nil
				})
				ft := newFakeT(t)
				if !ft.run(func() {
					cs := mcptest.ConnectWait(ft, s, &mcptest.Options{ProtocolVersion: v}, 50*time.Millisecond)
					if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "spawn"})); got != "spawned" {
						t.Errorf("spawn = %s", got)
					}
				}) {
					t.Fatalf("Connect failed: %v", ft.finish())
				}
				failures := ft.finish()
				if !leak {
					wantFailure(t, failures, "")
					return
				}
				wantFailure(t, failures, "goroutines still running at the end of the test")
				wantFailure(t, failures, "mcptest_test.lingerUntil")
			})
		}
	}
}

// lingerUntil returns when ch is closed: a function whose name the stack
// of a leaked goroutine shows.
func lingerUntil(ch <-chan struct{}) { <-ch }
