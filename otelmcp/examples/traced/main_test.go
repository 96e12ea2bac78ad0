package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRun runs the example: its output holds the spans of both sides and
// the four histograms.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"Name": "tools/call forecast"`, `"Name": "server/discover"`, `"Name": "initialize"`,
		`"mcp.client.operation.duration"`, `"mcp.server.operation.duration"`,
		`"mcp.client.session.duration"`, `"mcp.server.session.duration"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s", want)
		}
	}
}
