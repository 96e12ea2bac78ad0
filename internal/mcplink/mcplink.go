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
	"strconv"
	"strings"

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

// FramedWriter is implemented by connections that encode each message
// into memory of its own (jsonrpc.EncodeMessage), such as the HTTP
// transports', rather than into a buffer they reuse, such as a stream's
// line: for them, mcp encodes results and the params of its calls with
// room for the JSON-RPC envelope before them, which the encoding then
// writes in place of a copy (see rpclink.Framed). A connection that
// wraps another asks it.
type FramedWriter interface {
	// FramedWrites reports whether the connection encodes so.
	FramedWrites() bool
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

// ErrNoSubscriber is returned (wrapped) by a bus's PublishTo, and so by
// a Relay's Send to one replica, when the bus knows that no subscription
// of that replica got the message: the replica is gone. Package mcp
// exports it as mcp.ErrNoSubscriber.
var ErrNoSubscriber = errors.New("mcp: no subscription of the replica got the message")

// ErrNotAdmitted is what a SessionState's SaveState returns when the
// initialize's save was to create the session's record and the store
// refused the session (bounds, or the store down): the transport answers
// the initialize with the refusal, so it is not the MCP session's to
// log.
var ErrNotAdmitted = errors.New("transport: the session store did not admit the session")

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

// Relay carries the messages of the sessions of a Streamable HTTP handler
// whose records are in a shared store
// (transport.StreamableHTTPOptions.SessionStore) between the replicas
// serving them: package mcp implements it on the server's Bus, and hands
// it to the handler with AttachRelay. What it carries, by kind:
//
//   - RelayDeleted, to all: the client deleted the session; replicas
//     holding a copy drop it at once, cancelling its work.
//   - RelayChanged, to all: the session's record changed (its state, or
//     the replica holding its GET stream) at version; copies older than
//     it read the record again.
//   - RelayCancel, to all: a notifications/cancelled (data) for a
//     request that is not in flight on the replica that received it.
//   - RelayAnswer, to one replica: the client's response (data) to a
//     request that replica sent (see RequestIDReplica).
//   - RelayStream, to one replica: a message (data) for the session's GET
//     stream, which that replica holds.
type Relay interface {
	// Replica returns this replica's ID, as the others address it.
	Replica() string
	// Addressed reports whether Send can address one replica: without
	// it, only the kinds sent to all are carried.
	Addressed() bool
	// Send publishes a message of kind about the session sid, to replica
	// alone, or to every replica when replica is "". It returns once the
	// bus took it, within the bus's own time bound, or fails; data over
	// MaxRelayBytes fails at once. To one replica, it fails with
	// ErrNoSubscriber when the bus knows the replica did not get it.
	Send(ctx context.Context, replica, kind, sid string, version int64, data []byte) error
	// Subscribed reports whether replica is subscribed to the bus (a
	// replica whose process ended is not), or an error matching
	// errors.ErrUnsupported when the bus cannot tell.
	Subscribed(ctx context.Context, replica string) (bool, error)
	// Detach stops delivering to t (a handler that closed).
	Detach(t RelayTarget)
}

// RelayTarget is a handler receiving what other replicas relay: package
// transport's StreamableHTTPHandler. RelayReceive is called on the bus's
// delivery goroutine and must return promptly.
type RelayTarget interface {
	RelayReceive(kind, sid string, version int64, data []byte)
}

// Kinds of relayed messages (see Relay).
const (
	RelayDeleted = "deleted"
	RelayChanged = "changed"
	RelayCancel  = "cancel"
	RelayAnswer  = "answer"
	RelayStream  = "stream"
	// RelaySSE, to one replica: what a client of the legacy HTTP+SSE
	// transport POSTed for its session, whose event stream that replica
	// holds (the endpoint it was given names it). data is a JSON object:
	// "p", the keyed hash of the POST's principal ("" for none), and
	// "m", the message as posted.
	RelaySSE = "sse"
	// RelayGap is given to RelayReceive, with no session, when messages
	// may have been lost on the bus.
	RelayGap = "gap"
)

// MaxRelayBytes bounds the JSON-RPC message a relayed message carries,
// so that it fits the bus's messages (64 KiB) with its envelope.
const MaxRelayBytes = 60 << 10

// AttachRelay makes handler (a *transport.StreamableHTTPHandler with a
// session store, or a *transport.SSEHandler) relay its sessions'
// messages through r, and returns it as the RelayTarget that r delivers
// to; nil when the handler has nothing to relay (then it is left as it
// was). Set by package transport's init.
var AttachRelay func(handler any, r Relay) RelayTarget

// RelayRequestID is the ID that a replica gives the requests it sends the
// client of a relayed session: its replica ID and a number, so that the
// replica that receives the client's answer knows where it goes, and
// requests of two replicas to one client never share an ID.
func RelayRequestID(replica string, n int64) string {
	return replica + ":" + strconv.FormatInt(n, 10)
}

// ValidName reports whether s is 1 to 64 bytes of ASCII letters, digits,
// '_' and '-', which can go into a channel name, a key or an event ID as
// they are: a replica ID (mcp.ValidReplicaID), or a part of a stream ID.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// RequestIDReplica returns the replica of an ID made by RelayRequestID
// (the unquoted string); false for any other ID.
func RequestIDReplica(id string) (string, bool) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 || i == len(id)-1 || i > 64 {
		return "", false
	}
	for _, c := range []byte(id[i+1:]) {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return id[:i], true
}

type noRelayKey struct{}

// NoRelay returns ctx marked so that a message written with it is not
// relayed to the replica holding the session's GET stream: the
// notifications that every replica holding a copy of the session sends it
// (list changes and resource updates, which the Bus takes to each
// replica), so that the client gets them once, from the replica holding
// its stream.
func NoRelay(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRelayKey{}, true)
}

// IsNoRelay reports whether ctx was marked by NoRelay.
func IsNoRelay(ctx context.Context) bool {
	v, _ := ctx.Value(noRelayKey{}).(bool)
	return v
}
