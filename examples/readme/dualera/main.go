// Command dualera is the server docs/ERAS.md points to: a tool that asks
// the user for input, written once for both eras, served over HTTP with a
// request-state key shared by replicas.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	"github.com/mcpkit/mcpkit/mcp"
)

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, &mcp.ServerOptions{
		// Replicas behind one load balancer share the key that signs
		// requestState, so any of them can serve a client's retry.
		RequestStateKeys: [][]byte{[]byte("load this secret from your secret store")},
	})
	err := mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Asks the user's name, then greets them."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
			res, err := req.Elicit(mcp.WithInputKey(ctx, "name"), &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
			})
			if err != nil {
				return "", err // on 2026-07-28, mcp.ErrInputRequired: return it
			}
			return fmt.Sprintf("Hello, %v!", res.Content["name"]), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// One endpoint for both eras.
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mcp.NewStreamableHTTPHandler(s, nil)))
}
