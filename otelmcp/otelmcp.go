// Package otelmcp traces and measures MCP servers and clients built with
// github.com/mcpkit/mcpkit/mcp, with OpenTelemetry, per the semantic
// conventions for MCP.
//
// It is its own module, so that the mcpkit module does not depend on
// OpenTelemetry. It plugs into the middleware of both sides:
//
//	recv, send := otelmcp.ServerMiddleware(nil)
//	server := mcp.NewServer(impl, &mcp.ServerOptions{
//		Middleware:        []mcp.Middleware{recv},
//		SendingMiddleware: []mcp.Middleware{send},
//	})
//
// and likewise [ClientMiddleware] for a client's [mcp.ClientOptions].
//
// # Spans
//
// Each request handled gets a span of kind SERVER, each request sent one
// of kind CLIENT (a server's own requests to its client, such as
// sampling/createMessage in the handshake era, included). A span is named
// "{mcp.method.name} {target}", the target being the tool's name for
// tools/call, the prompt's for prompts/get and, when
// [Options.RecordResourceURI] is set, the resource's URI for
// resources/read, resources/subscribe and resources/unsubscribe; else the
// name is the method's. Notifications get spans only when
// [Options.NotificationSpans] is set.
//
// Attributes: mcp.method.name, jsonrpc.protocol.version ("2.0"),
// mcp.protocol.version, mcp.session.id
// (handshake-era sessions), mcp.resource.uri (opt-in), jsonrpc.request.id,
// gen_ai.operation.name ("execute_tool" for tools/call),
// gen_ai.tool.name, gen_ai.prompt.name, rpc.response.status_code (the
// JSON-RPC error code), error.type, network.transport,
// network.protocol.name, network.protocol.version and
// client.address/client.port (server spans of requests that came over
// HTTP), network.transport, network.protocol.name, server.address and
// server.port (client spans, over HTTP, stdio or to a subprocess), and
// [Options.Attributes]. A failed request has status
// ERROR and an error.type: "tool_error" for a tools/call result with
// isError set; the JSON-RPC error code, such as "-32602", for an error
// answer (and for a handler's panic, answered with -32603); "cancelled"
// and "timeout" when the context ended; else the Go type of the error.
// Tool arguments and results (gen_ai.tool.call.arguments and
// gen_ai.tool.call.result) are recorded only when [Options.RecordToolIO]
// is set, cut to [Options.MaxRecordedBytes].
//
// # Trace context
//
// The W3C trace context travels in params._meta as the members
// "traceparent", "tracestate" and "baggage", in both directions and both
// protocol eras. A server takes it from _meta, or, when _meta has no
// traceparent and the request came over HTTP, from the HTTP request's
// headers. Values over a bound (256 bytes for traceparent, 512 for
// tracestate, 8192 for baggage: the W3C limits, with room for later
// traceparent versions) are ignored unread, and malformed ones are ignored
// too: the request is served in a new trace. The client adds
// the members to a copy of the params it encodes (see
// [mcp.ObserveSend]): the caller's params are not modified.
//
// A 2026-07-28 request that the server answers with input_required is
// sent again with the answers, possibly several times. It is one CLIENT
// span; each message after the first is a child span named like the
// parent with the attribute mcp.input_round (1, 2, ...), whose context
// that message carries, so the server's span of each round is in the
// client's trace.
//
// # Metrics
//
// The histograms mcp.client.operation.duration,
// mcp.server.operation.duration, mcp.client.session.duration and
// mcp.server.session.duration (unit s, with the conventions' bucket
// boundaries and attribute sets). A session's duration is recorded when a
// handshake-era session that started with initialize ends; the
// stateless era (2026-07-28) has no sessions.
//
// # Cost
//
// With the no-op providers of go.opentelemetry.io/otel/trace/noop and
// go.opentelemetry.io/otel/metric/noop the middleware passes requests
// through untouched. The global providers, before one is set, are not
// known to be no-ops: they cost a few allocations per request.
//
// # Names
//
// The names are taken from go.opentelemetry.io/otel/semconv/v1.41.0 and
// its mcpconv package (semantic conventions 1.41.0, the last release of
// the Go semconv packages that carries the MCP conventions). Methods of
// 2026-07-28 that the conventions do not list yet (server/discover,
// subscriptions/listen, ...) are recorded the same way, under their
// method names; mcp.input_round is this package's own attribute.
package otelmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/mcpkit/mcpkit/otelmcp"

