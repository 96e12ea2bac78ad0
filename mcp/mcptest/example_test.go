package mcptest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// A Transcript records a connection made without Connect too: here the
// client's side of an in-memory pair, one tool call after the handshake.
func ExampleTranscript() {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	type sumIn struct{ A, B int }
	type sumOut struct {
		Sum int `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcp.CallToolRequest, in sumIn) (sumOut, error) {
		return sumOut{Sum: in.A + in.B}, nil
	})
	ctx := context.Background()
	ct, st := transport.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	tr := &mcptest.Transcript{}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
	cs, err := c.Connect(ctx, tr.Wrap(ct))
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	tr.Reset() // leave out initialize

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"A":2,"B":3}`)}); err != nil {
		log.Fatal(err)
	}
	fmt.Print(tr.Text())
	// Output:
	// --> tools/call
	// {
	//   "id": 1,
	//   "jsonrpc": "2.0",
	//   "method": "tools/call",
	//   "params": {
	//     "arguments": {
	//       "A": 2,
	//       "B": 3
	//     },
	//     "name": "add"
	//   }
	// }
	//
	// <-- response
	// {
	//   "id": 1,
	//   "jsonrpc": "2.0",
	//   "result": {
	//     "content": [
	//       {
	//         "text": "{\"sum\":5}",
	//         "type": "text"
	//       }
	//     ],
	//     "structuredContent": {
	//       "sum": 5
	//     }
	//   }
	// }
}
