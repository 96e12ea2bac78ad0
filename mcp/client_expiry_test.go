package mcp

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// TestHTTPClientSessionExpiry has a Streamable HTTP server forget a
// client's session. Without reinitialization the client session ends
// with a *transport.SessionExpiredError, found by its standalone stream
// without any call, so a host watching Done can reconnect. With
// reinitialization, the logging level and the subscriptions the client
// had set hold on the new session.
func TestHTTPClientSessionExpiry(t *testing.T) {
	t.Run("ends", func(t *testing.T) {
		checkGoroutines(t)
		s := testServer(t, nil)
		h := NewStreamableHTTPHandler(s, nil)
		srv := httptest.NewServer(h)
		defer srv.Close()
		defer h.Close()
		c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake})
		ctx := context.Background()
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL, MinRetryDelay: time.Millisecond})
		must(t, err)
		defer cs.Close()
		ids := h.SessionIDs()
		if len(ids) != 1 || !h.CloseSession(ids[0]) {
			t.Fatalf("sessions %v", ids)
		}
		select {
		case <-cs.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the client session did not end after the server forgot it")
		}
		var se *transport.SessionExpiredError
		if err := cs.Wait(); !errors.As(err, &se) || se.SessionID != ids[0] {
			t.Errorf("Wait = %v, want a SessionExpiredError for %s", err, ids[0])
		}
		if err := cs.Err(); !errors.As(err, &se) {
			t.Errorf("Err = %v, want a SessionExpiredError", err)
		}
		if _, err := cs.ListTools(ctx, nil); !errors.Is(err, transport.ErrSessionExpired) {
			t.Errorf("call after the end: %v, want ErrSessionExpired", err)
		}
	})
	t.Run("reinitialize restores", func(t *testing.T) {
		checkGoroutines(t)
		var subscribes atomic.Int32
		s := testServer(t, &ServerOptions{SubscribeHandler: func(context.Context, *SubscribeRequest) error {
			subscribes.Add(1)
			return nil
		}})
		must(t, AddTool(s, &Tool{Name: "log"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
			if err := req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelInfo, Data: "dropped"}); err != nil {
				return "", err
			}
			return "logged", req.Session.Log(ctx, &LoggingMessageParams{Level: LoggingLevelError, Data: "kept"})
		}))
		h := NewStreamableHTTPHandler(s, nil)
		srv := httptest.NewServer(h)
		defer srv.Close()
		defer h.Close()
		logs := make(chan any, 10)
		c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
			Era:                   EraHandshake, // sessions
			LoggingMessageHandler: func(_ context.Context, req *ClientRequest[*LoggingMessageParams]) { logs <- req.Params.Data },
		})
		ctx := context.Background()
		cs, err := c.Connect(ctx, &transport.StreamableClientTransport{URL: srv.URL, ReinitializeOnSessionExpired: true})
		must(t, err)
		defer cs.Close()
		must(t, cs.SetLoggingLevel(ctx, LoggingLevelError))
		must(t, cs.Subscribe(ctx, &SubscribeParams{URI: "test://a"}))
		old := h.SessionIDs()
		if len(old) != 1 || !h.CloseSession(old[0]) {
			t.Fatalf("sessions %v", old)
		}
		if _, err := cs.CallTool(ctx, &CallToolParams{Name: "log"}); err != nil {
			t.Fatalf("call after the server forgot the session: %v", err)
		}
		if ids := h.SessionIDs(); len(ids) != 1 || ids[0] == old[0] {
			t.Fatalf("sessions %v after reinitializing, old %v", ids, old)
		}
		select {
		case got := <-logs:
			if got != "kept" {
				t.Errorf("first log message %v, want only the error-level one (the level was not restored)", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no log message")
		}
		if n := subscribes.Load(); n != 2 {
			t.Errorf("%d subscribes reached the server, want 2 (the subscription was not restored)", n)
		}
		select {
		case <-cs.Done():
			t.Errorf("the session ended: %v", cs.Err())
		default:
		}
	})
}
