package authtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"golang.org/x/oauth2"
)

// TestBrowse runs a host-like client: its callback server receives the
// authorization response that Browse delivers.
func TestBrowse(t *testing.T) {
	got := make(chan url.Values, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Query()
		fmt.Fprintln(w, "ok")
	}))
	defer callback.Close()
	s := newServer(t, &authtest.Options{Clients: []authtest.Client{{ID: "host", RedirectURIs: []string{callback.URL + "/cb"}}}})
	cfg := config(s, "host", "", callback.URL+"/cb", oauth2.AuthStyleInParams)
	v := oauth2.GenerateVerifier()
	if err := s.Browse(context.Background(), cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(v))); err != nil {
		t.Fatal(err)
	}
	q := <-got
	if q.Get("state") != "st" || q.Get("iss") != s.URL {
		t.Fatalf("callback got %v", q)
	}
	if _, err := cfg.Exchange(ctxWith(s), q.Get("code"), oauth2.VerifierOption(v)); err != nil {
		t.Fatal(err)
	}

	// Refusals come back as errors.
	bad := config(s, "ghost", "", callback.URL+"/cb", oauth2.AuthStyleInParams)
	if err := s.Browse(context.Background(), bad.AuthCodeURL("st", oauth2.S256ChallengeOption(v))); !errors.Is(err, authtest.ErrAuthorization) {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := s.Authorize(context.Background(), "https://elsewhere.example/authorize?x"); !errors.Is(err, authtest.ErrAuthorization) {
		t.Errorf("another server's URL: %v", err)
	}
	// An error response is a redirect too.
	to, err := s.Authorize(context.Background(), cfg.AuthCodeURL("st"))
	if err != nil || to.Query().Get("error") != "invalid_request" {
		t.Errorf("no PKCE: %v %v", to, err)
	}
}

// TestTLSAndPath runs the code flow against an HTTPS issuer with a path,
// discovered through auth.ServerMetadataURLs.
func TestTLSAndPath(t *testing.T) {
	s := authtest.NewUnstartedServer(&authtest.Options{Path: "/tenant/a", Clients: []authtest.Client{{ID: "c", RedirectURIs: []string{redirectURI}}}})
	s.StartTLS()
	defer s.Close()
	if !strings.HasPrefix(s.URL, "https://127.0.0.1:") || !strings.HasSuffix(s.URL, "/tenant/a") || s.TLS() == nil {
		t.Fatalf("URL %s", s.URL)
	}
	urls, err := auth.ServerMetadataURLs(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		resp, err := s.Client().Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: HTTP %d", u, resp.StatusCode)
		}
	}
	cfg := config(s, "c", "", redirectURI, oauth2.AuthStyleInParams)
	v := oauth2.GenerateVerifier()
	to, err := s.Authorize(context.Background(), cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(v)))
	if err != nil || to.Query().Get("iss") != s.URL {
		t.Fatalf("%v %v", to, err)
	}
	if _, err := cfg.Exchange(ctxWith(s), to.Query().Get("code"), oauth2.VerifierOption(v)); err != nil {
		t.Fatal(err)
	}
}

func TestConsentAndRedirectDefault(t *testing.T) {
	s := newServer(t, &authtest.Options{
		Clients: []authtest.Client{{ID: "c", RedirectURIs: []string{redirectURI}}},
		Consent: func(r *authtest.ConsentRequest) error {
			r.Subject = "bob"
			r.Scopes = slices.DeleteFunc(r.Scopes, func(s string) bool { return s == "write" })
			return nil
		},
	})
	v := oauth2.GenerateVerifier()
	// No redirect_uri: the only registered one is used, and the token
	// request need not repeat it.
	to, err := s.Authorize(context.Background(), s.URL+"/authorize?response_type=code&client_id=c&scope=read+write&code_challenge_method=S256&code_challenge="+s256(v))
	if err != nil {
		t.Fatal(err)
	}
	a := post(t, s, "/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {"c"}, "code": {to.Query().Get("code")}, "code_verifier": {v}}, nil)
	if a.status != 200 || a.str("scope") != "read" {
		t.Fatalf("HTTP %d %s", a.status, a.body)
	}
	if info, err := s.Verify(a.str("access_token")); err != nil || info.Subject != "bob" {
		t.Errorf("%v %+v", err, info)
	}
}

func TestDelay(t *testing.T) {
	s := newServer(t, &authtest.Options{Misbehavior: authtest.Misbehavior{Delay: time.Hour}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/jwks", nil)
	if _, err := s.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a delayed answer: %v", err)
	}
	s.Misbehave(authtest.Misbehavior{OversizedDocuments: true})
	resp, err := s.Client().Get(s.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength <= auth.MaxDocumentSize && resp.ContentLength != -1 {
		t.Errorf("oversized key set is %d bytes", resp.ContentLength)
	}
}

// TestConcurrentUse runs many flows at once (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	s := newServer(t, &authtest.Options{Clients: []authtest.Client{
		{ID: "pub", RedirectURIs: []string{redirectURI}},
		{ID: "m", Secret: "s"},
	}})
	cfg := config(s, "pub", "", redirectURI, oauth2.AuthStyleInParams)
	ctx := ctxWith(s)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			v := oauth2.GenerateVerifier()
			to, err := s.Authorize(context.Background(), cfg.AuthCodeURL(fmt.Sprint(i), oauth2.S256ChallengeOption(v)))
			if err == nil {
				_, err = cfg.Exchange(ctx, to.Query().Get("code"), oauth2.VerifierOption(v))
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			if i%5 == 0 {
				s.RotateKeys()
			}
			tok, err := s.Token(authtest.TokenRequest{})
			if err == nil {
				_, err = s.Verify(tok)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
