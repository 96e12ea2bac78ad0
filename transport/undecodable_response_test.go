package transport

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// oversizedResult returns a response to id whose result is an object of
// one member more than the decoder's default MaxMembers.
func oversizedResult(id jsonrpc.ID) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + id.String() + `,"result":{`)
	for i := range jsonrpc.DefaultMaxMembers + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestStreamableUndecodableResponse: a server's answer to a call that
// exceeds a decode limit, as a JSON body or as an event, fails the call
// at once with an error naming the limit, and nothing is sent back to
// the server for it.
func TestStreamableUndecodableResponse(t *testing.T) {
	for _, asEvent := range []bool{false, true} {
		t.Run("event="+strconv.FormatBool(asEvent), func(t *testing.T) {
			checkLeaks(t)
			f := newFakeMCPServer(t)
			f.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message) bool {
				req, ok := m.(*jsonrpc.Request)
				if !ok || req.Method != "big" {
					return false
				}
				if asEvent {
					startSSE(w, nil)(sse.Event{ID: "1", Data: []byte(oversizedResult(req.ID))})
					return true
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(oversizedResult(req.ID)))
				return true
			}
			srv := serveHTTPTest(t, f.ServeHTTP)
			tc := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true})
			initializeConn(t, tc)
			c := jsonrpc.NewConn(tc, nil)
			c.Start()
			defer func() { c.Close(); c.Wait() }()

			// The deadline bounds the hang of a call left unanswered.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := c.Call(ctx, "big", nil)
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call error %v; want it to fail at once", err)
			}
			var le *jsonrpc.LimitError
			if !errors.As(err, &le) || le.Limit != "MaxMembers" || !strings.Contains(err.Error(), "MaxMembers") {
				t.Fatalf("call error %v; want one naming MaxMembers, a *jsonrpc.LimitError", err)
			}
			// A later call completes: whatever the client sent for the
			// oversized answer was sent before it.
			if _, err := c.Call(ctx, "after", nil); err != nil {
				t.Fatalf("next call: %v", err)
			}
			for _, m := range f.methods() {
				if m == "POST response" {
					t.Errorf("the client answered the server's response: %v", f.methods())
				}
			}
		})
	}
}
