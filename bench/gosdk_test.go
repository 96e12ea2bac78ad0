package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/bench/internal/gosdkecho"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkArgs are the echo arguments the go-sdk client sends (a struct, its
// cheapest way to pass arguments).
var gosdkArgs = &gosdkecho.EchoIn{Message: message}

// gosdkCaller connects a go-sdk client over ct, asking for protocol
// revision version ("" for the SDK's default), and adapts it to a caller.
func gosdkCaller(tb testing.TB, ct mcp.Transport, version string) (caller, *mcp.ClientSession) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		tb.Fatalf("gosdk negotiated protocol %s, want %s", got, version)
	}
	return gosdkEcho(cs), cs
}

// gosdkEcho returns a caller of cs's echo tool.
func gosdkEcho(cs *mcp.ClientSession) caller {
	return func(ctx context.Context) error {
		text, err := gosdkCallText(ctx, cs, "echo", gosdkArgs)
		if err != nil {
			return err
		}
		return checkText(text)
	}
}

// gosdkCallText calls the named tool and returns its one text block.
func gosdkCallText(ctx context.Context, cs *mcp.ClientSession, name string, args any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("gosdk: unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("gosdk: content is %T, not text", res.Content[0])
	}
	return tc.Text, nil
}

// gosdkConnected serves the echo server over st and connects a client over
// ct, asking for protocol revision version.
func gosdkConnected(tb testing.TB, st, ct mcp.Transport, version string) caller {
	ss, err := gosdkecho.NewServer().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	call, cs := gosdkCaller(tb, ct, version)
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return call
}

// gosdkInMemory uses go-sdk's own in-memory transports
// (mcp.NewInMemoryTransports: newline-delimited JSON over net.Pipe).
func gosdkInMemory(tb testing.TB) caller {
	ct, st := mcp.NewInMemoryTransports()
	return gosdkConnected(tb, st, ct, pinnedVersion)
}

// gosdkPipe uses go-sdk's mcp.IOTransport over the same io.Pipe pair as the
// floor.
func gosdkPipe(tb testing.TB) caller { return gosdkPipeVersion(tb, pinnedVersion) }

// gosdkPipeLatest is gosdkPipe at go-sdk's default protocol revision.
func gosdkPipeLatest(tb testing.TB) caller { return gosdkPipeVersion(tb, "") }

// gosdkPipeVersion is gosdkPipe asking for protocol revision version.
func gosdkPipeVersion(tb testing.TB, version string) caller {
	c2sR, c2sW, s2cR, s2cW := pipes()
	return gosdkConnected(tb,
		&mcp.IOTransport{Reader: c2sR, Writer: s2cW},
		&mcp.IOTransport{Reader: s2cR, Writer: c2sW}, version)
}

// gosdkStdio spawns cmd/gosdk-echo-server with mcp.CommandTransport.
func gosdkStdio(tb testing.TB) caller {
	call, cs := gosdkCaller(tb, &mcp.CommandTransport{Command: serverCommand(tb, "gosdk")}, pinnedVersion)
	tb.Cleanup(func() {
		if err := cs.Close(); err != nil { // closes stdin and waits for the child
			tb.Error(err)
		}
	})
	return call
}
