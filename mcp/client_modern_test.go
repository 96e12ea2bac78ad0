package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// modernPair connects a client pinned to 2026-07-28 to s over in-memory
// transports.
func modernPair(t *testing.T, s *Server, opts *ClientOptions) *ClientSession {
	t.Helper()
	o := ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = Version20260728
	return pairWith(t, s, &o)
}

// pairWith connects a client with opts to s in memory, both closed at the
// end of the test.
func pairWith(t *testing.T, s *Server, opts *ClientOptions) *ClientSession {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	cs, err := NewClient(&Implementation{Name: "modern", Version: "1"}, opts).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestModernClient checks the client of the stateless era against the
// server: discover at Connect, the _meta envelope the server requires,
// and input_required rounds answered by the client's own handlers, the
// caller seeing only the final result.
func TestModernClient(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "dual", Version: "2"}, &ServerOptions{Instructions: "be nice"})
	type none struct{}
	if err := AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		who, err := req.Elicit(ctx, &ElicitParams{Message: "Who?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		res, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 5, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%v/%s/%s", who.Content["name"], res.Content[0].(*TextContent).Text, req.ProtocolVersion()), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, &Tool{Name: "greedy"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		// A new question every round: the client gives up.
		var n int
		for {
			n++
			if _, err := req.Elicit(ctx, &ElicitParams{Message: fmt.Sprint("question ", n), RequestedSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
				return "", err
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	elicits, samplings := 0, 0
	cs := modernPair(t, s, &ClientOptions{
		MaxInputRounds: 3,
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			elicits++
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error) {
			samplings++
			return &CreateMessageResult{Role: RoleAssistant, Content: Contents{&TextContent{Text: "yo"}}, Model: "m"}, nil
		},
	})
	if got := cs.ProtocolVersion(); got != Version20260728 {
		t.Fatalf("ProtocolVersion %q", got)
	}
	d := cs.DiscoverResult()
	if d == nil || d.Meta.ServerInfo == nil || d.Meta.ServerInfo.Name != "dual" || d.Instructions != "be nice" || d.Capabilities.Tools == nil {
		t.Fatalf("DiscoverResult %+v", d)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 2 || tools.ResultType != ResultTypeComplete {
		t.Fatalf("ListTools: %+v, %v", tools, err)
	}
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*TextContent).Text; got != "Ada/yo/2026-07-28" || res.ResultType != ResultTypeComplete {
		t.Fatalf("CallTool: %q (%s)", got, res.ResultType)
	}
	if elicits != 1 || samplings != 1 {
		t.Fatalf("handlers ran %d and %d times, want once each", elicits, samplings)
	}
	var rounds *InputRoundsError
	if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "greedy"}); !errors.As(err, &rounds) || rounds.Rounds != 3 {
		t.Fatalf("a server that keeps asking: %v", err)
	}
}

// TestModernClientUndeclaredInput checks that an input request the client
// has no handler for fails the call with a typed error, and that a
// server without the revision fails Connect.
func TestModernClientUndeclaredInput(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	type none struct{}
	if err := AddTool(s, &Tool{Name: "roots"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		if _, err := req.ListRoots(ctx); err != nil {
			return "", err
		}
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	// The client declares roots (always) but no sampling: a server that
	// asks for sampling anyway gets a refusal from the client.
	if err := AddTool(s, &Tool{Name: "sample"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 5, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}})
		return "", err
	}); err != nil {
		t.Fatal(err)
	}
	cs := modernPair(t, s, nil)
	if res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "roots"}); err != nil || res.Content[0].(*TextContent).Text != "ok" {
		t.Fatalf("roots: %+v, %v", res, err)
	}
	_, err := cs.CallTool(t.Context(), &CallToolParams{Name: "sample"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeMissingRequiredClientCapability {
		t.Fatalf("sampling the client did not declare: %v, want -32021 from the server", err)
	}
	if !strings.Contains(err.Error(), "sampling") {
		t.Fatalf("error %v does not name sampling", err)
	}
}

// TestModernClientHTTP runs the client of 2026-07-28 over Streamable HTTP
// against the dual-era handler: no session, the revision's headers
// (Mcp-Param of an x-mcp-header tool included, which the server checks),
// input rounds, and errors that come with a 4xx status.
func TestModernClientHTTP(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "dual", Version: "2"}, nil)
	if err := s.AddTool(&Tool{Name: "region", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`)},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{&TextContent{Text: req.Extra.Header.Get("Mcp-Param-Region") + "|" + req.Extra.Header.Get("Mcp-Param-N")}}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	type none struct{}
	if err := AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		res, err := req.Elicit(ctx, &ElicitParams{Message: "Who?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Content["name"]), nil
	}); err != nil {
		t.Fatal(err)
	}
	h := NewStreamableHTTPHandler(s, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	c := NewClient(&Implementation{Name: "modern", Version: "1"}, &ClientOptions{
		ProtocolVersion: Version20260728,
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Grace"}}, nil
		},
	})
	cs, err := c.Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" || cs.ProtocolVersion() != Version20260728 || cs.DiscoverResult() == nil {
		t.Fatalf("session %q, version %q, discover %v", cs.ID(), cs.ProtocolVersion(), cs.DiscoverResult())
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "region", Arguments: json.RawMessage(`{"region":"Zürich","n":42}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*TextContent).Text; got != "=?base64?WsO8cmljaA==?=|42" {
		t.Fatalf("the headers the server saw: %q", got)
	}
	res, err = cs.CallTool(t.Context(), &CallToolParams{Name: "ask"})
	if err != nil || res.Content[0].(*TextContent).Text != "Grace" {
		t.Fatalf("input round over HTTP: %+v, %v", res, err)
	}
	// ping was removed in 2026-07-28: Ping asks server/discover.
	if err := cs.Ping(t.Context()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

// TestModernClientDropsInvalidTools checks that a tools/list over HTTP
// loses the tools whose x-mcp-header marks break the rules.
func TestModernClientDropsInvalidTools(t *testing.T) {
	cs := &ClientSession{client: NewClient(&Implementation{Name: "c", Version: "1"}, nil)}
	list := &ListToolsResult{Tools: []*Tool{
		{Name: "good", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`)},
		{Name: "number", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`)},
		{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "in-items", InputSchema: json.RawMessage(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`)},
	}}
	cs.checkToolHeaders(list)
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	if got := strings.Join(names, ","); got != "good,plain" {
		t.Fatalf("kept %s, want good,plain", got)
	}
	if len(cs.toolHeaders["good"]) != 1 {
		t.Fatalf("marks kept: %v", cs.toolHeaders)
	}
}

// TestEraAutoFallsBack checks EraAuto against servers of the handshake
// era over a stream transport: one that refuses server/discover and one
// that never answers it (DiscoverTimeout); both end up initialized.
func TestEraAutoFallsBack(t *testing.T) {
	checkGoroutines(t)
	for _, silent := range []bool{false, true} {
		t.Run(fmt.Sprint("silent=", silent), func(t *testing.T) {
			ct, st := transport.NewInMemoryTransports()
			sc, err := st.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			peer := jsonrpc.NewConn(sc, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				switch req.Method {
				case MethodServerDiscover:
					if silent {
						<-ctx.Done() // a server that ignores requests before initialize
						return nil, ctx.Err()
					}
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: server/discover before initialize"}
				case MethodInitialize:
					return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"old","version":"1"}}`), nil
				}
				return nil, nil
			})})
			peer.Start()
			defer func() { peer.Close(); peer.Wait() }()
			c := NewClient(&Implementation{Name: "auto", Version: "1"}, &ClientOptions{Era: EraAuto, DiscoverTimeout: 50 * time.Millisecond})
			cs, err := c.Connect(t.Context(), ct)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if cs.ProtocolVersion() != Version20251125 || cs.DiscoverResult() != nil || cs.InitializeResult().ServerInfo.Name != "old" {
				t.Fatalf("after the fallback: %s, %+v", cs.ProtocolVersion(), cs.InitializeResult())
			}
		})
	}
}

