package mcptest_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

var (
	accept = &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}
	seat   = &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.Contents{&mcp.TextContent{Text: "12A"}}}
)

// fails stands for a call that fails, in TestScript.
const fails = "(fails)"

// TestScript plays scripts against tools that ask for input, the same
// test in both eras: the tool gets the script's answers, and the test
// fails for a request the script does not expect next and for steps left
// unused.
func TestScript(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		steps func(t *testing.T) []mcptest.Step
		want  string // the tool's answer
		fail  string // the test's failure, if any
	}{{
		name: "every kind",
		tool: "book",
		steps: func(t *testing.T) []mcptest.Step {
			return []mcptest.Step{
				mcptest.ElicitFunc(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if req.Params.Message != "Book it?" {
						t.Errorf("elicitation message %q", req.Params.Message)
					}
					return accept, nil
				}),
				mcptest.CreateMessage(seat),
				mcptest.ListRoots(&mcp.Root{URI: "file:///home/ada"}, &mcp.Root{URI: "file:///tmp"}),
			}
		},
		want: "booked 12A, receipt in file:///home/ada file:///tmp",
	}, {
		name: "declined",
		tool: "book",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{mcptest.Elicit(&mcp.ElicitResult{Action: mcp.ElicitActionDecline})}
		},
		want: "not booked",
	}, {
		name: "func answers an error",
		tool: "book",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{
				mcptest.Elicit(accept),
				mcptest.CreateMessageFunc(func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return nil, errors.New("no model today")
				}),
			}
		},
		want: fails,
	}, {
		name: "roots func",
		tool: "book",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{
				mcptest.Elicit(accept),
				mcptest.CreateMessage(seat),
				mcptest.ListRootsFunc(func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
					return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///srv"}}}, nil
				}),
			}
		},
		want: "booked 12A, receipt in file:///srv",
	}, {
		name:  "unexpected request",
		tool:  "confirm",
		steps: func(*testing.T) []mcptest.Step { return nil },
		want:  fails,
		fail:  "the server sent elicitation/create",
	}, {
		name: "out of order",
		tool: "book",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{mcptest.CreateMessage(seat), mcptest.Elicit(accept)}
		},
		want: fails,
		fail: "the script expected sampling/createMessage",
	}, {
		name: "unused step",
		tool: "confirm",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{mcptest.Elicit(accept), mcptest.CreateMessage(seat)}
		},
		want: "true",
		fail: "the server did not ask for 1 step(s) of the script: sampling/createMessage",
	}, {
		name: "any order",
		tool: "both",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{
				mcptest.AnyOrder(mcptest.CreateMessage(seat), mcptest.AnyOrder(mcptest.Elicit(accept))),
				mcptest.ListRoots(&mcp.Root{URI: "file:///a"}),
			}
		},
		want: "true 12A 1",
	}, {
		name: "any order, a step left",
		tool: "both",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{
				mcptest.AnyOrder(mcptest.Elicit(accept), mcptest.CreateMessage(seat), mcptest.CreateMessage(seat)),
				mcptest.ListRoots(),
			}
		},
		want: fails,
		fail: "the server sent roots/list {}; the script expected sampling/createMessage",
	}, {
		name: "any order, not asked",
		tool: "confirm",
		steps: func(*testing.T) []mcptest.Step {
			return []mcptest.Step{mcptest.AnyOrder(mcptest.CreateMessage(seat), mcptest.ListRoots())}
		},
		want: fails,
		fail: "the script expected sampling/createMessage or roots/list",
	}}
	for _, v := range mcptest.Eras() {
		for _, tc := range tests {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				ft := newFakeT(t)
				var got string
				if !ft.run(func() {
					script := mcptest.NewScript(ft, tc.steps(t)...)
					cs := mcptest.Connect(ft, newServer(t), &mcptest.Options{ProtocolVersion: v, Script: script})
					got = text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool}))
				}) {
					t.Fatalf("the test body failed: %v", ft.finish())
				}
				if tc.want == fails {
					// A tool error in the handshake era, where the tool
					// gets the client's error; the call's error in
					// 2026-07-28, where the client cannot answer the
					// input request.
					if !strings.HasPrefix(got, "tool error: ") && !strings.HasPrefix(got, "error: ") {
						t.Errorf("%s = %q; want an error", tc.tool, got)
					}
				} else if got != tc.want {
					t.Errorf("%s = %q; want %q", tc.tool, got, tc.want)
				}
				wantFailure(t, ft.finish(), tc.fail)
			})
		}
	}
}

// TestScriptAsksOnce: in 2026-07-28 the tool runs again in each round,
// but the client is asked each question once, as in the handshake era.
func TestScriptAsksOnce(t *testing.T) {
	for _, v := range mcptest.Eras() {
		t.Run(v, func(t *testing.T) {
			var elicited, sampled, runs atomic.Int32
			s := newServer(t)
			mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
				runs.Add(1)
				if _, err := confirm(ctx, req); err != nil {
					return "", err
				}
				_, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Contents{&mcp.TextContent{Text: "?"}}}}})
				return "done", err
			})
			script := mcptest.NewScript(t,
				mcptest.ElicitFunc(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicited.Add(1)
					return accept, nil
				}),
				mcptest.CreateMessageFunc(func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					sampled.Add(1)
					return seat, nil
				}))
			cs := mcptest.Connect(t, s, &mcptest.Options{ProtocolVersion: v, Script: script})
			if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask"})); got != "done" {
				t.Errorf("ask = %q", got)
			}
			wantRuns := int32(1)
			if v == mcp.Version20260728 {
				wantRuns = 3 // asking to confirm, asking the model, done
			}
			if elicited.Load() != 1 || sampled.Load() != 1 || runs.Load() != wantRuns {
				t.Errorf("elicited %d and sampled %d times in %d runs; want once each in %d", elicited.Load(), sampled.Load(), runs.Load(), wantRuns)
			}
		})
	}
}

// TestNewScriptZeroStep: a zero Step is refused at once.
func TestNewScriptZeroStep(t *testing.T) {
	ft := newFakeT(t)
	if ft.run(func() { mcptest.NewScript(ft, mcptest.Elicit(accept), mcptest.Step{}) }) {
		t.Error("NewScript returned")
	}
	wantFailure(t, ft.finish(), "step 2 is the zero Step")
}
