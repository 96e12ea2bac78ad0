package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// fuzzLimit is the event size limit under fuzzing: small, so inputs reach
// it easily.
const fuzzLimit = 64

// FuzzReader feeds arbitrary bytes to a Reader, whole and one byte at a
// time, and checks that it never panics or hangs, that both ways of
// reading agree, that every event respects the size limit, and that each
// event read back through AppendEvent and a fresh Reader is unchanged.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"",
		"data: x\n\n",
		"\xEF\xBB\xBFid: 1\r\nevent: message\r\ndata: {}\r\n\r\n",
		"id: p\ndata:\n\nretry: 10\n\n: comment\r\rdata\rdata: a\n\n",
		"id: a\x00b\ndata: " + strings.Repeat("y", 70) + "\n\ndata: z\n\n",
		"retry: 123456789012345678901234567890\ndata: x\n\nfoo\n\n",
		"event: endpoint\ndata: /messages?sessionId=1\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := collect(t, NewReader(bytes.NewReader(in), fuzzLimit))
		bytewise := collect(t, NewReader(iotest.OneByteReader(bytes.NewReader(in)), fuzzLimit))
		if len(whole) != len(bytewise) {
			t.Fatalf("whole read gave %d results, bytewise %d", len(whole), len(bytewise))
		}
		for i := range whole {
			if !sameResult(whole[i], bytewise[i]) {
				t.Fatalf("result %d: whole %+v, bytewise %+v", i, whole[i], bytewise[i])
			}
		}
		for _, res := range whole {
			if res.err != nil {
				continue
			}
			ev := res.ev
			if len(ev.Data) > fuzzLimit {
				t.Fatalf("event of %d bytes passed the limit of %d", len(ev.Data), fuzzLimit)
			}
			// The Reader splits lines at line breaks, rejects ids with
			// NULs and reads retry in whole milliseconds.
			if strings.ContainsAny(ev.ID, "\r\n\x00") || strings.ContainsAny(ev.Name, "\r\n") ||
				ev.Retry%time.Millisecond != 0 {
				t.Fatalf("Reader produced an unrepresentable event %+v", ev)
			}
			if strings.Contains(ev.Name, "\x00") {
				continue // AppendEvent drops NULs from names
			}
			wire := AppendEvent(nil, &ev)
			r := NewReader(bytes.NewReader(wire), 0)
			back, err := r.Next()
			if err != nil {
				t.Fatalf("reading back %q: %v", wire, err)
			}
			if back.ID != ev.ID || back.Name != ev.Name || !bytes.Equal(back.Data, ev.Data) || back.Retry != ev.Retry {
				t.Fatalf("round trip through %q: got %+v, want %+v", wire, back, ev)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("reading back %q: trailing %v", wire, err)
			}
		}
	})
}

type result struct {
	ev  Event
	err error
}

func sameResult(a, b result) bool {
	if (a.err == nil) != (b.err == nil) || (a.err != nil && a.err.Error() != b.err.Error()) {
		return false
	}
	return a.ev.ID == b.ev.ID && a.ev.Name == b.ev.Name && bytes.Equal(a.ev.Data, b.ev.Data) && a.ev.Retry == b.ev.Retry
}

// collect reads r to its end. Each result needs at least one byte of
// input, which bounds the loop.
func collect(t *testing.T, r *Reader) []result {
	var out []result
	for {
		ev, err := r.Next()
		out = append(out, result{ev, err})
		if err != nil && !errors.Is(err, ErrEventTooLarge) {
			if err != io.EOF {
				t.Fatalf("unexpected error %v", err)
			}
			return out
		}
	}
}
