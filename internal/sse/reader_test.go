package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// outcome describes what Next returned, compactly.
func outcome(ev Event, err error) string {
	var tl *TooLargeError
	switch {
	case err == io.EOF:
		return "EOF"
	case errors.As(err, &tl):
		return fmt.Sprintf("too-large %d", tl.Limit)
	case err != nil:
		return "error " + err.Error()
	}
	s := fmt.Sprintf("id=%q name=%q data=%q", ev.ID, ev.Name, ev.Data)
	if ev.Retry != 0 {
		s += fmt.Sprintf(" retry=%v", ev.Retry)
	}
	return s
}

// readAll reads r until an error other than a TooLargeError.
func readAll(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for range 1000 {
		ev, err := r.Next()
		out = append(out, outcome(ev, err))
		if err != nil && !errors.Is(err, ErrEventTooLarge) {
			return out
		}
	}
	t.Fatal("no end of stream after 1000 events")
	return nil
}

func TestReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"empty", "", 0, []string{"EOF"}},
		{"one event", "data: hello\n\n", 0, []string{`id="" name="" data="hello"`, "EOF"}},
		{"multi-line data", "data: a\ndata: b\ndata\ndata:\n\n", 0,
			[]string{`id="" name="" data="a\nb\n\n"`, "EOF"}},
		{"CRLF", "event: e\r\ndata: x\r\n\r\n", 0, []string{`id="" name="e" data="x"`, "EOF"}},
		{"CR", "id: 1\rdata: x\r\rdata: y\r\r", 0,
			[]string{`id="1" name="" data="x"`, `id="1" name="" data="y"`, "EOF"}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", 0,
			[]string{`id="" name="" data="a\nb\nc"`, "EOF"}},
		{"BOM", "\xEF\xBB\xBFdata: x\n\n", 0, []string{`id="" name="" data="x"`, "EOF"}},
		{"BOM only first", "\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n", 0,
			[]string{`id="" name="" data="x"`, "EOF"}},
		{"comments", ": hi\n:\ndata: x\n: mid\n\n", 0, []string{`id="" name="" data="x"`, "EOF"}},
		{"only one space stripped", "data:  two\ndata:none\n\n", 0,
			[]string{`id="" name="" data=" two\nnone"`, "EOF"}},
		{"colon in value", "data: a: b\n\n", 0, []string{`id="" name="" data="a: b"`, "EOF"}},
		{"field without colon", "data\n\n", 0, []string{`id="" name="" data=""`, "EOF"}},
		{"unknown field", "foo: bar\ndata: x\n\n", 0, []string{`id="" name="" data="x"`, "EOF"}},
		{"unknown field only", "foo: bar\n\n", 0, []string{"EOF"}},
		{"blank lines skipped", "\n\n\r\n\rdata: x\n\n\n\n", 0, []string{`id="" name="" data="x"`, "EOF"}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", 0,
			[]string{`id="7" name="" data="a"`, `id="7" name="" data="b"`, `id="" name="" data="c"`, "EOF"}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", 0,
			[]string{`id="1" name="" data="a"`, `id="1" name="" data="b"`, "EOF"}},
		{"priming event", "id: p1\ndata:\n\n", 0, []string{`id="p1" name="" data=""`, "EOF"}},
		{"id only", "id: p1\n\n", 0, []string{`id="p1" name="" data=""`, "EOF"}},
		{"name does not persist", "event: endpoint\ndata: /m\n\ndata: x\n\n", 0,
			[]string{`id="" name="endpoint" data="/m"`, `id="" name="" data="x"`, "EOF"}},
		{"retry", "retry: 1500\ndata: x\n\n", 0,
			[]string{`id="" name="" data="x" retry=1.5s`, "EOF"}},
		{"retry not digits", "retry: 15s\ndata: x\n\nretry: -1\n\nretry:\n\nretry: 1 \n\n", 0,
			[]string{`id="" name="" data="x"`, `id="" name="" data=""`, `id="" name="" data=""`, `id="" name="" data=""`, "EOF"}},
		{"retry huge", "retry: 99999999999999999999999999\n\n", 0,
			[]string{`id="" name="" data="" retry=24h0m0s`, "EOF"}},
		{"partial event at EOF", "data: a\n\ndata: b\n", 0, []string{`id="" name="" data="a"`, "EOF"}},
		{"partial line at EOF", "data: a\n\ndata: b", 0, []string{`id="" name="" data="a"`, "EOF"}},
		{"JSON", "event: message\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", 0,
			[]string{`id="3" name="message" data="{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"`, "EOF"}},
		{"at limit", "data: 1234\n\n", 10, []string{`id="" name="" data="1234"`, "EOF"}},
		{"over limit", "data: 12345\n\ndata: ok\n\n", 10,
			[]string{"too-large 10", `id="" name="" data="ok"`, "EOF"}},
		{"over limit across lines", "data: 12\ndata: 34\n\ndata: ok\n\n", 12,
			[]string{"too-large 12", `id="" name="" data="ok"`, "EOF"}},
		{"over limit keeps id", "id: 9\ndata: 123456789\ndata: more\n\ndata: ok\n\n", 12,
			[]string{"too-large 12", `id="9" name="" data="ok"`, "EOF"}},
		{"id after overflow still counts", "data: 123456789\nid: 4\n\ndata: ok\n\n", 12,
			[]string{"too-large 12", `id="4" name="" data="ok"`, "EOF"}},
		{"long comment is not too large", ": " + strings.Repeat("c", 100) + "\ndata: ok\n\n", 10,
			[]string{`id="" name="" data="ok"`, "EOF"}},
		{"over limit at EOF", "data: 12345", 10, []string{"EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]func(io.Reader) io.Reader{
				"whole":    func(r io.Reader) io.Reader { return r },
				"one-byte": iotest.OneByteReader,
				"half":     iotest.HalfReader,
			}
			for rname, wrap := range readers {
				got := readAll(t, NewReader(wrap(strings.NewReader(tt.in)), tt.limit))
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("%s reads:\n got %q\nwant %q", rname, got, tt.want)
				}
			}
		})
	}
}

