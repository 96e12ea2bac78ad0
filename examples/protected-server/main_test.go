package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs the example with its own test authorization server on
// a free loopback port and returns its MCP URL.
func startServer(t *testing.T) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, config{addr: "127.0.0.1:0"}, out, func(u string) { urls <- u }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case u := <-urls:
		return u, out
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return "", nil
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(`{}`)})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New("tool error")
	}
	return string(res.StructuredContent), nil
}

func TestProtectedServer(t *testing.T) {
	mcpURL, out := startServer(t)
	for _, era := range []mcp.Era{mcp.EraHandshake, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			// Without authorization, the connection is refused.
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{Era: era})
			if _, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: mcpURL}); err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("Connect without a token: %v, want a 401", err)
			}

			// A client that never steps up logs in, calls whoami, and is
			// refused admin.
			noStepUp := &auth.Authorizer{Agent: &auth.HeadlessAgent{}, RedirectURL: "http://127.0.0.1:1/callback", MaxStepUps: -1}
			cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: mcpURL, Authorizer: noStepUp})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			got, err := callTool(ctx, cs, "whoami")
			if err != nil || !strings.Contains(got, `"subject":"user"`) || strings.Contains(got, AdminScope) {
				t.Fatalf("whoami = %s, %v", got, err)
			}
			if _, err := callTool(ctx, cs, "admin"); !errors.Is(err, auth.ErrStepUpLimit) {
				t.Fatalf("admin without step-up: %v, want ErrStepUpLimit", err)
			}

			// A client that steps up is granted mcp:admin and keeps its
			// other scopes.
			a := &auth.Authorizer{Agent: &auth.HeadlessAgent{}, RedirectURL: "http://127.0.0.1:1/callback"}
			cs2, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: mcpURL, Authorizer: a})
			if err != nil {
				t.Fatal(err)
			}
			defer cs2.Close()
			if got, err := callTool(ctx, cs2, "admin"); err != nil || !strings.Contains(got, AdminScope) {
				t.Fatalf("admin after step-up = %s, %v", got, err)
			}
			if got, err := callTool(ctx, cs2, "whoami"); err != nil || !strings.Contains(got, AdminScope) || !strings.Contains(got, "mcp:tools") {
				t.Fatalf("whoami after step-up = %s, %v", got, err)
			}
		})
	}
	if !strings.Contains(out.String(), "stdio-client -login -url "+mcpURL) {
		t.Errorf("the server did not say how to log in:\n%s", out)
	}
}
