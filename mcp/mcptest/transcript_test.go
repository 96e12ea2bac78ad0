package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// TestTranscriptGolden records a session in each era, a tool call and a
// call that asks the client for input, and compares it with its golden
// file: the handshake era's requests to the client, 2026-07-28's
// input_required rounds with their request states.
func TestTranscriptGolden(t *testing.T) {
	for _, v := range mcptest.Eras() {
		t.Run(v, func(t *testing.T) {
			tr := &mcptest.Transcript{}
			script := mcptest.NewScript(t, mcptest.Elicit(accept), mcptest.CreateMessage(seat), mcptest.ListRoots(&mcp.Root{URI: "file:///home/ada"}))
			cs := mcptest.Connect(t, newServer(t), &mcptest.Options{ProtocolVersion: v, Script: script, Transcript: tr})
			ctx := t.Context()
			if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})); got != `{"sum":3}` {
				t.Errorf("add = %s", got)
			}
			if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "book"})); got != "booked 12A, receipt in file:///home/ada" {
				t.Errorf("book = %s", got)
			}
			tr.CompareGolden(t, filepath.Join("testdata", "book-"+v+".golden"))
		})
	}
}

// TestTranscriptOverHTTP records the session of TestTranscriptGolden
// over Streamable HTTP, with Transcript.Wrap and Script.ClientOptions:
// the wire is the same, and so is the transcript.
func TestTranscriptOverHTTP(t *testing.T) {
	for _, v := range mcptest.Eras() {
		t.Run(v, func(t *testing.T) {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(newServer(t), nil))
			defer srv.Close()
			tr := &mcptest.Transcript{}
			script := mcptest.NewScript(t, mcptest.Elicit(accept), mcptest.CreateMessage(seat), mcptest.ListRoots(&mcp.Root{URI: "file:///home/ada"}))
			c := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, script.ClientOptions(&mcp.ClientOptions{ProtocolVersion: v}))
			ctx := t.Context()
			var cs *mcp.ClientSession
			var err error
			mcptest.CheckGoroutines(t, func(ctx context.Context) {
				cs, err = c.Connect(ctx, tr.Wrap(&transport.StreamableClientTransport{URL: srv.URL}))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})); got != `{"sum":3}` {
				t.Errorf("add = %s", got)
			}
			if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: "book"})); got != "booked 12A, receipt in file:///home/ada" {
				t.Errorf("book = %s", got)
			}
			tr.CompareGolden(t, filepath.Join("testdata", "book-"+v+".golden"))
		})
	}
}

// TestCompareGolden: a transcript that differs from its golden file fails
// the test with the lines that differ; a missing file fails it with the
// way to write it; and the file is written instead when golden files are
// being updated, by the environment or by a test binary's own -update
// flag.
func TestCompareGolden(t *testing.T) {
	record := func(t *testing.T) *mcptest.Transcript {
		tr := &mcptest.Transcript{}
		cs := mcptest.Connect(t, newServer(t), &mcptest.Options{Transcript: tr})
		tr.Reset() // leave out server/discover
		if got := text(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})); got != `{"sum":3}` {
			t.Errorf("add = %s", got)
		}
		return tr
	}
	tests := []struct {
		name   string
		golden func(text string) string // the file's content; "" for none
		env    string                   // MCPTEST_UPDATE
		flag   bool                     // -update
		fail   string
		want   func(text string) string // the file's content after
	}{
		{name: "same", golden: same, want: same},
		{
			name:   "differs",
			golden: func(s string) string { return strings.Replace(s, `"sum": 3`, `"sum": 4`, 1) },
			fail:   "-      \"sum\": 4\n+      \"sum\": 3\n",
			want:   func(s string) string { return strings.Replace(s, `"sum": 3`, `"sum": 4`, 1) },
		},
		{name: "missing", golden: none, fail: "does not exist; run the test with -mcptest.update", want: none},
		{name: "MCPTEST_UPDATE=1", golden: none, env: "1", want: same},
		{name: "MCPTEST_UPDATE=0", golden: func(string) string { return "old\n" }, env: "0", fail: "+<-- response", want: func(string) string { return "old\n" }},
		{name: "-update", golden: func(string) string { return "old\n" }, flag: true, want: same},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := record(t)
			path := filepath.Join(t.TempDir(), "testdata", "add.golden")
			if g := tc.golden(tr.Text()); g != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(g), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("MCPTEST_UPDATE", tc.env)
			if tc.flag {
				flag.Set("update", "true")
				defer flag.Set("update", "false")
			}
			ft := newFakeT(t)
			ft.run(func() { tr.CompareGolden(ft, path) })
			wantFailure(t, ft.finish(), tc.fail)
			b, err := os.ReadFile(path)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if want := tc.want(tr.Text()); string(b) != want {
				t.Errorf("the golden file holds\n%s\nwant\n%s", b, want)
			}
		})
	}
}

func same(s string) string { return s }
func none(string) string   { return "" }

// The -update flag of this test binary, as many define for their own
// golden files; CompareGolden honours it.
var _ = flag.Bool("update", false, "rewrite golden files")

// TestTranscriptWrapStream records a byte stream's connection: what it
// writes, what it reads, and a line it could not decode, in order.
func TestTranscriptWrapStream(t *testing.T) {
	tr := &mcptest.Transcript{}
	in := strings.NewReader("{not json\n" + `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}` + "\n")
	var out strings.Builder
	var conn transport.Conn
	var err error
	mcptest.CheckGoroutines(t, func(ctx context.Context) {
		conn, err = tr.Wrap(&transport.IOTransport{Reader: in, Writer: &out}).Connect(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Write(t.Context(), &jsonrpc.Request{ID: jsonrpc.Int64ID(7), Method: "ping"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		conn.Read(t.Context())
	}
	if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Fatalf("the third Read = %v; want io.EOF", err)
	}
	got := tr.Text()
	want := "--> ping\n{\n  \"id\": 1,\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"ping\"\n}\n\n" +
		"<-- undecodable\n"
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "<-- response\n{\n  \"id\": 1,\n  \"jsonrpc\": \"2.0\",\n  \"result\": {\n    \"ok\": true\n  }\n}\n\n") {
		t.Errorf("Text() =\n%s", got)
	}
	if msgs := tr.Messages(); len(msgs) != 3 || !msgs[0].Sent || msgs[1].Err == "" || msgs[2].Sent {
		t.Errorf("Messages() = %+v", msgs)
	}
	if out.String() != `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n" {
		t.Errorf("the wrapped connection wrote %q", out.String())
	}
}