// TestModernClientCache checks the client's cache of 2026-07-28 results:
// a list the server lets it keep is served from the cache until it
// expires, WithoutCache and ClearCache go to the server, and a ttlMs of 0
// is never cached.
func TestModernClientCache(t *testing.T) {
	checkGoroutines(t)
	for _, ttl := range []time.Duration{time.Hour, 0} {
		t.Run(fmt.Sprint("ttl=", ttl), func(t *testing.T) {
			var lists int
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{CacheTTL: ttl, Middleware: []Middleware{
				func(next MethodHandler) MethodHandler {
					return func(ctx context.Context, req Request) (Result, error) {
						if req.Method() == MethodToolsList {
							lists++
						}
						return next(ctx, req)
					}
				},
			}})
			if err := s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
				return &CallToolResult{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			cs := modernPair(t, s, nil)
			list := func(ctx context.Context) {
				t.Helper()
				res, err := cs.ListTools(ctx, nil)
				if err != nil || len(res.Tools) != 1 {
					t.Fatalf("ListTools: %+v, %v", res, err)
				}
			}
			list(t.Context())
			list(t.Context())
			want := 1
			if ttl == 0 {
				want = 2
			}
			if lists != want {
				t.Fatalf("two lists reached the server %d times, want %d", lists, want)
			}
			list(WithoutCache(t.Context()))
			cs.ClearCache()
			list(t.Context())
			if lists != want+2 {
				t.Fatalf("after a bypass and a clear, %d lists reached the server, want %d", lists, want+2)
			}
		})
	}
}