// InputRoundKey is the attribute that numbers the child spans of the
// input_required rounds of a 2026-07-28 request (see the package doc).
const InputRoundKey = attribute.Key("mcp.input_round")

// DefaultMaxRecordedBytes bounds a recorded tool argument or result when
// [Options.MaxRecordedBytes] is 0.
const DefaultMaxRecordedBytes = 1024

// durationBuckets are the bucket boundaries the conventions give the four
// MCP histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Options configure the middleware. The zero value uses the global
// tracer and meter providers and the W3C trace context and baggage
// propagators, and records nothing sensitive.
type Options struct {
	// TracerProvider makes the tracer; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads and writes the trace context in _meta (and reads
	// it from HTTP headers); nil means W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	// RecordToolIO records the arguments and the result of tools/call
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result) on spans.
	// They may hold personal data or secrets: off by default. Nothing
	// else of a request's content (headers, _meta, resource contents) is
	// ever recorded.
	RecordToolIO bool
	// MaxRecordedBytes bounds each recorded argument or result; 0 means
	// DefaultMaxRecordedBytes.
	MaxRecordedBytes int
	// RecordResourceURI records mcp.resource.uri and names spans of
	// resource methods after the URI, which may identify users or be of
	// high cardinality: off by default.
	RecordResourceURI bool
	// NotificationSpans gives notifications spans too.
	NotificationSpans bool
	// Attributes are added to every span and measurement: attributes of
	// the deployment. (A client's spans have network.transport,
	// server.address and server.port from the session's transport where
	// mcp knows it: HTTP, stdio and subprocess transports.)
	Attributes []attribute.KeyValue

	// sessionsDone, set by tests, is told when a session's duration has
	// been recorded.
	sessionsDone chan<- struct{}
}

// instr is the resolved instrumentation of one side.
type instr struct {
	opts      Options
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	tracing   bool
	metrics   bool
	operation metric.Float64Histogram
	session   metric.Float64Histogram
	max       int
}

