// Package jsonrpc implements JSON-RPC 2.0 as MCP uses it: message types, a
// strict single-pass decoder, an allocation-conscious encoder and [Conn], a
// connection that multiplexes concurrent calls in both directions over any
// [Stream] of messages.
//
// The package knows nothing about MCP methods. The transport package frames
// messages onto bytes (stdio, HTTP); the mcp package gives them meaning.
//
// # Decoding rules
//
// Decoding is case-sensitive on member names, rejects duplicate members and
// invalid UTF-8, and bounds nesting depth; these close the message-smuggling
// holes that lenient decoders open. A message that is not JSON yields a
// [CodeParseError]; JSON that is not a JSON-RPC 2.0 message yields a
// [CodeInvalidRequest], reported with the request's id when one could be read.
//
// # Concurrency
//
// A [Conn] runs one goroutine that reads the stream. Each incoming request
// runs in its own goroutine, bounded by [ConnOptions.MaxInFlight];
// notifications are delivered one at a time, in arrival order, by a worker
// that exists only while notifications are queued. An idle Conn therefore
// costs a single goroutine. The reading goroutine does not wait for the
// peer to read: the error answers it produces itself are written by a
// worker of their own, through a bounded queue
// ([ConnOptions.MaxQueuedErrors]).
//
// # Every message counts
//
// Every request read gets exactly one answer, whatever the peer does: a
// result, an error, or a refusal when [ConnOptions.MaxInFlight] requests
// are being handled; only a request the peer cancelled goes unanswered.
// No notification read is dropped. What a connection holds for its peer
// is bounded all the same: where a bound is reached (answers the peer
// does not read, notifications a slow handler has not taken), the
// connection stops reading until there is room, and the peer's writes
// wait in turn.
//
// # Order
//
// A response reaches its [Conn.Call] after the notifications read before
// it have been handled: the progress and log notifications a peer sends
// while it handles a request have reached their handler when the call
// returns. A notification handler that waits for the answer to a call of
// its own does not deadlock the connection (see
// [ConnOptions.MaxQueuedNotifications]).
//
// When the peer ends its input, the requests already read are still
// answered before the connection shuts down ([ConnOptions.DrainTimeout]).
package jsonrpc
