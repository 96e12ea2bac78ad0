package bench

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// BenchmarkLayers splits mcpkit's per-call cost by layer: it runs the echo
// round trip on mcpkit's jsonrpc.Conn and transports alone, with a
// hand-written tools/call handler and no mcp package. The difference from
// BenchmarkInProcess/mcpkit-* is what the mcp layer adds.
func BenchmarkLayers(b *testing.B) {
	b.Run("jsonrpc-inmem", func(b *testing.B) {
		runSequential(b, func(tb testing.TB) caller {
			ct, st := transport.NewInMemoryTransports()
			return jsonrpcConnected(tb, st, ct)
		})
	})
	b.Run("jsonrpc-pipe", func(b *testing.B) {
		runSequential(b, func(tb testing.TB) caller {
			c2sR, c2sW, s2cR, s2cW := pipes()
			return jsonrpcConnected(tb,
				&transport.IOTransport{Reader: c2sR, Writer: s2cW},
				&transport.IOTransport{Reader: s2cR, Writer: c2sW})
		})
	})
}

// layerParams and layerResult are the tools/call params and result as the
// layer benchmark's hand-written handler sees them.
type (
	layerParams struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	}
	layerArgs struct {
		Message string `json:"message"`
	}
	layerContent struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	layerResult struct {
		Content []layerContent `json:"content"`
	}
)

// jsonrpcConnected serves a bare jsonrpc.Conn echo handler over st and
// returns a caller on a client jsonrpc.Conn over ct.
func jsonrpcConnected(tb testing.TB, st, ct transport.Transport) caller {
	ctx := context.Background()
	sconn, err := st.Connect(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	server := jsonrpc.NewConn(sconn, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(
		func(_ context.Context, req *jsonrpc.Request) (any, error) {
			var p layerParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, err
			}
			var a layerArgs
			if err := json.Unmarshal(p.Arguments, &a); err != nil {
				return nil, err
			}
			return &layerResult{Content: []layerContent{{Type: "text", Text: a.Message}}}, nil
		})})
	server.Start()
	cconn, err := ct.Connect(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	client := jsonrpc.NewConn(cconn, nil)
	client.Start()
	tb.Cleanup(func() {
		client.Close()
		server.Wait()
	})
	args := layerArgs{Message: message}
	return func(ctx context.Context) error {
		a, err := json.Marshal(&args)
		if err != nil {
			return err
		}
		params, err := json.Marshal(&layerParams{Name: "echo", Arguments: a})
		if err != nil {
			return err
		}
		raw, err := client.Call(ctx, "tools/call", params)
		if err != nil {
			return err
		}
		var res layerResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		if len(res.Content) != 1 {
			return errors.New("layers: malformed result")
		}
		return checkText(res.Content[0].Text)
	}
}
