package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// chunkReader returns one chunk per Read call, so tests control how the
// input is split.
type chunkReader struct{ chunks []string }

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.chunks) > 0 && r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	return n, nil
}

// sized returns a notification whose encoding is exactly n bytes long
// (n >= 47).
func sized(n int) string {
	const head, tail = `{"jsonrpc":"2.0","method":"m","params":{"p":"`, `"}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

func msg(s string) string { return "msg " + s }

func TestReadFraming(t *testing.T) {
	const (
		a = `{"jsonrpc":"2.0","method":"a"}`
		b = `{"jsonrpc":"2.0","id":1,"result":{}}`
		c = `{"jsonrpc":"2.0","id":"x","method":"c","params":[1,2]}`
	)
	tests := []struct {
		name    string
		chunks  []string
		max     int // 0: 100
		bufSize int // 0: readBufferSize
		want    []string
	}{
		{"one", []string{a + "\n"}, 0, 0, []string{msg(a), "EOF"}},
		{"empty input", nil, 0, 0, []string{"EOF"}},
		{"split across reads", []string{a[:5], a[5:20], a[20:] + "\n" + b[:3], b[3:] + "\n"}, 0, 0,
			[]string{msg(a), msg(b), "EOF"}},
		{"byte by byte", strings.Split(a+"\n"+b+"\n", ""), 0, 0, []string{msg(a), msg(b), "EOF"}},
		{"many in one read", []string{a + "\n" + b + "\n" + c + "\n"}, 0, 0,
			[]string{msg(a), msg(b), msg(c), "EOF"}},
		{"crlf", []string{a + "\r\n" + b + "\r\n"}, 0, 0, []string{msg(a), msg(b), "EOF"}},
		{"cr split from lf", []string{a + "\r", "\n" + b + "\r", "\n"}, 0, 0, []string{msg(a), msg(b), "EOF"}},
		{"blank lines", []string{"\n\r\n  \t\n" + a + "\n\n\n" + b + "\n \n"}, 0, 0,
			[]string{msg(a), msg(b), "EOF"}},
		{"only blank", []string{"\n \r\n\t"}, 0, 0, []string{"EOF"}},
		{"last line without newline", []string{a + "\n" + b}, 0, 0, []string{msg(a), msg(b), "EOF"}},
		{"last line with cr only", []string{a + "\r"}, 0, 0, []string{msg(a), "EOF"}},
		{"leading spaces", []string{"  " + a + "\n"}, 0, 0, []string{msg(a), "EOF"}},
		{"invalid json then good", []string{"{nope\n" + a + "\n"}, 0, 0,
			[]string{"decode -32700", msg(a), "EOF"}},
		{"truncated json at eof", []string{a + "\n" + `{"jsonrpc":"2.0","meth`}, 0, 0,
			[]string{msg(a), "decode -32700", "EOF"}},
		{"invalid utf8", []string{"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}\n" + a + "\n"}, 0, 0,
			[]string{"decode -32700", msg(a), "EOF"}},
		{"not json-rpc", []string{`{"jsonrpc":"1.0","method":"a"}` + "\n" + `[1]` + "\n" + a + "\n"}, 0, 0,
			[]string{"decode -32600", `msg [{"jsonrpc":"2.0","id":null,"error":{"code":-32600,*`, msg(a), "EOF"}},

		// The limit, with the line in the bufio buffer (max < buffer).
		{"exactly at limit", []string{sized(60) + "\n"}, 60, 0, []string{msg(sized(60)), "EOF"}},
		{"at limit crlf", []string{sized(60) + "\r\n"}, 60, 0, []string{msg(sized(60)), "EOF"}},
		{"at limit no newline", []string{sized(60)}, 60, 0, []string{msg(sized(60)), "EOF"}},
		{"one over limit", []string{sized(61) + "\n" + a + "\n"}, 60, 0,
			[]string{"too-large 60", msg(a), "EOF"}},
		{"one over limit with cr", []string{sized(61) + "\r\n" + a + "\n"}, 60, 0,
			[]string{"too-large 60", msg(a), "EOF"}},
		{"far over limit", []string{strings.Repeat("y", 1000) + "\n" + a + "\n"}, 60, 0,
			[]string{"too-large 60", msg(a), "EOF"}},
		{"over limit at eof", []string{a + "\n" + strings.Repeat("y", 1000)}, 60, 0,
			[]string{msg(a), "too-large 60", "EOF"}},
		{"over limit split", []string{strings.Repeat("y", 50), strings.Repeat("y", 50), "\n", a, "\n"}, 60, 0,
			[]string{"too-large 60", msg(a), "EOF"}},

		// The limit, with lines longer than the bufio buffer (the
		// scratch path), as happens past 64 KiB with the default size.
		{"long line fits", []string{sized(100) + "\n" + a + "\n"}, 200, 16,
			[]string{msg(sized(100)), msg(a), "EOF"}},
		{"long exactly at limit", []string{sized(200) + "\n"}, 200, 16, []string{msg(sized(200)), "EOF"}},
		{"long at limit crlf", []string{sized(200) + "\r\n"}, 200, 16, []string{msg(sized(200)), "EOF"}},
		{"long one over", []string{sized(201) + "\n" + a + "\n"}, 200, 16,
			[]string{"too-large 200", msg(a), "EOF"}},
		{"long one over crlf", []string{sized(201) + "\r\n" + a + "\n"}, 200, 16,
			[]string{"too-large 200", msg(a), "EOF"}},
		{"long far over", []string{strings.Repeat("z", 5000) + "\n" + sized(150) + "\n"}, 200, 16,
			[]string{"too-large 200", msg(sized(150)), "EOF"}},
		{"long at eof", []string{sized(150)}, 200, 16, []string{msg(sized(150)), "EOF"}},
		{"long over at eof", []string{strings.Repeat("z", 500)}, 200, 16, []string{"too-large 200", "EOF"}},
		{"long blank", []string{strings.Repeat(" ", 100) + "\n" + a + "\n"}, 200, 16, []string{msg(a), "EOF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max, bufSize := tt.max, tt.bufSize
			if max == 0 {
				max = 100
			}
			if bufSize == 0 {
				bufSize = readBufferSize
			}
			c := newLineConn(nil, io.Discard, max, nil)
			c.fr = newFrameReader(&chunkReader{chunks: slices.Clone(tt.chunks)}, max, bufSize)
			got := readOutcomes(t, c, 100)
			// A want ending in "*" is a prefix.
			match := func(got, want string) bool {
				if p, ok := strings.CutSuffix(want, "*"); ok {
					return strings.HasPrefix(got, p)
				}
				return got == want
			}
			if !slices.EqualFunc(got, tt.want, match) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			// EOF is sticky.
			if _, err := c.Read(context.Background()); err != io.EOF {
				t.Errorf("Read after EOF: %v", err)
			}
		})
	}
}

