package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// eraClient connects a client of era to s over in-memory transports.
func eraClient(t *testing.T, s *Server, era Era, opts *ClientOptions) *ClientSession {
	t.Helper()
	o := ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.Era = era
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &o).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close(); cs.Wait(); ss.Wait() })
	return cs
}

// TestLoggingHandlerDefaultLevel checks that a client with a
// LoggingMessageHandler and no SetLoggingLevel gets a tool's log message
// in both eras, over memory and over Streamable HTTP: in 2026-07-28 its
// requests name the level debug.
func TestLoggingHandlerDefaultLevel(t *testing.T) {
	checkGoroutines(t)
	for _, tc := range []struct {
		name string
		era  Era
		http bool
	}{
		{"handshake", EraHandshake, false},
		{"modern", EraModern, false},
		{"modern-http", EraModern, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan *LoggingMessageParams, 1)
			s := NewServer(&Implementation{Name: "logs", Version: "1"}, nil)
			must(t, AddTool(s, &Tool{Name: "work"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
				if err := req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelDebug, Data: "working"}); err != nil {
					return "", err
				}
				// Wait until the client has the message: without one,
				// the call ends with its context.
				select {
				case m := <-got:
					return fmt.Sprint(m.Level, " ", m.Data), nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}))
			opts := &ClientOptions{LoggingMessageHandler: func(_ context.Context, req *ClientRequest[*LoggingMessageParams]) {
				got <- req.Params
			}}
			var cs *ClientSession
			if tc.http {
				h := NewStreamableHTTPHandler(s, nil)
				srv := httptest.NewServer(h)
				t.Cleanup(func() { h.Close(); srv.Close() })
				opts.Era = tc.era
				c, err := NewClient(&Implementation{Name: "c", Version: "1"}, opts).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				cs = c
			} else {
				cs = eraClient(t, s, tc.era, opts)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &CallToolParams{Name: "work"})
			if err != nil {
				t.Fatalf("the log message never came: %v", err)
			}
			if text := res.Content[0].(*TextContent).Text; res.IsError || text != "debug working" {
				t.Fatalf("result %q (isError %v)", text, res.IsError)
			}
		})
	}
}

// TestClientErrorsNilResult checks every ClientSession method that sends
// a request, in both eras: on a server's JSON-RPC error it returns a nil
// result, and errors.As finds the server's *jsonrpc.Error.
func TestClientErrorsNilResult(t *testing.T) {
	checkGoroutines(t)
	refuse := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req Request) (Result, error) {
			switch req.Method() {
			case MethodInitialize, MethodServerDiscover, NotificationInitialized:
				return next(ctx, req)
			}
			return nil, &jsonrpc.Error{Code: -32099, Message: "refused by the test"}
		}
	}
	type call func(ctx context.Context, cs *ClientSession) (result any, err error)
	methods := []struct {
		name      string
		handshake bool // the method sends nothing in 2026-07-28
		call      call
	}{
		// In 2026-07-28 Ping asks server/discover, which the server answers.
		{"Ping", true, func(ctx context.Context, cs *ClientSession) (any, error) { return nil, cs.Ping(ctx) }},
		{"ListTools", false, func(ctx context.Context, cs *ClientSession) (any, error) { return cs.ListTools(ctx, nil) }},
		{"CallTool", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			return cs.CallTool(ctx, &CallToolParams{Name: "add"})
		}},
		{"CallToolAs", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			_, res, err := CallToolAs[addOut](ctx, cs, "add", nil, nil)
			return res, err
		}},
		{"ListResources", false, func(ctx context.Context, cs *ClientSession) (any, error) { return cs.ListResources(ctx, nil) }},
		{"ListResourceTemplates", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			return cs.ListResourceTemplates(ctx, nil)
		}},
		{"ReadResource", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			return cs.ReadResource(ctx, &ReadResourceParams{URI: "test://a"})
		}},
		{"Subscribe", true, func(ctx context.Context, cs *ClientSession) (any, error) {
			return nil, cs.Subscribe(ctx, &SubscribeParams{URI: "test://a"})
		}},
		{"Unsubscribe", true, func(ctx context.Context, cs *ClientSession) (any, error) {
			return nil, cs.Unsubscribe(ctx, &UnsubscribeParams{URI: "test://a"})
		}},
		{"ListPrompts", false, func(ctx context.Context, cs *ClientSession) (any, error) { return cs.ListPrompts(ctx, nil) }},
		{"GetPrompt", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			return cs.GetPrompt(ctx, &GetPromptParams{Name: "greet"})
		}},
		{"Complete", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			return cs.Complete(ctx, &CompleteParams{Ref: &CompleteReference{Type: ReferencePrompt, Name: "greet"}, Argument: CompleteArgument{Name: "name"}})
		}},
		{"SetLoggingLevel", true, func(ctx context.Context, cs *ClientSession) (any, error) {
			return nil, cs.SetLoggingLevel(ctx, LoggingLevelInfo)
		}},
		{"Listen", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			sub, err := cs.Listen(ctx, &SubscriptionFilter{ResourceSubscriptions: []string{"test://a"}})
			if sub != nil {
				sub.Close()
			}
			return sub, err
		}},
		{"Tools", false, func(ctx context.Context, cs *ClientSession) (any, error) {
			for tool, err := range cs.Tools(ctx) {
				return tool, err
			}
			return nil, nil
		}},
	}
	for _, era := range []Era{EraHandshake, EraModern} {
		s := testServer(t, &ServerOptions{
			Capabilities: &ServerCapabilities{
				Logging:     &LoggingCapabilities{},
				Completions: &CompletionCapabilities{},
				Resources:   &ResourceCapabilities{Subscribe: true, ListChanged: true},
			},
			Middleware: []Middleware{refuse},
		})
		cs := eraClient(t, s, era, nil)
		for _, m := range methods {
			t.Run(era.String()+"/"+m.name, func(t *testing.T) {
				if era == EraModern && m.handshake {
					t.Skip("sends nothing in 2026-07-28")
				}
				if era == EraHandshake && m.name == "Listen" {
					// The handshake era's Listen subscribes with
					// resources/subscribe.
				}
				res, err := m.call(t.Context(), cs)
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != -32099 {
					t.Fatalf("error %v (%T), want the server's -32099 through errors.As", err, err)
				}
				if res != nil && !isNilPointer(res) {
					t.Fatalf("result %#v beside the error, want nil", res)
				}
			})
		}
	}
}

