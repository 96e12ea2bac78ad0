package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The client fails cleanly, without panicking, on whatever a hostile
// server answers.
func TestHostileServerAnswers(t *testing.T) {
	const init = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"h","version":"1"}}`
	tests := []struct {
		name    string
		answers map[string]string // method -> raw result; absent: {}
	}{
		{"initialize without serverInfo", map[string]string{"initialize": `{"protocolVersion":"2025-06-18","capabilities":{}}`}},
		{"initialize without capabilities", map[string]string{"initialize": `{"protocolVersion":"2025-06-18","serverInfo":{"name":"h","version":"1"}}`}},
		{"initialize with nulls", map[string]string{"initialize": `{"protocolVersion":"2025-06-18","capabilities":null,"serverInfo":null}`}},
		{"null tool", map[string]string{"initialize": init, "tools/list": `{"tools":[null]}`}},
		{"null resource", map[string]string{"initialize": init, "tools/list": `{"tools":[]}`, "resources/list": `{"resources":[null]}`}},
		{"null template", map[string]string{"initialize": init, "tools/list": `{"tools":[]}`, "resources/list": `{"resources":[]}`, "resources/templates/list": `{"resourceTemplates":[null]}`}},
		{"null prompt", map[string]string{"initialize": init, "tools/list": `{"tools":[]}`, "resources/list": `{"resources":[]}`, "resources/templates/list": `{"resourceTemplates":[]}`, "prompts/list": `{"prompts":[null]}`}},
		{"null content", map[string]string{"initialize": init, "tools/list": `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`, "resources/list": `{"resources":[]}`, "resources/templates/list": `{"resourceTemplates":[]}`, "prompts/list": `{"prompts":[]}`, "tools/call": `{"content":[null]}`}},
		{"empty answers", map[string]string{"initialize": init}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, st := transport.NewInMemoryTransports()
			sc, err := st.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			conn := jsonrpc.NewConn(sc, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
				if a, ok := tt.answers[req.Method]; ok {
					return json.RawMessage(a), nil
				}
				return json.RawMessage(`{}`), nil
			})})
			conn.Start()
			defer func() { conn.Close(); conn.Wait() }()
			err = run(context.Background(), ct, mcp.EraHandshake, "", "")
			if wantErr := tt.name != "empty answers"; (err != nil) != wantErr {
				t.Errorf("run: %v, want an error: %v", err, wantErr)
			}
		})
	}
}
