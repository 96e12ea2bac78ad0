package transport

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestLineConnWriteHonoursContext checks that a write to a peer that stops
// reading ends with its context: the connection is closed (part of the
// line may be out), and neither the writer nor Close waits for the peer.
func TestLineConnWriteHonoursContext(t *testing.T) {
	checkLeaks(t)
	inR, _ := io.Pipe()     // nothing arrives
	outR, outW := io.Pipe() // nobody reads what is written
	defer outR.Close()
	c, err := (&IOTransport{Reader: inR, Writer: outW}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = c.Write(ctx, &jsonrpc.Request{Method: "notifications/message"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write to a peer that does not read: %v; want the context's error", err)
	}
	// The connection is gone: later writes fail at once, whatever their
	// context.
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "x"}); err == nil {
		t.Fatal("a write after an abandoned one succeeded")
	}
	c.Close()
	// A write whose context never ends is not watched, and one that
	// completes before its context ends leaves the connection open.
	inR2, _ := io.Pipe()
	r2, w2 := io.Pipe()
	c2, err := (&IOTransport{Reader: inR2, Writer: w2}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	go io.Copy(io.Discard, r2)
	ctx2, cancel2 := context.WithCancel(context.Background())
	if err := c2.Write(ctx2, &jsonrpc.Request{Method: "x"}); err != nil {
		t.Fatal(err)
	}
	cancel2()
	if err := c2.Write(context.Background(), &jsonrpc.Request{Method: "y"}); err != nil {
		t.Fatalf("the connection closed after a completed write's context ended: %v", err)
	}
}
