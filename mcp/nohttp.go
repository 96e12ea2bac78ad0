//go:build mcpkit_nohttp

package mcp

// The HTTP parts of package mcp (http.go) in a program built with the
// mcpkit_nohttp tag, which speaks no HTTP and links no net/http: the
// transports of package transport that it has are stdio, command and
// in-memory ones.

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/transport"
)

// RequestExtra carries what the transport knows about an incoming message,
// for example the HTTP request that carried it. It is nil for transports
// that add nothing, such as stdio.
type RequestExtra struct {
	// Value is the transport's data, as set on jsonrpc.Request.Extra: a
	// [*github.com/mcpkit/mcpkit/transport.HTTPRequestInfo] for a message that arrived over HTTP.
	Value any
	// Header is nil: a program built with the mcpkit_nohttp tag speaks
	// no HTTP. (Built without the tag, it is an http.Header holding the
	// headers of the HTTP request that carried the message.)
	Header map[string][]string
}

// checkHeaderParams finds nothing to check: without HTTP no request
// carries headers.
func checkHeaderParams([]headerParam, map[string][]string, json.RawMessage) error { return nil }

// withParamHeaders returns ctx: no transport sends headers.
func withParamHeaders(ctx context.Context, _ []headerParam, _ json.RawMessage) context.Context {
	return ctx
}

// authRefused reports false: no transport answers with HTTP statuses.
func authRefused(error) bool { return false }

// requestHeader returns nil: no message arrives over HTTP.
func requestHeader(any) map[string][]string { return nil }

// httpClientURL reports that t is not an HTTP client transport: none is.
func httpClientURL(transport.Transport) (url string, streamable, ok bool) { return "", false, false }
