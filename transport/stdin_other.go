//go:build !unix

package transport

import "io"

// stdinReader is not available here; standard input is read through a
// detachedReader instead.
func stdinReader() (r io.Reader, closeFn func() error, blocking bool) { return nil, nil, false }

// stdoutWriter is not available here; os.Stdout is written directly.
func stdoutWriter() (w io.Writer, closeFn func() error) { return nil, nil }
