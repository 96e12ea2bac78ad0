// Package mcpheader decodes the values of the HTTP headers that mirror
// body values in protocol revision 2026-07-28 (Mcp-Name, Mcp-Param-*).
// Package transport checks them against the body, and package auth reads
// them to find the tool a request calls; neither imports the other.
package mcpheader

import (
	"encoding/base64"
	"strings"
)

// Decode decodes a header value mirroring a body value: Base64 between
// "=?base64?" and "?=", or else the value itself, which must be visible
// ASCII, space or tab. It reports false for a value of neither form.
func Decode(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", false
		}
	}
	return v, true
}
