package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// recordingTransport records the responses a client reads, so a test can
// check what crossed the wire.
type recordingTransport struct {
	transport.Transport
	mu        sync.Mutex
	responses []*jsonrpc.Response // in the order read
}

func (r *recordingTransport) Connect(ctx context.Context) (transport.Conn, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, t: r}, nil
}

// lastResponse returns the last response read, or nil.
func (r *recordingTransport) lastResponse() *jsonrpc.Response {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.responses) == 0 {
		return nil
	}
	return r.responses[len(r.responses)-1]
}

type recordingConn struct {
	transport.Conn
	t *recordingTransport
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Conn.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok {
		c.t.mu.Lock()
		c.t.responses = append(c.t.responses, resp)
		c.t.mu.Unlock()
	}
	return m, err
}

// connectRecording joins s and c over the in-memory transport, recording
// the responses the client reads.
func connectRecording(t *testing.T, s *Server, c *Client) (*ClientSession, *recordingTransport) {
	t.Helper()
	ct, st := transport.NewInMemoryTransports()
	rt := &recordingTransport{Transport: ct}
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	must(t, err)
	cs, err := c.Connect(ctx, rt)
	must(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		cs.Wait()
		ss.Wait()
	})
	return cs, rt
}

// TestHandlerErrorsOnTheWire checks the one rule for a handler's error: it
// is a tool error (an isError result) unless the handler itself returns a
// *jsonrpc.Error or a ProtocolError; errors of nested calls to the peer
// keep their meaning as failures of this handler, and a cancelled request
// stays cancelled.
func TestHandlerErrorsOnTheWire(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	tool := func(name string, h func(ctx context.Context, req *CallToolRequest) error) {
		must(t, s.AddTool(&Tool{Name: name}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			return nil, h(ctx, req)
		}))
	}
	tool("sample", func(ctx context.Context, req *CallToolRequest) error {
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		return err // the client declared no sampling
	})
	tool("elicit", func(ctx context.Context, req *CallToolRequest) error {
		_, err := req.Elicit(ctx, &ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		return err // the client's handler fails
	})
	tool("elicit-wrapped", func(ctx context.Context, req *CallToolRequest) error {
		_, err := req.Elicit(ctx, &ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
		return fmt.Errorf("asking the user: %w", err)
	})
	tool("protocol", func(context.Context, *CallToolRequest) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad city"}
	})
	tool("protocol-wrapped", func(context.Context, *CallToolRequest) error {
		return fmt.Errorf("deep: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad city"})
	})
	tool("protocol-interface", func(context.Context, *CallToolRequest) error {
		return &URLElicitationRequiredError{Elicitations: []*ElicitParams{{Mode: ElicitModeURL, Message: "log in", URL: "https://example.com", ElicitationID: "e"}}}
	})
	tool("protocol-interface-wrapped", func(context.Context, *CallToolRequest) error {
		return fmt.Errorf("deep: %w", &ResourceNotFoundError{URI: "x://y"})
	})
	tool("canceled-not-cancelled", func(context.Context, *CallToolRequest) error {
		return fmt.Errorf("a timer of mine: %w", context.Canceled)
	})
	must(t, s.AddPrompt(&Prompt{Name: "sample"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		return nil, err
	}))
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		// Requests to the client, whose failures become tool errors
		// (TestModernClientUndeclaredInput covers 2026-07-28).
		Era: EraHandshake,
		ElicitationHandler: func(context.Context, *ElicitRequest) (*ElicitResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no UI"}
		},
	})
	cs, rt := connectRecording(t, s, c)
	ctx := context.Background()

	tests := []struct {
		tool     string
		wantCode int64  // 0: a result
		wantText string // in the error text or the tool error's content
	}{
		{"sample", 0, `"sampling"`},
		{"elicit", 0, "no UI"},
		{"elicit-wrapped", 0, "asking the user"},
		{"protocol", jsonrpc.CodeInvalidParams, "bad city"},
		{"protocol-wrapped", 0, "deep: "},
		{"protocol-interface", jsonrpc.CodeURLElicitationRequired, ""},
		{"protocol-interface-wrapped", 0, "deep: resource not found"},
		{"canceled-not-cancelled", 0, "a timer of mine"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &CallToolParams{Name: tt.tool})
			resp := rt.lastResponse()
			if resp == nil {
				t.Fatal("no response recorded")
			}
			if tt.wantCode != 0 {
				if resp.Error == nil || resp.Error.Code != tt.wantCode || !strings.Contains(resp.Error.Message, tt.wantText) {
					t.Fatalf("wire response = %+v %s; want error %d %q", resp.Error, resp.Result, tt.wantCode, tt.wantText)
				}
				if err == nil {
					t.Fatal("CallTool succeeded")
				}
				return
			}
			if resp.Error != nil {
				t.Fatalf("wire error %v; want an isError result", resp.Error)
			}
			var raw struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			must(t, json.Unmarshal(resp.Result, &raw))
			if !raw.IsError || len(raw.Content) != 1 || !strings.Contains(raw.Content[0].Text, tt.wantText) {
				t.Fatalf("wire result %s; want isError with %q", resp.Result, tt.wantText)
			}
			if err != nil || !res.IsError {
				t.Fatalf("CallTool = %+v, %v", res, err)
			}
		})
	}

	// Another handler's nested failure is an internal error carrying its
	// text, not the peer's code.
	_, err := cs.GetPrompt(ctx, &GetPromptParams{Name: "sample"})
	resp := rt.lastResponse()
	if err == nil || resp == nil || resp.Error == nil || resp.Error.Code != jsonrpc.CodeInternalError || !strings.Contains(resp.Error.Message, "sampling") {
		t.Errorf("prompts/get: err %v, wire %+v", err, resp)
	}
}

// TestToolCancellationStaysCancellation checks that a tool whose request
// the client cancelled sends no response, neither an error nor a result.
func TestToolCancellationStaysCancellation(t *testing.T) {
	checkGoroutines(t)
	started := make(chan struct{})
	returned := make(chan struct{})
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, s.AddTool(&Tool{Name: "block"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		defer close(returned)
		close(started)
		<-ctx.Done()
		return nil, fmt.Errorf("waiting: %w", ctx.Err())
	}))
	cs, rt := connectRecording(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &CallToolParams{Name: "block"})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client err = %v", err)
	}
	<-returned
	// A ping after the handler returned: its response is the last one read,
	// so a response to the cancelled call would have been read before it.
	must(t, cs.Ping(context.Background()))
	rt.mu.Lock()
	n := len(rt.responses)
	rt.mu.Unlock()
	if n != 2 { // initialize and ping
		t.Errorf("%d responses read; want 2 (no answer to the cancelled call)", n)
	}
}
