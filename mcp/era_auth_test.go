package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// failingAuthorizer is an authorizer whose every request fails, as one
// that cannot obtain a token does.
type failingAuthorizer struct {
	calls atomic.Int32
	err   error
}

func (a *failingAuthorizer) RoundTripper(http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(*http.Request) (*http.Response, error) {
		a.calls.Add(1)
		return nil, a.err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestEraAutoUnansweredProbe checks that EraAuto does not fall back to
// initialize when no server answered its server/discover probe: a second
// try would only fail alike, after a second login.
func TestEraAutoUnansweredProbe(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	errNoToken := errors.New("no token to be had")
	tests := []struct {
		name      string
		authz     *failingAuthorizer
		wantPosts int32
		check     func(error) bool
	}{
		{"401", nil, 1, func(err error) bool {
			var se *transport.HTTPStatusError
			return errors.As(err, &se) && se.StatusCode == http.StatusUnauthorized
		}},
		{"authorizer fails", &failingAuthorizer{err: errNoToken}, 0, func(err error) bool { return errors.Is(err, errNoToken) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			posts.Store(0)
			st := &transport.StreamableClientTransport{URL: srv.URL}
			if tt.authz != nil {
				st.Authorizer = tt.authz
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			_, err := c.Connect(context.Background(), st)
			if err == nil || !tt.check(err) {
				t.Fatalf("Connect: %v", err)
			}
			if got := posts.Load(); got != tt.wantPosts {
				t.Errorf("the server saw %d POSTs, want %d", got, tt.wantPosts)
			}
			if tt.authz != nil && tt.authz.calls.Load() != 1 {
				t.Errorf("the authorizer was asked %d times, want once", tt.authz.calls.Load())
			}
		})
	}
}
