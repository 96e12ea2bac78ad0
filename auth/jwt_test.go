package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testNow is the fake clock's start.
var testNow = time.Unix(1_800_000_000, 0)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: testNow} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testIssuer is an authorization server: an ES256 key (kid "k1") whose
// key set and metadata are served by an httptest server, with a count of
// the key set's fetches.
type testIssuer struct {
	t       testing.TB
	srv     *httptest.Server
	key     *ecdsa.PrivateKey
	kid     string
	fetches atomic.Int32
	mu      sync.Mutex
	jwks    func(w http.ResponseWriter, r *http.Request) // overrides the key set answer
	meta    func(w http.ResponseWriter, r *http.Request) // overrides the metadata answer
	keys    []jose.JSONWebKey
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	is := &testIssuer{t: t, key: newECKey(t), kid: "k1"}
	is.keys = []jose.JSONWebKey{{Key: is.key.Public(), KeyID: is.kid, Algorithm: "ES256", Use: "sig"}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		override := is.meta
		is.mu.Unlock()
		if override != nil {
			override(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ServerMetadata{Issuer: is.srv.URL, JWKSURI: is.srv.URL + "/jwks", IntrospectionEndpoint: is.srv.URL + "/introspect"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		override, keys := is.jwks, is.keys
		is.mu.Unlock()
		if override != nil {
			override(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// setKeys replaces the key set served.
func (is *testIssuer) setKeys(keys ...jose.JSONWebKey) {
	is.mu.Lock()
	is.keys = keys
	is.mu.Unlock()
}

// setJWKS replaces the key set handler.
func (is *testIssuer) setJWKS(h func(w http.ResponseWriter, r *http.Request)) {
	is.mu.Lock()
	is.jwks = h
	is.mu.Unlock()
}

const testResource = "http://127.0.0.1:9/mcp"

// claims returns valid claims of is for testResource at testNow.
func (is *testIssuer) claims(sub string) map[string]any {
	return map[string]any{
		"iss":   is.srv.URL,
		"sub":   sub,
		"aud":   testResource,
		"exp":   testNow.Add(time.Hour).Unix(),
		"iat":   testNow.Unix(),
		"scope": "read write",
		"jti":   "id-" + sub,
	}
}

// mint signs claims with key (ES256) under kid, with header typ when set.
func mint(t testing.TB, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mintHMAC signs claims with HS256 and secret, naming kid.
func mintHMAC(t testing.TB, secret []byte, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := jws.CompactSerialize()
	return tok
}

// unsigned returns an "alg": "none" token.
func unsigned(kid string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "none", "kid": kid, "typ": "at+jwt"})
	p, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "."
}

// verifier returns a JWTVerifier of is for testResource on clock c, with
// opts' other fields.
func (is *testIssuer) verifier(c *fakeClock, edit func(o *JWTOptions)) *JWTVerifier {
	is.t.Helper()
	o := &JWTOptions{Issuer: is.srv.URL, Audience: testResource, Now: c.now, HTTPClient: is.srv.Client()}
	if edit != nil {
		edit(o)
	}
	v, err := NewJWTVerifier(o)
	if err != nil {
		is.t.Fatal(err)
	}
	return v
}

func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestJWTVerifier(t *testing.T) {
	is := newTestIssuer(t)
	clock := newFakeClock()
	v := is.verifier(clock, nil)
	good := is.claims("alice")
	pubDER, _ := x509.MarshalPKIXPublicKey(is.key.Public())
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	pubJWK, _ := json.Marshal(is.keys[0])
	other := newECKey(t)
	tests := []struct {
		name  string
		token string
		want  error // nil: accepted
	}{
		{"valid", mint(t, is.key, "k1", good), nil},
		{"valid, aud array", mint(t, is.key, "k1", with(good, "aud", []string{"https://other.example", testResource})), nil},
		{"valid, no kid", mint(t, is.key, "", good), nil},
		{"valid, within skew", mint(t, is.key, "k1", with(good, "exp", testNow.Add(-30*time.Second).Unix())), nil},
		{"another resource", mint(t, is.key, "k1", with(good, "aud", "https://other.example/mcp")), ErrWrongAudience},
		{"no audience", mint(t, is.key, "k1", with(good, "aud", nil)), ErrWrongAudience},
		{"another issuer", mint(t, is.key, "k1", with(good, "iss", "https://evil.example")), ErrWrongIssuer},
		{"expired", mint(t, is.key, "k1", with(good, "exp", testNow.Add(-2*time.Minute).Unix())), ErrExpiredToken},
		{"no exp", mint(t, is.key, "k1", with(good, "exp", nil)), ErrInvalidToken},
		{"not yet valid", mint(t, is.key, "k1", with(good, "nbf", testNow.Add(2*time.Minute).Unix())), ErrTokenNotYetValid},
		{"issued in the future", mint(t, is.key, "k1", with(good, "iat", testNow.Add(2*time.Minute).Unix())), ErrTokenNotYetValid},
		{"no sub", mint(t, is.key, "k1", with(good, "sub", nil)), ErrInvalidToken},
		{"wrong signature", mint(t, other, "k1", good), ErrBadSignature},
		{"tampered", tamper(mint(t, is.key, "k1", good)), ErrBadSignature},
		{"alg none", unsigned("k1", good), ErrBadSignature},
		{"HMAC with the public key (PEM)", mintHMAC(t, pubPEM, "k1", good), ErrBadSignature},
		{"HMAC with the public key (DER)", mintHMAC(t, pubDER, "k1", good), ErrBadSignature},
		{"HMAC with the public key (JWK)", mintHMAC(t, pubJWK, "k1", good), ErrBadSignature},
		{"not a JWT", "not-a-jwt", ErrBadSignature},
		{"empty", "", ErrBadSignature},
		{"oversized", strings.Repeat("a", MaxTokenSize+1), ErrInvalidToken},
		{"bad scp", mint(t, is.key, "k1", with(good, "scope", nil, "scp", 7)), ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := v.VerifyToken(context.Background(), tt.token)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if info.Subject != "alice" || info.Issuer != is.srv.URL || !info.HasScopes("read", "write") {
					t.Fatalf("info = %+v", info)
				}
				return
			}
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.token != "" && strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the error holds the token: %v", err)
			}
		})
	}
}

func TestJWTVerifierClaims(t *testing.T) {
	is := newTestIssuer(t)
	clock := newFakeClock()
	v := is.verifier(clock, func(o *JWTOptions) { o.RequiredType = "application/at+jwt" })
	tests := []struct {
		name   string
		claims map[string]any
		check  func(t *testing.T, info *TokenInfo)
	}{
		{"scp array", with(is.claims("a"), "scope", nil, "scp", []string{"x", "y"}), func(t *testing.T, info *TokenInfo) {
			if !info.HasScopes("x", "y") || len(info.Scopes) != 2 {
				t.Fatal(info.Scopes)
			}
		}},
		{"scp string", with(is.claims("a"), "scope", nil, "scp", "x y"), func(t *testing.T, info *TokenInfo) {
			if !info.HasScopes("x", "y") {
				t.Fatal(info.Scopes)
			}
		}},
		{"cnf.jkt, azp", with(is.claims("a"), "cnf", map[string]string{"jkt": "thumb"}, "azp", "client-1"), func(t *testing.T, info *TokenInfo) {
			if info.ConfirmationThumbprint != "thumb" || info.ClientID != "client-1" {
				t.Fatalf("%+v", info)
			}
		}},
		{"claims kept", with(is.claims("a"), "custom", "v"), func(t *testing.T, info *TokenInfo) {
			if string(info.Claims["custom"]) != `"v"` || info.ID != "id-a" || !info.IssuedAt.Equal(testNow) {
				t.Fatalf("%+v", info)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := v.VerifyToken(context.Background(), mint(t, is.key, "k1", tt.claims))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, info)
		})
	}
	t.Run("typ required", func(t *testing.T) {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithType("JWT"))
		p, _ := json.Marshal(is.claims("a"))
		jws, _ := s.Sign(p)
		tok, _ := jws.CompactSerialize()
		if _, err := v.VerifyToken(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestJWTVerifierOptions(t *testing.T) {
	tests := []struct {
		name string
		opts *JWTOptions
	}{
		{"nil", nil},
		{"no issuer", &JWTOptions{Audience: testResource}},
		{"insecure issuer", &JWTOptions{Issuer: "http://as.example", Audience: testResource}},
		{"no audience", &JWTOptions{Issuer: "https://as.example"}},
		{"insecure JWKS", &JWTOptions{Issuer: "https://as.example", Audience: testResource, JWKSURL: "http://as.example/jwks"}},
		{"only HMAC", &JWTOptions{Issuer: "https://as.example", Audience: testResource, Algorithms: []string{"HS256", "none"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewJWTVerifier(tt.opts); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestJWTVerifierCache: a token verified once is not verified again
// (the key set may vanish meanwhile), but its expiry still applies.
func TestJWTVerifierCache(t *testing.T) {
	is := newTestIssuer(t)
	clock := newFakeClock()
	v := is.verifier(clock, func(o *JWTOptions) { o.CacheSize = 2 })
	tok := mint(t, is.key, "k1", with(is.claims("alice"), "exp", testNow.Add(10*time.Minute).Unix()))
	ctx := context.Background()
	first, err := v.VerifyToken(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	// Empty the key set: only a cached token can still verify.
	v.keys.mu.Lock()
	saved := v.keys.keys
	v.keys.keys = &jose.JSONWebKeySet{}
	v.keys.mu.Unlock()
	if again, err := v.VerifyToken(ctx, tok); err != nil || again != first {
		t.Fatalf("cached token: %v, %v", again, err)
	}
	if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims("zed"))); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("uncached token without keys: err = %v", err)
	}
	v.keys.mu.Lock()
	v.keys.keys = saved
	v.keys.mu.Unlock()
	// Bounded: a third token evicts.
	for _, sub := range []string{"b", "c", "d"} {
		v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims(sub)))
	}
	if n := v.cache.len(); n > 2 {
		t.Fatalf("cache holds %d entries, bound 2", n)
	}
	// Expiry applies on a hit: the entry lives until exp+skew at most.
	v2 := is.verifier(clock, nil)
	if _, err := v2.VerifyToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	clock.advance(11*time.Minute + DefaultClockSkew)
	if _, err := v2.VerifyToken(ctx, tok); !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("expired cached token: err = %v", err)
	}
}

// TestJWTUnknownKidFlood: tokens naming made-up keys, all at once, cost
// one fetch of the key set; more within the interval cost none.
func TestJWTUnknownKidFlood(t *testing.T) {
	is := newTestIssuer(t)
	clock := newFakeClock()
	v := is.verifier(clock, nil)
	ctx := context.Background()
	if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims("alice"))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token", n)
	}
	clock.advance(DefaultKeySetRefetchInterval)
	forged := newECKey(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.VerifyToken(ctx, mint(t, forged, "made-up-"+string(rune('a'+i%26))+string(rune('a'+i/26)), is.claims("mallory")))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrBadSignature) {
			t.Fatalf("err = %v, want ErrBadSignature", err)
		}
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after the flood, want 2 (one for the flood)", n)
	}
	// The known key still verifies, without a fetch.
	if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims("bob"))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches", n)
	}
}

// TestJWTKeyRotation: a token signed with a new key is accepted once the
// issuer publishes it, after the refetch interval.
func TestJWTKeyRotation(t *testing.T) {
	is := newTestIssuer(t)
	clock := newFakeClock()
	v := is.verifier(clock, nil)
	ctx := context.Background()
	if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims("alice"))); err != nil {
		t.Fatal(err)
	}
	next := newECKey(t)
	is.setKeys(is.keys[0], jose.JSONWebKey{Key: next.Public(), KeyID: "k2", Algorithm: "ES256", Use: "sig"})
	tok := mint(t, next, "k2", is.claims("bob"))
	if _, err := v.VerifyToken(ctx, tok); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("within the refetch interval: err = %v", err)
	}
	clock.advance(DefaultKeySetRefetchInterval)
	if info, err := v.VerifyToken(ctx, tok); err != nil || info.Subject != "bob" {
		t.Fatalf("after rotation: %v, %v", info, err)
	}
	// The set expires: it is fetched again in the background, and the
	// keys at hand verify meanwhile.
	clock.advance(DefaultKeySetTTL)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	is.setJWKS(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		http.Error(w, "down", 500)
	})
	if _, err := v.VerifyToken(ctx, mint(t, next, "k2", with(is.claims("dave"), "exp", clock.now().Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("with a stale set: %v", err)
	}
	<-started
	v.keys.mu.Lock()
	inflight := v.keys.inflight != nil
	v.keys.mu.Unlock()
	close(release)
	if !inflight {
		t.Fatal("the verification waited for the refresh")
	}
	// A fetch that fails keeps the old keys.
	clock.advance(DefaultKeySetTTL)
	is.setJWKS(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) })
	if _, err := v.VerifyToken(ctx, mint(t, next, "k2", with(is.claims("carol"), "exp", clock.now().Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("with a stale set and the issuer down: %v", err)
	}
}

// TestJWTKeySetFailures: a key set that is too large, malformed, empty or
// slow, and metadata naming another issuer, make verification fail with
// ErrVerifierUnavailable, within the configured timeout.
func TestJWTKeySetFailures(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	hangs := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}
	short := func(o *JWTOptions) { o.FetchTimeout = 50 * time.Millisecond }
	tests := []struct {
		name    string
		jwks    func(w http.ResponseWriter, r *http.Request)
		meta    func(w http.ResponseWriter, r *http.Request)
		want    error
		edit    func(o *JWTOptions)
		fetches int32
	}{
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"keys":[],"pad":"`))
			w.Write([]byte(strings.Repeat("a", MaxDocumentSize)))
			w.Write([]byte(`"}`))
		}, nil, ErrTooLarge, nil, 1},
		{"malformed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"!!"}]}`))
		}, nil, ErrVerifierUnavailable, nil, 1},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html>`))
		}, nil, ErrVerifierUnavailable, nil, 1},
		{"no key parses", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"keys":[{"kty":"XYZ"},{"kty":"EC","crv":"P-256"}]}`))
		}, nil, ErrVerifierUnavailable, nil, 1},
		{"empty", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"keys":[]}`))
		}, nil, ErrVerifierUnavailable, nil, 1},
		{"key set hangs", hangs, nil, context.DeadlineExceeded, short, 1},
		{"metadata hangs", nil, hangs, context.DeadlineExceeded, short, 0},
		{"metadata oversized", nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"issuer":"` + strings.Repeat("a", MaxDocumentSize) + `"}`))
		}, ErrTooLarge, nil, 0},
		{"metadata without jwks_uri", nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(ServerMetadata{Issuer: "http://" + r.Host})
		}, ErrVerifierUnavailable, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := newTestIssuer(t)
			is.setJWKS(tt.jwks)
			is.mu.Lock()
			is.meta = tt.meta
			is.mu.Unlock()
			clock := newFakeClock()
			v := is.verifier(clock, tt.edit)
			_, err := v.VerifyToken(context.Background(), mint(t, is.key, "k1", is.claims("alice")))
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrVerifierUnavailable) || errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want %v and ErrVerifierUnavailable", err, tt.want)
			}
			// The failure is remembered: no second fetch within the interval.
			v.VerifyToken(context.Background(), mint(t, is.key, "k1", is.claims("bob")))
			if n := is.fetches.Load(); n != tt.fetches {
				t.Fatalf("%d fetches of the key set, want %d", n, tt.fetches)
			}
		})
	}
}