// isNilPointer reports whether v is a typed nil pointer.
func isNilPointer(v any) bool {
	switch v := v.(type) {
	case *CallToolResult:
		return v == nil
	case *ListToolsResult:
		return v == nil
	case *ListResourcesResult:
		return v == nil
	case *ListResourceTemplatesResult:
		return v == nil
	case *ReadResourceResult:
		return v == nil
	case *ListPromptsResult:
		return v == nil
	case *GetPromptResult:
		return v == nil
	case *CompleteResult:
		return v == nil
	case *Subscription:
		return v == nil
	case *Tool:
		return v == nil
	}
	return false
}

// TestCallToolAsOptions checks the options of the typed call: the
// progress callback gets the call's notifications under a token the
// session made, and Meta reaches the server.
func TestCallToolAsOptions(t *testing.T) {
	checkGoroutines(t)
	for _, era := range []Era{EraHandshake, EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			seen := make(chan struct{})
			s := NewServer(&Implementation{Name: "p", Version: "1"}, nil)
			must(t, AddTool(s, &Tool{Name: "steps"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (addOut, error) {
				for i := 1; i <= 3; i++ {
					if err := req.ReportProgress(ctx, float64(i), 3, ""); err != nil {
						return addOut{}, err
					}
					select {
					case <-seen:
					case <-ctx.Done():
						return addOut{}, ctx.Err()
					}
				}
				var job string
				json.Unmarshal(req.Params.Meta.Other["example.com/job"], &job)
				return addOut{Sum: len(job)}, nil
			}))
			var global atomic.Int32
			cs := eraClient(t, s, era, &ClientOptions{ProgressHandler: func(context.Context, *ClientRequest[*ProgressParams]) { global.Add(1) }})
			var got []float64
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			out, _, err := CallToolAs[addOut](ctx, cs, "steps", nil, &CallToolOptions{
				Progress: func(_ context.Context, p *ProgressParams) {
					got = append(got, p.Progress)
					seen <- struct{}{}
				},
				Meta: Meta{Other: map[string]json.RawMessage{"example.com/job": json.RawMessage(`"abcd"`)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Sum != 4 || fmt.Sprint(got) != "[1 2 3]" || global.Load() != 3 {
				t.Fatalf("meta seen %d, progress %v, ProgressHandler %d", out.Sum, got, global.Load())
			}
			cs.mu.Lock()
			left := len(cs.progress)
			cs.mu.Unlock()
			if left != 0 {
				t.Fatalf("%d progress watches left after the call", left)
			}
		})
	}
}

// TestEraMessages checks that errors name what happened in the session's
// era: the capabilities a 2026-07-28 server declared in server/discover,
// not at initialize, and EraAuto's probe rather than an initialize that
// was never answered.
func TestEraMessages(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "bare", Version: "1"}, nil)
	for _, tc := range []struct {
		era       Era
		want, not string
	}{
		{EraHandshake, `needed for resources/read at initialize`, "server/discover"},
		{EraModern, `needed for resources/read in its server/discover answer`, "initialize"},
	} {
		cs := eraClient(t, s, tc.era, nil)
		_, err := cs.ReadResource(t.Context(), &ReadResourceParams{URI: "x://y"})
		var ce *CapabilityError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%v: %v, want %q", tc.era, err, tc.want)
		}
	}

	// A server process that exits at once: EraAuto's probe found no
	// server, and initialize was never tried.
	if _, err := exec.LookPath("false"); err != nil {
		t.Skip("no false(1)")
	}
	for _, tc := range []struct {
		era       Era
		want, not string
	}{
		{EraAuto, "server/discover (automatic era detection; no server answered)", "initialize"},
		{EraModern, "server/discover", "initialize"},
		{EraHandshake, "initialize", "server/discover"},
	} {
		_, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: tc.era}).Connect(t.Context(), &transport.CommandTransport{Command: exec.Command("false")})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%v: %v, want %q and not %q", tc.era, err, tc.want, tc.not)
		}
	}
}

