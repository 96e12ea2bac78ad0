package mcp

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// TestResourceTemplateVars checks that a template's handler gets the
// variables the server matched, percent-decoded, in req.TemplateVars, in
// both eras and over stdio-like and HTTP transports, and that
// req.Extra stays what the transport knows: nil in memory, the HTTP
// request over HTTP.
func TestResourceTemplateVars(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	read := func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		text := fmt.Sprintf("%v extra=%t", req.TemplateVars, req.Extra != nil)
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Text: text}}}, nil
	}
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "greeting://{name}", Name: "greeting"}, read))
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"}, read))
	must(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "search://q{?term,lang}", Name: "search"}, read))
	must(t, s.AddResource(&Resource{URI: "fixed://one", Name: "fixed"}, read))
	h := NewStreamableHTTPHandler(s, nil)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	reads := []struct{ uri, vars string }{
		{"greeting://Ada%20Lovelace", "map[name:Ada Lovelace]"},
		{"greeting://%E2%82%AC%2F", "map[name:€/]"},
		{"file:///docs/read%20me.txt", "map[path:docs/read me.txt]"},
		{"search://q?term=go%2Bmcp&lang=en", "map[lang:en term:go+mcp]"},
		{"fixed://one", "map[]"}, // a fixed resource: no variables
	}
	sessions := []struct {
		name  string
		extra bool // whether the transport adds data of its own
		open  func(t *testing.T) *ClientSession
	}{
		{"memory/handshake", false, func(t *testing.T) *ClientSession {
			cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: EraHandshake}))
			return cs
		}},
		{"memory/2026-07-28", false, func(t *testing.T) *ClientSession { return modernPair(t, s, nil) }},
		{"http/handshake", true, func(t *testing.T) *ClientSession { return httpSession(t, srv.URL, EraHandshake) }},
		{"http/2026-07-28", true, func(t *testing.T) *ClientSession { return httpSession(t, srv.URL, EraModern) }},
	}
	for _, sess := range sessions {
		t.Run(sess.name, func(t *testing.T) {
			cs := sess.open(t)
			for _, r := range reads {
				res, err := cs.ReadResource(t.Context(), &ReadResourceParams{URI: r.uri})
				if err != nil {
					t.Errorf("%s: %v", r.uri, err)
					continue
				}
				want := fmt.Sprintf("%s extra=%t", r.vars, sess.extra)
				if got := res.Contents[0].Text; got != want {
					t.Errorf("%s: handler saw %q; want %q", r.uri, got, want)
				}
			}
		})
	}
}

// httpSession connects a client of era to the Streamable HTTP server at
// url and closes it at the end of the test.
func httpSession(t *testing.T, url string, era Era) *ClientSession {
	t.Helper()
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: era})
	cs, err := c.Connect(t.Context(), &transport.StreamableClientTransport{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cs.Wait() })
	return cs
}
