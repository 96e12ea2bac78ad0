package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// protected serves an MCP server at /mcp (Streamable HTTP) and /sse
// (HTTP+SSE) that needs the token "good", with the Protected Resource
// Metadata naming resource and an authorization server on the same
// origin.
func protected(t *testing.T, resource string) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	streamable := mcp.NewStreamableHTTPHandler(s, nil)
	sse := mcp.NewSSEHandler(s, nil)
	var srv *httptest.Server
	js := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", func(w http.ResponseWriter, r *http.Request) {
		res := resource
		if res == "" {
			res = srv.URL
		}
		js(w, 200, map[string]any{"resource": res, "authorization_servers": []string{srv.URL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{
			"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize", "token_endpoint": srv.URL + "/token",
			"registration_endpoint": srv.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		js(w, 201, map[string]any{"client_id": "c"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		to, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		to.RawQuery = url.Values{"code": {"x"}, "state": {r.URL.Query().Get("state")}, "iss": {srv.URL}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"access_token": "good", "token_type": "Bearer"})
	})
	guard := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer good" {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("/mcp", guard(streamable))
	mux.Handle("/sse", guard(sse))
	mux.Handle("/sse/", guard(sse))
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func newAuthorizer() *auth.Authorizer {
	return &auth.Authorizer{Agent: &auth.HeadlessAgent{}, RedirectURL: "http://127.0.0.1:1/cb"}
}

func TestTransportsAuthorize(t *testing.T) {
	srv := protected(t, "")
	for _, tc := range []struct {
		name string
		t    transport.Transport
	}{
		{"streamable", &transport.StreamableClientTransport{URL: srv.URL + "/mcp", Authorizer: newAuthorizer()}},
		{"sse", &transport.SSEClientTransport{URL: srv.URL + "/sse", Authorizer: newAuthorizer()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), tc.t)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)})
			if err != nil || res.IsError {
				t.Fatalf("CallTool: %v %v", res, err)
			}
		})
	}
}

func TestTransportAuthorizationErrorReachesConnect(t *testing.T) {
	srv := protected(t, "https://evil.example.com/mcp")
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	_, err := c.Connect(t.Context(), &transport.StreamableClientTransport{URL: srv.URL + "/mcp", Authorizer: newAuthorizer()})
	var ae *auth.AuthorizationError
	if !errors.As(err, &ae) || !errors.Is(err, auth.ErrResourceMismatch) || ae.Step != "discovery" {
		t.Fatalf("Connect: %v; want an *auth.AuthorizationError wrapping ErrResourceMismatch", err)
	}
}
