package auth_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// BenchmarkEchoCall measures one tools/call of an echo tool over
// Streamable HTTP on loopback (an httptest server and mcpkit's client), in
// each era, without authorization and behind RequireToken with a JWT
// verifier (ES256, key set cached, verified-token cache on), to show what
// the middleware adds to a call.
func BenchmarkEchoCall(b *testing.B) {
	is := newRSIssuer(b)
	for _, guarded := range []bool{false, true} {
		name := "plain"
		if guarded {
			name = "auth"
		}
		for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
			b.Run(name+"/"+era.String(), func(b *testing.B) {
				ps := newProtectedServer(b, is, guarded, nil)
				ctx := context.Background()
				tok := ""
				if guarded {
					tok = is.token(b, "alice", ps.resource, "mcp", time.Hour, nil)
				}
				cs, err := ps.connect(ctx, era, tok)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				args := json.RawMessage(`{"message":"hello"}`)
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkEchoCallPaired alternates one call without and one with the
// middleware in every iteration, timing each, so that both see the same
// load of a shared machine; it reports each cost and their ratio.
func BenchmarkEchoCallPaired(b *testing.B) {
	is := newRSIssuer(b)
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		b.Run(era.String(), func(b *testing.B) {
			ctx := context.Background()
			plainSrv := newProtectedServer(b, is, false, nil)
			authSrv := newProtectedServer(b, is, true, nil)
			plain, err := plainSrv.connect(ctx, era, "")
			if err != nil {
				b.Fatal(err)
			}
			defer plain.Close()
			authed, err := authSrv.connect(ctx, era, is.token(b, "alice", authSrv.resource, "mcp", time.Hour, nil))
			if err != nil {
				b.Fatal(err)
			}
			defer authed.Close()
			args := json.RawMessage(`{"message":"hello"}`)
			call := func(cs *mcp.ClientSession) time.Duration {
				start := time.Now()
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			call(plain)
			call(authed)
			var tPlain, tAuth time.Duration
			n := 0
			for b.Loop() {
				tPlain += call(plain)
				tAuth += call(authed)
				n++
			}
			b.ReportMetric(float64(tPlain.Nanoseconds())/float64(n), "plain-ns/call")
			b.ReportMetric(float64(tAuth.Nanoseconds())/float64(n), "auth-ns/call")
			b.ReportMetric(float64(tAuth)/float64(tPlain), "auth/plain")
		})
	}
}
