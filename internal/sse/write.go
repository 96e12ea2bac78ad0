// Package sse reads and writes Server-Sent Events as MCP's HTTP transports
// use them: one JSON-RPC message per "message" event, event ids for
// resumption, and "retry" hints for reconnecting clients.
package sse

import (
	"bytes"
	"strconv"
	"time"
)

// Event is one server-sent event.
type Event struct {
	// ID is the event's id field; empty means none.
	ID string
	// Name is the event field; empty means "message".
	Name string
	// Data is the event's data. A line break inside Data becomes a
	// separate data line on the wire.
	Data []byte
	// Retry, if positive, is the reconnection delay sent in a retry field,
	// rounded down to milliseconds.
	Retry time.Duration
}

// AppendEvent appends the wire form of e, ending with the blank line that
// dispatches it, to b. Line breaks in ID and Name are not representable
// and are dropped.
func AppendEvent(b []byte, e *Event) []byte {
	if e.Name != "" {
		b = append(b, "event: "...)
		b = appendField(b, e.Name)
		b = append(b, '\n')
	}
	if e.ID != "" {
		b = append(b, "id: "...)
		b = appendField(b, e.ID)
		b = append(b, '\n')
	}
	if e.Retry > 0 {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, e.Retry.Milliseconds(), 10)
		b = append(b, '\n')
	}
	data := e.Data
	for {
		b = append(b, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			b = append(b, data...)
			b = append(b, '\n')
			break
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(b, '\n')
}

// appendField appends s without the line breaks and NULs the format cannot
// carry in a field value.
func appendField(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\r', '\n', 0:
		default:
			b = append(b, c)
		}
	}
	return b
}
