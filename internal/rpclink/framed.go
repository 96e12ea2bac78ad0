package rpclink

import "sync/atomic"

// The room [Framed] values keep before their encoding.
const (
	// ResultRoom is enough for the envelope of a response,
	// {"jsonrpc":"2.0","id":<id>,"result":, with an id of up to 32 bytes.
	ResultRoom = 64
	// ParamsRoom is enough for that of a request,
	// {"jsonrpc":"2.0","id":<id>,"method":"<method>","params":, with an
	// id and a method of up to 50 bytes together.
	ParamsRoom = 96
)

// room is what Room slices: never written (see Room).
var room [ParamsRoom]byte

// Room returns n bytes (at most ParamsRoom) with no capacity to spare,
// to append an encoding to: the first append moves them to memory of its
// own, sized for what it appends, so the array they come from is never
// written.
func Room(n int) []byte { return room[:n:n] }

// Framed is an encoded JSON value, Buf[Off:], with room before it,
// Buf[:Off], into which package jsonrpc writes the envelope of the
// message that carries it (and its closing brace after it, when Buf has
// the capacity), so that the message is encoded without a copy of the
// value. Package mcp encodes results and the params of its calls so (see
// jsonrpc's EncodeMessage and CallFramed).
// The room is written once: the first encoding claims it; any other
// copies the value as usual.
type Framed struct {
	Buf []byte
	Off int32 // at most ParamsRoom; an int32 keeps the struct at 32 bytes

	claimed atomic.Bool
}

// Set makes f hold the value buf[off:], with buf[:off] as its room,
// unclaimed.
func (f *Framed) Set(buf []byte, off int) {
	f.Buf, f.Off = buf, int32(off)
	f.claimed.Store(false)
}

// Value returns the encoded value.
func (f *Framed) Value() []byte { return f.Buf[f.Off:] }

// Claim reports whether the caller may write into the room of f (and
// after its value): true once.
func (f *Framed) Claim() bool { return f.Off > 0 && f.claimed.CompareAndSwap(false, true) }

// CallFramed is jsonrpc's Conn.Call for params encoded in a Framed, whose
// room the request's encoding may use (see Framed). It is a
//
//	func(c *jsonrpc.Conn, ctx context.Context, method string, params *Framed) (json.RawMessage, error)
//
// set by package jsonrpc's init and never changed afterwards.
var CallFramed any
