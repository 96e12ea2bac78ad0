package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// loginServer is an MCP server that requires a token, with its own
// authorization server on the same origin.
func loginServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(s, nil)
	var logins atomic.Int32
	mux := http.NewServeMux()
	var srv *httptest.Server
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	created := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL + "/as"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{
			"issuer":                                srv.URL + "/as",
			"authorization_endpoint":                srv.URL + "/as/authorize",
			"token_endpoint":                        srv.URL + "/as/token",
			"registration_endpoint":                 srv.URL + "/as/register",
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /as/register", func(w http.ResponseWriter, r *http.Request) {
		created(w, map[string]any{"client_id": "cli"})
	})
	mux.HandleFunc("GET /as/authorize", func(w http.ResponseWriter, r *http.Request) {
		logins.Add(1)
		to, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		to.RawQuery = url.Values{"code": {"c"}, "state": {r.URL.Query().Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /as/token", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"access_token": "good", "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &logins
}

func TestLogin(t *testing.T) {
	srv, logins := loginServer(t)
	tokenFile := filepath.Join(t.TempDir(), "tokens.json")
	// The "browser" follows the authorization server's redirect to the
	// loopback listener.
	browse := func(ctx context.Context, authURL string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	for i := range 2 {
		a, stop, err := newAuthorizer(tokenFile, "127.0.0.1:0", browse, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = run(t.Context(), &transport.StreamableClientTransport{URL: srv.URL + "/mcp", Authorizer: a}, mcp.EraAuto, "", "")
		stop()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	// The second run used the stored token.
	if n := logins.Load(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
	fi, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
}

func TestLoginRefusedWithoutBrowser(t *testing.T) {
	srv, _ := loginServer(t)
	a, stop, err := newAuthorizer(filepath.Join(t.TempDir(), "t.json"), "127.0.0.1:0", func(context.Context, string) error {
		return context.Canceled
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	err = run(t.Context(), &transport.StreamableClientTransport{URL: srv.URL + "/mcp", Authorizer: a}, mcp.EraAuto, "", "")
	if err == nil || !strings.Contains(err.Error(), "opening the authorization URL") {
		t.Errorf("run: %v, want the agent's failure", err)
	}
}
