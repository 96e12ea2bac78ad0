package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Script plays the client's side of the requests a server sends it:
// sampling/createMessage, elicitation/create and roots/list, answered in
// order from a list of steps, each expecting one request and giving its
// answer. It fails the test if the server sends a request that is not
// the next step's method, and, at the end of the test, if steps are left.
//
// The same script serves both protocol eras: in the handshake era the
// server sends each as a request, and in 2026-07-28 it asks for them in
// input_required rounds, which the client answers with its handlers as
// well (a handler asked for input runs again with the answers, once per
// round, but the client is asked each question once). Steps are taken in
// the order the client is asked; a handler asking several questions at
// once (from several goroutines) asks them in no fixed order.
//
// A Script is safe for concurrent use. Create one with [NewScript], and
// install it with [Options.Script] or [Script.ClientOptions].
type Script struct {
	t     testing.TB
	mu    sync.Mutex
	steps []Step
	next  int
}

// Step is one request a [Script] expects, and its answer. Make steps with
// [Elicit], [CreateMessage], [ListRoots] and their Func variants.
type Step struct {
	method string
	answer func(ctx context.Context, req mcp.Request) (mcp.Result, error)
}

// NewScript returns a script of the steps, in order. At the end of the
// test it fails t if some were not taken.
func NewScript(t testing.TB, steps ...Step) *Script {
	t.Helper()
	for i, st := range steps {
		if st.answer == nil {
			t.Fatalf("mcptest: NewScript: step %d is the zero Step; make steps with Elicit, CreateMessage or ListRoots", i)
		}
	}
	s := &Script{t: t, steps: steps}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next < len(s.steps) {
			var left []string
			for _, st := range s.steps[s.next:] {
				left = append(left, st.method)
			}
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
	var step Step
	n := s.next
	ok := n < len(s.steps) && s.steps[n].method == req.Method()
	if ok {
		step = s.steps[n]
		s.next++
	}
	s.mu.Unlock()
	if !ok {
		want := "nothing more"
		if n < len(s.steps) {
			want = fmt.Sprintf("%s (step %d)", s.steps[n].method, n+1)
		}
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
		return nil, fmt.Errorf("mcptest: step %d (%s) answered nil", n+1, step.method)
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
