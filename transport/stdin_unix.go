//go:build unix

package transport

import (
	"os"
	"syscall"
)

// pollableStdin returns a duplicate of standard input in non-blocking
// mode, which the Go runtime's poller serves: reads from it cost no extra
// goroutine hand-off, and closing it interrupts a read under way. It
// returns nil when that cannot be arranged.
//
// Non-blocking mode belongs to the open file, so it is visible through
// descriptor 0 as well; an MCP server reads standard input only through
// its transport, so nothing else notices.
func pollableStdin() *os.File {
	fd, err := syscall.Dup(syscall.Stdin)
	if err != nil {
		return nil
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), "/dev/stdin")
}
