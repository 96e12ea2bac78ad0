package mcp

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestClientReportsProgress checks that a client's handler reports the
// progress of a server's request through the request, as server handlers
// do, and that the server's handler option receives it in the same shape
// as every handler: the request, with its session and params.
func TestClientReportsProgress(t *testing.T) {
	checkGoroutines(t)
	got := make(chan *ServerRequest[*ProgressParams], 1)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		ProgressHandler: func(_ context.Context, req *ServerRequest[*ProgressParams]) { got <- req },
	})
	must(t, AddTool(s, &Tool{Name: "sample"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		p := &CreateMessageParams{MaxTokens: 1, Messages: []*SamplingMessage{{Role: RoleUser, Content: Contents{&TextContent{Text: "hi"}}}}}
		SetProgressToken(p, jsonrpc.StringID("tok"))
		res, err := req.CreateMessage(ctx, p)
		if err != nil {
			return "", err
		}
		return res.Model, nil
	}))
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
			if err := req.ReportProgress(ctx, 1, 2, "thinking"); err != nil {
				return nil, err
			}
			return &CreateMessageResult{Role: RoleAssistant, Model: "m", Content: Contents{&TextContent{Text: "ok"}}}, nil
		},
	})
	cs, ss := connect(t, s, c)
	res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "sample"})
	if err != nil || res.IsError {
		t.Fatalf("CallTool: %+v, %v", res, err)
	}
	req := <-got
	if req.Session != ss || req.Params.ProgressToken.Raw() != `"tok"` || req.Params.Progress != 1 || req.Params.Message != "thinking" {
		t.Errorf("progress: session %p (want %p), params %+v", req.Session, ss, req.Params)
	}
}
