// Package transport moves whole JSON-RPC messages between MCP peers.
//
// A [Transport] is a recipe for a connection: [Transport.Connect] yields a
// [Conn], a bidirectional stream of [jsonrpc.Message] values. A Conn has the
// method set of [jsonrpc.Stream], so it plugs straight into a
// [jsonrpc.Conn], which gives the messages their request/response meaning.
//
// The byte-stream and in-memory transports never look inside a message
// beyond what framing needs. The HTTP transports must know more. Streamable
// HTTP ties messages to HTTP exchanges, so its client and server tell
// requests, notifications and responses apart and route responses by their
// id; they recognise the initialize request (which opens a session and must
// travel alone) and notifications/initialized (after which the client opens
// its standalone GET stream); the server reads protocolVersion from the
// initialize result to learn the session's revision; and the client keeps
// the initialize exchange so it can repeat it for an expired session. Both
// HTTP servers attach the details of the HTTP request to each request
// message they receive (see [HTTPRequestInfoFromContext]). None of them
// reads the params or result of any other method.
//
// # Transports
//
//   - [StdioTransport]: the process's standard input and output, for an MCP
//     server launched by its client.
//   - [IOTransport]: any reader and writer, such as pipes or a net.Conn.
//   - [CommandTransport]: launches a server subprocess and talks to it over
//     its standard input and output, for the client side of stdio.
//   - [NewInMemoryTransports]: a connected pair passing message values
//     directly, with no encoding, for tests and in-process servers.
//   - [LoggingTransport]: wraps any transport and logs every message.
//
// HTTP:
//
//   - [StreamableClientTransport]: the client side of Streamable HTTP
//     (revisions 2025-03-26 and later), with resumption of broken SSE
//     streams and a fallback to the legacy transport.
//   - [SSEClientTransport]: the client side of the legacy HTTP+SSE
//     transport of revision 2024-11-05.
//   - [StreamableHTTPHandler] and [SSEHandler]: the server sides, as
//     http.Handlers that create one connection per session and have an
//     MCP server serve it; mcp.NewStreamableHTTPHandler and
//     mcp.NewSSEHandler return them.
//
// Streamable HTTP has request-scoped streams: a response, or a
// notification sent while handling a request, goes to the HTTP exchange of
// the request it belongs to. Write's context carries that request (see
// [jsonrpc.RelatedRequest]), which is why every Write takes a context even
// where a byte stream ignores it. The server-side connections push
// incoming messages (see [jsonrpc.PushStream]), so an idle session holds
// no goroutine.
//
// # Framing
//
// The byte-stream transports use the MCP stdio framing: each message is one
// line of compact JSON ended by "\n". On input, a "\r" before the "\n" is
// tolerated, blank lines are skipped, and a last line missing its "\n" at
// end of input is still decoded. A line longer than the maximum message size
// (see [DefaultMaxMessageSize]) is skipped without being buffered, and Read
// reports it as a [*jsonrpc.DecodeError] (recognisable with
// [IsMessageTooLarge]) while the connection keeps serving. On output, a
// message whose raw params, result or error data contain line breaks is
// compacted onto one line first.
//
// # Errors and closing
//
// Read returns io.EOF when the peer ended the stream cleanly, a
// [*jsonrpc.DecodeError] for one undecodable message (the connection stays
// usable), and [ErrClosed] once Close has been called. Close unblocks
// pending Read and Write calls wherever the underlying reader and writer
// allow it; each transport documents its own limits.
//
// On the byte-stream transports, Read checks its context before each
// message, and Write's context bounds the wait for its turn to write; a
// read or write already under way in the underlying reader or writer is
// ended by Close, not by the context, so no goroutine has to watch the
// context; [jsonrpc.Conn] closes the stream when it stops anyway.
// The in-memory transports honour the context throughout.
//
// # Programs that never speak HTTP
//
// Built with the mcpkit_nohttp tag (go build -tags mcpkit_nohttp), the
// package has no HTTP transports (Streamable HTTP and HTTP+SSE, client
// and server) and imports neither net/http nor net; package mcp drops its
// HTTP handler constructors, and package mcptest its fleets of HTTP
// replicas. A stdio server's binary is then about 1.5 MiB smaller. What
// is left is unchanged.
//
// # Writing a transport
//
// A transport of another package needs only what is exported here and in
// package jsonrpc: a [Transport] whose Connect returns a [Conn] that
// reads and writes whole [jsonrpc.Message] values ([jsonrpc.DecodeMessage]
// and [jsonrpc.EncodeMessage] turn them into bytes and back), ends with
// io.EOF and [ErrClosed] as above, and may name its session
// ([SessionConn]) or close one direction ([HalfCloser]). A transport whose
// messages arrive on goroutines it does not own can deliver them as a
// [jsonrpc.PushStream]. mcp.Server.Connect and mcp.Client.Connect take it
// like any transport of this package; see the CustomTransport example.
package transport

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Transport creates connections to a peer. Connect may be called once per
// Transport value unless a transport documents otherwise; a second call
// returns an error.
type Transport interface {
	// Connect establishes the connection. ctx bounds only the setup: the
	// returned Conn lives until it is closed or the peer goes away.
	Connect(ctx context.Context) (Conn, error)
}

