package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/rpclink"
)

// framed returns value encoded with rpclink's room before it and spare
// capacity after it unless full.
func framed(value string, full bool) *rpclink.Framed {
	b := append(rpclink.Room(), value...)
	if full {
		b = b[:len(b):len(b)]
	}
	return &rpclink.Framed{Buf: b, Off: rpclink.FrameRoom}
}

// EncodeMessage writes a framed result's envelope into the room before it
// once, with the bytes AppendMessage gives, and copies whenever the frame
// cannot be used: claimed already, too small, full, or no longer the
// result.
func TestEncodeInFrame(t *testing.T) {
	const value = `{"content":[{"type":"text","text":"hi"}]}`
	long := StringID(strings.Repeat("x", 40))
	tests := []struct {
		name    string
		resp    func() *Response
		inPlace bool
	}{
		{"number id", func() *Response {
			f := framed(value, false)
			return &Response{ID: Int64ID(7), Result: f.Value(), frame: f}
		}, true},
		{"string id", func() *Response {
			f := framed(value, false)
			return &Response{ID: StringID("a-b"), Result: f.Value(), frame: f}
		}, true},
		{"id past the room", func() *Response {
			f := framed(value, false)
			return &Response{ID: long, Result: f.Value(), frame: f}
		}, false},
		{"no capacity for the brace", func() *Response {
			f := framed(value, true)
			return &Response{ID: Int64ID(7), Result: f.Value(), frame: f}
		}, false},
		{"result replaced", func() *Response {
			f := framed(value, false)
			return &Response{ID: Int64ID(7), Result: json.RawMessage(value), frame: f}
		}, false},
		{"no room", func() *Response {
			f := &rpclink.Framed{Buf: append([]byte(value), ' ')[:len(value)]}
			return &Response{ID: Int64ID(7), Result: f.Value(), frame: f}
		}, false},
		{"error", func() *Response {
			f := framed(value, false)
			return &Response{ID: Int64ID(7), Result: f.Value(), Error: &Error{Code: 1, Message: "m"}, frame: f}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.resp()
			want, err := AppendMessage(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeMessage(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got %s, want %s", got, want)
			}
			inPlace := r.frame != nil && cap(got) > 0 && &got[:cap(got)][cap(got)-1] == &r.frame.Buf[:cap(r.frame.Buf)][cap(r.frame.Buf)-1]
			if inPlace != tt.inPlace {
				t.Fatalf("in place %v, want %v", inPlace, tt.inPlace)
			}
			if !bytes.Equal(r.Result, []byte(value)) {
				t.Fatalf("the result changed: %s", r.Result)
			}
			// Again: the room is claimed, so this one copies.
			again, err := EncodeMessage(r)
			if err != nil || !bytes.Equal(again, want) {
				t.Fatalf("again: %s, %v", again, err)
			}
			if len(again) > 0 && len(got) > 0 && &again[0] == &got[0] {
				t.Fatal("the second encoding reused the room")
			}
		})
	}
}

// Encodings of one framed response at once: one writes in place, the
// others copy, and all give the same bytes (run with -race).
func TestEncodeInFrameConcurrent(t *testing.T) {
	f := framed(`{"a":1}`, false)
	r := &Response{ID: Int64ID(1), Result: f.Value(), frame: f}
	want, _ := AppendMessage(nil, r)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := EncodeMessage(r); err != nil || !bytes.Equal(got, want) {
				t.Errorf("got %s, %v", got, err)
			}
		})
	}
	wg.Wait()
}

// A framed response is encoded with no allocation.
func TestEncodeInFrameAllocs(t *testing.T) {
	resps := make([]*Response, 101) // AllocsPerRun's warm-up and 100 runs
	for i := range resps {
		f := framed(`{"a":1}`, false)
		resps[i] = &Response{ID: Int64ID(1), Result: f.Value(), frame: f}
	}
	next := 0
	n := testing.AllocsPerRun(100, func() {
		if _, err := EncodeMessage(resps[next]); err != nil {
			t.Fatal(err)
		}
		next++
	})
	if n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}
