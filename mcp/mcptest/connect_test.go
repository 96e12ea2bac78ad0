package mcptest_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

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

// TestConnectClient: the client is the one the options describe, in both
// eras: its name, its roots, its capabilities (sampling and elicitation
// declared by a script or by handlers of its own), the script's roots
// taking the place of its own.
func TestConnectClient(t *testing.T) {
	answer := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return accept, nil }
	tests := []struct {
		name   string
		opts   mcptest.Options
		script []mcptest.Step
		want   string
	}{
		{"zero", mcptest.Options{}, nil, "mcptest 1.0.0, sampling false, elicitation false, roots []"},
		{"named, with roots", mcptest.Options{
			ClientInfo: &mcp.Implementation{Name: "tester", Version: "2"},
			Roots:      []*mcp.Root{{URI: "file:///a"}, {URI: "file:///b"}},
		}, nil, "tester 2, sampling false, elicitation false, roots [file:///a file:///b]"},
		{"own handler", mcptest.Options{
			Client: &mcp.ClientOptions{ElicitationHandler: answer},
		}, nil, "mcptest 1.0.0, sampling false, elicitation true, roots []"},
		{"script", mcptest.Options{
			Roots: []*mcp.Root{{URI: "file:///a"}},
		}, []mcptest.Step{mcptest.ListRoots(&mcp.Root{URI: "file:///scripted"})}, "mcptest 1.0.0, sampling true, elicitation true, roots [file:///scripted]"},
	}
	for _, v := range mcptest.Eras() {
		for _, tc := range tests {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				opts := tc.opts
				opts.ProtocolVersion = v
				if tc.script != nil {
					opts.Script = mcptest.NewScript(t, tc.script...)
				}
				cs := mcptest.Connect(t, newServer(t), &opts)
				if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami"})); got != tc.want {
					t.Errorf("whoami = %q; want %q", got, tc.want)
				}
			})
		}
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

// TestConnectGoroutines: at the end of the test, a goroutine a tool left
// running fails it, in both eras, with its stack, and so does a handler
// that ignores the end of its context (without hanging the test); a
// goroutine that ends with the request does not.
func TestConnectGoroutines(t *testing.T) {
	tests := []struct {
		name string
		tool func(ctx context.Context, release <-chan struct{}) // the tool's body
		fail string
	}{{
		name: "ends with the request",
		tool: func(ctx context.Context, _ <-chan struct{}) {
			started := make(chan struct{})
			go func() {
				close(started)
				lingerUntil(ctx.Done())
			}()
			<-started
		},
	}, {
		name: "left behind",
		tool: func(_ context.Context, release <-chan struct{}) {
			started := make(chan struct{})
			go func() {
				close(started)
				lingerUntil(release)
			}()
			<-started
		},
		fail: "mcptest_test.lingerUntil",
	}, {
		name: "handler ignores its context",
		tool: func(_ context.Context, release <-chan struct{}) { lingerUntil(release) },
		fail: "mcptest_test.lingerUntil",
	}}
	for _, v := range mcptest.Eras() {
		for _, tc := range tests {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				running := make(chan struct{}, 1)
				s := newServer(t)
				mcp.AddTool(s, &mcp.Tool{Name: "spawn"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
					running <- struct{}{}
					tc.tool(ctx, release)
					return "spawned", nil
				})
				ft := newFakeT(t)
				if !ft.run(func() {
					cs := mcptest.ConnectWait(ft, s, &mcptest.Options{ProtocolVersion: v}, waitFor(tc.fail != ""))
					ctx, cancel := context.WithCancel(t.Context())
					go func() { <-running; cancel() }() // a stuck call returns
					cs.CallTool(ctx, &mcp.CallToolParams{Name: "spawn"})
				}) {
					t.Fatalf("Connect failed: %v", ft.finish())
				}
				failures := ft.finish()
				if tc.fail == "" {
					wantFailure(t, failures, "")
					return
				}
				wantFailure(t, failures, "goroutines still running at the end of the test")
				wantFailure(t, failures, tc.fail)
			})
		}
	}
}

// lingerUntil returns when ch is closed: a function whose name the stack
// of a leaked goroutine shows.
func lingerUntil(ch <-chan struct{}) { <-ch }