// TestReaderLongLines checks lines longer than the read buffer, over and
// under the limit.
func TestReaderLongLines(t *testing.T) {
	big := strings.Repeat("x", 3*readBufferSize)
	in := "id: a\ndata: " + big + "\ndata: " + big + "\n\n" +
		": " + big + "\n" +
		"data: " + big + big + big + "\n\n" + // too large for a limit of 8*readBufferSize
		"data: end\n\n"
	r := NewReader(strings.NewReader(in), 8*readBufferSize)
	ev, err := r.Next()
	if err != nil || ev.ID != "a" || string(ev.Data) != big+"\n"+big {
		t.Fatalf("first event: id %q, %d bytes of data, err %v", ev.ID, len(ev.Data), err)
	}
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("second event: err %v, want ErrEventTooLarge", err)
	}
	ev, err = r.Next()
	if err != nil || string(ev.Data) != "end" {
		t.Fatalf("third event: %q, %v", ev.Data, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// TestReaderBufferGrowth checks that the read buffer stays small while
// reads do not fill it, doubles up to readBufferSize while they do, and
// that events are parsed alike either way.
func TestReaderBufferGrowth(t *testing.T) {
	small := strings.Repeat("data: small\n\n", 100)
	r := NewReader(iotest.HalfReader(strings.NewReader(small)), 0)
	for range 100 {
		if ev, err := r.Next(); err != nil || string(ev.Data) != "small" {
			t.Fatalf("small event: %q, %v", ev.Data, err)
		}
	}
	if len(r.buf) != inlineBufferSize {
		t.Errorf("after small reads the buffer holds %d bytes, want %d", len(r.buf), inlineBufferSize)
	}

	// A read that fills the inline buffer moves to initialBufferSize.
	r = NewReader(strings.NewReader(strings.Repeat("data: small\n\n", 100)), 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if len(r.buf) != initialBufferSize {
		t.Errorf("after a full read of the inline buffer the buffer holds %d bytes, want %d", len(r.buf), initialBufferSize)
	}

	// A stream that ends before its first event costs the Reader alone.
	if n := testing.AllocsPerRun(100, func() {
		if _, err := NewReader(strings.NewReader(""), 0).Next(); err != io.EOF {
			t.Fatalf("Next: %v, want io.EOF", err)
		}
	}); n > 2 {
		t.Errorf("a stream with no event: %v allocations, want at most 2 (the Reader and its source)", n)
	}

	line := strings.Repeat("y", 5000)
	big := strings.Repeat("data: "+line+"\n\n", 40)
	r = NewReader(strings.NewReader(big), 0)
	for i := range 40 {
		if ev, err := r.Next(); err != nil || string(ev.Data) != line {
			t.Fatalf("big event %d: %d bytes, %v", i, len(ev.Data), err)
		}
	}
	if len(r.buf) != readBufferSize {
		t.Errorf("after full reads the buffer holds %d bytes, want %d", len(r.buf), readBufferSize)
	}

	// A small limit caps the buffer too.
	r = NewReader(strings.NewReader(strings.Repeat("data: 12345\n\n", 1000)), 100)
	for range 1000 {
		if ev, err := r.Next(); err != nil || string(ev.Data) != "12345" {
			t.Fatalf("event under a small limit: %q, %v", ev.Data, err)
		}
	}
	if len(r.buf) > 102 {
		t.Errorf("with a limit of 100 the buffer holds %d bytes", len(r.buf))
	}
}

// TestReaderDoesNotReadAhead checks that an event is returned as soon as
// its blank line arrives, without waiting for more input, whatever the
// line ending, including a lone "\r" whose "\n" might follow.
func TestReaderDoesNotReadAhead(t *testing.T) {
	for _, eol := range []string{"\n", "\r", "\r\n"} {
		pr, pw := io.Pipe()
		r := NewReader(pr, 0)
		go func() {
			pw.Write([]byte("\xEF\xBB\xBFdata: 1" + eol + eol))
			pw.Write([]byte("data: 2" + eol + eol))
		}()
		for _, want := range []string{"1", "2"} {
			ev, err := r.Next()
			if err != nil || string(ev.Data) != want {
				t.Fatalf("eol %q: got %q, %v; want %q", eol, ev.Data, err, want)
			}
		}
		pw.CloseWithError(errors.New("gone"))
		if _, err := r.Next(); err == nil || err.Error() != "gone" {
			t.Fatalf("eol %q: after close: %v", eol, err)
		}
		if _, err := r.Next(); err == nil || err.Error() != "gone" {
			t.Fatalf("eol %q: error is not sticky: %v", eol, err)
		}
	}
}

func TestReaderLastEventIDAndRetry(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 20\nid: 1\ndata: a\n\nid: 2\ndata: b\n"), 0)
	if d, ok := r.Retry(); ok || d != 0 {
		t.Fatalf("Retry before any event = %v, %v", d, ok)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if got := r.LastEventID(); got != "1" {
		t.Errorf("LastEventID = %q, want 1", got)
	}
	if d, ok := r.Retry(); !ok || d != 20*time.Millisecond {
		t.Errorf("Retry = %v, %v; want 20ms", d, ok)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
	// The partial event's id was never dispatched.
	if got := r.LastEventID(); got != "1" {
		t.Errorf("LastEventID after partial event = %q, want 1", got)
	}
}

func TestTooLargeError(t *testing.T) {
	var err error = &TooLargeError{Limit: 5}
	if !errors.Is(err, ErrEventTooLarge) {
		t.Error("errors.Is(TooLargeError, ErrEventTooLarge) = false")
	}
	if !strings.Contains(err.Error(), "5 bytes") {
		t.Errorf("Error() = %q", err.Error())
	}
}

// TestRoundTrip checks that events written by AppendEvent read back the
// same, for what the format can carry.
func TestRoundTrip(t *testing.T) {
	events := []Event{
		{Data: []byte("x")},
		{ID: "1", Name: "message", Data: []byte(`{"a":1}`)},
		{ID: "2", Data: []byte("two\nlines\n")},
		{ID: "3", Data: []byte("cr\rcrlf\r\nend")},
		{ID: "4", Retry: 3 * time.Second},
		{ID: "5", Name: "endpoint", Data: []byte("/messages?s=1")},
		{ID: "6", Data: []byte(" leading space")},
	}
	var b []byte
	for i := range events {
		b = AppendEvent(b, &events[i])
	}
	r := NewReader(bytes.NewReader(b), 0)
	for _, want := range events {
		got, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		wantData := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(want.Data))
		if got.ID != want.ID || got.Name != want.Name || string(got.Data) != wantData || got.Retry != want.Retry {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
}

func BenchmarkReader(b *testing.B) {
	ev := Event{ID: "12345", Data: bytes.Repeat([]byte(`{"jsonrpc":"2.0","method":"x"}`), 10)}
	one := AppendEvent(nil, &ev)
	stream := bytes.Repeat(one, 1000)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
