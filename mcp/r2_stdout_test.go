package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// recordingHandler keeps the records logged through it.
type recordingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// strayWarnings returns the warnings about stray lines: their messages
// and "line" attributes.
func (h *recordingHandler) strayWarnings() (msgs, lines []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level != slog.LevelWarn || !strings.Contains(r.Message, "not a protocol message") {
			continue
		}
		msgs = append(msgs, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				lines = append(lines, a.Value.String())
			}
			return true
		})
	}
	return msgs, lines
}

// TestClientStrayLines: lines a stdio server prints to its standard
// output between protocol messages are counted (StrayLines) and each is
// reported at warning level with its first 200 bytes, at most 10 a
// minute, the first with a hint that standard output is reserved.
func TestClientStrayLines(t *testing.T) {
	long := strings.Repeat("y", 300)
	tests := []struct {
		name  string
		lines []string // printed before each answer of the server
	}{
		{"one", []string{"hello from the server"}},
		{"long", []string{long}},
		{"many", strings.Split(strings.Repeat("debug: x\n", 8), "\n")[:8]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sr, cw := io.Pipe() // client -> server
			cr, sw := io.Pipe() // server -> client
			defer cw.Close()
			defer sw.Close()
			h := &recordingHandler{}
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				Era:    mcp.EraHandshake,
				Logger: slog.New(h),
			})
			lines := make(chan map[string]json.RawMessage, 16)
			go func() {
				defer close(lines)
				in := bufio.NewScanner(sr)
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
			stray := func() {
				for _, l := range tt.lines {
					fmt.Fprintln(sw, l)
				}
			}
			connected := make(chan error, 1)
			var cs *mcp.ClientSession
			go func() {
				var err error
				cs, err = c.Connect(context.Background(), &transport.IOTransport{Reader: cr, Writer: cw})
				connected <- err
			}()
			init := read()
			stray()
			fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"raw","version":"0"}}}`+"\n", init["id"])
			if err := <-connected; err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			read() // notifications/initialized
			const pings = 2
			for range pings {
				done := make(chan error, 1)
				go func() { done <- cs.Ping(context.Background()) }()
				ping := read()
				stray()
				fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", ping["id"])
				if err := <-done; err != nil {
					t.Fatalf("ping: %v", err)
				}
			}
			n := len(tt.lines) * (pings + 1)
			if got := cs.StrayLines(); got != int64(n) {
				t.Errorf("StrayLines() = %d, want %d", got, n)
			}
			msgs, logged := h.strayWarnings()
			if want := min(n, 10); len(msgs) != want {
				t.Fatalf("%d warnings, want %d: %q", len(msgs), want, msgs)
			}
			if !strings.Contains(msgs[0], "standard output") {
				t.Errorf("first warning %q has no hint about standard output", msgs[0])
			}
			for i, m := range msgs[1:] {
				if strings.Contains(m, "standard output") {
					t.Errorf("warning %d repeats the hint: %q", i+1, m)
				}
			}
			for i, l := range logged {
				want := tt.lines[i%len(tt.lines)]
				want = want[:min(len(want), 200)]
				if l != want {
					t.Errorf("warning %d shows %q, want %q", i, l, want)
				}
			}
		})
	}
}
