//go:build unix && !linux

package transport

import (
	"io"
	"os"
	"syscall"
)

// stdinReader returns standard input as a reader that its close function
// interrupts, or nil where that cannot be arranged. blocking reports
// whether reads wait in a blocking system call rather than in the
// runtime's poller.
//
// Here it is a duplicate of descriptor 0 in non-blocking mode, which the
// Go runtime's poller serves, so closing it interrupts a read under way.
// Non-blocking mode belongs to the open file, so it is visible through
// descriptor 0 as well; an MCP server reads standard input only through
// its transport, so nothing else in the program notices.
func stdinReader() (r io.Reader, closeFn func() error, blocking bool) {
	fd, err := syscall.Dup(syscall.Stdin)
	if err != nil {
		return nil, nil, false
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, nil, false
	}
	f := os.NewFile(uintptr(fd), "/dev/stdin")
	return f, f.Close, false
}

// stdoutWriter returns nil here: os.Stdout is written directly, since
// switching a duplicate of descriptor 1 to non-blocking mode would switch
// the open file shared with the rest of the program (and, on a terminal,
// with the shell).
func stdoutWriter() (w io.Writer, closeFn func() error) { return nil, nil }
