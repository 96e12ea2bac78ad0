package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// failingLog is an EventLog whose writes of data containing fail fail,
// and whose After call number failAfter (from 1) fails.
type failingLog struct {
	*MemoryEventStore
	fail       []byte
	failAfter  int32
	afterCalls atomic.Int32
}

func (l *failingLog) After(ctx context.Context, sessionID, lastEventID string) (string, []StoredEvent, error) {
	if l.afterCalls.Add(1) == l.failAfter {
		return "", nil, errors.New("store down")
	}
	return l.MemoryEventStore.After(ctx, sessionID, lastEventID)
}

func (l *failingLog) Write(ctx context.Context, sessionID, streamID string, e LogEvent) (string, error) {
	if l.fail != nil && bytes.Contains(e.Data, l.fail) {
		return "", errors.New("store down")
	}
	return l.MemoryEventStore.Write(ctx, sessionID, streamID, e)
}

func progress(k int) string {
	return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":` + strconv.Itoa(k) + `}}`
}

// An event the store failed to keep still goes out live (without an ID),
// and a resumption whose range crosses it is refused like an unknown
// event; one from after it replays the rest.
func TestStreamableHTTPResumeAcrossFailedAppend(t *testing.T) {
	checkLeaks(t)
	log := &failingLog{MemoryEventStore: NewMemoryEventStore(nil), fail: []byte(`"n":3}`)}
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: log}, nil)
	sid := hh.initialize("2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	post := hh.openPost(ctx, `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	events := newSSEReader(post.Body)
	prime := events.next()
	if prime == nil || prime["id"] == "" || prime["data"] != "" {
		t.Fatalf("priming event %q", prime)
	}
	defer close(hh.backend.tokens)
	ids := map[int]string{}
	for k := 1; k <= 5; k++ {
		hh.backend.tokens <- k
		ev := events.next()
		if ev == nil || ev["data"] != progress(k) {
			t.Fatalf("event %d: %q", k, ev)
		}
		if (ev["id"] == "") != (k == 3) {
			t.Fatalf("event %d has ID %q; want one for every stored event only", k, ev["id"])
		}
		ids[k] = ev["id"]
		if k == 3 {
			// Before an event records the gap, the store holds nothing
			// after event 2: the stream refuses the resumption itself.
			get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", ids[2]))
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()
			if get.StatusCode != 400 {
				t.Fatalf("resume from event 2 right after event 3 failed to be stored: %d, want 400", get.StatusCode)
			}
		}
	}
	for _, tc := range []struct {
		name, last string
		status     int
	}{
		{"priming event", prime["id"], 400},
		{"before the lost event", ids[2], 400},
		{"after the lost event", ids[4], 200},
		{"last event", ids[5], 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rctx, rcancel := context.WithCancel(context.Background())
			defer rcancel()
			get, err := hh.client.Do(hh.request(rctx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", tc.last))
			if err != nil {
				t.Fatal(err)
			}
			defer get.Body.Close()
			if get.StatusCode != tc.status {
				t.Fatalf("resume from %s: status %d, want %d", tc.last, get.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if tc.name == "after the lost event" {
				if ev := newSSEReader(get.Body).next(); ev == nil || ev["id"] != ids[5] || ev["data"] != progress(5) {
					t.Fatalf("replayed %q, want event 5", ev)
				}
			}
		})
	}
}

// A stream that another process writes (here the test, writing to the
// shared log under the session) is followed by a resumption: every event
// after Last-Event-ID arrives once, in order, the ones stored before the
// GET and the ones written while it tails, and the response ends with the
// stream's end.
func TestStreamableHTTPResumeTailsStreamWrittenElsewhere(t *testing.T) {
	checkLeaks(t)
	store := NewMemoryEventStore(nil)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: store}, nil)
	sid := hh.initialize("2025-11-25")
	ctx := context.Background()
	const stream, n = "elsewhere-1", 50
	start := store.StreamStart(sid, stream)
	var ids []string
	write := func(k int) {
		id, err := store.Write(ctx, sid, stream, LogEvent{Seq: int64(k), Data: []byte(progress(k)), End: k == n})
		if err != nil {
			t.Error(err)
		}
		ids = append(ids, id)
	}
	for k := 1; k <= 10; k++ {
		write(k)
	}
	get, err := hh.client.Do(hh.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", ids[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for k := 11; k <= n; k++ {
			write(k)
		}
	})
	r := newSSEReader(get.Body)
	for k := 4; k <= n; k++ {
		ev := r.next()
		if ev == nil || ev["data"] != progress(k) {
			t.Fatalf("event %d: %q", k, ev)
		}
	}
	if ev := r.next(); ev != nil {
		t.Fatalf("after the stream's end: %q", ev)
	}
	wg.Wait()
	if ids[n-1] == "" || start == "" {
		t.Fatal("no IDs")
	}
	// From its start, the whole stream; from its end, nothing.
	for _, tc := range []struct {
		last string
		want int
	}{{start, n}, {ids[n-1], 0}} {
		get, err := hh.client.Do(hh.request(ctx, http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", tc.last))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for r := newSSEReader(get.Body); ; got++ {
			if ev := r.next(); ev == nil {
				break
			}
		}
		get.Body.Close()
		if got != tc.want {
			t.Errorf("resume from %s: %d events, want %d", tc.last, got, tc.want)
		}
	}
}

// A stream whose requests were all cancelled ends without a response: its
// log still records the end, so a resumption of it ends at once instead
// of waiting for events that will not come.
func TestStreamableHTTPResumeCancelledStreamEnds(t *testing.T) {
	checkLeaks(t)
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: NewMemoryEventStore(nil)}, nil)
	sid := hh.initialize("2025-11-25")
	post := hh.openPost(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	events := newSSEReader(post.Body)
	events.next() // priming
	hh.backend.tokens <- 1
	last := events.next()["id"]
	hh.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	for events.next() != nil {
	}
	// The client's timeout (10 s) is below the bound of a quiet tail.
	get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", last))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	if get.StatusCode != 200 {
		t.Fatalf("resume: %d", get.StatusCode)
	}
	body, err := io.ReadAll(get.Body)
	if err != nil {
		t.Fatalf("the resumed stream did not end: %v", err)
	}
	for r := newSSEReader(bytes.NewReader(body)); ; {
		ev := r.next()
		if ev == nil {
			break
		}
		if ev["data"] != "" {
			t.Fatalf("resumed a cancelled stream: %q", ev)
		}
	}
}

// A resumption whose replay fails once the stream's lock is held (the
// store failed between the check and the replay) ends its connection
// rather than go on with live events after a hole.
func TestStreamableHTTPResumeReplayFails(t *testing.T) {
	checkLeaks(t)
	log := &failingLog{MemoryEventStore: NewMemoryEventStore(nil), failAfter: 2}
	hh := newHardHarness(t, &StreamableHTTPOptions{EventStore: log}, nil)
	sid := hh.initialize("2025-11-25")
	post := hh.openPost(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"stream"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	defer close(hh.backend.tokens)
	events := newSSEReader(post.Body)
	events.next() // priming
	hh.backend.tokens <- 1
	first := events.next()["id"]
	hh.backend.tokens <- 2
	events.next()
	get, err := hh.client.Do(hh.request(context.Background(), http.MethodGet, "", "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Last-Event-ID", first))
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	body, err := io.ReadAll(get.Body)
	if err != nil {
		t.Fatalf("the resumption whose replay failed did not end: %v", err)
	}
	if get.StatusCode != 200 || bytes.Contains(body, []byte("data:")) {
		t.Fatalf("resumption whose replay failed: %d %q", get.StatusCode, body)
	}
}
