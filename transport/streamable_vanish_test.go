package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// noDelete is an HTTP transport that never delivers a DELETE: its client
// vanishes instead of ending its sessions.
type noDelete struct{ base http.RoundTripper }

func (t noDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("vanished")
	}
	return t.base.RoundTrip(r)
}

// Our own client cancels a slow call (its context ends; it sends
// notifications/cancelled if the request had gone out) and vanishes
// without DELETE: the server's session goes idle and expires all the
// same, with or without an event store, and the handler ends.
func TestStreamableHTTPCancelThenVanish(t *testing.T) {
	for _, store := range []bool{true, false} {
		name := "no store"
		if store {
			name = "event store"
		}
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			stopped := make(chan struct{}, 1)
			server := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
			err := mcp.AddTool(server, &mcp.Tool{Name: "slow", Description: "waits for its end"},
				func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (string, error) {
					started <- struct{}{}
					<-ctx.Done()
					stopped <- struct{}{}
					return "", ctx.Err()
				})
			if err != nil {
				t.Fatal(err)
			}
			opts := &transport.StreamableHTTPOptions{SessionIdleTimeout: 100 * time.Millisecond}
			if store {
				opts.EventStore = transport.NewMemoryEventStore(nil)
			}
			h := mcp.NewStreamableHTTPHandler(server, opts)
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.Close()

			httpClient := &http.Client{Transport: noDelete{srv.Client().Transport}}
			client := mcp.NewClient(&mcp.Implementation{Name: "vanishing", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &transport.StreamableClientTransport{URL: srv.URL, HTTPClient: httpClient})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
				called <- err
			}()
			<-started
			cancel()
			if err := <-called; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v", err)
			}
			cs.Close() // its DELETE never arrives
			deadline := time.Now().Add(5 * time.Second)
			for len(h.SessionIDs()) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("sessions %v still open long after the idle timeout", h.SessionIDs())
				}
				// Polling: the idle timer fires on its own schedule.
				time.Sleep(5 * time.Millisecond)
			}
			<-stopped // the handler ended, with the call or with the session
		})
	}
}