// TestModernClientListen opens subscriptions/listen from the client of
// 2026-07-28, over in-memory transports and Streamable HTTP: the
// acknowledgment says what the server honours, a tool added on the
// server reaches ToolListChangedHandler, and Close ends the stream.
func TestModernClientListen(t *testing.T) {
	checkGoroutines(t)
	for _, kind := range []string{"in-memory", "http", "handshake"} {
		t.Run(kind, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{ListChangedDelay: -1})
			add := func(name string) {
				if err := s.AddTool(&Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
					return &CallToolResult{}, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			add("first")
			changed := make(chan struct{}, 4)
			opts := &ClientOptions{Era: EraModern, ToolListChangedHandler: func(context.Context, *ClientRequest[*ToolListChangedParams]) {
				changed <- struct{}{}
			}}
			var cs *ClientSession
			switch kind {
			case "in-memory":
				cs = modernPair(t, s, opts)
			case "handshake":
				opts.Era = EraHandshake
				cs, _ = connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, opts))
			default:
				h := NewStreamableHTTPHandler(s, nil)
				srv := httptest.NewServer(h)
				t.Cleanup(func() { srv.Close(); h.Close() })
				var err error
				cs, err = NewClient(&Implementation{Name: "c", Version: "1"}, opts).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
			}
			sub, err := cs.Listen(t.Context(), &SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			if !sub.Acknowledged.ToolsListChanged || sub.Acknowledged.PromptsListChanged {
				t.Fatalf("acknowledged %+v, want tools only (the server has no prompts)", sub.Acknowledged)
			}
			add("second")
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no list_changed on the subscription")
			}
			if err := sub.Close(); err != nil || sub.Err() != nil {
				t.Fatalf("Close: %v, %v", err, sub.Err())
			}
		})
	}
	// In the handshake era Listen subscribes to resources with
	// resources/subscribe, and Close unsubscribes.
	var mu sync.Mutex
	var received []string
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Capabilities: &ServerCapabilities{Resources: &ResourceCapabilities{Subscribe: true}},
		Middleware: []Middleware{func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				uri := ""
				switch p := req.Parameters().(type) {
				case *SubscribeParams:
					uri = p.URI
				case *UnsubscribeParams:
					uri = p.URI
				}
				if uri != "" {
					mu.Lock()
					received = append(received, req.Method()+" "+uri)
					mu.Unlock()
				}
				return next(ctx, req)
			}
		}},
	})
	updated := make(chan string, 4)
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *ClientRequest[*ResourceUpdatedParams]) { updated <- req.Params.URI },
	}))
	sub, err := cs.Listen(t.Context(), &SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://a", "test://b"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (SubscriptionFilter{ResourceSubscriptions: []string{"test://a", "test://b"}}); !reflect.DeepEqual(sub.Acknowledged, want) {
		t.Errorf("acknowledged %+v, want %+v (no tools declared)", sub.Acknowledged, want)
	}
	if err := s.ResourceUpdated(t.Context(), &ResourceUpdatedParams{URI: "test://b"}); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-updated:
		if u != "test://b" {
			t.Errorf("updated %q", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated")
	}
	if err := sub.Close(); err != nil || sub.Err() != nil {
		t.Fatalf("Close: %v, %v", err, sub.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"resources/subscribe test://a", "resources/subscribe test://b", "resources/unsubscribe test://a", "resources/unsubscribe test://b"}
	if !slices.Equal(received, want) {
		t.Errorf("the server received %q, want %q", received, want)
	}
}

// TestModernClientRemovedMethods checks what the client does in
// 2026-07-28 with the methods that revision removed: SetLoggingLevel
// becomes the logLevel of every later request, Ping asks
// server/discover, Subscribe and Unsubscribe fail with ErrRemovedMethod
// without a request, and AddRoots sends no notification.
func TestModernClientRemovedMethods(t *testing.T) {
	checkGoroutines(t)
	var mu sync.Mutex
	var received []string // methods the server received
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Capabilities: &ServerCapabilities{Logging: &LoggingCapabilities{}, Resources: &ResourceCapabilities{Subscribe: true}},
		Middleware: []Middleware{func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				mu.Lock()
				received = append(received, req.Method())
				mu.Unlock()
				return next(ctx, req)
			}
		}},
	})
	type none struct{}
	if err := AddTool(s, &Tool{Name: "chatty"}, func(ctx context.Context, req *CallToolRequest, _ none) (string, error) {
		req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelDebug, Data: json.RawMessage(`"debug"`)})
		req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelError, Data: json.RawMessage(`"error"`)})
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	logs := make(chan LoggingLevel, 10)
	cs := modernPair(t, s, &ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *ClientRequest[*LoggingMessageParams]) { logs <- req.Params.Level },
	})
	// call calls chatty and returns the levels of the first n log
	// messages that follow (in order: they come before the result).
	call := func(n int) []LoggingLevel {
		t.Helper()
		if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "chatty"}); err != nil {
			t.Fatal(err)
		}
		var got []LoggingLevel
		for range n {
			select {
			case l := <-logs:
				got = append(got, l)
			case <-time.After(10 * time.Second):
				t.Fatalf("no log message after %v", got)
			}
		}
		return got
	}
	// Before SetLoggingLevel, a client with a LoggingMessageHandler asks
	// for every level, as a handshake-era server sends every message.
	if got := call(2); !slices.Equal(got, []LoggingLevel{LoggingLevelDebug, LoggingLevelError}) {
		t.Errorf("log messages by default: %v, want [debug error]", got)
	}
	if err := cs.SetLoggingLevel(t.Context(), LoggingLevelWarning); err != nil {
		t.Fatal(err)
	}
	if got := call(1); !slices.Equal(got, []LoggingLevel{LoggingLevelError}) {
		t.Errorf("log messages at warning: %v, want [error]", got)
	}
	if err := cs.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if err := cs.Subscribe(t.Context(), &SubscribeParams{URI: "test://r"}); !errors.Is(err, ErrRemovedMethod) {
		t.Errorf("Subscribe: %v, want ErrRemovedMethod", err)
	}
	if err := cs.Unsubscribe(t.Context(), &UnsubscribeParams{URI: "test://r"}); !errors.Is(err, ErrRemovedMethod) {
		t.Errorf("Unsubscribe: %v, want ErrRemovedMethod", err)
	}
	cs.client.AddRoots(&Root{URI: "file:///tmp"})
	if err := cs.Ping(t.Context()); err != nil { // after anything AddRoots sent
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{MethodServerDiscover, MethodToolsCall, MethodToolsCall, MethodServerDiscover, MethodServerDiscover}
	if !slices.Equal(received, want) {
		t.Errorf("the server received %v, want %v", received, want)
	}
}

