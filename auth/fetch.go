package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Bounds on what authorization reads from the network. Metadata documents,
// key sets, registration and token answers are small; anything larger is
// refused rather than held.
const (
	// MaxDocumentSize bounds a metadata document, a key set, a
	// registration or token answer, and an introspection answer: 1 MiB.
	MaxDocumentSize = 1 << 20
	// DefaultHTTPTimeout bounds one request to an authorization server or
	// for metadata when the caller's context has no earlier deadline.
	DefaultHTTPTimeout = 30 * time.Second
)

// ErrTooLarge reports a document larger than [MaxDocumentSize].
var ErrTooLarge = errors.New("auth: document too large")

// An HTTPError reports an answer from an authorization server or a
// metadata endpoint with an unexpected HTTP status. OAuth error answers
// (RFC 6749 section 5.2) fill Code and Description.
type HTTPError struct {
	// URL is the request URL, without its query.
	URL string
	// StatusCode is the HTTP status, such as 400.
	StatusCode int
	// Code is the OAuth "error" member, such as "invalid_grant", or "".
	Code string
	// Description is the OAuth "error_description" member, or "".
	Description string
	// Header holds the answer's headers (DPoP-Nonce and WWW-Authenticate
	// among them).
	Header http.Header
}

// Error implements error. It never includes the request's body, which
// may hold credentials.
func (e *HTTPError) Error() string {
	s := "auth: " + e.URL + ": HTTP " + strconv.Itoa(e.StatusCode)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + strconv.Quote(truncate(e.Description, 200))
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redactURL returns raw without query or fragment, for messages.
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// withTimeout bounds ctx by DefaultHTTPTimeout unless it ends sooner.
func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= DefaultHTTPTimeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultHTTPTimeout)
}

// readBody reads at most MaxDocumentSize bytes of r, failing with
// ErrTooLarge past that.
func readBody(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDocumentSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocumentSize {
		return nil, ErrTooLarge
	}
	return b, nil
}

// isJSON reports whether a Content-Type names JSON (application/json or
// any +json type). An absent type is taken for JSON.
func isJSON(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// doJSON sends req with client, bounded in time, and decodes a 2xx JSON
// answer of at most MaxDocumentSize into v. A non-2xx answer is an
// *HTTPError, with the OAuth error members when the body holds them.
func doJSON(client *http.Client, req *http.Request, v any) (http.Header, error) {
	ctx, cancel := withTimeout(req.Context())
	defer cancel()
	req = req.WithContext(ctx)
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if err := checkURL(req.URL); err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: %s %s: %w", req.Method, redactURL(req.URL.String()), stripURLError(err))
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body)
	where := redactURL(req.URL.String())
	if err != nil {
		return resp.Header, fmt.Errorf("auth: reading %s: %w", where, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		he := &HTTPError{URL: where, StatusCode: resp.StatusCode, Header: resp.Header}
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &oe) == nil {
			he.Code, he.Description = oe.Error, oe.Description
		}
		return resp.Header, he
	}
	if !isJSON(resp.Header.Get("Content-Type")) {
		return resp.Header, fmt.Errorf("auth: %s answered %q, not JSON", where, resp.Header.Get("Content-Type"))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.Header, fmt.Errorf("auth: malformed JSON from %s: %w", where, err)
	}
	return resp.Header, nil
}

// stripURLError unwraps a *url.Error, whose message repeats the full URL
// (query included); the caller names the URL without its query.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// getJSON fetches url with GET and decodes it into v (see doJSON).
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	_, err = doJSON(client, req, v)
	return err
}

// defaultClient returns c, or http.DefaultClient with redirects limited to
// HTTPS or loopback targets.
func defaultClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{CheckRedirect: checkRedirect}
}

// checkRedirect refuses redirects to URLs that CheckURL refuses, and stops
// after ten.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("auth: stopped after 10 redirects")
	}
	return checkURL(req.URL)
}
