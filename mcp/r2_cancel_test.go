package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestClientStaleCancelReusedID checks that a notifications/cancelled from
// the server cancels only the request it names as it arrives: a request
// the server sends right after it with the same id is answered.
func TestClientStaleCancelReusedID(t *testing.T) {
	sr, cw := io.Pipe() // client -> server
	cr, sw := io.Pipe() // server -> client
	defer cw.Close()
	defer sw.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		Era: mcp.EraHandshake,
		// A slow handler: it waits for its cancellation.
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		defer close(lines)
		in := bufio.NewScanner(sr)
		in.Buffer(nil, 1<<20)
		for in.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(in.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	read := func() map[string]json.RawMessage {
		t.Helper()
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatal("the client closed its output")
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatal("no message from the client after 20 s")
		}
		return nil
	}
	connected := make(chan error, 1)
	var cs *mcp.ClientSession
	go func() {
		var err error
		cs, err = c.Connect(context.Background(), &transport.IOTransport{Reader: cr, Writer: cw})
		connected <- err
	}()
	init := read()
	fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"raw","version":"0"}}}`+"\n", init["id"])
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	read() // notifications/initialized
	for round := range 30 {
		id := round%3 + 1 // ids come back round after round
		fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object","properties":{}}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n"+
			`{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", id, id, id)
		// The ping's answer must come; the cancelled elicitation gets
		// none, or an error answer, in either order.
		for {
			m := read()
			if string(m["id"]) != fmt.Sprint(id) {
				t.Fatalf("round %d: an answer to id %s", round, m["id"])
			}
			if _, ok := m["result"]; ok {
				break // the ping's
			}
		}
	}
}
