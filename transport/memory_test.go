package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// memPair connects both in-memory transports.
func memPair(t *testing.T) (client, server Conn) {
	t.Helper()
	ct, st := NewInMemoryTransports()
	ctx := context.Background()
	server, err := st.Connect(ctx) // either order works
	if err != nil {
		t.Fatal(err)
	}
	client, err = ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ct.Connect(ctx); err == nil {
		t.Error("second Connect succeeded")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestInMemoryRoundTrip(t *testing.T) {
	checkLeaks(t)
	client, server := memPair(t)
	ctx := context.Background()
	req := request(1, "tools/call", `{"name":"echo"}`)
	if err := client.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, err := server.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m != jsonrpc.Message(req) {
		t.Error("the message was copied")
	}
	if err := server.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: req.Params}); err != nil {
		t.Fatal(err)
	}
	if m, err := client.Read(ctx); err != nil || encode(t, m) != `{"jsonrpc":"2.0","id":1,"result":{"name":"echo"}}` {
		t.Errorf("client Read: %v, %v", m, err)
	}
}

func TestInMemoryWireEquivalence(t *testing.T) {
	client, server := memPair(t)
	ctx := context.Background()
	de := &jsonrpc.DecodeError{ID: jsonrpc.Int64ID(5), Err: &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "bad"}}
	req := request(6, "m", "")
	for _, m := range []jsonrpc.Message{de, jsonrpc.Batch{req, de}} {
		if err := client.Write(ctx, m); err != nil {
			t.Fatal(err)
		}
		got, err := server.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if encode(t, got) != encode(t, m) {
			t.Errorf("got %s, want %s", encode(t, got), encode(t, m))
		}
		var hasDecodeError func(jsonrpc.Message) bool
		hasDecodeError = func(m jsonrpc.Message) bool {
			switch m := m.(type) {
			case *jsonrpc.DecodeError:
				return true
			case jsonrpc.Batch:
				for _, e := range m {
					if hasDecodeError(e) {
						return true
					}
				}
			}
			return false
		}
		if hasDecodeError(got) {
			t.Errorf("a *DecodeError arrived as a message: %#v", got)
		}
	}
	for _, m := range []jsonrpc.Message{nil, (*jsonrpc.Request)(nil), (*jsonrpc.Response)(nil), jsonrpc.Batch{},
		jsonrpc.Batch{jsonrpc.Batch{req}}, jsonrpc.Batch{nil}} {
		if err := client.Write(ctx, m); err == nil {
			t.Errorf("Write(%#v) succeeded", m)
		}
	}
}

func TestInMemoryConcurrentBothWays(t *testing.T) {
	checkLeaks(t)
	const writers, each = 8, 500 // far more than the buffers hold
	client, server := memPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range []Conn{client, server} {
		wg.Go(func() { // the dedicated reader
			for range writers * each {
				if _, err := c.Read(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if err := c.Write(ctx, request(int64(w*each+i), "m", "")); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

func TestInMemoryClose(t *testing.T) {
	checkLeaks(t)
	client, server := memPair(t)
	ctx := context.Background()

	// A Read waiting when the peer closes gets io.EOF.
	read := make(chan error)
	go func() {
		_, err := client.Read(ctx)
		read <- err
	}()
	for i := range int64(3) {
		if err := client.Write(ctx, request(i, "m", "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-read; !errors.Is(err, ErrClosed) {
		t.Errorf("Read pending on the closing side: %v, want ErrClosed", err)
	}
	// What was written before Close is delivered, then io.EOF.
	for i := range int64(3) {
		m, err := server.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if id, _ := m.(*jsonrpc.Request).ID.Int64(); id != i {
			t.Errorf("message %d has id %d", i, id)
		}
	}
	for range 2 {
		if _, err := server.Read(ctx); err != io.EOF {
			t.Errorf("server Read after drain: %v, want io.EOF", err)
		}
	}
	if err := server.Write(ctx, request(9, "m", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write to a closed peer: %v, want ErrClosed", err)
	}
	if err := client.Write(ctx, request(9, "m", "")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if _, err := client.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	if err := client.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestInMemoryBlockedWrite(t *testing.T) {
	checkLeaks(t)
	client, server := memPair(t)
	ctx := context.Background()
	for i := range memBuffer {
		if err := client.Write(ctx, request(int64(i), "m", "")); err != nil {
			t.Fatal(err)
		}
	}
	// The buffer is full and nobody reads: the deadline ends the Write.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := client.Write(short, request(100, "m", "")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("blocked Write: %v, want context.DeadlineExceeded", err)
	}
	// Cancellation ends it too.
	cctx, ccancel := context.WithCancel(ctx)
	wrote := make(chan error)
	go func() { wrote <- client.Write(cctx, request(101, "m", "")) }()
	ccancel()
	if err := <-wrote; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Write: %v, want context.Canceled", err)
	}
	// And so does the peer closing.
	go func() { wrote <- client.Write(ctx, request(102, "m", "")) }()
	server.Close()
	if err := <-wrote; !errors.Is(err, ErrClosed) {
		t.Errorf("Write when the peer closed: %v, want ErrClosed", err)
	}
	// A Read's ctx is respected as well.
	rctx, rcancel := context.WithCancel(ctx)
	rcancel()
	if _, err := client.Read(rctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with ended ctx: %v", err)
	}
}

// TestInMemoryJSONRPC runs jsonrpc.Conns over the pair, as mcp does.
func TestInMemoryJSONRPC(t *testing.T) {
	checkLeaks(t)
	client, server := memPair(t)
	echo := jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		return r.Params, nil
	})
	sc := jsonrpc.NewConn(server, &jsonrpc.ConnOptions{Handler: echo})
	cc := jsonrpc.NewConn(client, &jsonrpc.ConnOptions{Handler: echo})
	sc.Start()
	cc.Start()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if res, err := cc.Call(context.Background(), "echo", json.RawMessage(`[1]`)); err != nil || string(res) != `[1]` {
				t.Errorf("client call: %s, %v", res, err)
			}
			if res, err := sc.Call(context.Background(), "echo", json.RawMessage(`[2]`)); err != nil || string(res) != `[2]` {
				t.Errorf("server call: %s, %v", res, err)
			}
		})
	}
	wg.Wait()
	sc.Close()
	if err := cc.Wait(); err != io.EOF {
		t.Errorf("client conn ended with %v, want io.EOF", err)
	}
}
