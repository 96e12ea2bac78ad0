package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// commandStats returns the commands the private redis-server p ran so far
// (INFO commandstats; INFO and a new connection's HELLO, CLIENT and SELECT
// left out: the count's own), in all and by command.
func commandStats(t *testing.T, p *redisProc) (int64, map[string]int64) {
	t.Helper()
	by := map[string]int64{}
	c := p.client()
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		switch name {
		case "cmdstat_info", "cmdstat_hello", "cmdstat_client|setinfo", "cmdstat_client", "cmdstat_select":
			continue
		}
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		v, _ := strconv.ParseInt(calls, 10, 64)
		n += v
		by[name] = v
	}
	return n, by
}

// TestForgedSessionIDs sends requests naming forged session IDs (random
// IDs of a ring ID's shape, a real ID with its tag altered, IDs of key
// syntax: braces, range characters, absurd lengths) round robin to three
// replicas sharing a Redis session store and event log: each gets 404,
// GET resumptions with such IDs too, and none costs a Redis command,
// since the key ring's tag is checked before any store is asked. A real
// session's Last-Event-ID used with another session replays nothing.
func TestForgedSessionIDs(t *testing.T) {
	p := startRedis(t)
	f := newFleet(t, p)
	real := f.session(0)
	other := f.session(1)

	var forged []string
	for range 300 {
		b := make([]byte, 34)
		rand.Read(b)
		forged = append(forged, base64.RawURLEncoding.EncodeToString(b)[:len(real)])
	}
	tampered := []byte(real)
	tampered[len(tampered)-1] ^= 1
	forged = append(forged, string(tampered), real+"x", real[:len(real)-1],
		"{"+real+"}", "a}b", "-", "+", "(0", "1-0", strings.Repeat("A", 4096), "")

	before, beforeBy := commandStats(t, p)
	ctx := t.Context()
	for k, id := range forged {
		i := k % 3
		if id == "" {
			continue // no session ID: an initialize is wanted, not a lookup
		}
		if r := f.echo(ctx, i, id); r.status != http.StatusNotFound && r.status != http.StatusBadRequest {
			t.Fatalf("tools/call with forged ID %.40q on replica %d: %d %s", id, i, r.status, r.body)
		}
		if resp := f.resume(ctx, i, id, "1:0:0:1-0"); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("GET with forged ID %.40q on replica %d: %d", id, i, resp.StatusCode)
		}
	}
	if n, by := commandStats(t, p); n != before {
		for name, v := range by {
			if v != beforeBy[name] {
				t.Logf("%s: %d", name, v-beforeBy[name])
			}
		}
		t.Errorf("%d forged IDs cost %d Redis commands, want 0", 2*len(forged), n-before)
	}

	// A stream of the real session, then its last event ID used with the
	// other session: nothing of the real session is replayed.
	cs := f.startCount(real)
	id := cs.progress(1)
	cs.end()
	for i := range 3 {
		resp := f.resume(ctx, i, other, id)
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("replica %d replayed session %s's event %s for session %s", i, real, id, other)
		}
	}
	// Well-formed IDs of another shape, and key syntax, in Last-Event-ID.
	for k, bad := range []string{"{x}", "1:0:0:(0-0", "1:0:0:+", "1:0:0:-", strings.Repeat("9", 4096), "a b"} {
		if resp := f.resume(ctx, k%3, real, bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %.40q on replica %d: %d, want 400", bad, k%3, resp.StatusCode)
		}
	}
}
