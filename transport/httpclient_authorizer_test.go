package transport

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// headerAuthorizer adds a header to every request, or fails them all.
type headerAuthorizer struct{ fail error }

func (h headerAuthorizer) RoundTripper(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if h.fail != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, h.fail
		}
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer from-authorizer")
		return base.RoundTrip(r)
	})
}

func TestStreamableClientAuthorizer(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true, Authorizer: headerAuthorizer{}})
	initializeConn(t, c)
	for i, s := range f.requests() {
		if got := s.header.Get("Authorization"); got != "Bearer from-authorizer" {
			t.Errorf("request %d: Authorization %q", i, got)
		}
	}
}

type authFailure struct{}

func (authFailure) Error() string { return "not authorized" }

func TestStreamableClientAuthorizerError(t *testing.T) {
	checkLeaks(t)
	f := newFakeMCPServer(t)
	srv := serveHTTPTest(t, f.ServeHTTP)
	c := connectConn(t, &StreamableClientTransport{URL: srv.URL, DisableStandaloneStream: true, Authorizer: headerAuthorizer{fail: authFailure{}}})
	err := c.Write(context.Background(), request(1, "initialize", `{}`))
	var af authFailure
	if !errors.As(err, &af) {
		t.Fatalf("Write: %v; want the Authorizer's error inside", err)
	}
	c.Close()
}
