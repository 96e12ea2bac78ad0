package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// pipeTransport is a third-party transport, written with the exported
// names of jsonrpc and transport only: its connections carry each message
// encoded, as bytes, over a pair of channels (a stand-in for a socket, a
// message queue or a browser port). A Transport makes one [transport.Conn];
// the Conn reads and writes whole jsonrpc messages and keeps the contract
// of [jsonrpc.Stream].
type pipeTransport struct {
	conn      *pipeConn
	connected atomic.Bool
}

// Connect implements transport.Transport: once per value.
func (t *pipeTransport) Connect(context.Context) (transport.Conn, error) {
	if t.connected.Swap(true) {
		return nil, errors.New("pipe: already connected")
	}
	return t.conn, nil
}

// pipeConn is one end of a pipe.
type pipeConn struct {
	session string          // the pipe's name: see SessionID
	send    chan<- []byte   // to the peer
	recv    <-chan []byte   // from the peer
	closed  chan struct{}   // closed by Close: the peer reads io.EOF
	peer    <-chan struct{} // closed by the peer's Close
	once    sync.Once
}

// newPipe returns the two ends of a pipe named session.
func newPipe(session string) (a, b *pipeTransport) {
	ab, ba := make(chan []byte, 16), make(chan []byte, 16)
	aDone, bDone := make(chan struct{}), make(chan struct{})
	a = &pipeTransport{conn: &pipeConn{session: session, send: ab, recv: ba, closed: aDone, peer: bDone}}
	b = &pipeTransport{conn: &pipeConn{session: session, send: ba, recv: ab, closed: bDone, peer: aDone}}
	return a, b
}

// Read returns the next message: io.EOF once the peer has closed and what
// it sent has been read, transport.ErrClosed after Close, and a
// *jsonrpc.DecodeError, without ending the stream, for a message that
// cannot be decoded (the connection answers it and reads on).
func (c *pipeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case data := <-c.recv:
		return jsonrpc.DecodeMessage(data)
	case <-c.closed:
		return nil, transport.ErrClosed
	case <-c.peer:
		select {
		case data := <-c.recv: // sent before the peer closed
			return jsonrpc.DecodeMessage(data)
		default:
			return nil, io.EOF
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends one message whole; it is safe for concurrent use. ctx bounds
// the wait for room. (A transport with a stream per request, as
// Streamable HTTP has, finds the request a message belongs to with
// jsonrpc.RelatedRequest(ctx).)
func (c *pipeConn) Write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	select {
	case <-c.closed:
		return transport.ErrClosed
	default:
	}
	select {
	case c.send <- data:
		return nil
	case <-c.closed:
		return transport.ErrClosed
	case <-c.peer:
		return fmt.Errorf("pipe: peer gone: %w", transport.ErrClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the connection; it may be called more than once.
func (c *pipeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements transport.SessionConn, which is optional: a server
// session over the connection takes the transport's name for it.
func (c *pipeConn) SessionID() string { return c.session }

// A transport of your own plugs into mcp.Server.Connect and
// mcp.Client.Connect like the transports of this package. All it needs is
// exported: [transport.Transport] and [transport.Conn] to implement, the
// messages of package jsonrpc ([jsonrpc.DecodeMessage],
// [jsonrpc.EncodeMessage], [jsonrpc.DecodeError]), [transport.ErrClosed]
// and io.EOF for its ends, and optionally [transport.SessionConn] and
// [transport.HalfCloser]; see pipeTransport above.
func Example_customTransport() {
	ctx := context.Background()
	clientT, serverT := newPipe("pipe-1")

	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "v1"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	err := mcp.AddTool(server, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "Hello, " + in.Name}}}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	ss, err := server.Connect(ctx, serverT)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("server session:", ss.ID())

	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, clientT)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: json.RawMessage(`{"name":"pipe"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	cs.Close()
	ss.Wait() // the server reads io.EOF and ends
	// Output:
	// server session: pipe-1
	// Hello, pipe
}
