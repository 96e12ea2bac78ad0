package bench

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpkit/mcpkit/bench/internal/mcpgoecho"
)

// mcpgoArgs are the echo arguments the mcp-go client sends.
var mcpgoArgs = map[string]any{"message": message}

// mcpgoCaller starts c, initializes it asking for protocol revision
// version ("" for the SDK's default) and adapts it to a caller.
func mcpgoCaller(tb testing.TB, c *client.Client, version string) caller {
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	init.Params.ProtocolVersion = version
	res, err := c.Initialize(ctx, init)
	if err != nil {
		tb.Fatal(err)
	}
	if version != "" && res.ProtocolVersion != version {
		tb.Fatalf("mcpgo negotiated protocol %s, want %s", res.ProtocolVersion, version)
	}
	return func(ctx context.Context) error {
		var req mcp.CallToolRequest
		req.Params.Name = "echo"
		req.Params.Arguments = mcpgoArgs
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("mcpgo: unexpected result %+v", res)
		}
		tc, ok := res.Content[0].(mcp.TextContent)
		if !ok {
			return fmt.Errorf("mcpgo: content is %T, not text", res.Content[0])
		}
		return checkText(tc.Text)
	}
}

// mcpgoInProcess uses mcp-go's in-process client, which hands requests to
// the server as Go values: no JSON framing on the way.
func mcpgoInProcess(tb testing.TB) caller {
	c, err := client.NewInProcessClient(mcpgoecho.NewServer())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return mcpgoCaller(tb, c, pinnedVersion)
}

// mcpgoPipe runs mcp-go's stdio server (server.StdioServer.Listen) and
// stdio client (transport.NewIO) over the same io.Pipe pair as the floor.
func mcpgoPipe(tb testing.TB) caller { return mcpgoPipeVersion(tb, pinnedVersion) }

// mcpgoPipeLatest is mcpgoPipe at mcp-go's default protocol revision.
func mcpgoPipeLatest(tb testing.TB) caller { return mcpgoPipeVersion(tb, "") }

// mcpgoPipeVersion is mcpgoPipe asking for protocol revision version.
func mcpgoPipeVersion(tb testing.TB, version string) caller {
	c2sR, c2sW, s2cR, s2cW := pipes()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		err := server.NewStdioServer(mcpgoecho.NewServer()).Listen(ctx, c2sR, s2cW)
		s2cW.CloseWithError(err)
		served <- err
	}()
	c := client.NewClient(transport.NewIO(s2cR, c2sW, nil))
	tb.Cleanup(func() {
		c.Close() // closes c2sW: the server sees EOF
		<-served
		cancel()
	})
	return mcpgoCaller(tb, c, version)
}

// mcpgoStdio spawns cmd/mcpgo-echo-server with mcp-go's stdio client.
func mcpgoStdio(tb testing.TB) caller {
	bin := serverBinary(tb, "mcpgo")
	t := transport.NewStdioWithOptions(bin, nil, nil,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			setDeathSignal(cmd)
			return cmd, nil
		}))
	c := client.NewClient(t)
	tb.Cleanup(func() {
		if err := c.Close(); err != nil { // closes stdin and waits for the child
			tb.Error(err)
		}
	})
	return mcpgoCaller(tb, c, pinnedVersion)
}
