package rpclink

import "sync/atomic"

// FrameRoom is the room a [Framed] value keeps before its encoding:
// enough for the envelope of a response, {"jsonrpc":"2.0","id":<id>,"result":,
// with an id of up to 32 bytes.
const FrameRoom = 64

// room is what Room slices: never written (see Room).
var room [FrameRoom]byte

// Room returns FrameRoom bytes with no capacity to spare, to append an
// encoding to: the first append moves them to memory of its own, sized
// for what it appends, so the array they come from is never written.
func Room() []byte { return room[:FrameRoom:FrameRoom] }

// Framed is an encoded JSON value, Buf[Off:], with room before it,
// Buf[:Off], into which package jsonrpc writes the envelope of the
// message that carries it (and its closing brace after it, when Buf has
// the capacity), so that the message is encoded without a copy of the
// value. Package mcp encodes results so (see jsonrpc's EncodeMessage).
// The room is written once: the first encoding claims it; any other
// copies the value as usual.
type Framed struct {
	Buf []byte
	Off int

	claimed atomic.Bool
}

// Value returns the encoded value.
func (f *Framed) Value() []byte { return f.Buf[f.Off:] }

// Claim reports whether the caller may write into the room of f (and
// after its value): true once.
func (f *Framed) Claim() bool { return f.Off > 0 && f.claimed.CompareAndSwap(false, true) }
