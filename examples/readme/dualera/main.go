// Command dualera is the server docs/ERAS.md points to: a tool that asks
// the user for input, written once for both eras, served over HTTP with a
// key ring shared by replicas (-keys FILE: one hex-encoded key of at
// least 32 bytes per line, the signing key first).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/mcpkit/mcpkit/mcp"
)

func main() {
	keyFile := flag.String("keys", "", "key file shared by the replicas (without it, a random key valid in this process only)")
	flag.Parse()
	var keys *mcp.KeyRing // nil: a random key of this process
	if *keyFile != "" {
		f, err := os.Open(*keyFile)
		if err != nil {
			log.Fatal(err)
		}
		keys, err = mcp.ReadKeyRing(f)
		f.Close()
		if err != nil {
			log.Fatal(err)
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, &mcp.ServerOptions{
		// Replicas behind one load balancer share the key ring that signs
		// requestState and session IDs, so any of them can serve a
		// client's retry.
		Keys: keys,
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
