package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// halfClosePairs are the transports whose client side can end its
// sending side alone, each returning a connected client and server.
var halfClosePairs = []struct {
	name string
	pair func(t *testing.T) (client, server Conn)
}{
	{"in-memory", func(t *testing.T) (Conn, Conn) {
		ct, st := NewInMemoryTransports()
		ctx := context.Background()
		c, err := ct.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		return c, s
	}},
	{"io os.Pipe", func(t *testing.T) (Conn, Conn) {
		return pipePair(t, pipeKinds[1].mk(t))
	}},
	{"io io.Pipe", func(t *testing.T) (Conn, Conn) {
		return pipePair(t, pipeKinds[0].mk(t))
	}},
}

// TestServerAnswersAfterEndOfInput sends pipelined requests to a
// jsonrpc.Conn serving each transport, then ends the client's sending
// side: every request is answered before the server's side ends.
func TestServerAnswersAfterEndOfInput(t *testing.T) {
	for _, tt := range halfClosePairs {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			client, server := tt.pair(t)
			ctx := context.Background()
			release := make(chan struct{})
			srv := jsonrpc.NewConn(server, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				<-release // still running when input ends
				return req.Params, nil
			})})
			srv.Start()
			defer srv.Wait()
			defer srv.Close()

			const n = 10
			go func() {
				for i := range n {
					if err := client.Write(ctx, request(int64(i), "ping", fmt.Sprintf("[%d]", i))); err != nil {
						t.Error(err)
					}
				}
				if err := client.(HalfCloser).CloseWrite(); err != nil {
					t.Error(err)
				}
				if err := client.Write(ctx, request(99, "ping", "")); !errors.Is(err, ErrClosed) {
					t.Errorf("Write after CloseWrite: %v, want ErrClosed", err)
				}
				close(release)
			}()
			got := map[string]bool{}
			for {
				m, err := client.Read(ctx)
				if err == io.EOF || errors.Is(err, ErrClosed) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				r, ok := m.(*jsonrpc.Response)
				if !ok || r.Error != nil {
					t.Fatalf("got %s, want a result", encode(t, m))
				}
				got[r.ID.String()] = true
				if len(got) == n {
					break
				}
			}
			if len(got) != n {
				t.Errorf("%d of %d requests answered", len(got), n)
			}
			if err := srv.Wait(); err != io.EOF {
				t.Errorf("server ended with %v, want io.EOF", err)
			}
		})
	}
}

// TestClientGetsAnswersBeforeEndOfInput has a server answer every
// request and then close its output at once: the client's calls all
// succeed.
func TestClientGetsAnswersBeforeEndOfInput(t *testing.T) {
	checkLeaks(t)
	c2sR, c2sW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s2cR, s2cW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tc, err := (&IOTransport{Reader: s2cR, Writer: c2sW}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	server, err := (&IOTransport{Reader: c2sR, Writer: s2cW}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer server.Close()
		var reqs []*jsonrpc.Request
		for len(reqs) < n {
			m, err := server.Read(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			reqs = append(reqs, m.(*jsonrpc.Request))
		}
		for _, r := range reqs {
			server.Write(ctx, &jsonrpc.Response{ID: r.ID, Result: r.Params})
		}
	}()
	client := jsonrpc.NewConn(tc, nil)
	client.Start()
	defer client.Close()
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := client.Call(ctx, "ping", fmt.Appendf(nil, "[%d]", i))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := client.Wait(); err != io.EOF {
		t.Errorf("client ended with %v, want io.EOF", err)
	}
}

// TestCloseWithPeerNotReading checks that a server whose peer sends
// requests with large answers and never reads them still closes, and
// its handlers end, once Close is called.
func TestCloseWithPeerNotReading(t *testing.T) {
	for _, tt := range halfClosePairs {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			client, server := tt.pair(t)
			ctx := context.Background()
			big := make([]byte, 256<<10)
			for i := range big {
				big[i] = 'x'
			}
			result := append(append([]byte(`"`), big...), '"')
			const n = 80 // more than the in-memory buffer holds
			answered := make(chan struct{}, n)
			srv := jsonrpc.NewConn(server, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				defer func() { answered <- struct{}{} }()
				return result, nil
			})})
			srv.Start()
			go func() {
				for i := range n {
					if client.Write(ctx, request(int64(i), "big", "")) != nil {
						return
					}
				}
			}()
			for range n {
				<-answered // every handler has returned; their writes wait
			}
			closed := make(chan struct{})
			go func() {
				srv.Close()
				srv.Wait()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(20 * time.Second):
				t.Fatal("Close and Wait did not return")
			}
		})
	}
}
