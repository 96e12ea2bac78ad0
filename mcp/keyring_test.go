package mcp

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// mustRing returns a ring of keys or ends the test.
func mustRing(tb testing.TB, keys ...[]byte) *KeyRing {
	tb.Helper()
	r, err := NewKeyRing(keys...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// testSigner returns a signer of request states for the audience aud
// with a ring of keys.
func testSigner(tb testing.TB, aud string, keys ...[]byte) *stateSigner {
	tb.Helper()
	s := newStateSigner(mustRing(tb, keys...), aud, 0)
	return &s
}

var (
	keyA = []byte("key A: 32 bytes of secret, 0123456")
	keyB = []byte("key B: 32 bytes of secret, 0123456")
)

// TestNewKeyRing checks the constructor's refusals and the key IDs:
// derived from the key, so two rings given one key agree on its kid, and
// the first key signs.
func TestNewKeyRing(t *testing.T) {
	tests := []struct {
		name string
		keys [][]byte
		err  error
	}{
		{"one key", [][]byte{keyA}, nil},
		{"two keys", [][]byte{keyA, keyB}, nil},
		{"no key", nil, ErrNoKeys},
		{"short key", [][]byte{keyA, keyB[:MinKeyBytes-1]}, ErrKeyTooShort},
		{"empty key", [][]byte{{}}, ErrKeyTooShort},
		{"duplicate", [][]byte{keyA, keyB, bytes.Clone(keyA)}, ErrDuplicateKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewKeyRing(tt.keys...)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if err != nil {
				if r != nil {
					t.Fatal("a ring with an error")
				}
				return
			}
			if len(r.KIDs()) != len(tt.keys) {
				t.Fatalf("kids %v for %d keys", r.KIDs(), len(tt.keys))
			}
		})
	}
	ab, ba := mustRing(t, keyA, keyB), mustRing(t, keyB, keyA)
	if ab.KIDs()[0] != ba.KIDs()[1] || ab.KIDs()[1] != ba.KIDs()[0] || ab.KIDs()[0] == ab.KIDs()[1] {
		t.Fatalf("kids %v and %v: want the same kid for the same key", ab.KIDs(), ba.KIDs())
	}
	if len(ab.KIDs()[0]) != sidKIDLen || ab.signer().kid != ab.KIDs()[0] {
		t.Fatalf("kid %q", ab.KIDs()[0])
	}
	// The ring keeps no reference to the caller's slice.
	k := bytes.Clone(keyA)
	r := mustRing(t, k)
	id := r.MintSessionID()
	clear(k)
	if !r.CheckSessionID(id) || !mustRing(t, keyA).CheckSessionID(id) {
		t.Fatal("the ring changed with the caller's slice")
	}
}

// TestReadKeyRing checks the key file: hex lines, the first signs,
// blanks and comments ignored, and clear errors for what is not a key,
// which name the line and never show it.
func TestReadKeyRing(t *testing.T) {
	a, b := hex.EncodeToString(keyA), hex.EncodeToString(keyB)
	short := hex.EncodeToString(keyB[:MinKeyBytes-1])
	tests := []struct {
		name string
		file string
		kids *KeyRing // the ring it must equal by kids; nil for an error
		err  error    // checked with errors.Is when not nil
		msg  string   // in the error
	}{
		{"one key", a + "\n", mustRing(t, keyA), nil, ""},
		{"no final newline", a, mustRing(t, keyA), nil, ""},
		{"comments and blanks", "# signing key\n\n  " + a + "  # rotated in 2026-11\r\n\n#old\n" + strings.ToUpper(b) + "\n", mustRing(t, keyA, keyB), nil, ""},
		{"short key", a + "\n" + short + "\n", nil, ErrKeyTooShort, "line 2: 31 bytes"},
		{"not hex", a + "\nnot-a-key-but-a-secret-maybe\n", nil, nil, "line 2: not a hex-encoded key"},
		{"odd length", a[:len(a)-1] + "\n", nil, nil, "line 1: not a hex-encoded key"},
		{"empty", "\n# nothing\n", nil, ErrNoKeys, "key file"},
		{"duplicate", a + "\n\n" + strings.ToUpper(a) + "\n", nil, ErrDuplicateKey, "line 3 repeats line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadKeyRing(strings.NewReader(tt.file))
			if tt.kids != nil {
				if err != nil {
					t.Fatal(err)
				}
				if got, want := fmt.Sprint(r.KIDs()), fmt.Sprint(tt.kids.KIDs()); got != want {
					t.Fatalf("kids %s, want %s", got, want)
				}
				return
			}
			if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want %v mentioning %q", err, tt.err, tt.msg)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), a[:16]) || strings.Contains(err.Error(), short[:16]) {
				t.Fatalf("the error %q shows the key", err)
			}
		})
	}
}