// TestEraAutoRemembers checks that a client remembers a server that
// EraAuto found to be of the handshake era, going straight to initialize
// the next time, and asks again after initialize fails: here the server
// behind the URL moves from the handshake era only to 2026-07-28 only.
func TestEraAutoRemembers(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	old := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SupportedVersions: []string{Version20251125}})
	modern := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SupportedVersions: []string{Version20260728}})
	defer old.Close()
	defer modern.Close()
	var current atomic.Pointer[transport.StreamableHTTPHandler]
	current.Store(old)
	var mu sync.Mutex
	var methods []string // the Mcp-Method or, for initialize, "initialize"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			m := r.Header.Get("Mcp-Method")
			if m == "" && r.Header.Get("Mcp-Session-Id") == "" {
				m = "initialize"
			}
			if m != "" {
				mu.Lock()
				methods = append(methods, m)
				mu.Unlock()
			}
		}
		current.Load().ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, nil)
	connect := func() (*ClientSession, []string, error) {
		mu.Lock()
		methods = nil
		mu.Unlock()
		cs, err := c.Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL, DisableSSEFallback: true})
		mu.Lock()
		defer mu.Unlock()
		return cs, slices.Clone(methods), err
	}
	steps := []struct {
		name    string
		modern  bool // the server's era from this step on
		want    []string
		wantEra Era // 0 (EraAuto): Connect fails
	}{
		{"first: probe, then initialize", false, []string{MethodServerDiscover, "initialize"}, EraHandshake},
		{"remembered: initialize only", false, []string{"initialize"}, EraHandshake},
		{"the server moved: initialize fails", true, []string{"initialize"}, EraAuto},
		{"asked again: 2026-07-28", true, []string{MethodServerDiscover}, EraModern},
		{"modern again", true, []string{MethodServerDiscover}, EraModern},
	}
	for _, st := range steps {
		if st.modern {
			current.Store(modern)
		}
		cs, got, err := connect()
		if !slices.Equal(got, st.want) {
			t.Errorf("%s: the server got %v, want %v", st.name, got, st.want)
		}
		if st.wantEra == EraAuto {
			if err == nil {
				cs.Close()
				t.Errorf("%s: Connect succeeded", st.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if cs.Era() != st.wantEra {
			t.Errorf("%s: era %v, want %v", st.name, cs.Era(), st.wantEra)
		}
		cs.Close()
	}
}

// TestReadResourceNotFound checks that ReadResource reports an unknown
// URI as a *ResourceNotFoundError in both eras, whose answers differ
// (-32002, and -32602 naming the URI), the wire error still reachable.
func TestReadResourceNotFound(t *testing.T) {
	checkGoroutines(t)
	for _, tt := range []struct {
		era  Era
		code int64
	}{{EraHandshake, jsonrpc.CodeResourceNotFound}, {EraModern, jsonrpc.CodeInvalidParams}} {
		t.Run(tt.era.String(), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			s.AddResource(&Resource{URI: "test://there", Name: "there"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
				return &ReadResourceResult{Contents: []*ResourceContents{{URI: "test://there", Text: "hi"}}}, nil
			})
			cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: tt.era}))
			_, err := cs.ReadResource(t.Context(), &ReadResourceParams{URI: "test://nowhere"})
			var nf *ResourceNotFoundError
			if !errors.As(err, &nf) || nf.URI != "test://nowhere" {
				t.Fatalf("err %v, want a *ResourceNotFoundError", err)
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != tt.code {
				t.Errorf("wire error %v, want code %d", je, tt.code)
			}
			if _, err := cs.ReadResource(t.Context(), &ReadResourceParams{URI: "test://there"}); err != nil {
				t.Errorf("a resource that exists: %v", err)
			}
		})
	}
}