func newInstr(o *Options, server bool) *instr {
	in := &instr{}
	if o != nil {
		in.opts = *o
	}
	tp := in.opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := in.opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	_, noTrace := tp.(tracenoop.TracerProvider)
	_, noMetrics := mp.(metricnoop.MeterProvider)
	in.tracing, in.metrics = !noTrace, !noMetrics
	in.tracer = tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	in.prop = in.opts.Propagator
	if in.prop == nil {
		in.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	in.max = in.opts.MaxRecordedBytes
	if in.max <= 0 {
		in.max = DefaultMaxRecordedBytes
	}
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	b := metric.WithExplicitBucketBoundaries(durationBuckets...)
	if server {
		op, err := mcpconv.NewServerOperationDuration(meter, b)
		if err != nil {
			otel.Handle(err)
		}
		ss, err := mcpconv.NewServerSessionDuration(meter, b)
		if err != nil {
			otel.Handle(err)
		}
		in.operation, in.session = op.Inst(), ss.Inst()
	} else {
		op, err := mcpconv.NewClientOperationDuration(meter, b)
		if err != nil {
			otel.Handle(err)
		}
		cs, err := mcpconv.NewClientSessionDuration(meter, b)
		if err != nil {
			otel.Handle(err)
		}
		in.operation, in.session = op.Inst(), cs.Inst()
	}
	return in
}

// ServerMiddleware returns the middleware that traces and measures a
// server: recv for [mcp.ServerOptions.Middleware] (the requests it
// handles: SERVER spans) and send for [mcp.ServerOptions.SendingMiddleware]
// (its own requests to the client: CLIENT spans). opts may be nil.
func ServerMiddleware(opts *Options) (recv, send mcp.Middleware) {
	in := newInstr(opts, true)
	return in.receiving(trace.SpanKindServer), in.sending()
}

// ClientMiddleware returns the middleware that traces and measures a
// client: send for [mcp.ClientOptions.SendingMiddleware] (its requests:
// CLIENT spans) and recv for [mcp.ClientOptions.Middleware] (the server's
// requests it handles: SERVER spans). opts may be nil.
func ClientMiddleware(opts *Options) (recv, send mcp.Middleware) {
	in := newInstr(opts, false)
	return in.receiving(trace.SpanKindServer), in.sending()
}

func isNotification(method string) bool { return strings.HasPrefix(method, "notifications/") }

// describe returns the span name and the attributes a request implies by
// its method and params.
func (in *instr) describe(req mcp.Request) (string, []attribute.KeyValue) {
	method := req.Method()
	attrs := make([]attribute.KeyValue, 0, 12+len(in.opts.Attributes))
	// jsonrpc.protocol.version: the conventions require it only when it is
	// not "2.0", which MCP never is not; set for queries that filter on it.
	attrs = append(attrs, semconv.McpMethodNameKey.String(method), jsonrpcVersion)
	attrs = append(attrs, in.opts.Attributes...)
	name := method
	switch p := req.Parameters().(type) {
	case *mcp.CallToolParams:
		name = method + " " + p.Name
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(p.Name))
		if in.opts.RecordToolIO && len(p.Arguments) > 0 {
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(in.cut(string(p.Arguments))))
		}
	case *mcp.GetPromptParams:
		name = method + " " + p.Name
		attrs = append(attrs, semconv.GenAIPromptName(p.Name))
	case *mcp.ReadResourceParams:
		name, attrs = in.resource(name, attrs, p.URI)
	case *mcp.SubscribeParams:
		name, attrs = in.resource(name, attrs, p.URI)
	case *mcp.UnsubscribeParams:
		name, attrs = in.resource(name, attrs, p.URI)
	}
	return name, attrs
}

func (in *instr) resource(name string, attrs []attribute.KeyValue, uri string) (string, []attribute.KeyValue) {
	if !in.opts.RecordResourceURI {
		return name, attrs
	}
	return name + " " + uri, append(attrs, semconv.McpResourceURI(uri))
}

// cut bounds s to in.max bytes, on a rune boundary.
func (in *instr) cut(s string) string {
	if len(s) <= in.max {
		return s
	}
	s = s[:in.max]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// outcome classifies the end of a request: the error.type and the
// JSON-RPC code, "" when there is none.
func outcome(res mcp.Result, err error) (errType, code string) {
	if err == nil {
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			return "tool_error", ""
		}
		return "", ""
	}
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		c := strconv.FormatInt(we.Code, 10)
		return c, c
	case errors.Is(err, context.Canceled):
		return "cancelled", ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	}
	return fmt.Sprintf("%T", err), ""
}

// finish ends span and records the operation's duration.
func (in *instr) finish(ctx context.Context, span trace.Span, attrs []attribute.KeyValue, start time.Time, res mcp.Result, err error) {
	errType, code := outcome(res, err)
	if code != "" {
		attrs = append(attrs, semconv.RPCResponseStatusCode(code))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	if span.IsRecording() {
		if code != "" {
			span.SetAttributes(semconv.RPCResponseStatusCode(code))
		}
		if errType != "" {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			msg := errType
			if err != nil {
				msg = in.cut(err.Error())
			}
			span.SetStatus(codes.Error, msg)
		}
		if r, ok := res.(*mcp.CallToolResult); ok && in.opts.RecordToolIO {
			if b, err := json.Marshal(r); err == nil {
				span.SetAttributes(semconv.GenAIToolCallResultKey.String(in.cut(string(b))))
			}
		}
		span.End()
	}
	if in.metrics && in.operation.Enabled(ctx) {
		in.operation.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(metricAttrs(attrs)...))
	}
}

