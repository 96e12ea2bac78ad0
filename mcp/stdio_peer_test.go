package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// TestClientSkipsChattyServerOutput runs a client against a server that
// writes 20,000 lines that are not JSON before it answers initialize, and
// does not read its input meanwhile. The client must neither answer
// those lines (which would fill the server's input pipe and stall both
// sides) nor stop reading: initialize succeeds, and the client logs what
// it skipped.
func TestClientSkipsChattyServerOutput(t *testing.T) {
	checkGoroutines(t)
	c2sR, c2sW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s2cR, s2cW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	serverDone := make(chan []string)
	go func() {
		defer s2cW.Close()
		in := bufio.NewReader(c2sR)
		defer c2sR.Close()
		line, err := in.ReadBytes('\n')
		if err != nil {
			t.Error(err)
			close(serverDone)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &req)
		w := bufio.NewWriter(s2cW)
		for i := range 20000 {
			fmt.Fprintf(w, "log line %d from a library that prints to standard output\n", i)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"chatty","version":"1"}}}`+"\n", req.ID, LatestVersion)
		if err := w.Flush(); err != nil {
			t.Error(err)
		}
		// Only now read what the client sent meanwhile.
		var rest []string
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			rest = append(rest, sc.Text())
		}
		serverDone <- rest
	}()

	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	// The fake server answers one request, initialize.
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Logger: logger, Era: EraHandshake})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a guard against the deadlock
	defer cancel()
	cs, err := c.Connect(ctx, &transport.IOTransport{Reader: s2cR, Writer: c2sW})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	cs.Close()
	cs.Wait()
	for _, line := range <-serverDone {
		if strings.Contains(line, `"error"`) {
			t.Errorf("the client answered the server's output: %s", line)
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "skipping an undecodable message") {
		t.Errorf("nothing logged about the skipped lines:\n%.1000s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
