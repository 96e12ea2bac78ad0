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