// fakeModernServer serves a client over in-memory transports as a
// 2026-07-28 server would at server/discover, and answers every other
// request with answer(method, params): the raw result.
func fakeModernServer(t *testing.T, answer func(method string, params json.RawMessage) string) *ClientSession {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	sc, err := st.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := sc.Read(context.Background())
			if err != nil {
				return
			}
			req, ok := m.(*jsonrpc.Request)
			if !ok || req.IsNotification() {
				continue
			}
			var result string
			switch req.Method {
			case MethodServerDiscover:
				result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}},"ttlMs":0,"cacheScope":"private"}`
			default:
				result = answer(req.Method, req.Params)
			}
			if err := sc.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)}); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { sc.Close(); <-done })
	var asked atomic.Int32
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		Era: EraModern,
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			asked.Add(1)
			return &ElicitResult{Action: ElicitActionDecline}, nil
		},
	}).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if n := asked.Load(); n > 0 {
			t.Errorf("the elicitation handler ran %d times", n)
		}
	})
	return cs
}

// TestModernResultTypeRefused checks that a 2026-07-28 client refuses, with
// a *ResultTypeError, a result of a type it did not negotiate, instead of
// reporting success with empty content.
func TestModernResultTypeRefused(t *testing.T) {
	checkGoroutines(t)
	for _, tc := range []struct {
		method string
		rt     ResultType
	}{
		{MethodToolsCall, "task"}, // the tasks extension, not declared
		{MethodToolsCall, "something_new"},
		{MethodToolsList, "task"},
		{MethodToolsList, ResultTypeInputRequired}, // tools/list takes no input
	} {
		t.Run(tc.method+"/"+string(tc.rt), func(t *testing.T) {
			cs := fakeModernServer(t, func(string, json.RawMessage) string {
				return `{"resultType":"` + string(tc.rt) + `","taskId":"t1","status":"working","content":[],"tools":[]}`
			})
			var res any
			var err error
			if tc.method == MethodToolsCall {
				res, err = cs.CallTool(t.Context(), &CallToolParams{Name: "x"})
			} else {
				res, err = cs.ListTools(t.Context(), nil)
			}
			var re *ResultTypeError
			if !errors.As(err, &re) || re.ResultType != tc.rt || re.Method != tc.method || !isNilPointer(res) {
				t.Fatalf("%v, %v; want a *ResultTypeError for %q", res, err, tc.rt)
			}
		})
	}
}

// TestModernTooManyInputRequests checks that a round asking for more
// inputs than the client fulfils fails with an error naming the bound, and
// that none is fulfilled.
func TestModernTooManyInputRequests(t *testing.T) {
	checkGoroutines(t)
	const asks = 10000
	var b strings.Builder
	for i := range asks {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}`, i)
	}
	cs := fakeModernServer(t, func(string, json.RawMessage) string {
		return `{"resultType":"input_required","requestState":"s","inputRequests":{` + b.String() + `}}`
	})
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "x"})
	var ie *InputRequestsError
	if !errors.As(err, &ie) || ie.Requests != asks || ie.Max != 64 || res != nil {
		t.Fatalf("CallTool: %v, %v; want an *InputRequestsError", res, err)
	}
	if !strings.Contains(err.Error(), "MaxInputRequests") {
		t.Fatalf("the error does not name the limit: %v", err)
	}
}

// rawPeer is a client that writes the messages a test scripts, over
// in-memory transports, to a server.
type rawPeer struct {
	t *testing.T
	c transport.Conn
}

func newRawPeer(t *testing.T, s *Server) *rawPeer {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); ss.Close(); ss.Wait() })
	return &rawPeer{t: t, c: c}
}

func (p *rawPeer) write(m jsonrpc.Message) {
	p.t.Helper()
	if err := p.c.Write(p.t.Context(), m); err != nil {
		p.t.Fatal(err)
	}
}