// Conn is one connection: a bidirectional stream of JSON-RPC messages. It
// satisfies [jsonrpc.Stream] and follows its concurrency contract.
//
// Read may be called from one goroutine at a time. Write is safe for
// concurrent use and writes each message whole, never interleaved with
// another. Close may be called at any time from any goroutine, more than
// once; it unblocks pending calls, after which Read and Write return
// [ErrClosed].
type Conn interface {
	// Read returns the next message. It returns io.EOF when the peer ended
	// the stream cleanly and a [*jsonrpc.DecodeError], without ending the
	// stream, when one message could not be decoded.
	Read(ctx context.Context) (jsonrpc.Message, error)
	// Write sends one message. ctx may also carry the incoming request the
	// message relates to (see [jsonrpc.RelatedRequest]).
	Write(ctx context.Context, m jsonrpc.Message) error
	// Close ends the connection and releases its resources.
	Close() error
}

// SessionConn is implemented by connections that belong to a session named
// by the transport, such as the Mcp-Session-Id of Streamable HTTP. It is
// optional: check for it with a type assertion. An empty SessionID means
// the transport has no session identifier, and the caller may pick its own.
// The server-side HTTP connections and the Streamable HTTP client
// connection implement it; [LoggingTransport] passes it through.
type SessionConn interface {
	Conn
	// SessionID returns the session's identifier; it is safe for
	// concurrent use. On the server side it is constant for the life of
	// the connection; a client connection learns it from the server, so it
	// is "" before then and may change when the client re-initializes an
	// expired session.
	SessionID() string
}

// HalfCloser is implemented by connections whose sending side can be
// closed on its own, as a client does when it has sent its last request
// but still waits for the answers: the peer reads the messages already
// sent, then io.EOF, and can go on writing. Check for it with a type
// assertion. The in-memory connections implement it; so do the
// byte-stream connections of [IOTransport] (where the Writer can be closed
// apart from the Reader) and [CommandTransport] (CloseWrite closes the
// server's standard input).
type HalfCloser interface {
	Conn
	// CloseWrite ends the sending side. Later Writes return [ErrClosed];
	// Read goes on. A connection that cannot close one side alone
	// returns an error that matches errors.ErrUnsupported.
	CloseWrite() error
}

// ErrClosed is returned by Read and Write once the connection has been
// closed locally, and by Write once an in-memory peer has closed. Check it
// with errors.Is.
var ErrClosed = errors.New("transport: connection closed")

// errConnected is returned by a second Connect on a single-use transport.
var errConnected = errors.New("transport: already connected")

// Compile-time checks that a Conn is a jsonrpc.Stream and vice versa.
var (
	_ jsonrpc.Stream = Conn(nil)
	_ Conn           = jsonrpc.Stream(nil)
)
