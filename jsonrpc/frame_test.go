package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/rpclink"
)

// framed returns value encoded with rpclink's room before it and spare
// capacity after it unless full.
func framed(value string, full bool) *rpclink.Framed {
	return framedIn(rpclink.ResultRoom, value, full)
}

// framedIn is framed with room bytes of room.
func framedIn(room int, value string, full bool) *rpclink.Framed {
	b := append(rpclink.Room(room), value...)
	if full {
		b = b[:len(b):len(b)]
	}
	return &rpclink.Framed{Buf: b, Off: int32(room)}
}

// EncodeMessage writes a framed result's envelope into the room before it
// once, with the bytes AppendMessage gives, and copies whenever the frame
// cannot be used: claimed already, too small, full, or no longer the
// result.
func TestEncodeInFrame(t *testing.T) {
	const value = `{"content":[{"type":"text","text":"hi"}]}`
	long := StringID(strings.Repeat("x", 40))
	resp := func(id ID, f *rpclink.Framed) *Response { return &Response{ID: id, Result: f.Value(), frame: f} }
	req := func(id ID, method string, f *rpclink.Framed) *Request {
		return &Request{ID: id, Method: method, Params: f.Value(), frame: f}
	}
	tests := []struct {
		name    string
		msg     func() (Message, *rpclink.Framed, []byte)
		inPlace bool
	}{
		{"number id", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, false)
			return resp(Int64ID(7), f), f, f.Value()
		}, true},
		{"string id", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, false)
			return resp(StringID("a-b"), f), f, f.Value()
		}, true},
		{"id past the room", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, false)
			return resp(long, f), f, f.Value()
		}, false},
		{"no capacity for the brace", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, true)
			return resp(Int64ID(7), f), f, f.Value()
		}, false},
		{"result replaced", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, false)
			return &Response{ID: Int64ID(7), Result: json.RawMessage(value), frame: f}, f, []byte(value)
		}, false},
		{"no room", func() (Message, *rpclink.Framed, []byte) {
			f := &rpclink.Framed{Buf: append([]byte(value), ' ')[:len(value)]}
			return resp(Int64ID(7), f), f, f.Value()
		}, false},
		{"error", func() (Message, *rpclink.Framed, []byte) {
			f := framed(value, false)
			r := resp(Int64ID(7), f)
			r.Error = &Error{Code: 1, Message: "m"}
			return r, f, f.Value()
		}, false},
		{"request", func() (Message, *rpclink.Framed, []byte) {
			f := framedIn(rpclink.ParamsRoom, value, false)
			return req(Int64ID(12), "tools/call", f), f, f.Value()
		}, true},
		{"request, method to escape", func() (Message, *rpclink.Framed, []byte) {
			f := framedIn(rpclink.ParamsRoom, value, false)
			return req(Int64ID(12), "a\"b\n", f), f, f.Value()
		}, false},
		{"request, method past the room", func() (Message, *rpclink.Framed, []byte) {
			f := framedIn(rpclink.ParamsRoom, value, false)
			return req(Int64ID(12), strings.Repeat("m", 80), f), f, f.Value()
		}, false},
		{"notification", func() (Message, *rpclink.Framed, []byte) {
			f := framedIn(rpclink.ParamsRoom, value, false)
			return req(ID{}, "notifications/x", f), f, f.Value()
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, f, member := tt.msg()
			want, err := AppendMessage(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got %s, want %s", got, want)
			}
			inPlace := cap(got) > 0 && &got[:cap(got)][cap(got)-1] == &f.Buf[:cap(f.Buf)][cap(f.Buf)-1]
			if inPlace != tt.inPlace {
				t.Fatalf("in place %v, want %v", inPlace, tt.inPlace)
			}
			if !bytes.Equal(member, []byte(value)) {
				t.Fatalf("the value changed: %s", member)
			}
			// Again: the room is claimed, so this one copies.
			again, err := EncodeMessage(m)
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

// A call with framed params sends the request Call would send, encoded in
// the frame's memory, and gets the same answer.
func TestCallFramed(t *testing.T) {
	checkGoroutines(t)
	client, _ := connPair(t, HandlerFunc(echo), nil)
	call := rpclink.CallFramed.(func(*Conn, context.Context, string, *rpclink.Framed) (json.RawMessage, error))
	f := framedIn(rpclink.ParamsRoom, `{"x":1}`, false)
	got, err := call(client, context.Background(), "echo", f)
	if err != nil || string(got) != `{"x":1}` {
		t.Fatalf("got %s, %v", got, err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}}`
	if sent := string(f.Buf[int(f.Off)-len(want)+len(`{"x":1}`)+1 : len(f.Buf)+1]); sent != want {
		t.Fatalf("the frame holds %s, want %s", sent, want)
	}
	if got, err := client.Call(context.Background(), "echo", json.RawMessage(`{"x":1}`)); err != nil || string(got) != `{"x":1}` {
		t.Fatalf("Call: %s, %v", got, err)
	}
}
