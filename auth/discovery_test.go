package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// pathServer serves JSON documents by path and records the paths asked
// for; other paths are 404.
type pathServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	docs  map[string]func(base string) any
	paths []string
}

func newPathServer(t *testing.T) *pathServer {
	ps := &pathServer{docs: map[string]func(string) any{}}
	ps.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.paths = append(ps.paths, r.URL.Path)
		f := ps.docs[r.URL.Path]
		ps.mu.Unlock()
		if f == nil {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, 200, f(ps.srv.URL))
	}))
	t.Cleanup(ps.srv.Close)
	return ps
}

func (ps *pathServer) requested() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.paths)
}

func asMeta(issuerPath string) func(string) any {
	return func(base string) any {
		return map[string]any{
			"issuer":                           base + issuerPath,
			"authorization_endpoint":           base + "/authorize",
			"token_endpoint":                   base + "/token",
			"code_challenge_methods_supported": []string{"S256"},
		}
	}
}

func TestDiscoverOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prmPath    string // where the PRM is served
		inHeader   bool   // whether the challenge names it
		asPath     string // the issuer's path
		metaPath   string // where the AS metadata is served
		wantPaths  []string
		wantIssuer string
	}{
		{
			name: "header", prmPath: "/custom/prm.json", inHeader: true, metaPath: wellKnownOAuth,
			wantPaths: []string{"/custom/prm.json", wellKnownOAuth},
		},
		{
			name: "path-suffixed", prmPath: wellKnownPRM + "/mcp", metaPath: wellKnownOpenID,
			wantPaths: []string{wellKnownPRM + "/mcp", wellKnownOAuth, wellKnownOpenID},
		},
		{
			name: "root", prmPath: wellKnownPRM, asPath: "/tenant1", metaPath: wellKnownOAuth + "/tenant1",
			wantPaths: []string{wellKnownPRM + "/mcp", wellKnownPRM, wellKnownOAuth + "/tenant1"},
		},
		{
			name: "openid appended", prmPath: wellKnownPRM + "/mcp", asPath: "/tenant1", metaPath: "/tenant1" + wellKnownOpenID,
			wantPaths: []string{wellKnownPRM + "/mcp", wellKnownOAuth + "/tenant1", wellKnownOpenID + "/tenant1", "/tenant1" + wellKnownOpenID},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newPathServer(t)
			ps.docs[tc.prmPath] = func(base string) any {
				return map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base + tc.asPath}}
			}
			ps.docs[tc.metaPath] = asMeta(tc.asPath)
			var ch *Challenge
			if tc.inHeader {
				ch = &Challenge{Scheme: "Bearer", Params: map[string]string{"resource_metadata": ps.srv.URL + tc.prmPath}}
			}
			d, err := Discover(t.Context(), nil, ps.srv.URL+"/mcp", ch)
			if err != nil {
				t.Fatal(err)
			}
			if got := ps.requested(); !slices.Equal(got, tc.wantPaths) {
				t.Errorf("requested %q, want %q", got, tc.wantPaths)
			}
			if d.Resource != ps.srv.URL+"/mcp" || d.Server.Issuer != ps.srv.URL+tc.asPath || d.Defaulted {
				t.Errorf("discovered resource %q issuer %q defaulted %v", d.Resource, d.Server.Issuer, d.Defaulted)
			}
		})
	}
}

func TestDiscoverResourceExactly(t *testing.T) {
	// The resource is used as published: a root resource with a slash
	// keeps it, one without gets none.
	for _, res := range []string{"", "/"} {
		ps := newPathServer(t)
		ps.docs[wellKnownPRM] = func(base string) any {
			return map[string]any{"resource": base + res, "authorization_servers": []string{base}}
		}
		ps.docs[wellKnownOAuth] = asMeta("")
		d, err := Discover(t.Context(), nil, ps.srv.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Resource != ps.srv.URL+res {
			t.Errorf("resource %q, want %q", d.Resource, ps.srv.URL+res)
		}
	}
}

func TestDiscoverLegacy(t *testing.T) {
	t.Run("metadata at the origin", func(t *testing.T) {
		ps := newPathServer(t)
		ps.docs[wellKnownOAuth] = asMeta("")
		d, err := Discover(t.Context(), nil, ps.srv.URL+"/mcp", &Challenge{Scheme: "Bearer", Params: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Resource != "" || d.ResourceMetadata != nil || d.Defaulted || d.Server.AuthorizationEndpoint != ps.srv.URL+"/authorize" {
			t.Errorf("discovered %+v", d)
		}
	})
	t.Run("default endpoints", func(t *testing.T) {
		ps := newPathServer(t)
		d, err := Discover(t.Context(), nil, ps.srv.URL+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Defaulted || d.Server.TokenEndpoint != ps.srv.URL+"/token" || d.Server.RegistrationEndpoint != ps.srv.URL+"/register" {
			t.Errorf("discovered %+v", d.Server)
		}
	})
}

func TestDiscoverFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    error  // errors.Is target, or nil
		wantMsg string // part of the message
	}{
		{name: "oversized", want: ErrTooLarge, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource":"`))
			w.Write([]byte(strings.Repeat("a", MaxDocumentSize)))
			w.Write([]byte(`"}`))
		}},
		{name: "malformed", wantMsg: "malformed JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"resource": [`))
		}},
		{name: "not JSON", wantMsg: "not JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html>`))
		}},
		{name: "no authorization server", want: ErrNoAuthorizationServer, handler: func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, wellKnownPRM) {
				writeJSON(w, 200, map[string]any{"resource": "http://" + r.Host + "/mcp"})
				return
			}
			http.NotFound(w, r)
		}},
		{name: "server error", wantMsg: "HTTP 500", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", 500)
		}},
		{name: "insecure authorization server", want: ErrInsecureURL, handler: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"resource": "http://" + r.Host + "/mcp", "authorization_servers": []string{"http://as.example.com"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := Discover(t.Context(), nil, srv.URL+"/mcp", nil)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err = %v, want it to say %q", err, tc.wantMsg)
			}
		})
	}
}

func TestDiscoverSlowMetadataBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Discover(ctx, nil, srv.URL+"/mcp", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Discover took %v", d)
	}
}

func TestDiscoverRedirectPolicy(t *testing.T) {
	// A metadata URL redirecting to plain HTTP off loopback is refused.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.example.com/prm", http.StatusFound)
	}))
	defer srv.Close()
	_, err := Discover(t.Context(), nil, srv.URL+"/mcp", nil)
	if !errors.Is(err, ErrInsecureURL) {
		t.Errorf("err = %v, want ErrInsecureURL", err)
	}
}

func TestResourceCovers(t *testing.T) {
	for _, tc := range []struct {
		resource, server string
		want             bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/mcp/", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/mcp", "https://mcp.example.com/mcp/sub", true},
		{"https://mcp.example.com/mc", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/other", "https://mcp.example.com/mcp", false},
		{"https://evil.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp#x", "https://mcp.example.com/mcp", false},
		{"not a url", "https://mcp.example.com/mcp", false},
	} {
		if got := resourceCovers(tc.resource, mustParse(t, tc.server)); got != tc.want {
			t.Errorf("resourceCovers(%q, %q) = %v, want %v", tc.resource, tc.server, got, tc.want)
		}
	}
}
