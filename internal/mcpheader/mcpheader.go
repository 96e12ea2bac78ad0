// Package mcpheader encodes and decodes the values of the HTTP headers that
// mirror body values in protocol revision 2026-07-28 (Mcp-Name,
// Mcp-Param-*). Package transport writes Mcp-Name and checks it against the
// body, package mcp writes and checks the Mcp-Param-* headers of tools'
// x-mcp-header arguments, and package auth reads them to find the tool a
// request calls; none of them exports the encoding, which users never need.
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

// Encode returns v as the value of a header that mirrors a body value: as it is when it is plain ASCII (visible characters and
// inner spaces), else in the Base64 sentinel form =?base64?...?=, which
// also carries a plain value that looks like that form.
func Encode(v string) string {
	plain := v != "" && v[0] != ' ' && v[len(v)-1] != ' ' &&
		!(len(v) >= len("=?base64??=") && v[:len("=?base64?")] == "=?base64?" && v[len(v)-2:] == "?=")
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			plain = false
		}
	}
	if plain || v == "" {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}
