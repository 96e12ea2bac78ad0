package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestEraMatrix connects mcpkit's client, pinned to each era or finding
// it (EraAuto), to a server of each kind, over stdio and Streamable HTTP:
// mcpkit's fixture server (both eras on one endpoint) and the TypeScript
// reference server server-everything (the handshake era only). A
// handshake client works with both; a client pinned to 2026-07-28 works
// with the dual server and fails Connect with an error naming
// server/discover against the handshake-only one (pinned: no fallback);
// EraAuto speaks 2026-07-28 with the dual server and falls back to
// initialize with the other.
func TestEraMatrix(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	fixture := buildFixtureServer(ctx, t)
	everything := filepath.Join(modules, "node_modules", pkgEverything)

	servers := []struct {
		name string
		dual bool
		// transport returns a new transport to the server over the named
		// kind ("stdio" or "http").
		transport func(t *testing.T, kind string) transport.Transport
	}{
		{"mcpkit dual-era server", true, func(t *testing.T, kind string) transport.Transport {
			if kind == "stdio" {
				return &transport.CommandTransport{Command: exec.Command(fixture), TerminateDuration: 3 * time.Second}
			}
			url := startFixtureHTTP(ctx, t, fixture)
			return &transport.StreamableClientTransport{URL: url, DisableSSEFallback: true}
		}},
		{"server-everything (handshake era)", false, func(t *testing.T, kind string) transport.Transport {
			var stderr syncBuffer
			if kind == "stdio" {
				cmd := exec.Command("node", filepath.Join(everything, "dist", "index.js"), "stdio")
				cmd.Env = append(os.Environ(), envMarkerName+"="+envMarkerValue)
				cmd.Stderr = &stderr
				return &transport.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}
			}
			return &transport.StreamableClientTransport{URL: startNodeHTTPServer(t, everything, "streamableHttp", &stderr) + "/mcp", DisableSSEFallback: true}
		}},
		// The TypeScript SDK v2 server (ts_v2_server.mjs): both eras on
		// one endpoint, like mcpkit's fixture.
		{"TypeScript v2 server (dual era)", true, func(t *testing.T, kind string) transport.Transport {
			var stderr syncBuffer
			if kind == "stdio" {
				return &transport.CommandTransport{Command: tsV2ServerCommand(t, modules, &stderr), TerminateDuration: 3 * time.Second}
			}
			return &transport.StreamableClientTransport{URL: startTSV2ServerHTTP(ctx, t, modules, &stderr), DisableSSEFallback: true}
		}},
	}
	for _, srv := range servers {
		for _, kind := range []string{"stdio", "http"} {
			for _, version := range []string{mcp.Version20251125, mcp.Version20260728, "auto"} {
				t.Run(srv.name+"/"+kind+"/client "+version, func(t *testing.T) {
					opts := &mcp.ClientOptions{ProtocolVersion: version}
					if version == "auto" {
						// The client finds the era: the server's newest.
						opts = &mcp.ClientOptions{Era: mcp.EraAuto}
						version = mcp.Version20251125
						if srv.dual {
							version = mcp.Version20260728
						}
					}
					c := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, opts)
					cs, err := c.Connect(ctx, srv.transport(t, kind))
					if opts.ProtocolVersion == mcp.Version20260728 && !srv.dual {
						if err == nil {
							cs.Close()
							t.Fatal("a client pinned to 2026-07-28 connected to a handshake-only server")
						}
						if !strings.Contains(err.Error(), "server/discover") {
							t.Fatalf("error %v does not say the discovery failed", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					defer cs.Close()
					if got := cs.ProtocolVersion(); got != version {
						t.Fatalf("speaks %s, want %s", got, version)
					}
					if cs.InitializeResult() == nil || cs.InitializeResult().ServerInfo == nil {
						t.Fatal("no server identity")
					}
					tools, err := cs.ListTools(ctx, nil)
					if err != nil || len(tools.Tools) == 0 {
						t.Fatalf("tools/list: %v (%d tools)", err, len(tools.Tools))
					}
				})
			}
		}
	}
}
