package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

func nopTool(context.Context, *CallToolRequest) (*CallToolResult, error) {
	return &CallToolResult{}, nil
}

// stalledSession serves s over pipes to a raw client that initializes and
// then never reads again.
func stalledSession(t *testing.T, s *Server) *ServerSession {
	t.Helper()
	inR, inW := io.Pipe()   // client -> server
	outR, outW := io.Pipe() // server -> client
	ss, err := s.Connect(context.Background(), &transport.IOTransport{Reader: inR, Writer: outW})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ss.Close()
		ss.Wait()
		outR.Close()
		inW.Close()
	})
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize: %q, %v", line, err)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return ss
}

// A client that stops reading must not hold up the code that changes the
// server, and is closed once a notification to it stalls.
func TestStalledClientDoesNotBlockRegistration(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		ListChangedDelay:    -1, // send at once: the stall is met at the first change
		NotificationTimeout: 100 * time.Millisecond,
	})
	ss := stalledSession(t, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			must(t, s.AddTool(&Tool{Name: "t" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}, nopTool))
			s.RemoveTools("nothing")
			must(t, s.ResourceUpdated(context.Background(), &ResourceUpdatedParams{URI: "test://r"}))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("AddTool blocked on a client that does not read")
	}
	select {
	case <-ss.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled session was not closed")
	}
}

// A session whose queue overflows is closed, without waiting for it.
func TestNotificationQueueOverflowClosesSession(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		NotificationQueue:   4,
		NotificationTimeout: time.Hour, // only the queue bound ends it
		Capabilities:        &ServerCapabilities{Resources: &ResourceCapabilities{Subscribe: true}},
	})
	ss := stalledSession(t, s)
	for i := range 8 {
		ss.mu.Lock()
		if ss.subscriptions == nil {
			ss.subscriptions = map[string]struct{}{}
		}
		ss.subscriptions["test://"+string(rune('a'+i))] = struct{}{}
		ss.mu.Unlock()
	}
	for i := range 8 {
		must(t, s.ResourceUpdated(context.Background(), &ResourceUpdatedParams{URI: "test://" + string(rune('a'+i))}))
	}
	select {
	case <-ss.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a session past its notification queue was not closed")
	}
}

// ResourceUpdated honours its context.
func TestResourceUpdatedHonoursContext(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.ResourceUpdated(ctx, &ResourceUpdatedParams{URI: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ResourceUpdated with a done context: %v", err)
	}
}

// listChangedCounter is a client that counts the list_changed
// notifications it receives, per kind.
type listChangedCounter struct {
	tools, prompts, resources atomic.Int32
}

func (c *listChangedCounter) client() *Client {
	return NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ToolListChangedHandler:     func(context.Context, *ClientRequest[*ToolListChangedParams]) { c.tools.Add(1) },
		PromptListChangedHandler:   func(context.Context, *ClientRequest[*PromptListChangedParams]) { c.prompts.Add(1) },
		ResourceListChangedHandler: func(context.Context, *ClientRequest[*ResourceListChangedParams]) { c.resources.Add(1) },
	})
}

func (c *listChangedCounter) counts() [3]int32 {
	return [3]int32{c.tools.Load(), c.prompts.Load(), c.resources.Load()}
}

// Bursts of changes send one list_changed per kind; no change sends none.
func TestListChangedCoalesced(t *testing.T) {
	promptH := func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }
	resH := func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) { return nil, nil }
	tests := []struct {
		name   string
		change func(t *testing.T, s *Server)
		want   [3]int32 // tools, prompts, resources
	}{
		{"burst of 100 AddTool", func(t *testing.T, s *Server) {
			for i := range 100 {
				must(t, s.AddTool(&Tool{Name: "burst" + strings.Repeat("x", i)}, nopTool))
			}
		}, [3]int32{1, 0, 0}},
		{"removing unknown features", func(t *testing.T, s *Server) {
			s.RemoveTools("nope")
			s.RemovePrompts("nope")
			s.RemoveResources("nope")
			s.RemoveResourceTemplates("nope")
		}, [3]int32{0, 0, 0}},
		{"batch of every kind", func(t *testing.T, s *Server) {
			must(t, s.Batch(func() error {
				for i := range 10 {
					n := strings.Repeat("y", i+1)
					must(t, s.AddTool(&Tool{Name: n}, nopTool))
					must(t, s.AddPrompt(&Prompt{Name: n}, promptH))
					must(t, s.AddResource(&Resource{URI: "test://" + n, Name: n}, resH))
				}
				s.RemoveTools("seed")
				return nil
			}))
		}, [3]int32{1, 1, 1}},
		{"replacing the tool set in a batch", func(t *testing.T, s *Server) {
			err := s.Batch(func() error {
				s.RemoveTools("seed")
				must(t, AddTool(s, &Tool{Name: "typed"}, func(context.Context, *CallToolRequest, struct{}) (string, error) { return "", nil }))
				return errors.New("stop")
			})
			if err == nil || err.Error() != "stop" {
				t.Errorf("Batch returned %v, want f's error", err)
			}
		}, [3]int32{1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
				must(t, s.AddTool(&Tool{Name: "seed"}, nopTool))
				must(t, s.AddPrompt(&Prompt{Name: "seed"}, promptH))
				must(t, s.AddResource(&Resource{URI: "test://seed", Name: "seed"}, resH))
				var c listChangedCounter
				cs, ss := connect(t, s, c.client())
				time.Sleep(time.Second) // fake time: the seeding's notifications, if any, are due
				synctest.Wait()
				base := c.counts()
				tt.change(t, s)
				time.Sleep(time.Second)
				synctest.Wait()
				got := c.counts()
				for i := range got {
					got[i] -= base[i]
				}
				if got != tt.want {
					t.Errorf("list_changed received (tools, prompts, resources) = %v, want %v", got, tt.want)
				}
				cs.Close()
				ss.Close()
			})
		})
	}
}

