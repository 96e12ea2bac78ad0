package mcp

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/transport"
)

// TestBusRelayMessages checks the reading of the bus messages about one
// session: each member a replica acts on is checked, and what fails is
// refused (the Server drops and logs it).
func TestBusRelayMessages(t *testing.T) {
	sid := "kid.random.tag"
	for _, tc := range []struct {
		name, msg string
		ok        bool
	}{
		{"deleted", `{"v":1,"o":"x","k":"deleted","s":"` + sid + `"}`, true},
		{"changed", `{"v":1,"o":"x","k":"changed","s":"` + sid + `","n":3}`, true},
		{"cancel", `{"v":1,"o":"x","k":"cancel","s":"` + sid + `","m":{"jsonrpc":"2.0","method":"notifications/cancelled"}}`, true},
		{"answer", `{"v":1,"o":"x","k":"answer","s":"` + sid + `","t":"r1","m":{"jsonrpc":"2.0","id":"r1:1","result":{}}}`, true},
		{"stream", `{"v":1,"o":"x","k":"stream","s":"` + sid + `","t":"r1","m":{"jsonrpc":"2.0","method":"ping","id":"x:1"}}`, true},
		{"sse", `{"v":1,"o":"x","k":"sse","s":"` + sid + `","t":"r1","m":{"p":"","m":{}}}`, true},
		{"later version", `{"v":2,"o":"x","k":"deleted","s":"` + sid + `","new":1}`, true},
		{"no session", `{"v":1,"o":"x","k":"deleted"}`, false},
		{"session too long", `{"v":1,"o":"x","k":"deleted","s":"` + strings.Repeat("s", 257) + `"}`, false},
		{"session with a space", `{"v":1,"o":"x","k":"deleted","s":"a b"}`, false},
		{"change without version", `{"v":1,"o":"x","k":"changed","s":"` + sid + `"}`, false},
		{"cancel without message", `{"v":1,"o":"x","k":"cancel","s":"` + sid + `"}`, false},
		{"message not JSON", `{"v":1,"o":"x","k":"cancel","s":"` + sid + `","m":{"jsonrpc"}`, false},
		{"answer without replica", `{"v":1,"o":"x","k":"answer","s":"` + sid + `","m":{"jsonrpc":"2.0","id":1,"result":{}}}`, false},
		{"answer to a bad replica", `{"v":1,"o":"x","k":"answer","s":"` + sid + `","t":"a:b","m":{"jsonrpc":"2.0","id":1,"result":{}}}`, false},
		{"message too large", `{"v":1,"o":"x","k":"stream","s":"` + sid + `","t":"r1","m":"` + strings.Repeat("m", mcplink.MaxRelayBytes) + `"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeBusMessage([]byte(tc.msg), DefaultMaxSubscriptionURILength)
			if (err == nil) != tc.ok {
				t.Errorf("decodeBusMessage: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestBusRelayDropped checks that a relayed message that cannot be
// acted on is dropped and logged: one addressed to another replica, and
// one whose JSON-RPC message is not of its kind (a request as an
// answer). The session serves on.
func TestBusRelayDropped(t *testing.T) {
	checkGoroutines(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	bus := newObservedBus()
	s := busServer(bus, logger)
	h := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: transport.NewMemorySessionStore(nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
		s.Close()
	})
	post := func(sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	own := s.ReplicaID()
	for _, tc := range []struct{ name, msg, log string }{
		{"addressed to another replica", `{"v":1,"o":"x","k":"answer","s":"` + sid + `","t":"elsewhere","m":{"jsonrpc":"2.0","id":"elsewhere:1","result":{}}}`, "addressed to another replica"},
		{"a request as an answer", `{"v":1,"o":"x","k":"answer","s":"` + sid + `","t":"` + own + `","m":{"jsonrpc":"2.0","id":"x:1","method":"ping"}}`, "malformed relayed message"},
		{"a response as a cancellation", `{"v":1,"o":"x","k":"cancel","s":"` + sid + `","m":{"jsonrpc":"2.0","id":1,"result":{}}}`, "malformed relayed message"},
		{"a response for the GET stream", `{"v":1,"o":"x","k":"stream","s":"` + sid + `","t":"` + own + `","m":{"jsonrpc":"2.0","id":1,"result":{}}}`, "malformed relayed message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			logs.Reset()
			mu.Unlock()
			bus.sub(0).BusMessage([]byte(tc.msg))
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("not logged (%q): %q", tc.log, logs.String())
			}
		})
	}
	if st := post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`).StatusCode; st != http.StatusOK {
		t.Errorf("ping after: status %d", st)
	}
}

// TestBusGapEndsGETStream checks that a gap on the bus ends the GET
// streams of the sessions kept in a store, which may have missed what
// other replicas relayed: the client opens them again.
func TestBusGapEndsGETStream(t *testing.T) {
	checkGoroutines(t)
	bus := newObservedBus()
	s := busServer(bus, nil)
	h := NewStreamableHTTPHandler(s, &transport.StreamableHTTPOptions{SessionStore: transport.NewMemorySessionStore(nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
		s.Close()
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	get, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: status %d", stream.StatusCode)
	}
	bus.sub(0).BusGap(errors.New("test gap"))
	// The stream ends: reading it returns (io.ReadAll would wait
	// forever on a stream left open).
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Fatalf("reading the GET stream: %v", err)
	}
}
