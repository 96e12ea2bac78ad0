package otelmcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/transport"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkEchoCall measures an in-process tools/call of an echo tool
// (handshake era, in-memory transport) without the middleware, with it on
// no-op providers, and with it on the SDK recording every span (to an
// exporter that discards them) and every measurement.
func BenchmarkEchoCall(b *testing.B) {
	sdk := func(b *testing.B) *otelmcp.Options {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		return &otelmcp.Options{TracerProvider: tp, MeterProvider: mp}
	}
	for _, bc := range []struct {
		name string
		opts func(*testing.B) *otelmcp.Options // nil: no middleware
	}{
		{"none", nil},
		{"noop", func(*testing.B) *otelmcp.Options {
			return &otelmcp.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}
		}},
		{"global", func(*testing.B) *otelmcp.Options { return nil }}, // no provider set: the global delegates
		{"sdk", sdk},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var sopts mcp.ServerOptions
			var copts mcp.ClientOptions
			copts.Era = mcp.EraHandshake
			if bc.name != "none" {
				o := bc.opts(b)
				recv, send := otelmcp.ServerMiddleware(o)
				sopts.Middleware, sopts.SendingMiddleware = []mcp.Middleware{recv}, []mcp.Middleware{send}
				recv, send = otelmcp.ClientMiddleware(o)
				copts.Middleware, copts.SendingMiddleware = []mcp.Middleware{recv}, []mcp.Middleware{send}
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "srv", Version: "1"}, &sopts)
			if err := s.AddTool(&mcp.Tool{Name: "echo"}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
			}); err != nil {
				b.Fatal(err)
			}
			ct, st := transport.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := s.Connect(ctx, st)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, &copts).Connect(ctx, ct)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = cs.Close(); _ = ss.Wait() }()
			args := json.RawMessage(`{"text":"hello"}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