// TestCacheHintsPerCall checks the cache hints of 2026-07-28 list
// results: the server's default (ServerOptions.CacheTTL, CacheScope), and
// a middleware overriding them for one call.
func TestCacheHintsPerCall(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		CacheTTL:   time.Hour,
		CacheScope: CacheScopePublic,
		Middleware: []Middleware{func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				res, err := next(ctx, req)
				if l, ok := res.(*ListToolsResult); ok {
					ms := int64(42)
					l.TTLMs, l.CacheScope = &ms, CacheScopePrivate
				}
				return res, err
			}
		}},
	})
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	s.AddPrompt(&Prompt{Name: "p"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{}, nil
	})
	cs := modernPair(t, s, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.TTLMs == nil || *tools.TTLMs != 42 || tools.CacheScope != CacheScopePrivate {
		t.Errorf("tools/list hints %v %q, want 42 private (the middleware's)", tools.TTLMs, tools.CacheScope)
	}
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if prompts.TTLMs == nil || *prompts.TTLMs != 3600000 || prompts.CacheScope != CacheScopePublic {
		t.Errorf("prompts/list hints %v %q, want 3600000 public (the server's)", prompts.TTLMs, prompts.CacheScope)
	}
}

// TestResultCacheBounds checks the bounds of a client session's cache of
// 2026-07-28 results, which the server fills: entries, bytes in all, and
// the length of one result.
func TestResultCacheBounds(t *testing.T) {
	ms := int64(3600000)
	res := &ListToolsResult{TTLMs: &ms}
	now := time.Now()
	var c resultCache
	count := func() (int, int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.m), c.bytes
	}
	c.put("big", res, make([]byte, maxCachedResultBytes+1), now)
	if n, _ := count(); n != 0 {
		t.Error("a result over maxCachedResultBytes was kept")
	}
	page := make([]byte, maxCachedResultBytes)
	for i := range 3 * maxCachedBytes / maxCachedResultBytes {
		c.put("tools/list\x00"+strconv.Itoa(i), res, page, now)
		if n, b := count(); b > maxCachedBytes || n > maxCachedResults || b != n*len(page) {
			t.Fatalf("after %d pages: %d entries, %d bytes", i+1, n, b)
		}
	}
	for i := range 2 * maxCachedResults {
		c.put("prompts/list\x00"+strconv.Itoa(i), res, []byte("{}"), now)
		if n, _ := count(); n > maxCachedResults {
			t.Fatalf("after %d small results: %d entries", i+1, n)
		}
	}
	c.clear(MethodPromptsList)
	if n, b := count(); n != 0 || b != 0 {
		t.Errorf("after clearing: %d entries, %d bytes", n, b)
	}
}

