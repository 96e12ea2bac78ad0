package bench

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// mcpkitArgs are the echo arguments; the client marshals them on every
// call, as the other SDKs' clients do.
var mcpkitArgs = mcpkitecho.EchoIn{Message: message}

// mcpkitCaller connects an mcpkit client pinned to the handshake era
// (and so to [pinnedVersion]) over ct and adapts it to a caller that
// expects a text result (structured: a text block holding the JSON of
// EchoOut).
func mcpkitCaller(tb testing.TB, ct transport.Transport, structured bool) (caller, *mcp.ClientSession) {
	return mcpkitCallerEra(tb, ct, structured, mcp.EraHandshake)
}

// mcpkitCallerEra is mcpkitCaller with a client of era: EraHandshake
// must get [pinnedVersion], any other era 2026-07-28 (EraAuto, the
// default, finds it with mcpkit's server).
func mcpkitCallerEra(tb testing.TB, ct transport.Transport, structured bool, era mcp.Era) (caller, *mcp.ClientSession) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Era: era})
	cs, err := c.Connect(context.Background(), ct)
	if err != nil {
		tb.Fatal(err)
	}
	want := mcp.Version20260728
	if era == mcp.EraHandshake {
		want = pinnedVersion
	}
	if v := cs.ProtocolVersion(); v != want {
		cs.Close()
		tb.Fatalf("mcpkit negotiated protocol %s, want %s", v, want)
	}
	return mcpkitEcho(cs, structured), cs
}

// mcpkitEcho returns a caller of cs's echo tool that expects a text result
// (structured: a text block holding the JSON of EchoOut).
func mcpkitEcho(cs *mcp.ClientSession, structured bool) caller {
	want := message
	if structured {
		want = `{"message":"` + message + `"}`
	}
	return func(ctx context.Context) error {
		args, err := json.Marshal(&mcpkitArgs)
		if err != nil {
			return err
		}
		text, err := mcpkitCallText(ctx, cs, "echo", args)
		if err != nil {
			return err
		}
		if text != want {
			return fmt.Errorf("echo returned %q, want %q", text, want)
		}
		return nil
	}
}

// mcpkitCallText calls the named tool and returns its one text block.
func mcpkitCallText(ctx context.Context, cs *mcp.ClientSession, name string, args stdjson.RawMessage) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("mcpkit: unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("mcpkit: content is %T, not text", res.Content[0])
	}
	return tc.Text, nil
}

// mcpkitConnected serves an echo server over st and connects a client over
// ct.
func mcpkitConnected(tb testing.TB, st, ct transport.Transport, structured bool) caller {
	return mcpkitConnectedEra(tb, st, ct, structured, mcp.EraHandshake)
}

// mcpkitConnectedEra is mcpkitConnected with a client of era (see
// mcpkitCallerEra).
func mcpkitConnectedEra(tb testing.TB, st, ct transport.Transport, structured bool, era mcp.Era) caller {
	newServer := mcpkitecho.NewServer
	if structured {
		newServer = mcpkitecho.NewStructuredServer
	}
	s, err := newServer()
	if err != nil {
		tb.Fatal(err)
	}
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		tb.Fatal(err)
	}
	call, cs := mcpkitCallerEra(tb, ct, structured, era)
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return call
}

// mcpkitPipeLatest is mcpkitPipe with the default client (EraAuto),
// which finds 2026-07-28 with mcpkit's server, as the other SDKs'
// -latest targets speak it by default.
func mcpkitPipeLatest(tb testing.TB) caller {
	c2sR, c2sW, s2cR, s2cW := pipes()
	return mcpkitConnectedEra(tb,
		&transport.IOTransport{Reader: c2sR, Writer: s2cW},
		&transport.IOTransport{Reader: s2cR, Writer: c2sW}, false, mcp.EraAuto)
}

// mcpkitInMemory uses mcpkit's in-memory transport pair, which passes
// message values without encoding them.
func mcpkitInMemory(tb testing.TB) caller {
	ct, st := transport.NewInMemoryTransports()
	return mcpkitConnected(tb, st, ct, false)
}

// mcpkitInMemoryStructured is mcpkitInMemory with the struct-output tool.
func mcpkitInMemoryStructured(tb testing.TB) caller {
	ct, st := transport.NewInMemoryTransports()
	return mcpkitConnected(tb, st, ct, true)
}

// mcpkitPipe uses transport.IOTransport over the same io.Pipe pair as the
// floor.
func mcpkitPipe(tb testing.TB) caller {
	c2sR, c2sW, s2cR, s2cW := pipes()
	return mcpkitConnected(tb,
		&transport.IOTransport{Reader: c2sR, Writer: s2cW},
		&transport.IOTransport{Reader: s2cR, Writer: c2sW}, false)
}

// mcpkitStdio spawns cmd/mcpkit-echo-server with transport.CommandTransport.
func mcpkitStdio(tb testing.TB) caller {
	call, cs := mcpkitCaller(tb, &transport.CommandTransport{Command: serverCommand(tb, "mcpkit")}, false)
	tb.Cleanup(func() {
		if err := cs.Close(); err != nil { // closes stdin and waits for the child
			tb.Error(err)
		}
	})
	return call
}
