package otelmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/transport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// side is the instrumentation of one side: its spans and metrics.
type side struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	opts   *otelmcp.Options
}

func newSide(t *testing.T) *side {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	rd := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(rd))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &side{spans: sr, reader: rd, opts: &otelmcp.Options{TracerProvider: tp, MeterProvider: mp}}
}

// span returns the one ended span of the kind whose name starts with
// prefix.
func (s *side) span(t *testing.T, kind trace.SpanKind, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.SpanKind() == kind && sp.Name() == name {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, sp := range s.spans.Ended() {
			names = append(names, sp.SpanKind().String()+" "+sp.Name())
		}
		t.Fatalf("%d %s spans %q; have %q", len(found), kind, name, names)
	}
	return found[0]
}

func attr(sp sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, a := range sp.Attributes() {
		if a.Key == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttrs(t *testing.T, sp sdktrace.ReadOnlySpan, want map[attribute.Key]string) {
	t.Helper()
	for k, v := range want {
		got, ok := attr(sp, k)
		switch {
		case v == "" && ok:
			t.Errorf("%s: %s = %q, want none", sp.Name(), k, got.String())
		case v == "*" && !ok:
			t.Errorf("%s: no %s", sp.Name(), k)
		case v != "" && v != "*" && got.String() != v:
			t.Errorf("%s: %s = %q, want %q", sp.Name(), k, got.String(), v)
		}
	}
}

// newServer returns a server with the test tools, instrumented by srv.
func newServer(t *testing.T, srv *side) *mcp.Server {
	s, _ := newBlockingServer(t, srv)
	return s
}

// newBlockingServer is newServer, with a channel that the tool "block"
// sends to when it blocks.
func newBlockingServer(t *testing.T, srv *side) (*mcp.Server, chan struct{}) {
	blocked := make(chan struct{}, 1)
	recv, send := otelmcp.ServerMiddleware(srv.opts)
	s := mcp.NewServer(&mcp.Implementation{Name: "srv", Version: "1"}, &mcp.ServerOptions{
		Middleware: []mcp.Middleware{recv}, SendingMiddleware: []mcp.Middleware{send},
	})
	add := func(name string, h mcp.ToolHandler) {
		if err := s.AddTool(&mcp.Tool{Name: name}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("echo", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	add("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
	})
	add("invalid", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, jsonrpc.NewError(-32602, "bad arguments")
	})
	add("boom", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("boom")
	})
	add("block", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		blocked <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	add("ask", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{
			Message:         "name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content["name"].(string)}}}, nil
	})
	err := s.AddResource(&mcp.Resource{URI: "file:///secret", Name: "secret"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///secret", Text: "s"}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, blocked
}

// connect connects a client instrumented by cli to s over the transport
// named by how, in era.
func connect(t *testing.T, how string, era mcp.Era, s *mcp.Server, cli *side) *mcp.ClientSession {
	cs, _ := connectWait(t, how, era, s, cli)
	return cs
}

// connectWait is connect, also returning a function that closes the
// client and waits until the server session ended (memory and stdio).
func connectWait(t *testing.T, how string, era mcp.Era, s *mcp.Server, cli *side) (*mcp.ClientSession, func()) {
	t.Helper()
	var ss *mcp.ServerSession
	ctx := context.Background()
	recv, send := otelmcp.ClientMiddleware(cli.opts)
	c := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, &mcp.ClientOptions{
		Era: era, Middleware: []mcp.Middleware{recv}, SendingMiddleware: []mcp.Middleware{send},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	var ct transport.Transport
	switch how {
	case "memory":
		var st transport.Transport
		ct, st = transport.NewInMemoryTransports()
		var err error
		ss, err = s.Connect(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Wait() })
	case "stdio":
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		var err error
		ss, err = s.Connect(ctx, &transport.IOTransport{Reader: sr, Writer: sw})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Wait() })
		ct = &transport.IOTransport{Reader: cr, Writer: cw}
	case "http":
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(s, nil))
		t.Cleanup(hs.Close)
		ct = &transport.StreamableClientTransport{URL: hs.URL}
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, func() {
		_ = cs.Close()
		if ss != nil {
			_ = ss.Wait()
		}
	}
}

var transports = []string{"memory", "stdio", "http"}

var eras = []struct {
	name    string
	era     mcp.Era
	version string
}{
	{"handshake", mcp.EraHandshake, "2025-11-25"},
	{"modern", mcp.EraModern, "2026-07-28"},
}

// TestCallSpans: a tools/call gives a CLIENT span and a SERVER span in one
// trace, with the attribute table, over every transport in both eras.
func TestCallSpans(t *testing.T) {
	for _, how := range transports {
		for _, e := range eras {
			t.Run(how+"/"+e.name, func(t *testing.T) {
				srv, cli := newSide(t), newSide(t)
				cs := connect(t, how, e.era, newServer(t, srv), cli)
				params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"secret":"x"}`)}
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					t.Fatal(err)
				}
				if _, ok := params.Meta.Other["traceparent"]; ok {
					t.Error("the caller's params got a traceparent")
				}
				c := cli.span(t, trace.SpanKindClient, "tools/call echo")
				s := srv.span(t, trace.SpanKindServer, "tools/call echo")
				if c.SpanContext().TraceID() != s.SpanContext().TraceID() || s.Parent().SpanID() != c.SpanContext().SpanID() {
					t.Errorf("server span %v is not the child of client span %v", s.Parent(), c.SpanContext())
				}
				common := map[attribute.Key]string{
					"mcp.method.name":            "tools/call",
					"jsonrpc.protocol.version":   "2.0",
					"gen_ai.operation.name":      "execute_tool",
					"gen_ai.tool.name":           "echo",
					"mcp.protocol.version":       e.version,
					"error.type":                 "",
					"rpc.response.status_code":   "",
					"gen_ai.tool.call.arguments": "",
				}
				wantAttrs(t, c, common)
				wantAttrs(t, s, common)
				wantAttrs(t, s, map[attribute.Key]string{"jsonrpc.request.id": "*"})
				cidv, _ := attr(c, "jsonrpc.request.id")
				sidv, _ := attr(s, "jsonrpc.request.id")
				cid, sid := cidv.String(), sidv.String()
				if cid == "" || cid != sid {
					t.Errorf("jsonrpc.request.id: client span %q, server span %q; want the same id", cid, sid)
				}
				if e.era == mcp.EraHandshake {
					wantAttrs(t, s, map[attribute.Key]string{"mcp.session.id": "*"})
				} else {
					wantAttrs(t, s, map[attribute.Key]string{"mcp.session.id": ""})
				}
				if how == "http" {
					wantAttrs(t, s, map[attribute.Key]string{"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1", "client.address": "127.0.0.1"})
					wantAttrs(t, c, map[attribute.Key]string{"network.transport": "tcp", "network.protocol.name": "http", "server.address": "127.0.0.1", "server.port": "*"})
				}
				if c.Status().Code != codes.Unset || s.Status().Code != codes.Unset {
					t.Errorf("status %v / %v, want unset", c.Status(), s.Status())
				}
			})
		}
	}
}

// TestErrors: a tool error, a JSON-RPC error, a panic and a cancellation
// each give status ERROR and their error.type, on both sides.
func TestErrors(t *testing.T) {
	tests := []struct {
		tool       string
		clientType string
		serverType string
		code       string
	}{
		{"fail", "tool_error", "tool_error", ""},
		{"invalid", "-32602", "-32602", "-32602"},
		{"boom", "-32603", "-32603", "-32603"},
		{"block", "cancelled", "cancelled", ""},
	}
	for _, e := range eras {
		for _, tt := range tests {
			t.Run(e.name+"/"+tt.tool, func(t *testing.T) {
				srv, cli := newSide(t), newSide(t)
				s0, blocked := newBlockingServer(t, srv)
				cs, wait := connectWait(t, "memory", e.era, s0, cli)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				stop := make(chan struct{})
				go func() {
					select {
					case <-blocked:
						cancel()
					case <-stop:
					}
				}()
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool})
				close(stop)
				wait() // the server's handler has returned
				c := cli.span(t, trace.SpanKindClient, "tools/call "+tt.tool)
				s := srv.span(t, trace.SpanKindServer, "tools/call "+tt.tool)
				for _, sp := range []struct {
					span sdktrace.ReadOnlySpan
					typ  string
				}{{c, tt.clientType}, {s, tt.serverType}} {
					if sp.span.Status().Code != codes.Error {
						t.Errorf("%v span status %v, want Error", sp.span.SpanKind(), sp.span.Status())
					}
					wantAttrs(t, sp.span, map[attribute.Key]string{"error.type": sp.typ, "rpc.response.status_code": tt.code})
				}
			})
		}
	}
}
