package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Request is one request an [HTTPServer] received, with its body read.
type Request struct {
	// HTTP is the request; its body has been read into Body.
	HTTP *http.Request
	// Body is the request's body.
	Body []byte
	// N counts the requests of the same method so far, this one included
	// (the first GET has N 1).
	N int
}

// Method is the JSON-RPC method of the first message of the body, or "".
func (r *Request) Method() string {
	m := r.first()
	var s struct {
		Method string `json:"method"`
	}
	json.Unmarshal(m, &s)
	return s.Method
}

// ID is the raw JSON-RPC id of the first message of the body, or "".
func (r *Request) ID() string {
	var s struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(r.first(), &s)
	return string(s.ID)
}

func (r *Request) first() []byte {
	b := bytes.TrimSpace(r.Body)
	if len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) != nil || len(batch) == 0 {
			return nil
		}
		return batch[0]
	}
	return b
}

// Answer is a scripted answer of an [HTTPServer].
type Answer struct {
	// Status is the status code; zero means 200, or 202 when the answer
	// has neither Body nor Events.
	Status int
	// Header is added to the response's headers.
	Header http.Header
	// ContentType is the Content-Type; empty means application/json for
	// a Body, text/event-stream for Events.
	ContentType string
	// Body is written as it is.
	Body string
	// Events are written as SSE events, each flushed.
	Events []SSE
	// Stall keeps the response open after its body or events until the
	// client goes away or the server is closed.
	Stall bool
}

// SSE is one event an [HTTPServer] writes on an event stream. The fields
// left empty are not written.
type SSE struct {
	// ID is the event's id.
	ID string
	// Retry is written as the retry field, such as "0".
	Retry string
	// Data is the event's data, one line.
	Data string
}

// HTTPServer is a scriptable hostile Streamable HTTP server: an
// http.Handler that reads each request's body and writes the [Answer] its
// Script returns. It counts requests per method, and a stalled answer
// ends when the client goes away or [HTTPServer.Close] is called.
type HTTPServer struct {
	// Script decides each answer. It may be called concurrently.
	Script func(r *Request) Answer

	mu     sync.Mutex
	counts map[string]int
	closed chan struct{}
	once   sync.Once
}

// Count is the number of requests of method (such as "GET") received.
func (s *HTTPServer) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

func (s *HTTPServer) closedCh() chan struct{} {
	s.once.Do(func() { s.closed = make(chan struct{}) })
	return s.closed
}

// Close ends every stalled answer, and makes later stalls end at once. It
// must be called at most once.
func (s *HTTPServer) Close() { close(s.closedCh()) }

// ServeHTTP implements http.Handler.
func (s *HTTPServer) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	s.mu.Lock()
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[hr.Method]++
	n := s.counts[hr.Method]
	s.mu.Unlock()
	a := s.Script(&Request{HTTP: hr, Body: body, N: n})
	for k, v := range a.Header {
		w.Header()[k] = v
	}
	ct := a.ContentType
	switch {
	case ct != "":
	case a.Events != nil:
		ct = "text/event-stream"
	case a.Body != "":
		ct = "application/json"
	}
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
		if a.Body == "" && a.Events == nil && !a.Stall {
			status = http.StatusAccepted
		}
	}
	w.WriteHeader(status)
	io.WriteString(w, a.Body)
	for _, ev := range a.Events {
		var b strings.Builder
		if ev.ID != "" {
			fmt.Fprintf(&b, "id: %s\n", ev.ID)
		}
		if ev.Retry != "" {
			fmt.Fprintf(&b, "retry: %s\n", ev.Retry)
		}
		if ev.Data != "" {
			fmt.Fprintf(&b, "data: %s\n", ev.Data)
		}
		b.WriteString("\n")
		io.WriteString(w, b.String())
	}
	http.NewResponseController(w).Flush()
	if a.Stall {
		select {
		case <-hr.Context().Done():
		case <-s.closedCh():
		}
	}
}

// InitializeResult is the body of an answer to an initialize request with
// id (raw JSON) for protocol revision version.
func InitializeResult(id, version string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"` + version + `","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"0"}}}`
}