func TestJWTDiscovery(t *testing.T) {
	is := newTestIssuer(t)
	ctx := context.Background()
	t.Run("issuer mismatch", func(t *testing.T) {
		md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(ServerMetadata{Issuer: "https://evil.example", JWKSURI: is.srv.URL + "/jwks"})
		}))
		defer md.Close()
		v, err := NewJWTVerifier(&JWTOptions{Issuer: md.URL, Audience: testResource, Now: newFakeClock().now})
		if err != nil {
			t.Fatal(err)
		}
		claims := with(is.claims("alice"), "iss", md.URL)
		if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", claims)); !errors.Is(err, ErrVerifierUnavailable) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("issuer with a path, OpenID fallback", func(t *testing.T) {
		var md *httptest.Server
		var tried []string
		var mu sync.Mutex
		md = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			tried = append(tried, r.URL.Path)
			mu.Unlock()
			if r.URL.Path != "/.well-known/openid-configuration/tenant" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(ServerMetadata{Issuer: md.URL + "/tenant", JWKSURI: is.srv.URL + "/jwks"})
		}))
		defer md.Close()
		v, err := NewJWTVerifier(&JWTOptions{Issuer: md.URL + "/tenant", Audience: testResource, Now: newFakeClock().now})
		if err != nil {
			t.Fatal(err)
		}
		claims := with(is.claims("alice"), "iss", md.URL+"/tenant")
		if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", claims)); err != nil {
			t.Fatal(err)
		}
		if want := "/.well-known/oauth-authorization-server/tenant /.well-known/openid-configuration/tenant"; strings.Join(tried, " ") != want {
			t.Fatalf("tried %q, want %q", tried, want)
		}
	})
	t.Run("JWKS URL given", func(t *testing.T) {
		v := is.verifier(newFakeClock(), func(o *JWTOptions) { o.Issuer = "https://as.example"; o.JWKSURL = is.srv.URL + "/jwks" })
		claims := with(is.claims("alice"), "iss", "https://as.example")
		if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", claims)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestJWTKeySetUnknownKeyTypes: keys that do not parse are skipped, the
// others used.
func TestJWTKeySetUnknownKeyTypes(t *testing.T) {
	is := newTestIssuer(t)
	good, _ := json.Marshal(is.keys[0])
	is.setJWKS(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"keys":[{"kty":"XYZ","kid":"k0"},` + string(good) + `]}`))
	})
	v := is.verifier(newFakeClock(), nil)
	if _, err := v.VerifyToken(context.Background(), mint(t, is.key, "k1", is.claims("alice"))); err != nil {
		t.Fatal(err)
	}
}

// TestJWTVerifierContext: a caller whose context ends stops waiting for
// the shared fetch.
func TestJWTVerifierContext(t *testing.T) {
	is := newTestIssuer(t)
	release := make(chan struct{})
	defer close(release)
	is.setJWKS(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	v := is.verifier(newFakeClock(), func(o *JWTOptions) { o.FetchTimeout = 100 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.VerifyToken(ctx, mint(t, is.key, "k1", is.claims("alice"))); !errors.Is(err, ErrVerifierUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzJWTVerify: any token is refused with ErrInvalidToken, without
// panicking (the key set is fetched once).
func FuzzJWTVerify(f *testing.F) {
	is := newTestIssuer(f)
	v := is.verifier(newFakeClock(), nil)
	good := mint(f, is.key, "k1", is.claims("alice"))
	f.Add(tamper(good))
	f.Add(unsigned("k1", is.claims("alice")))
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJFUzI1NiJ9..")
	f.Fuzz(func(t *testing.T, token string) {
		if token == good {
			return
		}
		if _, err := v.VerifyToken(context.Background(), token); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestJWTFirstFetchShared: callers arriving together before the key set
// is known wait for one shared fetch, and all verify.
func TestJWTFirstFetchShared(t *testing.T) {
	is := newTestIssuer(t)
	release := make(chan struct{})
	is.setJWKS(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
	})
	v := is.verifier(newFakeClock(), nil)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	waiting := make(chan struct{}, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := mint(t, is.key, "k1", is.claims("user"+string(rune('a'+i))))
			waiting <- struct{}{}
			_, err := v.VerifyToken(context.Background(), tok)
			errs <- err
		}()
	}
	for range n {
		<-waiting
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if f := is.fetches.Load(); f != 1 {
		t.Fatalf("%d fetches, want 1", f)
	}
}
