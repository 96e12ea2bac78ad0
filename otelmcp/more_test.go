package otelmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/transport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// spansNamed returns the ended spans of the kind and name, in the order
// they ended.
func spansNamed(s *side, kind trace.SpanKind, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.SpanKind() == kind && sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

// TestInputRounds: a 2026-07-28 call answered with input_required is one
// CLIENT span with a child span for the second round, and the server's
// span of each round is in the client's trace, under the span of its
// round. In the handshake era the server asks the client itself: its
// elicitation/create is a CLIENT span under its tools/call span, and the
// client's SERVER span for it continues that trace.
func TestInputRounds(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			srv, cli := newSide(t), newSide(t)
			cs, wait := connectWait(t, "memory", e.era, newServer(t, srv), cli)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "Ada" {
				t.Fatalf("result %q", got)
			}
			wait()
			calls := spansNamed(cli, trace.SpanKindClient, "tools/call ask")
			served := spansNamed(srv, trace.SpanKindServer, "tools/call ask")
			var top sdktrace.ReadOnlySpan
			for _, c := range calls {
				if _, ok := attr(c, otelmcp.InputRoundKey); !ok {
					top = c
				}
			}
			if top == nil {
				t.Fatal("no client span for the call")
			}
			tid := top.SpanContext().TraceID()
			for _, s := range served {
				if s.SpanContext().TraceID() != tid {
					t.Errorf("server span %v not in the client's trace %v", s.SpanContext(), tid)
				}
			}
			if e.era == mcp.EraModern {
				if len(calls) != 2 || len(served) != 2 {
					t.Fatalf("%d client spans, %d server spans; want 2 and 2", len(calls), len(served))
				}
				round := calls[0] // the round ends first
				if v, _ := attr(round, otelmcp.InputRoundKey); v.AsInt64() != 1 || round.Parent().SpanID() != top.SpanContext().SpanID() {
					t.Errorf("round span %v (round %v) is not the call's child", round.Parent(), v.String())
				}
				if served[0].Parent().SpanID() != top.SpanContext().SpanID() || served[1].Parent().SpanID() != round.SpanContext().SpanID() {
					t.Errorf("server spans under %v and %v, want the call and its round", served[0].Parent(), served[1].Parent())
				}
				return
			}
			if len(calls) != 1 || len(served) != 1 {
				t.Fatalf("%d client spans, %d server spans; want 1 and 1", len(calls), len(served))
			}
			ask := spansNamed(srv, trace.SpanKindClient, "elicitation/create")
			answer := spansNamed(cli, trace.SpanKindServer, "elicitation/create")
			if len(ask) != 1 || len(answer) != 1 {
				t.Fatalf("%d server CLIENT spans and %d client SERVER spans for elicitation/create; want 1 and 1", len(ask), len(answer))
			}
			if ask[0].Parent().SpanID() != served[0].SpanContext().SpanID() || answer[0].Parent().SpanID() != ask[0].SpanContext().SpanID() {
				t.Errorf("elicitation/create spans under %v and %v", ask[0].Parent(), answer[0].Parent())
			}
		})
	}
}

const validParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// TestIncomingContext: a peer's trace context is continued from _meta
// (as another SDK's client sets it) or, over HTTP, from the traceparent
// header when _meta has none; a malformed or oversized one is ignored and
// the call is served in a new trace.
func TestIncomingContext(t *testing.T) {
	huge := "00-" + strings.Repeat("a", 100<<10)
	tests := []struct {
		name   string
		meta   string // traceparent in _meta, or ""
		header string // traceparent header, or ""
		want   string // the parent trace ID, or "" for a new trace
	}{
		{"meta", validParent, "", "0af7651916cd43dd8448eb211c80319c"},
		{"header", "", validParent, "0af7651916cd43dd8448eb211c80319c"},
		{"meta before header", validParent, "00-11111111111111111111111111111111-2222222222222222-01", "0af7651916cd43dd8448eb211c80319c"},
		{"malformed", "00-xyz-01", "", ""},
		{"100 KiB", huge, "", ""},
		{"100 KiB header", "", huge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSide(t)
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(newServer(t, srv), nil))
			defer hs.Close()
			h := http.Header{}
			if tt.header != "" {
				h.Set("traceparent", tt.header)
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, &mcp.ClientOptions{Era: mcp.EraHandshake})
			cs, err := c.Connect(context.Background(), &transport.StreamableClientTransport{URL: hs.URL, Header: h})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolParams{Name: "echo"}
			if tt.meta != "" {
				raw, _ := json.Marshal(tt.meta)
				p.Meta.Other = map[string]json.RawMessage{"traceparent": raw}
			}
			if _, err := cs.CallTool(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			s := srv.span(t, trace.SpanKindServer, "tools/call echo")
			got := ""
			if s.Parent().IsValid() {
				got = s.Parent().TraceID().String()
			}
			if got != tt.want {
				t.Errorf("parent trace %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOptIn: tool arguments and results, resource URIs and notification
// spans are recorded only when asked for, and recorded I/O is cut to the
// bound.
func TestOptIn(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			srv, cli := newSide(t), newSide(t)
			for _, s := range []*side{srv, cli} {
				s.opts.RecordToolIO, s.opts.RecordResourceURI, s.opts.NotificationSpans = on, on, on
				s.opts.MaxRecordedBytes = 16
			}
			cs, wait := connectWait(t, "memory", mcp.EraHandshake, newServer(t, srv), cli)
			args := `{"text":"` + strings.Repeat("é", 40) + `"}`
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)}); err != nil {
				t.Fatal(err)
			}
			_, _ = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///secret"})
			wait()
			c := cli.span(t, trace.SpanKindClient, "tools/call echo")
			for _, key := range []attribute.Key{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
				v, ok := attr(c, key)
				if ok != on {
					t.Errorf("%s recorded: %v, want %v", key, ok, on)
				}
				if ok && len(v.AsString()) > 16+len("…") {
					t.Errorf("%s = %q: longer than the bound", key, v.AsString())
				}
			}
			name := "resources/read"
			if on {
				name += " file:///secret"
			}
			r := cli.span(t, trace.SpanKindClient, name)
			if _, ok := attr(r, "mcp.resource.uri"); ok != on {
				t.Errorf("mcp.resource.uri recorded: %v, want %v", ok, on)
			}
			if n := len(spansNamed(cli, trace.SpanKindClient, "notifications/initialized")); (n == 1) != on {
				t.Errorf("%d notifications/initialized spans with NotificationSpans %v", n, on)
			}
		})
	}
}

