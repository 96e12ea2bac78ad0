package interop

import (
	"encoding/json"
	"fmt"
	"strings"
)

// wireError is a JSON-RPC error response seen on the wire, or a line the
// transport could not decode or send.
type wireError struct {
	Dir     string // "recv" or "send"
	ID      string
	Code    int
	Message string
	Line    string
}

func (e wireError) String() string {
	return fmt.Sprintf("%s id=%s code=%d %q", e.Dir, e.ID, e.Code, e.Message)
}

// wireStats counts the messages of a transport.LoggingTransport log and
// extracts every error in it.
type wireStats struct {
	Sent, Received int
	Methods        map[string]int // "send tools/call", "recv sampling/createMessage", ...
	Errors         []wireError
	// Cancelled holds the requestId of each notifications/cancelled sent.
	Cancelled []string
	// Answered holds the id of each response received.
	Answered map[string]bool
}

func parseWire(log string) wireStats {
	st := wireStats{Methods: map[string]int{}, Answered: map[string]bool{}}
	for line := range strings.Lines(log) {
		line = strings.TrimSuffix(line, "\n")
		dir, rest, _ := strings.Cut(line, " ")
		switch dir {
		case "send":
			st.Sent++
		case "recv":
			st.Received++
		default:
			st.Errors = append(st.Errors, wireError{Dir: "?", Code: 0, Message: "unparsable log line", Line: line})
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&m); err != nil {
			// "recv error: …" (undecodable input) or a failed send.
			st.Errors = append(st.Errors, wireError{Dir: dir, Message: "transport: " + rest, Line: line})
			continue
		}
		if tailText := strings.TrimSpace(rest[dec.InputOffset():]); tailText != "" {
			st.Errors = append(st.Errors, wireError{Dir: dir, ID: string(m.ID), Message: "transport: " + tailText, Line: line})
		}
		if m.Method != "" {
			st.Methods[dir+" "+m.Method]++
		}
		if dir == "send" && m.Method == "notifications/cancelled" {
			st.Cancelled = append(st.Cancelled, string(m.Params.RequestID))
		}
		if dir == "recv" && m.Method == "" && len(m.ID) > 0 {
			st.Answered[string(m.ID)] = true
		}
		if m.Error != nil {
			st.Errors = append(st.Errors, wireError{Dir: dir, ID: string(m.ID), Code: m.Error.Code, Message: m.Error.Message, Line: line})
		}
	}
	return st
}

// expectedError describes a protocol error a test provokes on purpose.
type expectedError struct {
	Why     string // why it is expected, for the log
	Dir     string
	Codes   []int  // any of these
	Message string // a substring of the error message
}

func (x expectedError) matches(e wireError) bool {
	if x.Dir != e.Dir || !strings.Contains(e.Message, x.Message) {
		return false
	}
	for _, c := range x.Codes {
		if c == e.Code {
			return true
		}
	}
	return false
}
