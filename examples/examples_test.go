// Package examples holds runnable example programs; this test builds the
// stdio client and server and runs one against the other.
package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestStdioClientAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	server := build(t, dir, "./stdio-server")
	client := build(t, dir, "./stdio-client")
	tests := []struct {
		args []string
		want []string
	}{
		{
			args: []string{"--", server},
			want: []string{
				"server: mcpkit-example 1.0.0 (protocol 2026-07-28)",
				"  add\n", "  countdown\n", "  echo\n", "  summarize\n", "  word_count\n",
				"  readme (example://readme)", "  logo (example://logo.png)",
				"  greeting (greeting://{name})",
				"  code_review\n",
				"call echo {\"message\":\"hello\"}:\n  text: {\"message\":\"hello\"}",
			},
		},
		{
			args: []string{"-era", "handshake", "--", server},
			want: []string{"server: mcpkit-example 1.0.0 (protocol 2025-11-25)", "  echo\n", "text: {\"message\":\"hello\"}"},
		},
		{
			args: []string{"-era", "modern", "-tool", "countdown", "-args", `{"from":2}`, server},
			want: []string{"server: mcpkit-example 1.0.0 (protocol 2026-07-28)", "text: liftoff"},
		},
		{
			args: []string{"-tool", "add", "-args", `{"a":2,"b":3}`, server},
			want: []string{`text: {"sum":5}`},
		},
		{
			args: []string{"-tool", "countdown", "-args", `{"from":2}`, server},
			want: []string{"text: liftoff"},
		},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, client, tt.args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("stdio-client %v: %v\n%s", tt.args, err, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("stdio-client %v output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
	// A tool error makes the client fail.
	out, err := exec.Command(client, "-tool", "countdown", "-args", `{"from":99}`, server).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "between 1 and 10") {
		t.Errorf("bad countdown: err %v\n%s", err, out)
	}
}

func TestClientAgainstHTTPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	server := build(t, dir, "./stdio-server")
	client := build(t, dir, "./stdio-client")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, server, "-http", "127.0.0.1:0")
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	defer srv.Process.Signal(os.Interrupt)
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("server banner: %v", err)
	}
	i := strings.Index(line, "http://")
	j := strings.Index(line, "/mcp")
	if i < 0 || j < i {
		t.Fatalf("server banner %q", line)
	}
	base := line[i:j]
	// Streamable HTTP, and the legacy endpoint reached through the
	// client's automatic fallback.
	// The default client speaks 2026-07-28 to the dual-era endpoint, and
	// reaches the legacy one (server/discover and initialize refused,
	// then the HTTP+SSE transport), where initialize settles the
	// revision.
	for _, tt := range []struct{ url, era, version string }{
		{base + "/mcp", "auto", "2026-07-28"},
		{base + "/mcp", "handshake", "2025-11-25"},
		{base + "/sse", "auto", "2025-11-25"},
	} {
		url := tt.url
		out, err := exec.CommandContext(ctx, client, "-era", tt.era, "-url", url, "-tool", "add", "-args", `{"a":2,"b":3}`).CombinedOutput()
		if err != nil {
			t.Fatalf("stdio-client -url %s: %v\n%s", url, err, out)
		}
		for _, w := range []string{"server: mcpkit-example 1.0.0 (protocol " + tt.version + ")", "  greeting (greeting://{name})", `text: {"sum":5}`} {
			if !strings.Contains(string(out), w) {
				t.Errorf("stdio-client -url %s output lacks %q:\n%s", url, w, out)
			}
		}
	}
}

// TestStdioServerAnswersAtEndOfInput initializes the stdio server, then
// writes pings, tools/list and tools/call at once and closes the server's
// standard input, as a client that has nothing more to send does: every
// request is still answered before the server exits.
func TestStdioServerAnswersAtEndOfInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	server := build(t, t.TempDir(), "./stdio-server")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, server)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	out := bufio.NewScanner(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if !out.Scan() || !strings.Contains(out.Text(), `"id":"init","result"`) {
		t.Fatalf("initialize: %q, %v", out.Text(), out.Err())
	}

	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	want := map[string]bool{`"list"`: true, `"call"`: true}
	for i := range 10 {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		want[fmt.Sprint(i)] = true
	}
	in.WriteString(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}` + "\n")
	io.WriteString(stdin, in.String())
	stdin.Close() // end of input, right after the requests

	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("output line %q: %v", out.Text(), err)
		}
		if m.ID == nil {
			continue // a notification
		}
		if m.Result == nil {
			t.Errorf("request %s: %s", m.ID, out.Text())
		}
		delete(want, string(m.ID))
	}
	if len(want) > 0 {
		t.Errorf("%d requests not answered (%v); output:\n%s", len(want), want, strings.Join(lines, "\n"))
	}
}