// TestKeyRingNeverShowsKeys prints, formats, logs and marshals a ring
// and a ServerOptions holding it: the keys (raw, in hex, in base64) and
// the keys derived from them never appear.
func TestKeyRingNeverShowsKeys(t *testing.T) {
	r := mustRing(t, keyA, keyB)
	var secrets [][]byte
	for _, k := range [][]byte{keyA, keyB} {
		secrets = append(secrets, k, []byte(hex.EncodeToString(k)), []byte(fmt.Sprint(k)), []byte(fmt.Sprintf("%#v", k)))
	}
	for _, k := range r.keys {
		for _, d := range [][]byte{k.state, k.steps, k.session} {
			secrets = append(secrets, d, []byte(hex.EncodeToString(d)), []byte(fmt.Sprint(d)[:20]))
		}
	}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %p"} {
		out = append(out, fmt.Sprintf(verb, r), fmt.Sprintf(verb, *r), fmt.Sprintf(verb, ServerOptions{Keys: r}), fmt.Sprintf(verb, &ServerOptions{Keys: r}))
	}
	out = append(out, r.String(), fmt.Sprint([]*KeyRing{r}), fmt.Sprintf("%+v", map[string]any{"ring": r}))
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		slog.New(h(&b)).Info("ring", "ring", r, "opts", ServerOptions{Keys: r})
		out = append(out, b.String())
	}
	data, err := json.Marshal(map[string]any{"ring": r, "opts": ServerOptions{Keys: r}})
	out = append(out, string(data), fmt.Sprint(err))
	for _, o := range out {
		for _, s := range secrets {
			if bytes.Contains([]byte(o), s) {
				t.Fatalf("%q shows a key (%q)", o, s)
			}
		}
	}
	if !strings.Contains(fmt.Sprintf("%v", r), r.KIDs()[0]) {
		t.Errorf("%v: want the kids", r)
	}
}

// TestSessionIDTags checks the session IDs a ring mints: visible ASCII,
// unique, verified by any ring holding the key (first or not), and refused
// by a ring without it; and forged, altered, random and absurd IDs are
// refused.
func TestSessionIDTags(t *testing.T) {
	a, ab, ba := mustRing(t, keyA), mustRing(t, keyA, keyB), mustRing(t, keyB, keyA)
	c := mustRing(t, []byte("key C: 32 bytes of secret, 0123456"))
	id := a.MintSessionID()
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session ID %q has %q, outside visible ASCII", id, c)
		}
	}
	if id == a.MintSessionID() || len(id) != sidLen {
		t.Fatalf("session ID %q: want %d bytes, unique", id, sidLen)
	}
	for name, r := range map[string]*KeyRing{"same ring": a, "key first": ab, "key second": ba} {
		if !r.CheckSessionID(id) {
			t.Errorf("%s: %q refused", name, id)
		}
	}
	if !ab.CheckSessionID(ba.MintSessionID()) {
		t.Error("an ID the rotated ring minted refused by the ring before rotation")
	}
	flip := func(i int) string {
		c := id[i] ^ 1
		if c == '.' || c == '/' {
			c = id[i] ^ 2
		}
		return id[:i] + string(c) + id[i+1:]
	}
	forged := []struct{ name, id string }{
		{"another ring", c.MintSessionID()},
		{"empty", ""},
		{"kid altered", flip(0)},
		{"random part altered", flip(sidKIDLen + 3)},
		{"tag altered", flip(sidLen - 1)},
		{"tag of another ID", id[:sidKIDLen+1] + a.MintSessionID()[sidKIDLen+1:sidKIDLen+1+sidRandomLen] + id[sidLen-sidTagLen-1:]},
		{"unknown kid", "AAAAAA" + id[sidKIDLen:]},
		{"kid of another key of the ring", ab.KIDs()[1] + id[sidKIDLen:]},
		{"truncated", id[:sidLen-1]},
		{"extended", id + "A"},
		{"no separators", strings.ReplaceAll(id, ".", "A")},
		{"padding in the tag", id[:sidLen-2] + "=="},
		{"old format (16 random bytes)", "q3Ay0rB4ljvNJ3r0pq7Apw"},
		{"braces", "{" + id[1:sidLen-1] + "}"},
		{"absurd length", strings.Repeat("A", 1<<20)},
		{"not UTF-8", "\xff" + id[1:]},
	}
	for _, tt := range forged {
		for name, r := range map[string]*KeyRing{"a": a, "ab": ab} {
			if r.CheckSessionID(tt.id) {
				t.Errorf("%s: ring %s accepted %q", tt.name, name, tt.id)
			}
		}
	}
}

