package transport

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A stream's record goes when its events do: a session that ran many
// short requests holds nothing once their events have expired.
func TestMemoryEventStoreStreamRecordsExpire(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryEventStore(&MemoryEventStoreOptions{MaxAge: 300 * time.Millisecond})
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	const requests = 40000
	before := liveHeap()
	for i := range requests {
		stream := strconv.Itoa(i + 1)
		s.Append(ctx, "s", stream, nil)                                            // priming event
		s.Append(ctx, "s", stream, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) // response
	}
	now = now.Add(time.Second)
	// Any use of the store drops what expired.
	if _, _, err := s.After(ctx, "s", s.sessions["s"].eventID("1", 1)); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After an expired event: %v", err)
	}
	after := liveHeap()
	runtime.KeepAlive(s)
	if grown := int64(after) - int64(before); grown > 256<<10 {
		t.Errorf("the store holds %d bytes more after every event of %d requests expired", grown, requests)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	records := 0
	for _, sess := range s.sessions {
		records += len(sess.streams)
	}
	if records != 0 || s.bytes != 0 || len(s.order)-s.head != 0 {
		t.Errorf("after expiry: %d stream records, %d bytes, %d queued events; want none", records, s.bytes, len(s.order)-s.head)
	}
}

// Sequence numbers continue across a stream whose record went with its
// events, and a resumption that could have lost events is refused.
func TestMemoryEventStoreRecordGoneResume(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryEventStore(&MemoryEventStoreOptions{MaxAge: time.Minute})
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	first, _ := s.Append(ctx, "s", "get", nil)
	now = now.Add(2 * time.Minute)
	// The stream's only event expired: nothing came after it.
	if id, evs, err := s.After(ctx, "s", first); err != nil || id != "get" || len(evs) != 0 {
		t.Fatalf("After(%s) with nothing after it = %q, %v, %v", first, id, evs, err)
	}
	second, _ := s.Append(ctx, "s", "get", []byte("x"))
	if second == first {
		t.Fatalf("event ID %s given twice", second)
	}
	if _, evs, err := s.After(ctx, "s", first); err != nil || len(evs) != 1 || evs[0].ID != second {
		t.Fatalf("After(%s) = %v, %v; want %s", first, evs, err, second)
	}
	// Another stream's event and then this stream's expire: resuming from
	// before them cannot be faithful.
	s.Append(ctx, "s", "2", []byte("y"))
	third, _ := s.Append(ctx, "s", "get", []byte("z"))
	now = now.Add(2 * time.Minute)
	if _, _, err := s.After(ctx, "s", second); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After(%s) with lost events: %v", second, err)
	}
	if _, evs, err := s.After(ctx, "s", third); err != nil || len(evs) != 0 {
		t.Fatalf("After(%s), the last event = %v, %v", third, evs, err)
	}
}

// fillEventStore stores events events in each of sessions sessions.
func fillEventStore(s *MemoryEventStore, sessions, events int) {
	ctx := context.Background()
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
	for i := range sessions {
		sid := "s" + strconv.Itoa(i)
		for j := range events {
			s.Append(ctx, sid, strconv.Itoa(j%10), data)
		}
	}
}

// Ending a session goes through that session's events only, not through
// everything the store holds.
func TestMemoryEventStoreDeleteSessionCost(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryEventStore(&MemoryEventStoreOptions{MaxBytes: 1 << 30})
	fillEventStore(s, 1000, 150)
	s.Append(ctx, "small", "1", []byte("a"))
	s.Append(ctx, "small", "1", []byte("b"))
	last, _ := s.Append(ctx, "small", "2", []byte("c"))
	s.mu.Lock()
	s.visits = 0
	bytes := s.bytes
	s.mu.Unlock()
	if err := s.DeleteSession(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	visits, freed := s.visits, bytes-s.bytes
	s.mu.Unlock()
	if visits != 3 || freed != 3 {
		t.Fatalf("DeleteSession of 3 events visited %d events and freed %d bytes", visits, freed)
	}
	if _, _, err := s.After(ctx, "small", last); !errors.Is(err, ErrEventNotFound) {
		t.Fatalf("After on the deleted session: %v", err)
	}
	// The other sessions are intact, and the deleted events' entries leave
	// the age queue without harm.
	if _, evs, err := s.After(ctx, "s7", s.sessions["s7"].eventID("3", 4)); err != nil || len(evs) != 14 {
		t.Fatalf("another session: %d events, %v", len(evs), err)
	}
	s.mu.Lock()
	s.maxBytes = 1
	s.evict(s.now().Sub(s.start))
	remaining := s.bytes
	s.mu.Unlock()
	if remaining > 1 {
		t.Fatalf("%d bytes left after evicting down to 1", remaining)
	}
}

// BenchmarkMemoryEventStoreDeleteSession measures ending a session of 15
// events (storing them included) in a store that holds 150,000 events of
// 1,000 other sessions.
func BenchmarkMemoryEventStoreDeleteSession(b *testing.B) {
	ctx := context.Background()
	s := NewMemoryEventStore(&MemoryEventStoreOptions{MaxBytes: 1 << 30})
	fillEventStore(s, 1000, 150)
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	b.ReportAllocs()
	for b.Loop() {
		for j := range 15 {
			s.Append(ctx, "bench", strconv.Itoa(j%3), data)
		}
		s.DeleteSession(ctx, "bench")
	}
}

// TestMemoryEventStoreDeletedSessionsLeaveQueue checks that the events of
// deleted sessions do not keep the age queue's memory until later appends
// evict them: with every session deleted, nothing is held.
func TestMemoryEventStoreDeletedSessionsLeaveQueue(t *testing.T) {
	s := NewMemoryEventStore(nil)
	ctx := context.Background()
	for i := range 100 {
		sid := fmt.Sprintf("s%d", i)
		for range 50 {
			if _, err := s.Append(ctx, sid, "1", []byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 100 {
		if err := s.DeleteSession(ctx, fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.order) - s.head; n != 0 || cap(s.order) != 0 || s.bytes != 0 {
		t.Fatalf("after deleting every session: %d queued entries, queue capacity %d, %d bytes", n, cap(s.order), s.bytes)
	}
}

// BenchmarkMemoryEventLog measures a stored event (Write) and the replay
// of 100 events (After) on the in-memory store.
func BenchmarkMemoryEventLog(b *testing.B) {
	ctx := context.Background()
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
	b.Run("Write", func(b *testing.B) {
		s := NewMemoryEventStore(nil)
		b.ReportAllocs()
		seq := int64(0)
		for b.Loop() {
			seq++
			if _, err := s.Write(ctx, "s", "1", LogEvent{Seq: seq, Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Replay100", func(b *testing.B) {
		s := NewMemoryEventStore(nil)
		start := s.StreamStart("s", "1")
		for k := 1; k <= 100; k++ {
			s.Write(ctx, "s", "1", LogEvent{Seq: int64(k), Data: data})
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, evs, err := s.After(ctx, "s", start); err != nil || len(evs) != 100 {
				b.Fatal(len(evs), err)
			}
		}
	})
}
