// Package hostile is a kit for tests that play a careless or malicious MCP
// peer against the SDK. Nothing here follows the protocol on its own; that
// is the point: a test scripts every byte, every stall and every
// disappearance.
//
// The kit has three pieces:
//
//   - [HTTPPeer], a raw Streamable HTTP client of one session: it posts
//     exactly the bodies a test writes, opens and resumes streams
//     (Last-Event-ID), drops them half-read, or vanishes without DELETE.
//     [ReadEvent] and [ReadMessageEvent] read the SSE events it gets back.
//   - [StdioPeer], a raw newline-delimited JSON-RPC peer. Started on a
//     server program with [StartCommand], it is a hostile client: it
//     writes raw lines, pipelines requests, floods, closes its input (end
//     of input) while still reading, or stops reading altogether. Wrapped
//     around a test binary's own standard input and output, it is a
//     hostile server: a test points a client at [ScriptCommand], which
//     re-executes the test binary, whose TestMain runs the named [Script]
//     through [RunScript].
//   - [HTTPServer], a hostile Streamable HTTP server: an http.Handler whose
//     answer to each request a test scripts (status, headers, JSON body,
//     SSE events with retry fields or batches of requests, stalls), and
//     which counts the requests it gets, so a test can bound a client's
//     reconnections.
//
// The attack tests of this package use the kit against the real pieces:
// the examples' binaries, mcp.NewStreamableHTTPHandler, and mcp.Client over
// the stdio and HTTP transports.
package hostile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HTTPPeer is a raw Streamable HTTP client of one session.
type HTTPPeer struct {
	// URL is the MCP endpoint.
	URL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// SessionID is sent as Mcp-Session-Id when set; Initialize sets it.
	SessionID string
	// Version is sent as MCP-Protocol-Version when set; Initialize sets it.
	Version string
}

func (p *HTTPPeer) client() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	return http.DefaultClient
}

func (p *HTTPPeer) headers(req *http.Request) {
	if p.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", p.SessionID)
	}
	if p.Version != "" {
		req.Header.Set("Mcp-Protocol-Version", p.Version)
	}
}

// Post sends body as a POST that accepts JSON and SSE answers. The caller
// owns the response body: it may read it whole, part of it, or drop it.
func (p *HTTPPeer) Post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	p.headers(req)
	return p.client().Do(req)
}

// Get opens the session's standalone stream, or resumes a stream when
// lastEventID is set.
func (p *HTTPPeer) Get(ctx context.Context, lastEventID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	p.headers(req)
	return p.client().Do(req)
}

// Delete ends the session.
func (p *HTTPPeer) Delete(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, p.URL, nil)
	if err != nil {
		return err
	}
	p.headers(req)
	resp, err := p.client().Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Initialize performs the handshake with revision version and records the
// session: initialize, its answer read whole, then
// notifications/initialized.
func (p *HTTPPeer) Initialize(ctx context.Context, version string) error {
	resp, err := p.Post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"hostile","version":"0"}}}`)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("hostile: initialize: %s: %s", resp.Status, body)
	}
	p.SessionID = resp.Header.Get("Mcp-Session-Id")
	p.Version = version
	resp, err = p.Post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// Event is one SSE event.
type Event struct {
	ID, Name, Data string
}

// ReadEvent reads the next event from an SSE stream, skipping comments and
// events without a data field. An event whose data is empty, such as the
// priming event servers send to give a resumable stream its first id, is
// returned; [ReadMessageEvent] skips it too.
func ReadEvent(r *bufio.Reader) (Event, error) {
	var ev Event
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" {
				return ev, io.EOF
			}
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(data) > 0 {
				ev.Data = strings.Join(data, "\n")
				return ev, nil
			}
			ev = Event{}
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			ev.ID = value
		case "event":
			ev.Name = value
		case "data":
			data = append(data, value)
		}
	}
}

// ReadMessageEvent reads the next event from an SSE stream that carries a
// message: it skips comments and events with empty data, such as priming
// events.
func ReadMessageEvent(r *bufio.Reader) (Event, error) {
	for {
		ev, err := ReadEvent(r)
		if err != nil || strings.TrimSpace(ev.Data) != "" {
			return ev, err
		}
	}
}
