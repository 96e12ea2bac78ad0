package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"github.com/mcpkit/mcpkit/bench/internal/mcpkitecho"
	mcpkit "github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// jwtTokenTTL is the lifetime of the access token of the jwt targets,
// far longer than a benchmark run.
const jwtTokenTTL = time.Hour

// jwtTargets makes the authenticated mcpkit targets: the mcpkit echo
// server behind auth.RequireToken with an auth.JWTVerifier (its defaults:
// key set fetched once and cached, verified-token cache on) trusting an
// authtest authorization server, which jwtTargets starts and tb's cleanup
// stops. Each server's resource is its endpoint URL, and authtest mints
// one ES256 access token for that audience when the server starts; the
// client sends it as "Authorization: Bearer" on every request
// (StreamableClientTransport.Header). handshake is the client of
// 2025-11-25 against the default handler, as the mcpkit target of
// httpTargets; latest is the default client (EraAuto), which finds
// 2026-07-28, as mcpkit-latest.
func jwtTargets(tb testing.TB) (handshake, latest httpTarget) {
	j := &jwtIssuer{is: authtest.NewServer(nil), tokens: make(map[string]string)}
	tb.Cleanup(j.is.Close)
	handshake = httpTarget{"mcpkit-jwt", j.serve, func(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
		tok, err := j.token(url)
		if err != nil {
			return nil, err
		}
		return mcpkitHTTPDialWith(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc, Header: bearer(tok)})
	}}
	latest = httpTarget{"mcpkit-jwt-latest", j.serve, func(ctx context.Context, hc *http.Client, url string) (*httpConn, error) {
		tok, err := j.token(url)
		if err != nil {
			return nil, err
		}
		return mcpkitHTTPDialEra(ctx, &transport.StreamableClientTransport{URL: url, HTTPClient: hc, Header: bearer(tok)},
			mcpkit.EraAuto, mcpkit.Version20260728)
	}}
	return handshake, latest
}

// jwtIssuer is the authorization server of the jwt targets and the token
// it minted for each server, by endpoint URL.
type jwtIssuer struct {
	is     *authtest.Server
	mu     sync.Mutex
	tokens map[string]string
}

// serve is an httpTarget's serve: the mcpkit echo server's default
// Streamable HTTP handler behind RequireToken, for the resource url. It
// mints the token the clients of url send.
func (j *jwtIssuer) serve(url string) (http.Handler, func(), error) {
	v, err := auth.NewJWTVerifier(&auth.JWTOptions{Issuer: j.is.URL, Audience: url})
	if err != nil {
		return nil, nil, err
	}
	guard, err := auth.RequireToken(&auth.ResourceOptions{Verifier: v, Resource: url})
	if err != nil {
		return nil, nil, err
	}
	tok, err := j.is.Token(authtest.TokenRequest{Subject: "bench", Resource: url, TTL: jwtTokenTTL})
	if err != nil {
		return nil, nil, err
	}
	s, err := mcpkitecho.NewServer()
	if err != nil {
		return nil, nil, err
	}
	h := mcpkit.NewStreamableHTTPHandler(s, nil)
	j.mu.Lock()
	j.tokens[url] = tok
	j.mu.Unlock()
	return guard(h), func() { h.Close() }, nil
}

// token returns the token minted for the server at url.
func (j *jwtIssuer) token(url string) (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	tok, ok := j.tokens[url]
	if !ok {
		return "", fmt.Errorf("no token for %s", url)
	}
	return tok, nil
}

// bearer returns the header that sends tok as a bearer token.
func bearer(tok string) http.Header {
	return http.Header{"Authorization": {"Bearer " + tok}}
}

// TestHTTPJWT checks the jwt targets once: echo, large, tools/list and
// close with the token, and that the server refuses a request without
// it or with a token minted for another audience.
func TestHTTPJWT(t *testing.T) {
	handshake, latest := jwtTargets(t)
	for _, tg := range []httpTarget{handshake, latest} {
		t.Run(tg.name, func(t *testing.T) {
			s := startHTTP(t, tg)
			c := s.dial(t, tg)
			for _, f := range []caller{c.echo, c.echo, c.large, c.list} {
				if err := f(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			o := authtest.NewServer(nil)
			defer o.Close()
			other, err := o.Token(authtest.TokenRequest{Subject: "bench", Resource: s.url, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				auth string
			}{
				{"no token", ""},
				{"another issuer's token", "Bearer " + other},
			} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url,
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", latestVersion)
				req.Header.Set("Mcp-Method", "ping")
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				resp, err := s.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s: status %d, want 401", tc.name, resp.StatusCode)
				}
			}
		})
	}
}
