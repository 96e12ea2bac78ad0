//go:build amd64 || arm64

package jsonrpc

// growStack gives the calling goroutine a stack of 16 KiB at once; it is
// written in assembly (growstack_*.s) as a function whose frame is 12 KiB
// and which does nothing, so the runtime grows the stack in its
// prologue, while the stack is shallow, and nothing is zeroed.
//
// A goroutine starts with a 2 KiB stack, and a handler's decode,
// dispatch and encode reach past 8 KiB: grown on demand, the stack is
// copied two or three times at depth, and each copy walks every frame
// on it (in BenchmarkInProcess, a sixth of a call's instructions). Grown
// here, at the handler goroutine's first frame, it is copied once with
// nothing to walk. 16 KiB, not more: the runtime keeps stacks of up to
// 16 KiB in a cache of each P's, and larger ones come from the heap (and
// go back to it when the goroutine ends), which cost a call about 4% more
// instructions when the frame was 16 KiB (a 32 KiB stack). A handler that
// goes deeper grows its stack once more, at depth.
func growStack()
