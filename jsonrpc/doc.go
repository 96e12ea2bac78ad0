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
// costs a single goroutine. The reading goroutine never waits for the peer
// to read: the error answers it produces itself are written by a worker
// of their own, through a bounded queue ([ConnOptions.MaxQueuedErrors]).
//
// When the peer ends its input, the requests already read are still
// answered before the connection shuts down ([ConnOptions.DrainTimeout]).
package jsonrpc
