package mcp_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// dupLogBuffer is a bytes.Buffer for a logger written from several
// goroutines.
type dupLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *dupLogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *dupLogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDuplicateFeatureWarns checks that a feature added twice under one
// name in the server's setup, or twice in one Batch, is logged at warning
// level, while replacing a feature of a running server (the way to update
// it) is not.
func TestDuplicateFeatureWarns(t *testing.T) {
	toolH := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	resH := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	promptH := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	adders := map[string]func(s *mcp.Server, name string) error{
		"tool": func(s *mcp.Server, name string) error {
			return s.AddTool(&mcp.Tool{Name: name}, toolH)
		},
		"prompt": func(s *mcp.Server, name string) error {
			return s.AddPrompt(&mcp.Prompt{Name: name}, promptH)
		},
		"resource": func(s *mcp.Server, name string) error {
			return s.AddResource(&mcp.Resource{URI: "test://" + name, Name: name}, resH)
		},
		"resource template": func(s *mcp.Server, name string) error {
			return s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://" + name + "/{x}", Name: name}, resH)
		},
	}
	tests := []struct {
		name string
		// play adds the feature called "a" as the case says, with add.
		play func(t *testing.T, s *mcp.Server, add func(string) error)
		warn bool
	}{
		{"twice before connecting", func(t *testing.T, s *mcp.Server, add func(string) error) {
			mustNoErr(t, add("a"))
			mustNoErr(t, add("a"))
		}, true},
		{"two names before connecting", func(t *testing.T, s *mcp.Server, add func(string) error) {
			mustNoErr(t, add("a"))
			mustNoErr(t, add("b"))
		}, false},
		{"replaced while running", func(t *testing.T, s *mcp.Server, add func(string) error) {
			mustNoErr(t, add("a"))
			connectOneClient(t, s)
			mustNoErr(t, add("a"))
		}, false},
		{"twice in one Batch while running", func(t *testing.T, s *mcp.Server, add func(string) error) {
			connectOneClient(t, s)
			mustNoErr(t, s.Batch(func() error {
				mustNoErr(t, add("a"))
				return add("a")
			}))
		}, true},
		{"replaced in a Batch while running", func(t *testing.T, s *mcp.Server, add func(string) error) {
			mustNoErr(t, add("a"))
			connectOneClient(t, s)
			mustNoErr(t, s.Batch(func() error { return add("a") }))
			mustNoErr(t, s.Batch(func() error { return add("a") }))
		}, false},
	}
	for kind, adder := range adders {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				var log dupLogBuffer
				s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
					Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
				})
				tt.play(t, s, func(name string) error { return adder(s, name) })
				got := strings.Contains(log.String(), "level=WARN") && strings.Contains(log.String(), "the second replaces the first")
				if got != tt.warn {
					t.Errorf("warned = %v, want %v; log:\n%s", got, tt.warn, log.String())
				}
			})
		}
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// connectOneClient connects one client to s over in-memory transports.
func connectOneClient(t *testing.T, s *mcp.Server) {
	t.Helper()
	st, ct := transport.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
}
