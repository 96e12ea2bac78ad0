package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Script plays the client's side of the requests a server sends it:
// sampling/createMessage, elicitation/create and roots/list, answered in
// order from a list of steps, each expecting one request and giving its
// answer. It fails the test if the server sends a request that the next
// step does not expect (and answers it with a JSON-RPC error), and, at
// the end of the test, if steps are left.
//
// The same script serves both protocol eras: in the handshake era the
// server sends each as a request, and in 2026-07-28 it asks for them in
// input_required rounds, which the client answers with its handlers as
// well (a handler asked for input runs again with the answers, once per
// round, but the client is asked each question once). Steps are taken in
// the order the client is asked. A handler that asks several questions
// at once (from several goroutines) asks them in no fixed order, in
// either era: expect those with [AnyOrder].
//
// A Script is safe for concurrent use. Create one with [NewScript], and
// install it with [Options.Script] or [Script.ClientOptions].
type Script struct {
	t     testing.TB
	mu    sync.Mutex
	slots [][]Step // the steps left: those of slots[0] in any order, then the next slot's
}

// Step is one request a [Script] expects, and its answer, or a group of
// steps taken in any order. Make steps with [Elicit], [CreateMessage],
// [ListRoots], their Func variants, and [AnyOrder].
type Step struct {
	method string
	answer func(ctx context.Context, req mcp.Request) (mcp.Result, error)
	group  []Step // for AnyOrder: non-nil, and answer nil
}

// AnyOrder groups steps that a script takes in whichever order the
// server asks for them, after the steps before the group and before those
// after it: the questions a handler asks at once. A request takes the
// first step of the group with its method. A group inside a group is
// part of it.
func AnyOrder(steps ...Step) Step {
	group := make([]Step, 0, len(steps))
	for _, st := range steps {
		if st.group != nil {
			group = append(group, st.group...)
		} else {
			group = append(group, st)
		}
	}
	return Step{group: group}
}

// NewScript returns a script of the steps, in order. At the end of the
// test it fails t if some were not taken.
func NewScript(t testing.TB, steps ...Step) *Script {
	t.Helper()
	s := &Script{t: t}
	for i, st := range steps {
		group := st.group
		if group == nil {
			group = []Step{st}
		}
		for _, g := range group {
			if g.answer == nil {
				t.Fatalf("mcptest: NewScript: step %d is the zero Step; make steps with Elicit, CreateMessage, ListRoots or AnyOrder", i+1)
			}
		}
		if len(group) > 0 {
			s.slots = append(s.slots, slices.Clone(group))
		}
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		var left []string
		for _, slot := range s.slots {
			for _, st := range slot {
				left = append(left, st.method)
			}
		}
		if len(left) > 0 {
			t.Errorf("mcptest: the server did not ask for %d step(s) of the script: %s", len(left), strings.Join(left, ", "))
		}
	})
	return s
}

// Elicit expects an elicitation/create request and answers it with res.
// The client validates accepted content against the requested schema, as
// it does any handler's answer.
func Elicit(res *mcp.ElicitResult) Step {
	return ElicitFunc(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return res, nil })
}

// ElicitFunc expects an elicitation/create request and answers it with f,
// which may check the request (with t.Error, not t.Fatal: f does not run
// on the test's goroutine). An error f returns is the client's answer: a
// JSON-RPC error.
func ElicitFunc(f func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) Step {
	return Step{method: mcp.MethodElicitationCreate, answer: func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
		return f(ctx, req.(*mcp.ElicitRequest))
	}}
}

// CreateMessage expects a sampling/createMessage request and answers it
// with res.
func CreateMessage(res *mcp.CreateMessageResult) Step {
	return CreateMessageFunc(func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return res, nil })
}

// CreateMessageFunc expects a sampling/createMessage request and answers
// it with f; see [ElicitFunc].
func CreateMessageFunc(f func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) Step {
	return Step{method: mcp.MethodSamplingCreateMessage, answer: func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
		return f(ctx, req.(*mcp.CreateMessageRequest))
	}}
}

// ListRoots expects a roots/list request and answers it with roots, in
// place of the client's own (see [Options.Roots]).
func ListRoots(roots ...*mcp.Root) Step {
	return ListRootsFunc(func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: roots}, nil
	})
}

// ListRootsFunc expects a roots/list request and answers it with f; see
// [ElicitFunc].
func ListRootsFunc(f func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error)) Step {
	return Step{method: mcp.MethodRootsList, answer: func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ListRootsRequest)
		if !ok {
			return nil, fmt.Errorf("mcptest: roots/list arrived as a %T", req)
		}
		return f(ctx, r)
	}}
}

// ClientOptions returns a copy of opts (nil: the zero value) that answers
// the server's requests from the script: CreateMessageHandler and
// ElicitationHandler are replaced (so the client declares sampling and
// elicitation), and a middleware, innermost, answers roots/list. Use it
// to play a script with a client connected some other way than
// [Connect], over HTTP say.
func (s *Script) ClientOptions(opts *mcp.ClientOptions) *mcp.ClientOptions {
	o := mcp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		res, err := s.play(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.(*mcp.CreateMessageResult), nil
	}
	o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		res, err := s.play(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.(*mcp.ElicitResult), nil
	}
	o.Middleware = append(o.Middleware[:len(o.Middleware):len(o.Middleware)], func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
			if req.Method() != mcp.MethodRootsList {
				return next(ctx, req)
			}
			res, err := s.play(ctx, req)
			if err != nil {
				return nil, err
			}
			return res, nil
		}
	})
	return &o
}

// play takes the next step for req, or fails the test and answers with
// an error when req is not what the script expects next.
func (s *Script) play(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	s.mu.Lock()
	var (
		step  Step
		found bool
		want  = "nothing more"
	)
	if len(s.slots) > 0 {
		slot := s.slots[0]
		if i := slices.IndexFunc(slot, func(st Step) bool { return st.method == req.Method() }); i >= 0 {
			step, found = slot[i], true
			if slot = slices.Delete(slot, i, i+1); len(slot) == 0 {
				s.slots = s.slots[1:]
			} else {
				s.slots[0] = slot
			}
		} else {
			var methods []string
			for _, st := range slot {
				methods = append(methods, st.method)
			}
			want = strings.Join(methods, " or ")
		}
	}
	s.mu.Unlock()
	if !found {
		s.t.Errorf("mcptest: the server sent %s %s; the script expected %s", req.Method(), summary(req.Parameters()), want)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcptest: unexpected " + req.Method()}
	}
	res, err := step.answer(ctx, req)
	if err != nil {
		return nil, err
	}
	// A nil result of a typed func is a non-nil interface holding nil;
	// answer it as the client answers a handler's nil.
	if res == nil || isNilResult(res) {
		return nil, fmt.Errorf("mcptest: the script's %s step answered nil", step.method)
	}
	return res, nil
}

// isNilResult reports whether r holds a nil pointer of one of the results
// a step gives.
func isNilResult(r mcp.Result) bool {
	switch r := r.(type) {
	case *mcp.ElicitResult:
		return r == nil
	case *mcp.CreateMessageResult:
		return r == nil
	case *mcp.ListRootsResult:
		return r == nil
	}
	return false
}

// summary returns params as JSON, cut to a length a failure message can
// show.
func summary(p mcp.Params) string {
	b, err := json.Marshal(p)
	if err != nil {
		return "(params: " + err.Error() + ")"
	}
	const limit = 300
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}