// resources/subscribe is bounded per session, in count and URI length.
func TestSubscriptionBounds(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		MaxSubscriptions: 3,
		Capabilities:     &ServerCapabilities{Resources: &ResourceCapabilities{Subscribe: true}},
	})
	cs, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	sub := func(uri string) error { return cs.Subscribe(ctx, &SubscribeParams{URI: uri}) }
	for _, u := range []string{"a://1", "a://2", "a://3", "a://3"} {
		must(t, sub(u))
	}
	wantRefusal := func(err error, limit string) {
		t.Helper()
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, limit) {
			t.Errorf("got %v, want an invalid-params error naming %s", err, limit)
		}
	}
	wantRefusal(sub("a://4"), "MaxSubscriptions")
	must(t, cs.Unsubscribe(ctx, &UnsubscribeParams{URI: "a://1"}))
	must(t, sub("a://4"))
	must(t, cs.Unsubscribe(ctx, &UnsubscribeParams{URI: "a://2"}))
	// The default URI bound: the attack held 1 MiB per subscription.
	wantRefusal(sub("a://"+strings.Repeat("x", 1<<20)), "MaxSubscriptionURILength")
	wantRefusal(sub("a://"+strings.Repeat("x", DefaultMaxSubscriptionURILength)), "MaxSubscriptionURILength")
	must(t, sub("a://"+strings.Repeat("x", DefaultMaxSubscriptionURILength-4)))
	ss.mu.Lock()
	n := len(ss.subscriptions)
	ss.mu.Unlock()
	if n != 3 {
		t.Errorf("session holds %d subscriptions, want 3", n)
	}
}

// A refused subscription leaves nothing behind.
func TestSubscribeHandlerRefusalRecordsNothing(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{
		Capabilities:     &ServerCapabilities{Resources: &ResourceCapabilities{Subscribe: true}},
		SubscribeHandler: func(context.Context, *SubscribeRequest) error { return errors.New("no") },
	})
	cs, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	if err := cs.Subscribe(context.Background(), &SubscribeParams{URI: "a://1"}); err == nil {
		t.Fatal("subscription accepted")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.subscriptions) != 0 {
		t.Errorf("refused subscription recorded: %v", ss.subscriptions)
	}
}

// Logging through NewLoggingHandler never waits for a client that does
// not read.
func TestLoggingToStalledClientDoesNotBlock(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{NotificationTimeout: time.Hour})
	ss := stalledSession(t, s)
	log := slog.New(NewLoggingHandler(ss, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			log.Info("hello", "i", i)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("logging blocked on a client that does not read")
	}
	select {
	case <-ss.Done():
		t.Error("log messages closed the session; they should be dropped when its queue is full")
	default:
	}
}

// A request to a client that never answers ends after
// ClientRequestTimeout, and the client is told it was cancelled.
func TestClientRequestTimeout(t *testing.T) {
	checkGoroutines(t)
	cancelled := make(chan struct{})
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{ClientRequestTimeout: 50 * time.Millisecond})
	_, ss := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		CreateMessageHandler: func(ctx context.Context, _ *CreateMessageRequest) (*CreateMessageResult, error) {
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		},
	}))
	errc := make(chan error, 1)
	go func() {
		_, err := ss.CreateMessage(context.Background(), &CreateMessageParams{Messages: []*SamplingMessage{}, MaxTokens: 1})
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CreateMessage: %v, want a deadline error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request to a client that never answers did not end")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's handler was not cancelled")
	}
}

// A session is not told of changes made before it initialized: its
// lists have them already.
func TestNoListChangedForEarlierChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
		must(t, s.AddTool(&Tool{Name: "early"}, nopTool))
		var c listChangedCounter
		cs, ss := connect(t, s, c.client())
		time.Sleep(time.Second)
		synctest.Wait()
		if got := c.counts(); got != [3]int32{} {
			t.Errorf("list_changed received for changes before initialize: %v", got)
		}
		must(t, s.AddTool(&Tool{Name: "late"}, nopTool))
		time.Sleep(time.Second)
		synctest.Wait()
		if got := c.counts(); got != [3]int32{1, 0, 0} {
			t.Errorf("list_changed after a later change: %v, want [1 0 0]", got)
		}
		cs.Close()
		ss.Close()
	})
}
