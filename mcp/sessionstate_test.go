package mcp

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// stateTransport is a server transport whose connection offers
// mcplink.SessionState, as a Streamable HTTP session kept in a session
// store does: it records the snapshots saved, and restores the session
// from restored when that is not nil.
type stateTransport struct {
	transport.Transport
	st *stateConn
}

type stateConn struct {
	transport.Conn
	restored []byte

	mu      sync.Mutex
	saved   [][]byte
	version string
	watch   func([]byte)
}

func (t *stateTransport) Connect(ctx context.Context) (transport.Conn, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.st.Conn = c
	return t.st, nil
}

func (c *stateConn) RestoredState() []byte { return c.restored }

func (c *stateConn) SaveState(_ context.Context, version string, state []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.saved = append(c.saved, state)
	c.version = version
	return nil
}

func (c *stateConn) WatchState(f func([]byte)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch = f
}

func (c *stateConn) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.saved)
}

func (c *stateConn) last() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.saved[len(c.saved)-1]
}

// TestSessionStateSnapshot checks the snapshot a session saves through a
// connection kept in a session store (after initialize, logging/setLevel
// and resources/subscribe and unsubscribe) and a session restored from
// it: initialized with no initialize exchange, with the client's info,
// capabilities, log level and subscriptions, and following a snapshot
// another replica saved.
func TestSessionStateSnapshot(t *testing.T) {
	ctx := context.Background()
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	if err := s.AddResource(&Resource{URI: "file:///a", Name: "a"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ct, st := transport.NewInMemoryTransports()
	a := &stateConn{}
	ssA, err := s.Connect(ctx, &stateTransport{Transport: st, st: a})
	if err != nil {
		t.Fatal(err)
	}
	defer ssA.Close()
	c := NewClient(&Implementation{Name: "client", Version: "7"}, &ClientOptions{Era: EraHandshake})
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if n := a.count(); n != 1 {
		t.Fatalf("%d snapshots saved after initialize, want 1", n)
	}
	if err := cs.SetLoggingLevel(ctx, LoggingLevelWarning); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"file:///a", "file:///b"} {
		if err := cs.Subscribe(ctx, &SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.Unsubscribe(ctx, &UnsubscribeParams{URI: "file:///b"}); err != nil {
		t.Fatal(err)
	}
	if n := a.count(); n != 5 {
		t.Fatalf("%d snapshots saved, want 5", n)
	}
	a.mu.Lock()
	if a.version != ssA.ProtocolVersion() {
		t.Errorf("saved version %q, want %q", a.version, ssA.ProtocolVersion())
	}
	a.mu.Unlock()

	// Another replica restores the session from the last snapshot.
	_, st2 := transport.NewInMemoryTransports()
	b := &stateConn{restored: a.last()}
	ssB, err := s.Connect(ctx, &stateTransport{Transport: st2, st: b})
	if err != nil {
		t.Fatal(err)
	}
	defer ssB.Close()
	check := func(ss *ServerSession, level LoggingLevel, subs []string) {
		t.Helper()
		ss.mu.Lock()
		defer ss.mu.Unlock()
		var got []string
		for uri := range ss.subscriptions {
			got = append(got, uri)
		}
		slices.Sort(got)
		if ss.state != stateReady || ss.version != ssA.ProtocolVersion() || ss.clientInfo == nil || ss.clientInfo.Version != "7" ||
			ss.clientCaps == nil || ss.logLevel != level || !slices.Equal(got, subs) {
			t.Errorf("restored session: state %v, version %q, client %+v, caps %v, level %q, subscriptions %v; want ready, %q, client 7, %q, %v",
				ss.state, ss.version, ss.clientInfo, ss.clientCaps != nil, ss.logLevel, got, ssA.ProtocolVersion(), level, subs)
		}
	}
	check(ssB, LoggingLevelWarning, []string{"file:///a"})
	if !ssB.initialized() {
		t.Error("restored session not initialized")
	}

	// A snapshot changed elsewhere reaches it through WatchState.
	b.mu.Lock()
	watch := b.watch
	b.mu.Unlock()
	watch([]byte(`{"protocolVersion":"` + ssA.ProtocolVersion() + `","logLevel":"debug"}`))
	check(ssB, LoggingLevelDebug, nil)
}
