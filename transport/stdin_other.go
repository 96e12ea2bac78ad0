//go:build !unix

package transport

import "io"

// stdinReader is not available here; standard input is read through a
// detachedReader instead.
func stdinReader() (r io.Reader, closeFn func() error, blocking bool) { return nil, nil, false }
