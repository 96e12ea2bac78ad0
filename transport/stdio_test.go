package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// pipePair returns two IOTransports connected by two pipes made by mk.
func pipePair(t *testing.T, mk func() (io.ReadCloser, io.WriteCloser)) (client, server Conn) {
	t.Helper()
	c2sR, c2sW := mk()
	s2cR, s2cW := mk()
	ctx := context.Background()
	client, err := (&IOTransport{Reader: s2cR, Writer: c2sW}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	server, err = (&IOTransport{Reader: c2sR, Writer: s2cW}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

var pipeKinds = []struct {
	name string
	mk   func(t *testing.T) func() (io.ReadCloser, io.WriteCloser)
}{
	{"io.Pipe", func(*testing.T) func() (io.ReadCloser, io.WriteCloser) {
		return func() (io.ReadCloser, io.WriteCloser) { return io.Pipe() }
	}},
	{"os.Pipe", func(t *testing.T) func() (io.ReadCloser, io.WriteCloser) {
		return func() (io.ReadCloser, io.WriteCloser) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			return r, w
		}
	}},
}

func TestIOTransportRoundTrip(t *testing.T) {
	for _, pk := range pipeKinds {
		t.Run(pk.name, func(t *testing.T) {
			checkLeaks(t)
			client, server := pipePair(t, pk.mk(t))
			ctx := context.Background()
			go func() {
				// io.Pipe writes wait for the reader.
				client.Write(ctx, request(1, "tools/call", `{"name":"echo"}`))
			}()
			m, err := server.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			req := m.(*jsonrpc.Request)
			go server.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: req.Params})
			m, err = client.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := encode(t, m), `{"jsonrpc":"2.0","id":1,"result":{"name":"echo"}}`; got != want {
				t.Errorf("got %s, want %s", got, want)
			}

			// Closing one side ends the other's input.
			if err := client.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := server.Read(ctx); err != io.EOF {
				t.Errorf("server Read after client Close: %v, want io.EOF", err)
			}
			if _, err := client.Read(ctx); !errors.Is(err, ErrClosed) {
				t.Errorf("client Read after Close: %v, want ErrClosed", err)
			}
			if err := client.Write(ctx, request(2, "m", "")); !errors.Is(err, ErrClosed) {
				t.Errorf("client Write after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func TestIOTransportCloseUnblocks(t *testing.T) {
	for _, pk := range pipeKinds {
		t.Run(pk.name, func(t *testing.T) {
			checkLeaks(t)
			mk := pk.mk(t)
			// The test holds the other ends open: only Close can end the
			// blocked calls.
			inR, inW := mk()
			outR, outW := mk()
			defer inW.Close()
			defer outR.Close()
			c, err := (&IOTransport{Reader: inR, Writer: outW}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			read := make(chan error)
			go func() {
				_, err := c.Read(ctx)
				read <- err
			}()
			// Nobody reads the output: with io.Pipe the first Write
			// blocks, with os.Pipe once the pipe buffer is full.
			write := make(chan error)
			go func() {
				big := request(1, "m", `{"p":"`+strings.Repeat("x", 1<<20)+`"}`)
				for {
					if err := c.Write(ctx, big); err != nil {
						write <- err
						return
					}
				}
			}()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := <-read; !errors.Is(err, ErrClosed) {
				t.Errorf("blocked Read after Close: %v, want ErrClosed", err)
			}
			if err := <-write; !errors.Is(err, ErrClosed) {
				t.Errorf("blocked Write after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestIOTransportJSONRPC runs jsonrpc.Conns over the pipes, as mcp does.
func TestIOTransportJSONRPC(t *testing.T) {
	checkLeaks(t)
	client, server := pipePair(t, pipeKinds[1].mk(t))
	echo := jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		return r.Params, nil
	})
	sc := jsonrpc.NewConn(server, &jsonrpc.ConnOptions{Handler: echo})
	cc := jsonrpc.NewConn(client, nil)
	sc.Start()
	cc.Start()
	res, err := cc.Call(context.Background(), "echo", json.RawMessage(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != `{"x":1}` {
		t.Errorf("result %s", res)
	}
	cc.Close()
	if err := sc.Wait(); err != io.EOF {
		t.Errorf("server conn ended with %v, want io.EOF", err)
	}
}

func TestIOTransportConnect(t *testing.T) {
	ctx := context.Background()
	tr := &IOTransport{Reader: strings.NewReader(""), Writer: io.Discard}
	if _, err := tr.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Connect(ctx); err == nil {
		t.Error("second Connect succeeded")
	}
	for name, tr := range map[string]*IOTransport{
		"no reader":    {Writer: io.Discard},
		"no writer":    {Reader: strings.NewReader("")},
		"negative max": {Reader: strings.NewReader(""), Writer: io.Discard, MaxMessageSize: -1},
	} {
		if _, err := tr.Connect(ctx); err == nil {
			t.Errorf("%s: Connect succeeded", name)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (&IOTransport{Reader: strings.NewReader(""), Writer: io.Discard}).Connect(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with ended ctx: %v", err)
	}
}

type countingCloser struct {
	io.Reader
	io.Writer
	closes *int
}

func (c countingCloser) Close() error { *c.closes++; return nil }

// sliceCloser has an incomparable dynamic type.
type sliceCloser struct {
	io.Reader
	io.Writer
	b      []byte
	closes *int
}

func (c sliceCloser) Close() error { *c.closes++; return nil }

func TestCloseBoth(t *testing.T) {
	n := 0
	rw := &countingCloser{Reader: strings.NewReader(""), Writer: io.Discard, closes: &n}
	if err := closeBoth(rw, rw); err != nil || n != 1 {
		t.Errorf("same value: %d closes, err %v; want 1", n, err)
	}
	n = 0
	closeBoth(&countingCloser{closes: &n}, &countingCloser{closes: &n})
	if n != 2 {
		t.Errorf("different values: %d closes, want 2", n)
	}
	n = 0
	sc := sliceCloser{b: []byte{1}, closes: &n}
	closeBoth(sc, sc) // must not panic
	if n != 2 {
		t.Errorf("incomparable values: %d closes, want 2", n)
	}
	n = 0
	closeBoth(strings.NewReader(""), countingCloser{closes: &n})
	if n != 1 {
		t.Errorf("writer only: %d closes, want 1", n)
	}

	a, b := net.Pipe()
	defer b.Close()
	c, err := (&IOTransport{Reader: a, Writer: a}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close of a net.Conn used both ways: %v", err)
	}
}

func TestStdioConn(t *testing.T) {
	checkLeaks(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	defer outW.Close()

	c := newStdioConn(inR, outW, DefaultMaxMessageSize, func() error { return nil })
	ctx := context.Background()
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\r\n"); err != nil {
		t.Fatal(err)
	}
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, &jsonrpc.Response{ID: m.(*jsonrpc.Request).ID}); err != nil {
		t.Fatal(err)
	}
	fr := newFrameReader(outR, 1000, 1000)
	line, err := fr.next()
	if err != nil || string(line) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("wrote %q, %v", line, err)
	}

	// Close ends a Read blocked on input that never comes, though the
	// pipe stays open, as os.Stdin would.
	read := make(chan error)
	go func() {
		_, err := c.Read(ctx)
		read <- err
	}()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-read; !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	// The background read is still waiting on the pipe; ending the input
	// lets it finish, which checkLeaks verifies.
	inW.Close()
	// Both standard streams are left open.
	if _, err := outW.Write([]byte("x")); err != nil {
		t.Errorf("stdout closed by Close: %v", err)
	}
}

func TestStdioTransportConnect(t *testing.T) {
	ctx := context.Background()
	if _, err := (&StdioTransport{MaxMessageSize: -5}).Connect(ctx); err == nil {
		t.Error("negative MaxMessageSize accepted")
	}
	tr := &StdioTransport{}
	c, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // never read: the test binary's stdin is left alone
	if _, err := tr.Connect(ctx); err == nil {
		t.Error("second Connect succeeded")
	}
}

func TestDetachedReaderEOF(t *testing.T) {
	checkLeaks(t)
	d := newDetachedReader(strings.NewReader("hello"))
	defer d.close()
	b, err := io.ReadAll(d)
	if err != nil || string(b) != "hello" {
		t.Errorf("ReadAll: %q, %v", b, err)
	}
	if n, err := d.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Errorf("Read after EOF: %d, %v", n, err)
	}
}