// TestReadDefaultLimit checks the default limit and the 64 KiB buffer: a
// line of 100 KiB goes through the scratch path and is accepted.
func TestReadDefaultLimit(t *testing.T) {
	big := sized(100 << 10)
	c, err := (&IOTransport{Reader: strings.NewReader(big + "\n"), Writer: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, m); got != big {
		t.Errorf("message of %d bytes came back as %d bytes", len(big), len(got))
	}
	if n := c.(*lineConn).fr.limit; n != DefaultMaxMessageSize {
		t.Errorf("default limit %d, want %d", n, DefaultMaxMessageSize)
	}
}

// TestReadKeepsNoReference checks that a message stays intact after the
// buffer it was decoded from is reused.
func TestReadKeepsNoReference(t *testing.T) {
	first := `{"jsonrpc":"2.0","id":"first","method":"m","params":{"v":"AAAAAAAA"}}`
	second := `{"jsonrpc":"2.0","id":"secnd","method":"n","params":{"v":"BBBBBBBB"}}`
	c := newLineConn(nil, io.Discard, 1000, nil)
	c.fr = newFrameReader(strings.NewReader(first+"\n"+second+"\n"), 1000, 16)
	m1, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := encode(t, m1); got != first {
		t.Errorf("first message changed to %s", got)
	}
}

func TestIsMessageTooLarge(t *testing.T) {
	if limit, ok := IsMessageTooLarge(tooLargeError(1234)); !ok || limit != 1234 {
		t.Errorf("IsMessageTooLarge(tooLargeError(1234)) = %d, %v", limit, ok)
	}
	wrapped := fmt.Errorf("context: %w", tooLargeError(7))
	if limit, ok := IsMessageTooLarge(wrapped); !ok || limit != 7 {
		t.Errorf("wrapped: %d, %v", limit, ok)
	}
	e := tooLargeError(1234)
	if !strings.Contains(e.Error(), "1234") || e.Err.Code != jsonrpc.CodeInvalidRequest || e.ID.IsValid() {
		t.Errorf("error %v: want code %d, no id, limit in the message", e, jsonrpc.CodeInvalidRequest)
	}
	for _, err := range []error{
		nil,
		io.EOF,
		&jsonrpc.DecodeError{Err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "x"}},
		&jsonrpc.DecodeError{Err: &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "x", Data: json.RawMessage(`{"maxMessageSize":3}`)}},
		&jsonrpc.DecodeError{Err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "x", Data: json.RawMessage(`{"other":3}`)}},
	} {
		if _, ok := IsMessageTooLarge(err); ok {
			t.Errorf("IsMessageTooLarge(%v) = true", err)
		}
	}
}

