//go:build !mcpkit_nohttp

package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHTTPClientDo checks httpClientCore.do, which sends a request with
// the client's RoundTripper when the client has nothing else to do for
// it: each client configuration gets the answers, redirects and errors
// http.Client.Do gives, and a cookie jar, where there is one, sees the
// requests.
func TestHTTPClientDo(t *testing.T) {
	checkLeaks(t)
	srv := serveHTTPTest(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
		case "/gone":
			w.WriteHeader(http.StatusMovedPermanently) // no Location
		case "/echo":
			http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1"})
			user, _, _ := r.BasicAuth()
			io.WriteString(w, r.Method+" "+string(body)+" "+user+" "+cookieValue(r, "seen"))
		}
	})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	withUser := strings.Replace(srv.URL, "http://", "http://ann:pw@", 1)
	tests := []struct {
		name   string
		client *http.Client
		url    string // the server's, unless set
		direct bool
		// want is the /echo answer to the second POST: "POST body" then
		// the basic auth user and the cookie.
		want string
	}{
		{"default", &http.Client{}, "", true, "POST body  "},
		{"timeout", &http.Client{Timeout: time.Minute}, "", false, "POST body  "},
		{"jar", &http.Client{Jar: jar}, "", false, "POST body  1"},
		{"user information", &http.Client{}, withUser, true, "POST body ann "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := srv.URL
			if tt.url != "" {
				base = tt.url
			}
			c := newHTTPClientCore(context.Background(), tt.client, nil, 1<<20)
			defer c.shutdown()
			if got := c.direct != nil; got != tt.direct {
				t.Errorf("direct = %v, want %v", got, tt.direct)
			}
			post := func(path string) (int, string) {
				t.Helper()
				req, err := c.newRequest(t.Context(), http.MethodPost, base+path, []byte("body"))
				if err != nil {
					t.Fatal(err)
				}
				resp, err := c.do(req)
				if err != nil {
					t.Fatalf("POST %s: %v", path, err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return resp.StatusCode, string(b)
			}
			post("/echo") // the jar, if any, takes the cookie
			for _, path := range []string{"/echo", "/moved"} {
				if code, got := post(path); code != http.StatusOK || got != tt.want {
					t.Errorf("POST %s: %d %q, want 200 %q", path, code, got, tt.want)
				}
			}
			if code, _ := post("/gone"); code != http.StatusMovedPermanently {
				t.Errorf("POST /gone: %d, want 301 as it came", code)
			}
		})
	}
}

// cookieValue returns the value of r's cookie name, or "".
func cookieValue(r *http.Request, name string) string {
	if c, err := r.Cookie(name); err == nil {
		return c.Value
	}
	return ""
}

// TestHTTPClientDoError checks that a request that fails is reported as
// http.Client.Do reports it: a *url.Error with the method and the URL,
// wrapping the cause (here the context's end).
func TestHTTPClientDoError(t *testing.T) {
	checkLeaks(t)
	c := newHTTPClientCore(context.Background(), nil, nil, 1<<20)
	defer c.shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := c.newRequest(ctx, http.MethodDelete, "http://127.0.0.1:1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.do(req)
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Op != "Delete" || ue.URL != "http://127.0.0.1:1/mcp" || !errors.Is(err, context.Canceled) {
		t.Errorf("do = %v, want a *url.Error for Delete of the URL wrapping context.Canceled", err)
	}
}
