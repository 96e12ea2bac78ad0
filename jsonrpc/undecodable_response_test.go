package jsonrpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// bigObject returns a JSON object of n members.
func bigObject(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(Int64ID(int64(i)).String())
		b.WriteString(`":1`)
	}
	b.WriteByte('}')
	return b.String()
}

// TestUndecodableResponseFailsCall: a response to a pending call that
// exceeds a decode limit fails that call at once with an error naming
// the limit, and is not answered to the peer; an oversized request that
// happens to carry the same id is still answered, and leaves the call
// waiting.
func TestUndecodableResponseFailsCall(t *testing.T) {
	tests := []struct {
		name string
		// msg is what the peer sends, given the id of our call.
		msg func(id string) string
		// failed: the call fails with the limit; else it is answered
		// after the peer got an error for msg.
		failed bool
	}{
		{"response", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"result":` + bigObject(DefaultMaxMembers+1) + `}`
		}, true},
		{"response, id last", func(id string) string {
			return `{"jsonrpc":"2.0","result":` + bigObject(DefaultMaxMembers+1) + `,"id":` + id + `}`
		}, true},
		{"request with the same id", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"m","params":` + bigObject(DefaultMaxMembers+1) + `}`
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			peer, ours := newPipe()
			c := NewConn(ours, nil)
			c.Start()
			t.Cleanup(func() { peer.Close(); c.Close(); c.Wait() })
			// The deadline bounds the hang of a call left unanswered.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type outcome struct {
				res []byte
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := c.Call(ctx, "m", nil)
				done <- outcome{res, err}
			}()
			var req *Request
			select {
			case data := <-peer.in:
				m, err := DecodeMessage(data)
				if err != nil {
					t.Fatal(err)
				}
				req = m.(*Request)
			case <-ctx.Done():
				t.Fatal("no request")
			}
			id := req.ID.String()
			peer.out <- []byte(tt.msg(id))
			if !tt.failed {
				select {
				case data := <-peer.in:
					if want := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,`; !strings.HasPrefix(string(data), want) {
						t.Fatalf("peer got %s, want prefix %s", data, want)
					}
				case <-ctx.Done():
					t.Fatal("the oversized request was not answered")
				}
				peer.out <- []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"ok":true}}`)
			}
			var o outcome
			select {
			case o = <-done:
			case <-ctx.Done():
				t.Fatal("the call was left waiting")
			}
			if !tt.failed {
				if o.err != nil || string(o.res) != `{"ok":true}` {
					t.Fatalf("call: %s, %v; want the later answer", o.res, o.err)
				}
				return
			}
			if errors.Is(o.err, context.DeadlineExceeded) {
				t.Fatalf("call hung until its deadline: %v", o.err)
			}
			var le *LimitError
			if !errors.As(o.err, &le) || le.Limit != "MaxMembers" || le.Max != DefaultMaxMembers {
				t.Fatalf("call error %v; want a *LimitError for MaxMembers", o.err)
			}
			var de *DecodeError
			if !errors.As(o.err, &de) || !strings.Contains(o.err.Error(), "MaxMembers") {
				t.Fatalf("call error %v; want a *DecodeError naming MaxMembers", o.err)
			}
			// Nothing was sent back for the response: the next message
			// the peer gets answers its next request.
			peer.out <- []byte(`{"jsonrpc":"2.0","id":"next","method":"m"}`)
			select {
			case data := <-peer.in:
				if want := `{"jsonrpc":"2.0","id":"next",`; !strings.HasPrefix(string(data), want) {
					t.Fatalf("peer got %s, want only the answer to its request", data)
				}
			case <-ctx.Done():
				t.Fatal("no answer to the next request")
			}
		})
	}
}
