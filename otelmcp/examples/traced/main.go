// Command traced shows otelmcp at work: a server and a client in one
// process, connected over stdio pipes and over Streamable HTTP, in both
// protocol eras, call a tool. It prints their spans (stdouttrace, JSON)
// and then the metrics they recorded (JSON).
//
//	cd otelmcp && go run ./examples/traced
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/transport"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.Empty()))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(resource.Empty()))
	defer func() { _ = tp.Shutdown(ctx); _ = mp.Shutdown(ctx) }()
	opts := &otelmcp.Options{TracerProvider: tp, MeterProvider: mp}

	recv, send := otelmcp.ServerMiddleware(opts)
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, &mcp.ServerOptions{
		Middleware: []mcp.Middleware{recv}, SendingMiddleware: []mcp.Middleware{send},
	})
	type in struct {
		City string `json:"city"`
	}
	err = mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *mcp.CallToolRequest, in in) (string, error) {
		return "sunny in " + in.City, nil
	})
	if err != nil {
		return err
	}

	// Streamable HTTP on a loopback port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(server, nil)}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		for _, how := range []string{"stdio", "http"} {
			var t transport.Transport
			var ss *mcp.ServerSession
			if how == "stdio" {
				cr, sw := io.Pipe()
				sr, cw := io.Pipe()
				if ss, err = server.Connect(ctx, &transport.IOTransport{Reader: sr, Writer: sw}); err != nil {
					return err
				}
				t = &transport.IOTransport{Reader: cr, Writer: cw}
			} else {
				t = &transport.StreamableClientTransport{URL: "http://" + ln.Addr().String()}
			}
			crecv, csend := otelmcp.ClientMiddleware(opts)
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
				Era: era, Middleware: []mcp.Middleware{crecv}, SendingMiddleware: []mcp.Middleware{csend},
			})
			cs, err := client.Connect(ctx, t)
			if err != nil {
				return err
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: json.RawMessage(`{"city":"Lisbon"}`)})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s over %s (%s): %s\n", era, how, cs.ProtocolVersion(), res.Content[0].(*mcp.TextContent).Text)
			_ = cs.Close()
			if ss != nil {
				_ = ss.Wait()
			}
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(rm.ScopeMetrics)
}