// TestServerKeepAliveModern checks that a server's KeepAlive sends no
// ping on a connection of 2026-07-28, which has no requests from server
// to client, and so does not close it: the client keeps calling.
func TestServerKeepAliveModern(t *testing.T) {
	checkGoroutines(t)
	var mu sync.Mutex
	var got []string // what the client received
	// 25 ms: a session whose client says nothing for two intervals is
	// closed, and a client under -race on a busy machine can take a few
	// milliseconds to send its first message (1 ms flaked 1 in 40).
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{KeepAlive: 25 * time.Millisecond})
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	cs := modernPair(t, s, &ClientOptions{Middleware: []Middleware{func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req Request) (Result, error) {
			mu.Lock()
			got = append(got, req.Method())
			mu.Unlock()
			return next(ctx, req)
		}
	}}})
	for range 100 { // 100 ms at least: four keepalive intervals
		if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // lets the keepalive ticker run between calls; not synchronisation
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the client received %v", got)
	}
}

// TestModernClientRefusesServerRequests checks that a client session of
// 2026-07-28 answers a request from the server with -32601, without
// running its handler: the revision has no requests from server to
// client.
func TestModernClientRefusesServerRequests(t *testing.T) {
	checkGoroutines(t)
	ct, st := transport.NewInMemoryTransports()
	sconn, err := st.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fake := jsonrpc.NewConn(sconn, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`), nil
	})})
	fake.Start()
	defer func() { fake.Close(); fake.Wait() }()
	sampled := false
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error) {
			sampled = true
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "x"}}}, nil
		},
	}).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.Era() != EraModern {
		t.Fatalf("era %v", cs.Era())
	}
	_, err = fake.Call(t.Context(), MethodSamplingCreateMessage, json.RawMessage(`{"messages":[],"maxTokens":5}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("the server's request got %v, want -32601", err)
	}
	if sampled {
		t.Error("the client ran its sampling handler")
	}
}

