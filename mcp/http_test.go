package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// TestHTTPTransports runs one client scenario over every HTTP transport
// configuration, end to end through real HTTP on loopback, with the
// client pinned to the handshake era and with the default client, which
// finds the era itself (autoVersion is the revision it must get).
func TestHTTPTransports(t *testing.T) {
	checkGoroutines(t)
	tests := []struct {
		name        string
		stateless   bool
		autoVersion string
		client      func(url string) transport.Transport
		handler     func(s *Server) (http.Handler, func())
	}{
		{"streamable auto", false, Version20260728, streamableClient, streamableHandler(nil)},
		{"streamable json", false, Version20260728, streamableClient, streamableHandler(&transport.StreamableHTTPOptions{ResponseMode: transport.ResponseJSON})},
		{"streamable sse", false, Version20260728, streamableClient, streamableHandler(&transport.StreamableHTTPOptions{ResponseMode: transport.ResponseSSE})},
		{"streamable resumable", false, Version20260728, streamableClient, streamableHandler(&transport.StreamableHTTPOptions{EventStore: transport.NewMemoryEventStore(nil)})},
		{"stateless", true, Version20260728, streamableClient, streamableHandler(&transport.StreamableHTTPOptions{Stateless: true})},
		{"legacy sse", false, LatestVersion, func(url string) transport.Transport { return &transport.SSEClientTransport{URL: url} }, sseHandler},
		{"legacy sse by fallback", false, LatestVersion, streamableClient, sseHandler},
	}
	for _, tt := range tests {
		for _, era := range []Era{EraHandshake, EraAuto} {
			t.Run(tt.name+"/"+era.String(), func(t *testing.T) {
				testHTTPTransport(t, era, tt.stateless, tt.autoVersion, tt.client, tt.handler)
			})
		}
	}
}

// testHTTPTransport is one run of TestHTTPTransports.
func testHTTPTransport(t *testing.T, era Era, stateless bool, autoVersion string, client func(url string) transport.Transport, handler func(s *Server) (http.Handler, func())) {
	s := httpTestServer(t)
	h, closeHandler := handler(s)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer closeHandler()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		Era: era,
		CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "sampled"}}}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	c.AddRoots(&Root{URI: "file:///work", Name: "work"})
	ctx := context.Background()
	cs, err := c.Connect(ctx, client(srv.URL))
	must(t, err)
	defer cs.Close()
	if want := map[Era]string{EraHandshake: LatestVersion, EraAuto: autoVersion}[era]; cs.ProtocolVersion() != want {
		t.Errorf("protocol %s, want %s", cs.ProtocolVersion(), want)
	}

	tools, err := cs.ListTools(ctx, nil)
	must(t, err)
	if len(tools.Tools) != 6 {
		t.Fatalf("%d tools", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &CallToolParams{Name: "add", Arguments: []byte(`{"a":1,"b":2}`)})
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != `{"sum":3}` {
		t.Errorf("add: %q", got)
	}
	rr, err := cs.ReadResource(ctx, &ReadResourceParams{URI: "test://a"})
	must(t, err)
	if rr.Contents[0].Text != "A" {
		t.Errorf("read: %+v", rr.Contents[0])
	}
	params := &CallToolParams{Name: "progress"}
	SetProgressToken(params, jsonrpc.StringID("p"))
	res, err = cs.CallTool(ctx, params)
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != "done" {
		t.Errorf("progress tool: %q", got)
	}
	res, err = cs.CallTool(ctx, &CallToolParams{Name: "headers"})
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != "http" {
		t.Errorf("headers tool: %q", got)
	}
	res, err = cs.CallTool(ctx, &CallToolParams{Name: "ask"})
	if stateless && era == EraHandshake {
		// No client capabilities in a stateless exchange of the
		// handshake era; in 2026-07-28 every request carries them.
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "capability") {
			t.Errorf("stateless ask: %+v, %v", res, err)
		}
		return
	}
	must(t, err)
	if got := res.Content[0].(*TextContent).Text; got != "file:///work|sampled|Ada" || res.IsError {
		t.Errorf("ask: %q (isError %v)", got, res.IsError)
	}
}

func streamableClient(url string) transport.Transport {
	return &transport.StreamableClientTransport{URL: url}
}

func streamableHandler(opts *transport.StreamableHTTPOptions) func(*Server) (http.Handler, func()) {
	return func(s *Server) (http.Handler, func()) {
		h := NewStreamableHTTPHandler(s, opts)
		return h, func() { h.Close() }
	}
}

func sseHandler(s *Server) (http.Handler, func()) {
	h := NewSSEHandler(s, nil)
	return h, func() { h.Close() }
}

func httpTestServer(t *testing.T) *Server {
	s := testServer(t, nil)
	must(t, AddTool(s, &Tool{Name: "progress"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		for i := 1; i <= 3; i++ {
			if err := req.ReportProgress(ctx, float64(i), 3, "step"); err != nil {
				return "", err
			}
		}
		return "done", nil
	}))
	must(t, AddTool(s, &Tool{Name: "headers"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		info := transport.HTTPRequestInfoFromContext(ctx)
		if info == nil || info.Header.Get("Content-Type") != "application/json" {
			return "", errors.New("no HTTP request in the context")
		}
		return "http", nil
	}))
	must(t, AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		msg, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 10, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}})
		if err != nil {
			return "", err
		}
		el, err := req.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s|%s|%v", roots.Roots[0].URI, msg.Content[0].(*TextContent).Text, el.Content["name"]), nil
	}))
	return s
}

// TestHTTPSessionsVisibleToServer checks that HTTP sessions are server
// sessions with the transport's session ID, and that closing one from the
// server ends it for the client.
func TestHTTPSessionsVisibleToServer(t *testing.T) {
	checkGoroutines(t)
	s := httpTestServer(t)
	var initialized atomic.Int32
	s.opts.InitializedHandler = func(context.Context, *ServerRequest[*InitializedParams]) { initialized.Add(1) }
	h := NewStreamableHTTPHandler(s, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL})
	must(t, err)
	defer cs.Close()
	ids := h.SessionIDs()
	if len(ids) != 1 {
		t.Fatalf("handler sessions %v", ids)
	}
	var ss *ServerSession
	for _, x := range s.Sessions() {
		if x.ID() == ids[0] {
			ss = x
		}
	}
	if ss == nil {
		t.Fatalf("no server session with ID %s", ids[0])
	}
	if ss.ProtocolVersion() != LatestVersion {
		t.Errorf("version %q", ss.ProtocolVersion())
	}
	ss.Close()
	ss.Wait()
	if _, err := cs.ListTools(ctx, nil); !errors.Is(err, transport.ErrSessionExpired) {
		t.Errorf("call on a closed session: %v, want ErrSessionExpired", err)
	}
}
