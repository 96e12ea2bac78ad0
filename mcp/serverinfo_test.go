package mcp

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// TestServerInfoInResults: a server of the stateless era names itself in
// the _meta of every result (the specification's SHOULD), unless told not
// to or a Middleware named another; a client reads it from each result
// (in its hand-written decoders, twice to use what the first kept); a
// result of the handshake era does not carry it.
func TestServerInfoInResults(t *testing.T) {
	checkGoroutines(t)
	impersonate := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req Request) (Result, error) {
			res, err := next(ctx, req)
			if r, ok := res.(*CallToolResult); ok && err == nil {
				r.Meta.ServerInfo = &Implementation{Name: "other", Version: "9"}
			}
			return res, err
		}
	}
	for _, c := range []struct {
		name     string
		opts     ServerOptions
		version  string // the client's
		wantCall string // the name in a tools/call result, "" for none
		wantList string // in a tools/list result
	}{
		{"2026-07-28", ServerOptions{}, Version20260728, "named", "named"},
		{"omitted", ServerOptions{OmitServerInfo: true}, Version20260728, "", ""},
		{"set by a middleware", ServerOptions{Middleware: []Middleware{impersonate}}, Version20260728, "other", "named"},
		{"handshake era", ServerOptions{}, Version20251125, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "named", Version: "1.2"}, &c.opts)
			type none struct{}
			if err := AddTool(s, &Tool{Name: "hi"}, func(context.Context, *CallToolRequest, none) (string, error) {
				return "hello", nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, pipe := range []bool{false, true} {
				var cs *ClientSession
				var wire func() string
				if pipe {
					cs, wire = pipePair(t, s, c.version)
				} else {
					cs = pairWith(t, s, &ClientOptions{ProtocolVersion: c.version})
				}
				for range 2 {
					res, err := cs.CallTool(t.Context(), &CallToolParams{Name: "hi"})
					if err != nil {
						t.Fatal(err)
					}
					if got := serverName(res.Meta.ServerInfo); got != c.wantCall || res.Content[0].(*TextContent).Text != "hello" {
						t.Fatalf("pipe %v: tools/call result named %q (%v), want %q", pipe, got, res.Content, c.wantCall)
					}
					list, err := cs.ListTools(t.Context(), nil)
					if err != nil {
						t.Fatal(err)
					}
					if got := serverName(list.Meta.ServerInfo); got != c.wantList || len(list.Tools) != 1 {
						t.Fatalf("pipe %v: tools/list result named %q, want %q", pipe, got, c.wantList)
					}
				}
				if pipe {
					sent := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"named","version":"1.2"}},"resultType":"complete","content"`
					if w := wire(); strings.Contains(w, sent) != (c.wantCall == "named") {
						t.Fatalf("the server wrote %s", w)
					}
				}
			}
		})
	}
}

// serverName is the name of info, or "" for none.
func serverName(info *Implementation) string {
	if info == nil {
		return ""
	}
	return info.Name
}

// pipePair connects a client of version to s over a pair of pipes (the
// encoding of the line transports); wire closes the client and returns
// what the server wrote.
func pipePair(t *testing.T, s *Server, version string) (cs *ClientSession, wire func() string) {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	teeR, teeW := io.Pipe()
	copied := make(chan string)
	go func() {
		var b strings.Builder
		io.Copy(&b, teeR)
		copied <- b.String()
	}()
	ss, err := s.Connect(t.Context(), &transport.IOTransport{Reader: c2sR, Writer: io.MultiWriter(s2cW, teeW)})
	if err != nil {
		t.Fatal(err)
	}
	cs, err = NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{ProtocolVersion: version}).
		Connect(t.Context(), &transport.IOTransport{Reader: s2cR, Writer: c2sW})
	if err != nil {
		t.Fatal(err)
	}
	wire = sync.OnceValue(func() string {
		cs.Close()
		ss.Wait()
		s2cW.Close()
		teeW.Close()
		return <-copied
	})
	t.Cleanup(func() { wire() })
	return cs, wire
}

// TestOmitClientInfo: a client of the stateless era names itself in every
// request's _meta unless told not to.
func TestOmitClientInfo(t *testing.T) {
	checkGoroutines(t)
	for _, omit := range []bool{false, true} {
		var got []*Implementation
		var mu sync.Mutex
		record := func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, req Request) (Result, error) {
				mu.Lock()
				got = append(got, req.Parameters().meta().ClientInfo)
				mu.Unlock()
				return next(ctx, req)
			}
		}
		s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Middleware: []Middleware{record}})
		type none struct{}
		if err := AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, none) (string, error) { return "", nil }); err != nil {
			t.Fatal(err)
		}
		cs := modernPair(t, s, &ClientOptions{OmitClientInfo: omit})
		for range 2 {
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		}
		cs.Close()
		mu.Lock()
		if len(got) < 3 { // server/discover and the two lists
			t.Fatalf("omit %v: %d requests seen", omit, len(got))
		}
		for i, info := range got {
			if (info == nil) != omit || info != nil && info.Name != "modern" {
				t.Fatalf("omit %v: request %d named %+v", omit, i, info)
			}
		}
		mu.Unlock()
	}
}
