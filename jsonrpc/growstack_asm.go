//go:build amd64 || arm64

package jsonrpc

// growStack gives the calling goroutine a stack of at least 16 KiB at
// once; it is written in assembly (growstack_*.s) as a function whose
// frame is that large and which does nothing, so the runtime grows the
// stack in its prologue, while the stack is shallow, and nothing is
// zeroed.
//
// A goroutine starts with a 2 KiB stack, and a handler's decode,
// dispatch and encode reach past 8 KiB: grown on demand, the stack is
// copied two or three times at depth, and each copy walks every frame
// on it (in BenchmarkInProcess, a sixth of a call's instructions). Grown
// here, at the handler goroutine's first frame, it is copied once with
// nothing to walk.
func growStack()
