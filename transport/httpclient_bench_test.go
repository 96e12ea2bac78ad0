package transport

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// BenchmarkStreamableClientCall measures a call through the Streamable
// HTTP client to an echo server on loopback, answered with a JSON body or
// an event stream, one at a time and from parallel callers.
func BenchmarkStreamableClientCall(b *testing.B) {
	for _, mode := range []struct {
		name string
		mode ResponseMode
	}{{"json", ResponseJSON}, {"sse", ResponseSSE}} {
		echo := func(ctx context.Context, c Conn) error {
			jsonrpc.NewConn(c, &jsonrpc.ConnOptions{
				Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
					return req.Params, nil
				}),
			}).Start()
			return nil
		}
		h := newStreamableHTTPHandler(echo, &StreamableHTTPOptions{Stateless: true, ResponseMode: mode.mode})
		srv := httptest.NewServer(h)
		tr := &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true}
		c, err := tr.Connect(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		conn := jsonrpc.NewConn(c, nil)
		conn.Start()
		params := []byte(`{"n":1}`)
		ctx := context.Background()
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Call(ctx, "echo", params); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode.name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := conn.Call(ctx, "echo", params); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		conn.Close()
		h.Close()
		srv.Close()
	}
}
