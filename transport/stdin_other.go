//go:build !unix

package transport

import "os"

// pollableStdin is not available here; standard input is read through a
// detachedReader instead.
func pollableStdin() *os.File { return nil }