// jsonrpcVersion is the jsonrpc.protocol.version of every MCP message.
var jsonrpcVersion = semconv.JSONRPCProtocolVersion("2.0")

// peerAttrs returns the attributes that say how a client's session reaches
// its server: network.transport, and over HTTP network.protocol.name,
// server.address and server.port.
func peerAttrs(v mcp.SessionView) []attribute.KeyValue {
	switch v.Network {
	case "pipe":
		return []attribute.KeyValue{semconv.NetworkTransportPipe}
	case "tcp":
		a := []attribute.KeyValue{semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http")}
		if u := v.ServerURL; u != nil && u.Hostname() != "" {
			a = append(a, semconv.ServerAddress(u.Hostname()))
			port, err := strconv.Atoi(u.Port())
			if err != nil {
				port = 80
				if u.Scheme == "https" {
					port = 443
				}
			}
			a = append(a, semconv.ServerPort(port))
		}
		return a
	}
	return nil
}

// metricAttrs keeps the attributes the operation histograms take (not the
// request ID, session ID or recorded tool I/O).
func metricAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := attrs[:0:0]
	for _, a := range attrs {
		switch a.Key {
		case semconv.JSONRPCRequestIDKey, semconv.McpSessionIDKey, semconv.GenAIToolCallArgumentsKey,
			semconv.GenAIToolCallResultKey, semconv.ClientAddressKey, semconv.ClientPortKey, InputRoundKey:
			continue
		}
		out = append(out, a)
	}
	return out
}

// sessionAttrs keeps the attributes the session histograms take.
func sessionAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := attrs[:0:0]
	for _, a := range attrs {
		switch a.Key {
		case semconv.McpProtocolVersionKey, semconv.NetworkTransportKey, semconv.NetworkProtocolNameKey,
			semconv.NetworkProtocolVersionKey, semconv.ServerAddressKey, semconv.ServerPortKey,
			semconv.JSONRPCProtocolVersionKey:
			out = append(out, a)
		}
	}
	return out
}

// watchSession records the duration of a session that starts now when it
// ends. The goroutine lives as long as the session.
func (in *instr) watchSession(ctx context.Context, done <-chan struct{}, attrs []attribute.KeyValue) {
	if !in.metrics || done == nil || !in.session.Enabled(ctx) {
		return
	}
	start := time.Now()
	attrs = sessionAttrs(attrs)
	ctx = context.WithoutCancel(ctx)
	recorded := in.opts.sessionsDone
	go func() {
		<-done
		in.session.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(attrs...))
		if recorded != nil {
			recorded <- struct{}{}
		}
	}()
}

// noSpan stands for the span when tracing is off: it records nothing and
// is never another's span (which finish must not end).
var noSpan = trace.SpanFromContext(context.Background())

