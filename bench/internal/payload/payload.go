// Package payload holds the large tool result that every benchmarked
// server returns from its "large" tool, so that all of them send the same
// bytes.
package payload

import "strings"

// LargeSize is the length in bytes of [Large]: 1 MiB.
const LargeSize = 1 << 20

// Large is the text of the "large" tool's result: LargeSize bytes of
// ASCII that need no escaping in JSON, so that every encoder writes it
// as is.
var Large = strings.Repeat("0123456789abcdef", LargeSize/16)
