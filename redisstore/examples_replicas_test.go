package redisstore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// TestExampleReplicas runs examples/replicas with -n 3 (its own
// redis-server, three stdio-server replicas and the round-robin proxy),
// connects our client through the URL it prints, in the handshake era
// (initialize on one replica, the calls on the others) and in
// 2026-07-28, calls tools, then stops it with SIGTERM: it exits 0 and
// none of the processes it started is left.
func TestExampleReplicas(t *testing.T) {
	needRedisServer(t)
	bin := goBuild(t, "./examples/replicas")
	p, url := startListening(t, bin, "-n", "3")

	for _, tt := range []struct {
		era     mcp.Era
		version string
	}{
		{mcp.EraHandshake, "2025-11-25"},
		{mcp.EraAuto, "2026-07-28"}, // the default: server/discover, then 2026-07-28
	} {
		t.Run(tt.version, func(t *testing.T) {
			mcptest.CheckGoroutines(t, func(ctx context.Context) {
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				progress := make(chan float64, 16)
				c := mcp.NewClient(&mcp.Implementation{Name: "replicas-test", Version: "0"}, &mcp.ClientOptions{
					Era: tt.era,
					ProgressHandler: func(_ context.Context, req *mcp.ClientRequest[*mcp.ProgressParams]) {
						progress <- req.Params.Progress
					},
				})
				cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: url})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer cs.Close()
				if v := cs.InitializeResult().ProtocolVersion; v != tt.version {
					t.Errorf("protocol %s, want %s", v, tt.version)
				}
				var names []string
				for tool, err := range cs.Tools(ctx) {
					if err != nil {
						t.Fatalf("tools/list: %v", err)
					}
					names = append(names, tool.Name)
				}
				if !strings.Contains(strings.Join(names, " "), "echo") {
					t.Errorf("tools: %v, want echo among them", names)
				}
				// Six calls: each replica gets two, in turn.
				for i := range 6 {
					msg := strings.Repeat("x", i+1)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"` + msg + `"}`)})
					if err != nil {
						t.Fatalf("echo %d: %v", i, err)
					}
					if got := string(res.StructuredContent); got != `{"message":"`+msg+`"}` {
						t.Errorf("echo %d: %s", i, got)
					}
				}
				// Progress reaches the client through whichever replica runs the call.
				params := &mcp.CallToolParams{Name: "countdown", Arguments: json.RawMessage(`{"from":3}`)}
				mcp.SetProgressToken(params, jsonrpc.StringID("countdown"))
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					t.Fatalf("countdown: %+v, %v", res, err)
				}
				for i := range 3 {
					select {
					case <-progress:
					case <-ctx.Done():
						t.Fatalf("countdown: %d progress notifications, want 3", i)
					}
				}
			})
		})
	}

	p.stop(t)
	if p.err != nil {
		t.Errorf("replicas exited with %v; stderr:\n%s", p.err, p.stderr)
	}
	started := pids(p.stderr.String())
	if len(started) != 4 { // redis-server and three replicas
		t.Fatalf("the example named %d processes, want 4; stderr:\n%s", len(started), p.stderr)
	}
	for _, pid := range started {
		if alive(pid) {
			t.Errorf("process %d is left running", pid)
		}
	}
}

// TestExampleReplicasKill runs examples/replicas with -kill: it kills
// and restarts replicas, and SIGTERM still leaves none of its processes,
// the restarted ones included.
func TestExampleReplicasKill(t *testing.T) {
	needRedisServer(t)
	bin := goBuild(t, "./examples/replicas")
	p, _ := startListening(t, bin, "-n", "2", "-kill", "-kill-every", "100ms")
	// Wait for both replicas to have been killed and started again.
	if !p.stderr.waitFor(30*time.Second, func(s string) bool { return strings.Count(s, "started again") >= 2 }) {
		t.Fatalf("no two restarts within 30s; stderr:\n%s", p.stderr)
	}
	p.stop(t)
	if p.err != nil {
		t.Errorf("replicas exited with %v; stderr:\n%s", p.err, p.stderr)
	}
	started := pids(p.stderr.String())
	if len(started) < 5 { // redis-server, two replicas, two kills and two restarts
		t.Fatalf("the example named %d processes; stderr:\n%s", len(started), p.stderr)
	}
	for _, pid := range started {
		if alive(pid) {
			t.Errorf("process %d is left running", pid)
		}
	}
}
