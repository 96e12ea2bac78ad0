package transport

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// benchRequest is a typical small tools/call request.
func benchRequest() *jsonrpc.Request {
	return request(42, "tools/call", `{"name":"echo","arguments":{"message":"hello, world"},"_meta":{"progressToken":7}}`)
}

// BenchmarkFramingRoundTrip writes a message and reads it back through one
// connection whose writer and reader share a buffer: the framing cost
// alone, with no I/O or scheduling.
func BenchmarkFramingRoundTrip(b *testing.B) {
	var buf bytes.Buffer
	c := newLineConn(&buf, &buf, DefaultMaxMessageSize, nil)
	m := benchRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, m); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFramingWrite measures encoding and framing alone.
func BenchmarkFramingWrite(b *testing.B) {
	c := newLineConn(nil, io.Discard, DefaultMaxMessageSize, nil)
	m := benchRequest()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// repeatReader yields the same bytes forever.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// BenchmarkFramingRead measures splitting and decoding alone; the
// allocations are the decoded message's.
func BenchmarkFramingRead(b *testing.B) {
	line, err := appendFrame(nil, benchRequest())
	if err != nil {
		b.Fatal(err)
	}
	c := newLineConn(&repeatReader{data: bytes.Repeat(line, 100)}, io.Discard, DefaultMaxMessageSize, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIOTransportPipe sends messages over an io.Pipe to a reader in
// another goroutine, as two peers in one process would.
func BenchmarkIOTransportPipe(b *testing.B) {
	pr, pw := io.Pipe()
	ctx := context.Background()
	w, _ := (&IOTransport{Reader: eofReader{}, Writer: pw}).Connect(ctx)
	r, _ := (&IOTransport{Reader: pr, Writer: io.Discard}).Connect(ctx)
	defer r.Close()
	defer w.Close()
	m := benchRequest()
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		defer close(done)
		for {
			if _, err := r.Read(ctx); err != nil {
				return
			}
		}
	}()
	for range b.N {
		if err := w.Write(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	<-done
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// BenchmarkInMemory passes a message through the in-memory pair.
func BenchmarkInMemory(b *testing.B) {
	ct, st := NewInMemoryTransports()
	ctx := context.Background()
	client, _ := ct.Connect(ctx)
	server, _ := st.Connect(ctx)
	defer client.Close()
	defer server.Close()
	m := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Write(ctx, m); err != nil {
			b.Fatal(err)
		}
		if _, err := server.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
