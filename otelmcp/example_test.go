package otelmcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/transport"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A server and a client, each with the middleware of its side: the
// client's span of a tools/call and the server's are in one trace.
func ExampleServerMiddleware() {
	spans := tracetest.NewSpanRecorder() // in production: an exporter
	opts := &otelmcp.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))}

	recv, send := otelmcp.ServerMiddleware(opts)
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, &mcp.ServerOptions{
		Middleware: []mcp.Middleware{recv}, SendingMiddleware: []mcp.Middleware{send},
	})
	err := mcp.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
		return "sunny", nil
	})
	if err != nil {
		log.Fatal(err)
	}
	recv, send = otelmcp.ClientMiddleware(opts)
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		Middleware: []mcp.Middleware{recv}, SendingMiddleware: []mcp.Middleware{send},
	})

	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast"}); err != nil {
		log.Fatal(err)
	}
	cs.Close()
	ss.Wait()
	traces := map[string]string{} // span kind -> trace ID
	for _, sp := range spans.Ended() {
		if sp.Name() == "tools/call forecast" {
			traces[sp.SpanKind().String()] = sp.SpanContext().TraceID().String()
		}
	}
	fmt.Println("one trace:", len(traces) == 2 && traces["client"] == traces["server"])
	// Output:
	// one trace: true
}