// read returns the next message that is not a notification.
func (p *rawPeer) read() jsonrpc.Message {
	p.t.Helper()
	for {
		m, err := p.c.Read(p.t.Context())
		if err != nil {
			p.t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.IsNotification() {
			continue
		}
		return m
	}
}

// TestElicitMalformedAnswer checks that an elicitation answer without an
// action ({} or null) never reaches the handler as a decline: in the
// handshake era Elicit fails, in 2026-07-28 the server asks again.
func TestElicitMalformedAnswer(t *testing.T) {
	checkGoroutines(t)
	newServer := func() (*Server, *atomic.Int32) {
		var answered atomic.Int32
		s := NewServer(&Implementation{Name: "ask", Version: "1"}, nil)
		must(t, AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
			res, err := req.Elicit(ctx, &ElicitParams{Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
			if err != nil {
				return "", err
			}
			answered.Add(1)
			return "action=" + string(res.Action), nil
		}))
		return s, &answered
	}
	for _, answer := range []string{`{}`, `null`, `{"content":{}}`} {
		t.Run("handshake/"+answer, func(t *testing.T) {
			s, answered := newServer()
			p := newRawPeer(t, s)
			p.write(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: MethodInitialize, Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"1"}}`)})
			p.read()
			p.write(&jsonrpc.Request{Method: NotificationInitialized})
			p.write(&jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: MethodToolsCall, Params: json.RawMessage(`{"name":"ask"}`)})
			ask, ok := p.read().(*jsonrpc.Request)
			if !ok || ask.Method != MethodElicitationCreate {
				t.Fatalf("got %#v, want elicitation/create", ask)
			}
			p.write(&jsonrpc.Response{ID: ask.ID, Result: json.RawMessage(answer)})
			resp, ok := p.read().(*jsonrpc.Response)
			if !ok || resp.Error != nil {
				t.Fatalf("got %#v", resp)
			}
			var res CallToolResult
			must(t, json.Unmarshal(resp.Result, &res))
			if !res.IsError || answered.Load() != 0 {
				t.Fatalf("the handler took %s as an answer: %s", answer, resp.Result)
			}
		})
		t.Run("modern/"+answer, func(t *testing.T) {
			s, answered := newServer()
			p := newRawPeer(t, s)
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
			p.write(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: MethodToolsCall, Params: json.RawMessage(`{"name":"ask",` + meta + `}`)})
			var ir InputRequiredResult
			resp := p.read().(*jsonrpc.Response)
			must(t, json.Unmarshal(resp.Result, &ir))
			if ir.ResultType != ResultTypeInputRequired || len(ir.InputRequests) != 1 {
				t.Fatalf("first round: %s", resp.Result)
			}
			var key string
			for k := range ir.InputRequests {
				key = k
			}
			retry, _ := json.Marshal(map[string]any{
				"name":           "ask",
				"inputResponses": map[string]json.RawMessage{key: json.RawMessage(answer)},
				"requestState":   ir.RequestState,
			})
			retry = append(retry[:len(retry)-1], []byte(","+meta+"}")...)
			p.write(&jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: MethodToolsCall, Params: retry})
			resp = p.read().(*jsonrpc.Response)
			ir = InputRequiredResult{}
			if resp.Error == nil {
				must(t, json.Unmarshal(resp.Result, &ir))
			}
			if ir.ResultType != ResultTypeInputRequired || ir.InputRequests[key] == nil || answered.Load() != 0 {
				t.Fatalf("the retry with %s: %s %v, want the same input request again", answer, resp.Result, resp.Error)
			}
		})
	}
}

// TestTypedPeerErrorsUnwrap checks that the typed errors a client makes of
// a server's error answer keep the *jsonrpc.Error they came as.
func TestTypedPeerErrorsUnwrap(t *testing.T) {
	checkGoroutines(t)
	s := testServer(t, nil)
	must(t, s.AddTool(&Tool{Name: "auth"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return nil, &URLElicitationRequiredError{Elicitations: []*ElicitParams{{Mode: ElicitModeURL, Message: "log in", URL: "https://example.com/login", ElicitationID: "e1"}}}
	}))
	for _, era := range []Era{EraHandshake, EraModern} {
		cs := eraClient(t, s, era, nil)
		res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "auth"})
		var ue *URLElicitationRequiredError
		var je *jsonrpc.Error
		if !errors.As(err, &ue) || !errors.As(err, &je) || je.Code != jsonrpc.CodeURLElicitationRequired || res != nil {
			t.Errorf("%v: CallTool: %v, %v", era, res, err)
		}
		rr, err := cs.ReadResource(t.Context(), &ReadResourceParams{URI: "test://items/missing"})
		var nf *ResourceNotFoundError
		if !errors.As(err, &nf) || !errors.As(err, &je) || rr != nil {
			t.Errorf("%v: ReadResource: %v, %v", era, rr, err)
		}
	}
}
