package authtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth/authtest"
	"golang.org/x/oauth2"
)

// newServer starts a Server closed when the test ends.
func newServer(t *testing.T, opts *authtest.Options) *authtest.Server {
	t.Helper()
	s := authtest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// tokenAnswer is a token endpoint answer, success or error.
type tokenAnswer struct {
	status int
	header http.Header
	body   string
	fields map[string]any
}

func (a *tokenAnswer) str(k string) string {
	v, _ := a.fields[k].(string)
	return v
}

// post sends a form to the server's path, with extra headers, and reads
// the JSON answer.
func post(t *testing.T, s *authtest.Server, path string, form url.Values, header http.Header) *tokenAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatal(err)
	}
	a := &tokenAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if a.body != "" {
		if err := json.Unmarshal([]byte(a.body), &a.fields); err != nil {
			t.Fatalf("POST %s: answer is not JSON: %q", path, a.body)
		}
	}
	return a
}

// basic returns an Authorization header with client_secret_basic
// credentials.
func basic(id, secret string) http.Header {
	req, _ := http.NewRequest("GET", "http://x", nil)
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return http.Header{"Authorization": req.Header["Authorization"]}
}

// noFollow is an HTTP client that does not follow redirects.
func noFollow(s *authtest.Server) *http.Client {
	c := *s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// authorize sends the user agent to the authorization URL and returns
// the answer's status and redirect location.
func authorize(t *testing.T, s *authtest.Server, authURL string) (int, *url.URL) {
	t.Helper()
	resp, err := noFollow(s).Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return resp.StatusCode, nil
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, loc
}

// config returns an oauth2.Config for a client of s.
func config(s *authtest.Server, id, secret, redirect string, style oauth2.AuthStyle, scopes ...string) *oauth2.Config {
	md := s.Metadata()
	return &oauth2.Config{
		ClientID:     id,
		ClientSecret: secret,
		RedirectURL:  redirect,
		Scopes:       scopes,
		Endpoint:     oauth2.Endpoint{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint, AuthStyle: style},
	}
}

// ctxWith returns a context whose oauth2 requests use s's client.
func ctxWith(s *authtest.Server) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, s.Client())
}

// retrieveCode extracts the OAuth error code of an oauth2 error.
func retrieveCode(err error) string {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		return re.ErrorCode
	}
	return ""
}

// s256 is the PKCE S256 challenge of verifier.
func s256(verifier string) string {
	return oauth2.S256ChallengeFromVerifier(verifier)
}