// receiving is the middleware for requests this side handles.
func (in *instr) receiving(kind trace.SpanKind) mcp.Middleware {
	if !in.tracing && !in.metrics {
		return func(next mcp.MethodHandler) mcp.MethodHandler { return next }
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (res mcp.Result, err error) {
			method := req.Method()
			if isNotification(method) && !in.opts.NotificationSpans {
				return next(ctx, req)
			}
			start := time.Now()
			name, attrs := in.describe(req)
			view, ok := mcp.SessionOf(req)
			if ok {
				if view.ProtocolVersion != "" {
					attrs = append(attrs, semconv.McpProtocolVersion(view.ProtocolVersion))
				}
				if view.ID != "" {
					attrs = append(attrs, semconv.McpSessionID(view.ID))
				}
			}
			if id, ok := jsonrpc.RelatedRequest(ctx); ok && !isNotification(method) {
				attrs = append(attrs, semconv.JSONRPCRequestID(id.String()))
			}
			info := transport.HTTPRequestInfoFromContext(ctx)
			if info != nil {
				attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
				if v, ok := strings.CutPrefix(info.Proto, "HTTP/"); ok && v != "" {
					attrs = append(attrs, semconv.NetworkProtocolVersion(v))
				}
				if host, port, err := net.SplitHostPort(info.RemoteAddr); err == nil {
					attrs = append(attrs, semconv.ClientAddress(host))
					if n, err := strconv.Atoi(port); err == nil {
						attrs = append(attrs, semconv.ClientPort(n))
					}
				}
			}
			span := noSpan
			if in.tracing {
				ctx = in.extract(ctx, req, info)
				ctx, span = in.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
			}
			defer func() {
				if p := recover(); p != nil {
					in.finish(ctx, span, attrs, start, nil, jsonrpc.NewError(-32603, "panic: %v", p))
					panic(p)
				}
			}()
			res, err = next(ctx, req)
			if r, isInit := res.(*mcp.InitializeResult); isInit && err == nil {
				a := semconv.McpProtocolVersion(r.ProtocolVersion)
				attrs = append(attrs, a)
				span.SetAttributes(a)
				if ok {
					in.watchSession(ctx, view.Done, attrs)
				}
			}
			in.finish(ctx, span, attrs, start, res, err)
			return res, err
		}
	}
}

// sending is the middleware for requests this side sends.
func (in *instr) sending() mcp.Middleware {
	if !in.tracing && !in.metrics {
		return func(next mcp.MethodHandler) mcp.MethodHandler { return next }
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req mcp.Request) (mcp.Result, error) {
			method := req.Method()
			if isNotification(method) && !in.opts.NotificationSpans {
				return next(ctx, req)
			}
			start := time.Now()
			name, attrs := in.describe(req)
			span := noSpan
			if in.tracing {
				ctx, span = in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			}
			var view mcp.SessionView
			ctx = mcp.ObserveSend(ctx, req, func(ctx context.Context, w *mcp.WireSend) func(error) {
				view = w.Session
				if !in.tracing {
					return nil
				}
				if w.Round == 0 {
					in.inject(ctx, w)
					if isNotification(method) {
						return nil
					}
					return func(error) { span.SetAttributes(semconv.JSONRPCRequestID(w.ID.String())) }
				}
				rctx, rspan := in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
					trace.WithAttributes(append(attrs[:len(attrs):len(attrs)], InputRoundKey.Int(w.Round))...))
				in.inject(rctx, w)
				return func(err error) {
					rspan.SetAttributes(semconv.JSONRPCRequestID(w.ID.String()))
					if err != nil {
						errType, _ := outcome(nil, err)
						rspan.SetAttributes(semconv.ErrorTypeKey.String(errType))
						rspan.SetStatus(codes.Error, in.cut(err.Error()))
					}
					rspan.End()
				}
			})
			res, err := next(ctx, req)
			if r, isInit := res.(*mcp.InitializeResult); isInit && err == nil {
				view.ProtocolVersion = r.ProtocolVersion // what was agreed, not what was asked for
			}
			if view.ProtocolVersion != "" {
				a := semconv.McpProtocolVersion(view.ProtocolVersion)
				attrs = append(attrs, a)
				span.SetAttributes(a)
			}
			if na := peerAttrs(view); len(na) > 0 {
				attrs = append(attrs, na...)
				span.SetAttributes(na...)
			}
			if view.ID != "" {
				span.SetAttributes(semconv.McpSessionID(view.ID))
			}
			if method == "initialize" && err == nil {
				in.watchSession(ctx, view.Done, attrs)
			}
			in.finish(ctx, span, attrs, start, res, err)
			return res, err
		}
	}
}
