package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// signalWrites is a session's connection that writes a batch of
// responses only once waited is closed, and tells when it has.
type signalWrites struct {
	*httpSession
	waited  chan struct{}
	written chan struct{}
}

func (c signalWrites) Write(ctx context.Context, m jsonrpc.Message) error {
	if _, ok := m.(jsonrpc.Batch); !ok {
		return c.httpSession.Write(ctx, m)
	}
	select {
	case <-c.waited:
	case <-time.After(10 * time.Second):
		return errors.New("the exchange's POST did not stop waiting")
	}
	err := c.httpSession.Write(ctx, m)
	close(c.written)
	return err
}

// A response written after the session ended the wait of its exchange's
// POST, but before that POST wrote what was left, is that POST's answer:
// it was counted as sent and lost (an empty event stream) when the POST
// had already let its connection go.
func TestStreamableHTTPResponseAfterSessionEnd(t *testing.T) {
	checkLeaks(t)
	id := jsonrpc.Int64ID(1)
	waited, written := make(chan struct{}), make(chan struct{})
	b := newHardBackend()
	h := newStreamableHTTPHandler(func(ctx context.Context, conn Conn) error {
		return b.connect(ctx, signalWrites{conn.(*httpSession), waited, written})
	}, nil)
	h.testHookExchangeWaited = func(requests []jsonrpc.ID) {
		if !slices.Contains(requests, id) {
			return
		}
		close(waited)
		select {
		case <-written: // the handler, cancelled with the session, answered
		case <-time.After(10 * time.Second):
			t.Error("the handler did not answer when the session ended")
		}
	}
	srv := newPlainServer(t, h, nil)
	client := srv.Client()
	client.Timeout = 10 * time.Second
	hh := &hardHarness{t: t, backend: b, handler: h, srv: srv, client: client}
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		b.closeAll()
	})
	sid := hh.initialize("2025-03-26") // for a batch, whose handlers run on goroutines of their own
	done := make(chan string, 1)
	go func() {
		resp, err := client.Do(hh.request(context.Background(), http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"block"},{"jsonrpc":"2.0","id":2,"method":"block"}]`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-03-26"))
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- string(body)
	}()
	<-b.started
	<-b.started
	h.CloseSession(sid)
	if body := <-done; !strings.Contains(body, `"id":1`) || !strings.Contains(body, `"id":2`) {
		t.Errorf("answer %q, want the answers to requests 1 and 2", body)
	}
}
