package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// An Agent takes the user to the authorization server and brings back
// its answer: the step of the authorization code flow that happens in a
// browser.
type Agent interface {
	// Authorize sends the user agent to authURL and returns the query
	// parameters of the authorization server's redirect to redirectURL
	// (code, state and iss, or error). It returns when the redirect
	// arrives or ctx ends.
	Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error)
}

// HeadlessAgent is an Agent for tests and for authorization servers that
// answer at once: it GETs the authorization URL without following
// redirects and reads the query of the Location the server redirects to,
// which must be the redirect URL.
type HeadlessAgent struct {
	// HTTPClient sends the request; nil means a client of its own. Its
	// redirect policy is replaced so that the redirect is read, not
	// followed.
	HTTPClient *http.Client
}

// Authorize implements Agent.
func (h *HeadlessAgent) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	var c http.Client
	if h.HTTPClient != nil {
		c = *h.HTTPClient
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if err := checkURL(req.URL); err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: GET %s: %w", redactURL(authURL), stripURLError(err))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, MaxDocumentSize))
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return nil, &HTTPError{URL: redactURL(authURL), StatusCode: resp.StatusCode, Header: resp.Header}
	}
	to, err := resp.Request.URL.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("auth: the authorization server redirected to an unreadable URL: %w", err)
	}
	if !sameEndpoint(to, redirectURL) {
		return nil, fmt.Errorf("auth: the authorization server redirected to %s, not the redirect URL", redactURL(to.String()))
	}
	return to.Query(), nil
}

// sameEndpoint reports whether u is the redirect URL without regard to
// its query.
func sameEndpoint(u *url.URL, redirectURL string) bool {
	r, err := url.Parse(redirectURL)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Scheme, r.Scheme) && strings.EqualFold(u.Host, r.Host) && u.EscapedPath() == r.EscapedPath()
}

// LoopbackAgent is an Agent for command-line and desktop hosts (RFC 8252
// section 7.3): it listens on a loopback address, shows the user the
// authorization URL (opening a browser when Open is set) and serves the
// redirect URI until the authorization server's redirect arrives. Create
// one with [ListenLoopback]; its redirect URL is [LoopbackAgent.RedirectURL].
type LoopbackAgent struct {
	// Open sends the user to the authorization URL, typically by opening
	// a browser. Nil writes the URL to Output.
	Open func(ctx context.Context, authURL string) error
	// Output receives the authorization URL when Open is nil; nil means
	// os.Stderr.
	Output io.Writer

	ln     net.Listener
	path   string
	srv    *http.Server
	served chan struct{}

	flow    sync.Mutex // one authorization at a time
	mu      sync.Mutex
	waiting chan url.Values // the authorization in progress, or nil
}

// loopbackReadTimeout bounds reading a request to the loopback listener.
const loopbackReadTimeout = 10 * time.Second

// ListenLoopback listens on addr, a loopback host and port such as
// "127.0.0.1:0" (any free port) or "127.0.0.1:8976", for redirects to
// path (such as "/callback"; "" means "/callback"), until Close.
func ListenLoopback(addr, path string) (*LoopbackAgent, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if !IsLoopback(host) {
		return nil, fmt.Errorf("%w: %s is not a loopback address", ErrInsecureURL, host)
	}
	if path == "" {
		path = "/callback"
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	l := &LoopbackAgent{ln: ln, path: path, served: make(chan struct{})}
	l.srv = &http.Server{
		ReadHeaderTimeout: loopbackReadTimeout,
		ReadTimeout:       loopbackReadTimeout,
		WriteTimeout:      loopbackReadTimeout,
		Handler:           http.HandlerFunc(l.serveRedirect),
	}
	go func() {
		defer close(l.served)
		l.srv.Serve(ln)
	}()
	return l, nil
}

func (l *LoopbackAgent) serveRedirect(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != l.path || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	l.mu.Lock()
	ch := l.waiting
	l.waiting = nil
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch {
	case ch == nil:
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "<p>No authorization is in progress.</p>")
		return
	case q.Get("error") != "":
		fmt.Fprintf(w, "<p>Authorization failed: %s. You can close this window.</p>", html.EscapeString(truncate(q.Get("error"), 100)))
	default:
		io.WriteString(w, "<p>Authorization complete. You can close this window.</p>")
	}
	ch <- q
}

// RedirectURL returns the URL the agent serves, such as
// "http://127.0.0.1:53682/callback".
func (l *LoopbackAgent) RedirectURL() string {
	return "http://" + l.ln.Addr().String() + l.path
}

// Close stops listening and waits for the server to stop.
func (l *LoopbackAgent) Close() error {
	err := l.srv.Close()
	<-l.served
	return err
}

// Authorize implements Agent. The redirect URL must be the agent's.
func (l *LoopbackAgent) Authorize(ctx context.Context, authURL, redirectURL string) (url.Values, error) {
	if redirectURL != l.RedirectURL() {
		return nil, errors.New("auth: the redirect URL is not the loopback agent's")
	}
	l.flow.Lock()
	defer l.flow.Unlock()
	got := make(chan url.Values, 1)
	l.mu.Lock()
	l.waiting = got
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting = nil
		l.mu.Unlock()
	}()
	open := l.Open
	if open == nil {
		open = func(_ context.Context, u string) error {
			out := l.Output
			if out == nil {
				out = os.Stderr
			}
			_, err := fmt.Fprintf(out, "Open this URL in a browser to authorize:\n\n  %s\n\n", u)
			return err
		}
	}
	if err := open(ctx, authURL); err != nil {
		return nil, fmt.Errorf("auth: opening the authorization URL: %w", err)
	}
	select {
	case q := <-got:
		return q, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