func TestWriteFraming(t *testing.T) {
	tests := []struct {
		name string
		m    jsonrpc.Message
		want string // "" when an error is expected
	}{
		{"request", request(1, "tools/call", `{"name":"echo"}`),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}` + "\n"},
		{"multi-line params", request(2, "m", "{\n  \"a\": [1,\r\n 2]\n}"),
			`{"jsonrpc":"2.0","id":2,"method":"m","params":{"a":[1,2]}}` + "\n"},
		{"multi-line result", &jsonrpc.Response{ID: jsonrpc.StringID("s"), Result: json.RawMessage("{\n\"ok\" : true\n}")},
			`{"jsonrpc":"2.0","id":"s","result":{"ok":true}}` + "\n"},
		{"escaped newline kept", request(3, "m", `{"s":"a\nb"}`),
			`{"jsonrpc":"2.0","id":3,"method":"m","params":{"s":"a\nb"}}` + "\n"},
		{"newline in method is escaped", &jsonrpc.Request{Method: "a\nb"},
			`{"jsonrpc":"2.0","method":"a\nb"}` + "\n"},
		{"raw newline inside a string", request(4, "m", "{\"s\":\"a\nb\"}"), ""},
		{"nil", nil, ""},
		{"empty batch", jsonrpc.Batch{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c := newLineConn(strings.NewReader(""), &out, 100, nil)
			err := c.Write(context.Background(), tt.m)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Write succeeded, wrote %q", out.String())
				}
				if out.Len() != 0 {
					t.Errorf("a failed Write wrote %q", out.String())
				}
				// An encoding failure does not break the connection.
				if err := c.Write(context.Background(), request(9, "ok", "")); err != nil {
					t.Errorf("Write after an encoding failure: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("wrote %q\nwant  %q", out.String(), tt.want)
			}
		})
	}
}

// callRecorder records each Write call separately.
type callRecorder struct{ calls [][]byte }

func (r *callRecorder) Write(p []byte) (int, error) {
	// No lock: the race detector reports any concurrent call.
	r.calls = append(r.calls, bytes.Clone(p))
	return len(p), nil
}

func TestConcurrentWritesDoNotInterleave(t *testing.T) {
	checkLeaks(t)
	const writers, each = 8, 200
	rec := &callRecorder{}
	c := newLineConn(strings.NewReader(""), rec, 100, nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				params := fmt.Sprintf(`{"writer":%d,"i":%d,"pad":%q}`, w, i, strings.Repeat("p", i))
				if err := c.Write(context.Background(), request(int64(w*each+i), "m", params)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(rec.calls) != writers*each {
		t.Fatalf("%d Write calls, want %d", len(rec.calls), writers*each)
	}
	// Each call is one line; parsing the whole output back gives every
	// message once, each writer's in order.
	all := bytes.Join(rec.calls, nil)
	fr := newFrameReader(bytes.NewReader(all), 1<<20, readBufferSize)
	next := make([]int, writers)
	for _, call := range rec.calls {
		if bytes.IndexByte(call, '\n') != len(call)-1 {
			t.Fatalf("Write call is not exactly one line: %q", call)
		}
		line, err := fr.next()
		if err != nil {
			t.Fatal(err)
		}
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("decoding %q: %v", line, err)
		}
		id, _ := m.(*jsonrpc.Request).ID.Int64()
		w, i := int(id)/each, int(id)%each
		if i != next[w] {
			t.Fatalf("writer %d: message %d, want %d", w, i, next[w])
		}
		next[w]++
	}
}

// blockingWriter blocks every Write until released or closed.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	return len(p), nil
}

func TestWriteWaitingRespectsContext(t *testing.T) {
	checkLeaks(t)
	w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	c := newLineConn(strings.NewReader(""), w, 100, nil)
	first := make(chan error)
	go func() { first <- c.Write(context.Background(), request(1, "m", "")) }()
	<-w.entered // the first Write holds the lock

	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error)
	go func() { second <- c.Write(ctx, request(2, "m", "")) }()
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting Write: %v, want context.Canceled", err)
	}
	// An already-ended ctx is refused before waiting.
	if err := c.Write(ctx, request(3, "m", "")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with ended ctx: %v", err)
	}

	// Close makes a waiting Write give up too.
	third := make(chan error)
	go func() { third <- c.Write(context.Background(), request(4, "m", "")) }()
	c.Close()
	if err := <-third; !errors.Is(err, ErrClosed) {
		t.Errorf("Write waiting at Close: %v, want ErrClosed", err)
	}
	close(w.release)
	if err := <-first; err != nil {
		t.Errorf("first Write: %v", err)
	}
	if err := c.Write(context.Background(), request(5, "m", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// failingWriter fails every Write after writing half of it.
type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return len(p) / 2, errors.New("disk on fire")
}

func TestWriteFailureSticks(t *testing.T) {
	w := &failingWriter{}
	c := newLineConn(strings.NewReader(""), w, 100, nil)
	err1 := c.Write(context.Background(), request(1, "m", ""))
	err2 := c.Write(context.Background(), request(2, "m", ""))
	if err1 == nil || err2 == nil || !strings.Contains(err2.Error(), "disk on fire") {
		t.Errorf("errors %v, %v; want both to report the failure", err1, err2)
	}
	if w.calls != 1 {
		t.Errorf("%d Write calls after a failure, want 1", w.calls)
	}
}

func TestReadContextEnded(t *testing.T) {
	c := newLineConn(strings.NewReader(`{"jsonrpc":"2.0","method":"a"}`+"\n"), io.Discard, 100, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read: %v, want context.Canceled", err)
	}
	// The message was not consumed.
	if m, err := c.Read(context.Background()); err != nil || m.(*jsonrpc.Request).Method != "a" {
		t.Errorf("Read after: %v, %v", m, err)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	c := newLineConn(io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","method":"a"}`+"\n{partial"), &errReader{boom}), io.Discard, 100, nil)
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // sticky
		if _, err := c.Read(context.Background()); !errors.Is(err, boom) {
			t.Errorf("Read: %v, want boom", err)
		}
	}
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }
