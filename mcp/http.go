//go:build !mcpkit_nohttp

package mcp

// What package mcp does with HTTP: left out of a program built with the
// mcpkit_nohttp tag, which links no net/http (nohttp.go).

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// RequestExtra carries what the transport knows about an incoming message,
// for example the HTTP request that carried it. It is nil for transports
// that add nothing, such as stdio.
type RequestExtra struct {
	// Value is the transport's data, as set on jsonrpc.Request.Extra: a
	// [*github.com/mcpkit/mcpkit/transport.HTTPRequestInfo] for a message that arrived over HTTP.
	Value any
	// Header holds the headers of the HTTP request that carried the
	// message, or is nil when it did not arrive over HTTP. Do not modify
	// it.
	Header http.Header
}

// checkHeaderParams checks the Mcp-Param headers of a tools/call against
// its arguments: every marked argument present (and not null) must come
// with its header, carrying the same value. It returns a -32020 error
// naming the first disagreement.
func checkHeaderParams(params []headerParam, header http.Header, arguments json.RawMessage) error {
	var args map[string]any
	if len(arguments) > 0 {
		if err := json.Unmarshal(arguments, &args); err != nil {
			return nil // the arguments are refused elsewhere
		}
	}
	for _, p := range params {
		v := argumentAt(args, p.path)
		if v == nil {
			continue // absent: no header is expected
		}
		name := "Mcp-Param-" + p.name
		values := header.Values(name)
		if len(values) == 0 {
			return headerMismatch("missing " + name + " header")
		}
		got, ok := mcpheader.Decode(values[0])
		if len(values) != 1 || !ok {
			return headerMismatch(name + " header value is not valid")
		}
		if !sameHeaderValue(p.typ, got, v) {
			return headerMismatch(name + " header does not match the body")
		}
	}
	return nil
}

// paramHeaders returns the Mcp-Param headers of a call's arguments, for
// the tool's x-mcp-header marks: one per argument present and not null.
func paramHeaders(marks []headerParam, arguments json.RawMessage) http.Header {
	if len(marks) == 0 || len(arguments) == 0 {
		return nil
	}
	var args map[string]any
	if json.Unmarshal(arguments, &args) != nil {
		return nil
	}
	h := http.Header{}
	for _, p := range marks {
		var s string
		switch v := argumentAt(args, p.path).(type) {
		case string:
			s = mcpheader.Encode(v)
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			continue
		}
		h.Set("Mcp-Param-"+p.name, s)
	}
	return h
}

// withParamHeaders returns ctx making the HTTP client transports send
// the Mcp-Param headers of a call's arguments (see paramHeaders).
func withParamHeaders(ctx context.Context, marks []headerParam, arguments json.RawMessage) context.Context {
	if h := paramHeaders(marks, arguments); h != nil {
		return transport.WithHTTPHeader(ctx, h)
	}
	return ctx
}

// authRefused reports whether err is an HTTP transport's 401 or 403.
func authRefused(err error) bool {
	var se *transport.HTTPStatusError
	return errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden)
}

// requestHeader returns the headers of the HTTP request that carried a
// message whose jsonrpc.Request.Extra is extra, or nil.
func requestHeader(extra any) http.Header {
	if info, ok := extra.(*transport.HTTPRequestInfo); ok {
		return info.Header
	}
	return nil
}

// httpClientURL returns the URL of t and whether it is a Streamable HTTP
// transport, when t is an HTTP client transport (ok).
func httpClientURL(t transport.Transport) (url string, streamable, ok bool) {
	switch t := t.(type) {
	case *transport.StreamableClientTransport:
		return t.URL, true, true
	case *transport.SSEClientTransport:
		return t.URL, false, true
	}
	return "", false, false
}

// maxSafeInteger is the largest integer a JavaScript number holds exactly.
const maxSafeInteger = 1<<53 - 1

// argumentAt returns the value at path in decoded arguments, or nil.
func argumentAt(args map[string]any, path []string) any {
	var v any = args
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func headerMismatch(msg string) error {
	return &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + msg}
}

// sameHeaderValue reports whether the header text h mirrors the argument
// v of a property of type typ; integers compare as numbers.
func sameHeaderValue(typ, h string, v any) bool {
	switch typ {
	case "string":
		s, ok := v.(string)
		return ok && s == h
	case "boolean":
		b, ok := v.(bool)
		return ok && strconv.FormatBool(b) == h
	case "integer":
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || math.Abs(n) > maxSafeInteger {
			return false
		}
		f, err := strconv.ParseFloat(h, 64)
		return err == nil && f == n
	}
	return false
}
