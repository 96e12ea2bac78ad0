package redisstore

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFailoverKilledReplica runs two replica processes of
// cmd/stdio-server on one Redis and kills, with SIGKILL, the one running a
// streaming call while its client reads the call's response stream. The
// client resumes the stream on the other replica from an event it had
// already got: it gets every event stored after it once, in order (the
// progress numbers follow each other), then one answer to its request:
// the error a replica gives when the writer of a stream it follows died
// (-32001), or the result, had the call finished first, within a bound.
func TestFailoverKilledReplica(t *testing.T) {
	needRedisServer(t)
	rp := startRedis(t)
	bin := goBuild(t, "./cmd/stdio-server")
	keys := keyFile(t)
	args := []string{"-http", "127.0.0.1:0", "-redis", rp.addr(), "-keys", keys}
	a, urlA := startListening(t, bin, args...)
	b, urlB := startListening(t, bin, args...)
	defer func() {
		if t.Failed() {
			t.Logf("replica A's stderr:\n%s\nreplica B's stderr:\n%s", a.stderr, b.stderr)
		}
	}()

	const version = "2025-11-25"
	send := func(method, url, sid, last, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := send(http.MethodPost, urlA, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"failover","version":"1"}}}`)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	resp = send(http.MethodPost, urlA, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	// The call: ten steps of 50 ms, each a log message and a progress
	// notification. The client reads the priming event and three
	// progress events, and the replica is killed.
	resp = send(http.MethodPost, urlA, sid, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"countdown","arguments":{"from":10},"_meta":{"progressToken":"p"}}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call: %d %s", resp.StatusCode, ct)
	}
	r := &sseReader{bufio.NewScanner(resp.Body)}
	var firstProgress string
	for n := 0; n < 3; {
		ev := r.next()
		if ev == nil {
			t.Fatal("the call's stream ended early")
		}
		if p := progressOf(ev); p >= 0 {
			if n++; n == 1 {
				if p != 1 || ev["id"] == "" {
					t.Fatalf("first progress event %q", ev)
				}
				firstProgress = ev["id"]
			}
		}
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-a.exited

	// Resumed on the other replica from the first progress event.
	resp = send(http.MethodGet, urlB, sid, firstProgress, "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume on the other replica: %d", resp.StatusCode)
	}
	r = &sseReader{bufio.NewScanner(resp.Body)}
	want := 2
	var answer string
	for answer == "" {
		ev := r.next()
		if ev == nil {
			t.Fatalf("the resumed stream ended without an answer (progress up to %d)", want-1)
		}
		if p := progressOf(ev); p >= 0 {
			if p != want {
				t.Fatalf("progress %d, want %d: an event lost or repeated", p, want)
			}
			want++
			continue
		}
		if strings.Contains(ev["data"], `"id":2`) {
			answer = ev["data"]
		}
	}
	took := time.Since(killed)
	t.Logf("after the kill: %d progress events replayed, the answer in %v: %s", want-2, took.Round(time.Millisecond), answer)
	switch {
	case strings.Contains(answer, `"code":-32001`):
	case strings.Contains(answer, "liftoff"):
		if want != 11 {
			t.Errorf("the result after progress %d, want all ten", want-1)
		}
	default:
		t.Fatalf("answer %s, want the error -32001 or the result", answer)
	}
	if took > 15*time.Second {
		t.Errorf("the answer came %v after the kill, want within 15s (writer checked every 2s)", took)
	}
	if ev := r.next(); ev != nil {
		t.Errorf("after the answer: %q", ev)
	}
}
