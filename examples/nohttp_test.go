package examples

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServerWithoutHTTP builds the README's stdio server with the
// mcpkit_nohttp tag: it links neither net/http nor net (nothing a
// server that never speaks HTTP needs), and it still serves: its
// answers to initialize and a tools/call over stdin are checked.
func TestServerWithoutHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	const pkg = "./readme/server"
	out, err := exec.Command("go", "list", "-tags", "mcpkit_nohttp", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"net/http", "net", "crypto/tls"} {
		if slices.Contains(deps, banned) {
			t.Errorf("built with mcpkit_nohttp, %s links %s", pkg, banned)
		}
	}
	bin := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-tags", "mcpkit_nohttp", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}
`)
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("server: %v\n%s", err, got)
	}
	for _, want := range []string{`"id":1,"result"`, `"protocolVersion":"2025-11-25"`, `"id":2,"result"`, `Hello, Ada!`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
}