// TestMetrics: the four histograms, with the conventions' buckets and
// attributes.
func TestMetrics(t *testing.T) {
	srv, cli := newSide(t), newSide(t)
	recorded := make(chan struct{}, 2)
	otelmcp.NotifySessions(srv.opts, recorded)
	otelmcp.NotifySessions(cli.opts, recorded)
	cs, wait := connectWait(t, "memory", mcp.EraHandshake, newServer(t, srv), cli)
	_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"})
	_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "invalid"})
	wait()
	<-recorded // the client's session and the server's
	<-recorded
	for _, tt := range []struct {
		s    *side
		name string
	}{
		{cli, "mcp.client.operation.duration"},
		{cli, "mcp.client.session.duration"},
		{srv, "mcp.server.operation.duration"},
		{srv, "mcp.server.session.duration"},
	} {
		var rm metricdata.ResourceMetrics
		if err := tt.s.reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var h *metricdata.Histogram[float64]
		var unit string
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == tt.name {
					d, _ := m.Data.(metricdata.Histogram[float64])
					h, unit = &d, m.Unit
				}
			}
		}
		if h == nil || len(h.DataPoints) == 0 {
			t.Errorf("%s: no data", tt.name)
			continue
		}
		if unit != "s" {
			t.Errorf("%s: unit %q", tt.name, unit)
		}
		wantBounds := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
		if !slices.Equal(h.DataPoints[0].Bounds, wantBounds) {
			t.Errorf("%s: bounds %v", tt.name, h.DataPoints[0].Bounds)
		}
		if strings.HasSuffix(tt.name, "session.duration") {
			if v, _ := h.DataPoints[0].Attributes.Value("mcp.protocol.version"); v.AsString() != "2025-11-25" {
				t.Errorf("%s: mcp.protocol.version %q", tt.name, v.AsString())
			}
			continue
		}
		var tool, failed bool
		for _, dp := range h.DataPoints {
			name, _ := dp.Attributes.Value("gen_ai.tool.name")
			et, _ := dp.Attributes.Value("error.type")
			if _, ok := dp.Attributes.Value("jsonrpc.request.id"); ok {
				t.Errorf("%s: a request ID in the attributes", tt.name)
			}
			if name.AsString() == "echo" && et.AsString() == "" {
				tool = true
			}
			if name.AsString() == "invalid" && et.AsString() == "-32602" {
				failed = true
			}
		}
		if !tool || !failed {
			t.Errorf("%s: data points %v", tt.name, h.DataPoints)
		}
	}
}

// TestMetricsOnly: with a no-op tracer the histograms are still recorded,
// and a span the context carried (an HTTP server's, say) is left alone.
func TestMetricsOnly(t *testing.T) {
	srv := newSide(t)
	outer := newSide(t)
	srv.opts.TracerProvider = tracenoop.NewTracerProvider()
	recv, _ := otelmcp.ServerMiddleware(srv.opts)
	ctx, span := outer.opts.TracerProvider.Tracer("t").Start(context.Background(), "outer")
	h := recv(func(context.Context, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil })
	if _, err := h(ctx, fakeRequest{}); err != nil {
		t.Fatal(err)
	}
	if !span.IsRecording() {
		t.Error("the middleware ended the context's span")
	}
	span.End()
	var rm metricdata.ResourceMetrics
	if err := srv.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 1 || len(rm.ScopeMetrics[0].Metrics) != 1 || rm.ScopeMetrics[0].Metrics[0].Name != "mcp.server.operation.duration" {
		t.Errorf("metrics %+v", rm.ScopeMetrics)
	}
}

// fakeRequest is a request of no session, as a test hands a middleware.
type fakeRequest struct{ mcp.Request }

func (fakeRequest) Method() string         { return "tools/call" }
func (fakeRequest) Parameters() mcp.Params { return &mcp.CallToolParams{Name: "t"} }
