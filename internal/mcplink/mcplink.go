// Package mcplink is what package transport offers package mcp and nobody
// else: the optional interfaces of connections that mcp asks for, and the
// constructors of the server-side HTTP handlers, which take the function
// that connects an MCP server to each session. Users get those handlers
// from mcp.NewStreamableHTTPHandler and mcp.NewSSEHandler; keeping the
// rest here keeps it out of transport's exported API, which is for users
// and for authors of transports.
//
// This package does not import transport (transport imports it): the
// constructors are set by transport's init, once, before any importer of
// transport runs, and take and return transport's types as any.
package mcplink

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// ProtocolVersionSetter is implemented by connections of HTTP client
// transports, which send the negotiated protocol revision in the
// MCP-Protocol-Version header: the client calls SetProtocolVersion once it
// knows the revision. The LoggingTransport's connection is one exactly
// when the connection it wraps is, so the client finds the same kind of
// transport (stream or HTTP) through it.
type ProtocolVersionSetter interface {
	// SetProtocolVersion sets the MCP-Protocol-Version header of later
	// requests. It is safe for concurrent use.
	SetProtocolVersion(v string)
}

// HandshakeOnly is implemented by connections that may know they carry
// only the handshake era of MCP (initialize; revisions 2024-11-05 to
// 2025-11-25): the 2024-11-05 HTTP+SSE transport's, and wrappers of
// connections, which ask what they wrap. A client that finds the era of
// its server itself does not ask the stateless era of such a connection.
type HandshakeOnly interface {
	// HandshakeOnly reports whether the connection carries only the
	// handshake era.
	HandshakeOnly() bool
}

// Stateless is implemented by the connections of a stateless server
// transport: each carries one HTTP exchange, and no initialize handshake
// precedes its requests. StatelessProtocolVersion is the revision the
// client named in its MCP-Protocol-Version header (2025-03-26 when absent,
// as the specification says). The method's name is its own, so that no
// connection of another transport has it by chance.
type Stateless interface {
	StatelessProtocolVersion() string
}

// ConnectFunc starts serving a connection accepted by a server-side
// transport, such as one Streamable HTTP session (conn is a transport.Conn).
// It must return promptly and serve the connection in the background until
// the connection is closed; an error refuses the connection.
type ConnectFunc func(ctx context.Context, conn jsonrpc.Stream) error

// The constructors of the server-side HTTP handlers, set by package
// transport's init and never changed afterwards:
//
//	NewStreamableHTTPHandler(connect, opts *transport.StreamableHTTPOptions) *transport.StreamableHTTPHandler
//	NewSSEHandler(connect, opts *transport.SSEOptions) *transport.SSEHandler
//
// opts may be nil.
var (
	NewStreamableHTTPHandler func(connect ConnectFunc, opts any) any
	NewSSEHandler            func(connect ConnectFunc, opts any) any
)

// ErrNoStream is returned by a server-side HTTP connection's Write of a
// request when no stream is open to the client to carry it: package mcp
// then waits for one where it can (a task's question waits for the
// client's tasks/result).
var ErrNoStream = errors.New("transport: no stream open to the client for this message")

// SessionState is implemented by the connections of server-side HTTP
// sessions whose handler keeps their records in a shared store
// (transport.StreamableHTTPOptions.SessionStore), so that any replica
// serves them: package mcp saves its session's snapshot (opaque to the
// transport) after initialize and each change of what the client set,
// and a replica that restores a session from its record starts it with
// the snapshot, already initialized.
type SessionState interface {
	// RestoredState returns the snapshot the session was restored with,
	// nil for a new session (whose initialize is coming).
	RestoredState() []byte
	// SaveState stores the snapshot and the negotiated protocol version
	// in the session's record, within the store's own time bound.
	SaveState(ctx context.Context, version string, state []byte) error
	// WatchState sets the function the connection calls with the
	// snapshot when it learns that another replica changed it.
	WatchState(f func(state []byte))
}
