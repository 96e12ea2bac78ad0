package transport

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// prefixTagger is a SessionIDTagger whose IDs start with a prefix: what
// a key ring shared by replicas is to the handlers, without the keys.
type prefixTagger struct {
	prefix string
	minted atomic.Int64
}

func (p *prefixTagger) MintSessionID() string {
	return fmt.Sprintf("%s%d.%s", p.prefix, p.minted.Add(1), rand.Text())
}

func (p *prefixTagger) CheckSessionID(id string) bool { return strings.HasPrefix(id, p.prefix) }

// forgedSessionIDs returns session IDs no tagger of these tests minted:
// random, altered, absurd.
func forgedSessionIDs(valid string) []string {
	ids := []string{
		"x",
		"q3Ay0rB4ljvNJ3r0pq7Apw", // the old format: 16 random bytes
		valid[:len(valid)-1],
		valid + "A",
		valid[:len(valid)-1] + string(valid[len(valid)-1]^1),
		"{" + valid + "}",
		"-",
		"+",
		"(",
		strings.Repeat("A", 8000),
		"\x7e" + valid[1:],
	}
	for range 200 {
		ids = append(ids, rand.Text(), rand.Text()+"."+rand.Text())
	}
	return ids
}

// refused returns the IDs of ids that the tagger refuses; with all, it
// must refuse them all (the handler's own key does).
func refused(t *testing.T, tagger SessionIDTagger, all bool, ids []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		if !tagger.CheckSessionID(id) {
			out = append(out, id)
		} else if all {
			t.Fatalf("forged session ID %.40q accepted", id)
		}
	}
	if len(out) < 400 {
		t.Fatalf("%d forged IDs refused", len(out))
	}
	return out
}

// TestStreamableHTTPForgedSessionIDs sends requests naming forged session
// IDs, with the handler's own key (nil SessionIDs) and with a tagger
// given: each gets the same 404 as an unknown session, on POST, GET and
// DELETE, and none reaches the session table. An ID with a valid tag is
// looked up; the session's own is served.
func TestStreamableHTTPForgedSessionIDs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tagger SessionIDTagger
	}{
		{"handler's key", nil},
		{"tagger", &prefixTagger{prefix: "ring-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			d := newDirectHarness(t, &StreamableHTTPOptions{SessionIDs: tt.tagger})
			var looked atomic.Int64
			d.h.testHookLookup = func(string) { looked.Add(1) }
			id, code := d.initialize("192.0.2.1")
			if code != http.StatusOK || !d.h.sids.CheckSessionID(id) {
				t.Fatalf("initialize: %d, session ID %q", code, id)
			}
			if p, ok := tt.tagger.(*prefixTagger); ok && (!strings.HasPrefix(id, "ring-") || p.minted.Load() != 1) {
				t.Fatalf("session ID %q not minted by the tagger", id)
			}
			for _, c := range id {
				if c < 0x21 || c > 0x7e {
					t.Fatalf("session ID %q: %q is not visible ASCII", id, c)
				}
			}
			send := func(method, sid string) (int, string) {
				body := io.Reader(http.NoBody)
				if method == http.MethodPost {
					body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
				}
				r := d.request(t.Context(), method, "192.0.2.1", body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
				w := httptest.NewRecorder()
				d.h.ServeHTTP(w, r)
				return w.Code, w.Body.String()
			}
			// An ID with a valid tag that names no session: looked up, 404.
			unknown := d.h.sids.MintSessionID()
			code, want := send(http.MethodPost, unknown)
			if code != http.StatusNotFound || looked.Load() != 1 {
				t.Fatalf("unknown session: %d %q, %d lookups", code, want, looked.Load())
			}
			looked.Store(0)
			forged := refused(t, d.h.sids, tt.tagger == nil, forgedSessionIDs(id))
			for _, sid := range forged {
				for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
					if code, body := send(method, sid); code != http.StatusNotFound || body != want {
						t.Fatalf("%s with %.40q: %d %q, want the 404 of an unknown session %q", method, sid, code, body, want)
					}
				}
			}
			if n := looked.Load(); n != 0 {
				t.Fatalf("%d of %d forged session IDs reached the session table", n, 3*len(forged))
			}
			// A session held here is found without its tag checked again
			// and never reaches the path past the check.
			if code, body := send(http.MethodPost, id); code != http.StatusOK || looked.Load() != 0 {
				t.Fatalf("the session's own ID: %d %q, %d lookups past the check", code, body, looked.Load())
			}
		})
	}
}

// TestSSEForgedSessionIDs posts messages naming forged session IDs to
// the legacy SSE handler: 404 as an unknown session, and none reaches the
// session table; the session's own ID is served.
func TestSSEForgedSessionIDs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tagger SessionIDTagger
	}{
		{"handler's key", nil},
		{"tagger", &prefixTagger{prefix: "ring-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			b := newTestBackend()
			h := newSSEHandler(b.connect, &SSEOptions{SessionIDs: tt.tagger})
			var looked atomic.Int64
			h.testHookLookup = func(string) { looked.Add(1) }
			srv := httptest.NewServer(h)
			t.Cleanup(func() {
				h.Close()
				srv.Close()
				b.closeAll()
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
			req.Header.Set("Accept", "text/event-stream")
			get, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer get.Body.Close()
			ev := readEvent(t, bufio.NewReader(get.Body))
			u, err := url.Parse(ev["data"])
			if err != nil {
				t.Fatal(err)
			}
			id := u.Query().Get("sessionId")
			if !h.sids.CheckSessionID(id) {
				t.Fatalf("session ID %q does not verify", id)
			}
			post := func(sid string) (int, string) {
				resp, err := srv.Client().Post(srv.URL+"/sse?sessionId="+url.QueryEscape(sid), "application/json",
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body)
			}
			code, want := post(h.sids.MintSessionID())
			if code != http.StatusNotFound || looked.Load() != 1 {
				t.Fatalf("unknown session: %d %q, %d lookups", code, want, looked.Load())
			}
			looked.Store(0)
			forged := refused(t, h.sids, tt.tagger == nil, forgedSessionIDs(id))
			for _, sid := range forged {
				if code, body := post(sid); code != http.StatusNotFound || body != want {
					t.Fatalf("POST with %.40q: %d %q, want the 404 of an unknown session %q", sid, code, body, want)
				}
			}
			if n := looked.Load(); n != 0 {
				t.Fatalf("%d of %d forged session IDs reached the session table", n, len(forged))
			}
			if code, body := post(id); code != http.StatusAccepted || looked.Load() != 1 {
				t.Fatalf("the session's own ID: %d %q, %d lookups", code, body, looked.Load())
			}
		})
	}
}

// BenchmarkForgedSessionID measures the refusal of a forged session ID of
// the right shape by a handler's own tagger.
func BenchmarkForgedSessionID(b *testing.B) {
	l := newLocalSessionIDs()
	forged := l.MintSessionID()
	forged = forged[:len(forged)-1] + string(forged[len(forged)-1]^1)
	b.ReportAllocs()
	for b.Loop() {
		if l.CheckSessionID(forged) {
			b.Fatal("forged ID accepted")
		}
	}
}
