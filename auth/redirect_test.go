package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestHeadlessAgent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer srv.Close()
	h := &HeadlessAgent{}
	redirect := "http://127.0.0.1:9/callback"
	q, err := h.Authorize(t.Context(), srv.URL+"/authorize?to="+url.QueryEscape(redirect+"?code=c&state=s"), redirect)
	if err != nil || q.Get("code") != "c" || q.Get("state") != "s" {
		t.Fatalf("Authorize = %v, %v", q, err)
	}
	if _, err := h.Authorize(t.Context(), srv.URL+"/authorize?to="+url.QueryEscape("http://127.0.0.1:9/elsewhere?code=c"), redirect); err == nil {
		t.Error("a redirect elsewhere than the redirect URL was accepted")
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	var he *HTTPError
	if _, err := h.Authorize(t.Context(), plain.URL, redirect); !errors.As(err, &he) || he.StatusCode != 200 {
		t.Errorf("no redirect: %v, want an *HTTPError", err)
	}
	if _, err := h.Authorize(t.Context(), "http://example.com/authorize", redirect); !errors.Is(err, ErrInsecureURL) {
		t.Errorf("plain HTTP off loopback: %v, want ErrInsecureURL", err)
	}
}

func TestLoopbackAgent(t *testing.T) {
	if _, err := ListenLoopback("0.0.0.0:0", ""); !errors.Is(err, ErrInsecureURL) {
		t.Errorf("a non-loopback address: %v", err)
	}
	l, err := ListenLoopback("127.0.0.1:0", "cb")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasPrefix(l.RedirectURL(), "http://127.0.0.1:") || !strings.HasSuffix(l.RedirectURL(), "/cb") {
		t.Fatalf("RedirectURL = %q", l.RedirectURL())
	}
	// With no authorization in progress, a redirect is refused.
	resp, err := http.Get(l.RedirectURL() + "?code=early")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("stray redirect: %d", resp.StatusCode)
	}
	var opened string
	l.Open = func(ctx context.Context, authURL string) error {
		opened = authURL
		// The "browser" follows the authorization server's redirect.
		go func() {
			resp, err := http.Get(l.RedirectURL() + "?code=c&state=s")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		return nil
	}
	q, err := l.Authorize(t.Context(), "https://as.example.com/authorize?x=1", l.RedirectURL())
	if err != nil || q.Get("code") != "c" || opened != "https://as.example.com/authorize?x=1" {
		t.Fatalf("Authorize = %v, %v (opened %q)", q, err, opened)
	}
	if _, err := l.Authorize(t.Context(), "https://as.example.com/authorize", "http://127.0.0.1:1/other"); err == nil {
		t.Error("another redirect URL was accepted")
	}
	ctx, cancel := context.WithCancel(t.Context())
	l.Open = func(context.Context, string) error { cancel(); return nil }
	if _, err := l.Authorize(ctx, "https://as.example.com/authorize", l.RedirectURL()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	var out strings.Builder
	l.Open, l.Output = nil, &out
	ctx2, cancel2 := context.WithCancel(t.Context())
	cancel2()
	l.Authorize(ctx2, "https://as.example.com/authorize?y", l.RedirectURL())
	if !strings.Contains(out.String(), "https://as.example.com/authorize?y") {
		t.Errorf("Output = %q, want the URL", out.String())
	}
}