// TestServerKeys checks the ring a Server uses: the configured one, or a
// random one of its own, the same for its states and its session IDs.
func TestServerKeys(t *testing.T) {
	r := mustRing(t, keyA)
	id0 := r.MintSessionID()
	s := NewServer(&Implementation{Name: "s"}, &ServerOptions{Keys: r})
	if s.states.ring != r || s.states.aud != "s" || s.states.ttl != defaultRequestStateTTL {
		t.Fatalf("signer %+v", s.states)
	}
	u, v := NewServer(&Implementation{Name: "s"}, nil), NewServer(&Implementation{Name: "s"}, nil)
	if u.states.ring == nil || fmt.Sprint(u.states.ring.KIDs()) == fmt.Sprint(v.states.ring.KIDs()) {
		t.Fatal("servers without keys share a ring")
	}
	if v.states.ring.CheckSessionID(u.states.ring.MintSessionID()) {
		t.Fatal("a random ring accepted another's session ID")
	}
	z := NewServer(&Implementation{Name: "s"}, &ServerOptions{Keys: &KeyRing{}})
	if len(z.states.ring.KIDs()) != 1 || !z.states.ring.CheckSessionID(z.states.ring.MintSessionID()) {
		t.Fatal("a server given a zero KeyRing has no key to sign with")
	}
	if (&KeyRing{}).CheckSessionID(id0) {
		t.Fatal("a zero KeyRing verified a session ID")
	}
}

// BenchmarkRequestStateSignVerify measures signing a request state of one
// answer and verifying it.
func BenchmarkRequestStateSignVerify(b *testing.B) {
	s := testSigner(b, "bench", []byte("0123456789abcdef0123456789abcdef"))
	now := time.Now()
	st := &requestState{ID: newStateID(), Expires: now.Add(time.Minute).Unix(), Method: "tools/call", Params: "p", Principal: "u",
		Answers: map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}}
	b.ReportAllocs()
	for b.Loop() {
		signed, err := s.sign(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.verify(signed, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionIDCheck measures the check of a forged session ID of
// the right shape, what a flood of forged IDs costs.
func BenchmarkSessionIDCheck(b *testing.B) {
	r := mustRing(b, keyA, keyB)
	id := r.MintSessionID()
	forged := id[:sidLen-1] + "A"
	if forged == id {
		forged = id[:sidLen-1] + "B"
	}
	b.ReportAllocs()
	for b.Loop() {
		if r.CheckSessionID(forged) {
			b.Fatal("forged ID accepted")
		}
	}
}

// TestHandlersUseServerRing checks that the HTTP handlers of a server
// mint their session IDs with its ring (so that replicas sharing the ring
// accept each other's), and that a ring given in the options wins.
func TestHandlersUseServerRing(t *testing.T) {
	checkGoroutines(t)
	ring, other := mustRing(t, keyA), mustRing(t, keyB)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Keys: ring})
	tests := []struct {
		name string
		h    http.Handler
		want *KeyRing
	}{
		{"streamable", NewStreamableHTTPHandler(s, nil), ring},
		{"streamable, own tagger", NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionIDs: other}), other},
		{"sse", NewSSEHandler(s, nil), ring},
		{"sse, own tagger", NewSSEHandler(s, &transport.SSEOptions{SessionIDs: other}), other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.h)
			defer func() {
				srv.Close()
				tt.h.(interface{ Close() error }).Close()
			}()
			var id string
			if _, ok := tt.h.(*transport.SSEHandler); ok {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := srv.Client().Do(req)
				must(t, err)
				defer resp.Body.Close()
				r := bufio.NewReader(resp.Body)
				line, err := r.ReadString('\n') // event: endpoint
				for err == nil && !strings.HasPrefix(line, "data:") {
					line, err = r.ReadString('\n')
				}
				must(t, err)
				_, id, _ = strings.Cut(strings.TrimSpace(line), "sessionId=")
			} else {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(
					`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := srv.Client().Do(req)
				must(t, err)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				id = resp.Header.Get("Mcp-Session-Id")
			}
			if !tt.want.CheckSessionID(id) {
				t.Fatalf("session ID %q not minted with the expected ring", id)
			}
		})
	}
}

// BenchmarkSessionIDMint measures minting a session ID.
func BenchmarkSessionIDMint(b *testing.B) {
	r := mustRing(b, keyA)
	b.ReportAllocs()
	for b.Loop() {
		r.MintSessionID()
	}
}

// FuzzSessionIDCheck feeds arbitrary session IDs to the check: never a
// panic, and only what the ring minted verifies.
func FuzzSessionIDCheck(f *testing.F) {
	r := mustRing(f, keyA, keyB)
	// Minted from fixed random parts, so that every fuzzing process has
	// the same.
	minted := map[string]bool{}
	for i := range 4 {
		id := r.sessionID(&[16]byte{byte(i), 1, 2, 3})
		minted[id] = true
		f.Add(id)
	}
	for _, s := range []string{"", ".", "..", "AAAAAA..", strings.Repeat("A", sidLen), "{x}", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if r.CheckSessionID(id) && !minted[id] {
			t.Fatalf("%q verified", id)
		}
	})
}
