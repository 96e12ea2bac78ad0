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
	if err := mcpgoStart(context.Background(), c, version); err != nil {
		tb.Fatal(err)
	}
	return mcpgoEcho(c)
}

// mcpgoStart starts c and initializes it asking for protocol revision
// version ("" for the SDK's default).
func mcpgoStart(ctx context.Context, c *client.Client, version string) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	init.Params.ProtocolVersion = version
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return err
	}
	if version != "" && res.ProtocolVersion != version {
		return fmt.Errorf("mcpgo negotiated protocol %s, want %s", res.ProtocolVersion, version)
	}
	return nil
}

// mcpgoEcho returns a caller of c's echo tool.
func mcpgoEcho(c *client.Client) caller {
	return func(ctx context.Context) error {
		text, err := mcpgoCallText(ctx, c, "echo", mcpgoArgs)
		if err != nil {
			return err
		}
		return checkText(text)
	}
}

// mcpgoCallText calls the named tool and returns its one text block.
func mcpgoCallText(ctx context.Context, c *client.Client, name string, args any) (string, error) {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("mcpgo: unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("mcpgo: content is %T, not text", res.Content[0])
	}
	return tc.Text, nil
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
