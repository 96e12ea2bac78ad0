package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

type tenantKey struct{}

// TestHandlerSeesHTTPRequestContext checks that the values HTTP middleware
// puts in the request context, the principal, and the request's headers
// reach the handler of a request carried by that POST, over every HTTP
// transport, stateful and stateless, in both eras (a 2026-07-28 exchange
// gets them through its context's parent, a session's request through
// the HTTPRequestInfo).
func TestHandlerSeesHTTPRequestContext(t *testing.T) {
	checkGoroutines(t)
	tests := []struct {
		name    string
		era     Era
		handler func(*Server) (http.Handler, func())
		client  func(url string, h http.Header) transport.Transport
	}{
		{"streamable", EraAuto, streamableHandler(nil), func(url string, h http.Header) transport.Transport {
			return &transport.StreamableClientTransport{URL: url, Header: h}
		}},
		{"streamable handshake", EraHandshake, streamableHandler(nil), func(url string, h http.Header) transport.Transport {
			return &transport.StreamableClientTransport{URL: url, Header: h}
		}},
		{"streamable stateless", EraAuto, streamableHandler(&transport.StreamableHTTPOptions{Stateless: true}), func(url string, h http.Header) transport.Transport {
			return &transport.StreamableClientTransport{URL: url, Header: h}
		}},
		{"streamable stateless handshake", EraHandshake, streamableHandler(&transport.StreamableHTTPOptions{Stateless: true}), func(url string, h http.Header) transport.Transport {
			return &transport.StreamableClientTransport{URL: url, Header: h}
		}},
		{"sse", EraAuto, sseHandler, func(url string, h http.Header) transport.Transport {
			return &transport.SSEClientTransport{URL: url, Header: h}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			must(t, s.AddTool(&Tool{Name: "who"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
				var header string
				if req.Extra != nil && req.Extra.Header != nil {
					header = req.Extra.Header.Get("X-Tenant")
				}
				text := fmt.Sprintf("%v|%s|%s", ctx.Value(tenantKey{}), transport.PrincipalFromContext(ctx), header)
				return &CallToolResult{Content: []Content{&TextContent{Text: text}}}, nil
			}))
			h, closeH := tt.handler(s)
			defer closeH()
			auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := context.WithValue(r.Context(), tenantKey{}, "acme")
				ctx = transport.WithPrincipal(ctx, "ada")
				h.ServeHTTP(w, r.WithContext(ctx))
			})
			srv := httptest.NewServer(auth)
			defer srv.Close()
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{Era: tt.era})
			cs, err := c.Connect(context.Background(), tt.client(srv.URL, http.Header{"X-Tenant": {"acme-header"}}))
			must(t, err)
			defer cs.Close()
			if want := tt.era == EraHandshake || tt.name == "sse"; (cs.Era() == EraHandshake) != want {
				t.Fatalf("session of era %v", cs.Era())
			}
			res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "who"})
			must(t, err)
			if got := res.Content[0].(*TextContent).Text; got != "acme|ada|acme-header" {
				t.Errorf("handler saw %q; want acme|ada|acme-header", got)
			}
		})
	}
}