// TestServerRemovedMethodsModern checks that what a server session may
// not send in 2026-07-28 fails with ErrRemovedMethod, from a handler of
// such a request: ping and notifications/elicitation/complete.
func TestServerRemovedMethodsModern(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	var pingErr, completeErr error
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		pingErr = req.Session.Ping(ctx)
		completeErr = req.Session.NotifyElicitationComplete(ctx, "e1")
		return &CallToolResult{}, nil
	})
	cs := modernPair(t, s, nil)
	if _, err := cs.CallTool(t.Context(), &CallToolParams{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"Ping": pingErr, "NotifyElicitationComplete": completeErr} {
		if !errors.Is(err, ErrRemovedMethod) {
			t.Errorf("%s: %v, want ErrRemovedMethod", name, err)
		}
	}
}

// TestModernClientKeepAlive checks the client's KeepAlive in 2026-07-28
// over a stream transport: it asks server/discover, and closes the
// session once the server stops answering.
func TestModernClientKeepAlive(t *testing.T) {
	checkGoroutines(t)
	ct, st := transport.NewInMemoryTransports()
	sconn, err := st.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var discovers atomic.Int32
	stop := make(chan struct{})
	fake := jsonrpc.NewConn(sconn, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method != MethodServerDiscover {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
		}
		if discovers.Add(1) > 3 {
			select { // stops answering: the client's ping times out
			case <-stop:
			case <-ctx.Done():
			}
			return nil, ctx.Err()
		}
		return json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`), nil
	})})
	fake.Start()
	defer func() { close(stop); fake.Close(); fake.Wait() }()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{KeepAlive: 5 * time.Millisecond}).Connect(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	select {
	case <-cs.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when the server stopped answering")
	}
	if n := discovers.Load(); n < 4 {
		t.Errorf("server/discover asked %d times, want at least 4 (Connect and the pings)", n)
	}
}

// TestModernClientHTTPErrorStatus checks that a JSON-RPC error the
// server sends with a 4xx status (as 2026-07-28 asks for some codes)
// reaches the caller as the answer to its request.
func TestModernClientHTTPErrorStatus(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{}, nil
	})
	h := NewStreamableHTTPHandler(s, nil)
	defer h.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != MethodToolsCall {
			h.ServeHTTP(w, r)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"sampling":{}}}}}`, req.ID)
	}))
	defer srv.Close()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(t.Context(), &CallToolParams{Name: "t"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeMissingRequiredClientCapability {
		t.Fatalf("CallTool: %v, want the server's -32021", err)
	}
}
