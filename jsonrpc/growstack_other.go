//go:build !amd64 && !arm64

package jsonrpc

// growStack does nothing on this architecture: the stack grows on
// demand (see growstack_asm.go).
func growStack() {}
