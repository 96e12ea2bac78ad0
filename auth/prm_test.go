package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandleProtectedResourceMetadata(t *testing.T) {
	mux := http.NewServeMux()
	md := &ProtectedResourceMetadata{
		Resource:             "https://mcp.example/mcp",
		AuthorizationServers: []string{"https://as.example"},
		ScopesSupported:      []string{"read"},
	}
	if err := HandleProtectedResourceMetadata(mux, md); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		status       int
	}{
		{"GET", "/.well-known/oauth-protected-resource/mcp", 200},
		{"GET", "/.well-known/oauth-protected-resource", 200},
		{"HEAD", "/.well-known/oauth-protected-resource", 200},
		{"OPTIONS", "/.well-known/oauth-protected-resource/mcp", 204},
		{"POST", "/.well-known/oauth-protected-resource/mcp", 405},
		{"GET", "/.well-known/oauth-protected-resource/other", 404},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest(tt.method, "https://mcp.example"+tt.path, nil))
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d", w.Code, tt.status)
			}
			if tt.status == 404 {
				return
			}
			if w.Header().Get("Access-Control-Allow-Origin") != "*" {
				t.Fatal("no CORS header")
			}
			if tt.method != "GET" {
				return
			}
			var got ProtectedResourceMetadata
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Resource != md.Resource || got.AuthorizationServers[0] != "https://as.example" || len(got.BearerMethodsSupported) != 1 || got.BearerMethodsSupported[0] != "header" {
				t.Fatalf("%+v", got)
			}
		})
	}
	if err := HandleProtectedResourceMetadata(mux, md); err == nil {
		t.Fatal("registered twice without an error")
	}
}

func TestProtectedResourceMetadataHandlerInvalid(t *testing.T) {
	for name, md := range map[string]*ProtectedResourceMetadata{
		"nil":                      nil,
		"insecure resource":        {Resource: "http://mcp.example/mcp", AuthorizationServers: []string{"https://as.example"}},
		"no servers":               {Resource: "https://mcp.example/mcp"},
		"insecure server":          {Resource: "https://mcp.example/mcp", AuthorizationServers: []string{"http://as.example"}},
		"resource with a fragment": {Resource: "https://mcp.example/mcp#x", AuthorizationServers: []string{"https://as.example"}},
	} {
		if _, err := ProtectedResourceMetadataHandler(md); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestHandleProtectedResourceMetadataRoot(t *testing.T) {
	mux := http.NewServeMux()
	if err := HandleProtectedResourceMetadata(mux, &ProtectedResourceMetadata{Resource: "https://mcp.example", AuthorizationServers: []string{"https://as.example"}}); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "https://mcp.example/.well-known/oauth-protected-resource", nil))
	if w.Code != 200 {
		t.Fatal(w.Code)
	}
}
