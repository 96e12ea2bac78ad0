package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testIntrospector is an introspection endpoint answering answers[token],
// or {"active":false}, to a client authenticated as rs:s3cret.
type testIntrospector struct {
	srv     *httptest.Server
	calls   atomic.Int32
	answers map[string]map[string]any
}

const introspectionSecret = "s3cret-introspection-password"

func newTestIntrospector(t *testing.T, answers map[string]map[string]any) *testIntrospector {
	ti := &testIntrospector{answers: answers}
	ti.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti.calls.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != "rs" || secret != introspectionSecret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request", 400)
			return
		}
		a, ok := ti.answers[r.PostFormValue("token")]
		if !ok {
			a = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(ti.srv.Close)
	return ti
}

func TestIntrospectionVerifier(t *testing.T) {
	active := func(kv ...any) map[string]any {
		return with(map[string]any{"active": true, "sub": "alice", "aud": testResource, "iss": "https://as.example",
			"scope": "read write", "exp": testNow.Add(time.Hour).Unix(), "client_id": "c1"}, kv...)
	}
	ti := newTestIntrospector(t, map[string]map[string]any{
		"tok-good":      active(),
		"tok-other-aud": active("aud", "https://other.example/mcp"),
		"tok-other-iss": active("iss", "https://evil.example"),
		"tok-expired":   active("exp", testNow.Add(-time.Hour).Unix()),
		"tok-future":    active("nbf", testNow.Add(time.Hour).Unix()),
		"tok-no-sub":    active("sub", nil),
		"tok-nobody":    active("sub", nil, "client_id", nil),
		"tok-dpop":      active("cnf", map[string]string{"jkt": "thumb"}),
		"tok-aud-array": active("aud", []string{"x", testResource}),
		"tok-refresh":   active("token_type", "refresh_token"),
	})
	clock := newFakeClock()
	newV := func(secret string) *IntrospectionVerifier {
		v, err := NewIntrospectionVerifier(&IntrospectionOptions{
			Endpoint: ti.srv.URL, Issuer: "https://as.example", ClientID: "rs", ClientSecret: secret,
			Audience: testResource, Now: clock.now, HTTPClient: ti.srv.Client(),
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := newV(introspectionSecret)
	tests := []struct {
		token string
		want  error
		check func(*TokenInfo) bool
	}{
		{"tok-good", nil, func(i *TokenInfo) bool {
			return i.Subject == "alice" && i.HasScopes("read", "write") && i.ClientID == "c1"
		}},
		{"tok-aud-array", nil, nil},
		{"tok-no-sub", nil, func(i *TokenInfo) bool { return i.Subject == "c1" }},
		{"tok-dpop", nil, func(i *TokenInfo) bool { return i.ConfirmationThumbprint == "thumb" }},
		{"tok-unknown", ErrInactiveToken, nil},
		{"tok-other-aud", ErrWrongAudience, nil},
		{"tok-other-iss", ErrWrongIssuer, nil},
		{"tok-expired", ErrExpiredToken, nil},
		{"tok-future", ErrTokenNotYetValid, nil},
		{"tok-nobody", ErrInvalidToken, nil},
		{"tok-refresh", ErrInvalidToken, nil},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			info, err := v.VerifyToken(context.Background(), tt.token)
			if tt.want == nil {
				if err != nil || (tt.check != nil && !tt.check(info)) {
					t.Fatalf("%+v, %v", info, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the error holds the token: %v", err)
			}
		})
	}
	t.Run("cached", func(t *testing.T) {
		n := ti.calls.Load()
		if _, err := v.VerifyToken(context.Background(), "tok-good"); err != nil {
			t.Fatal(err)
		}
		if ti.calls.Load() != n {
			t.Fatal("an active token was introspected again")
		}
		clock.advance(DefaultTokenCacheTTL)
		if _, err := v.VerifyToken(context.Background(), "tok-good"); err != nil {
			t.Fatal(err)
		}
		if ti.calls.Load() != n+1 {
			t.Fatal("the cache outlived its TTL")
		}
	})
	t.Run("bad client secret", func(t *testing.T) {
		_, err := newV("wrong-password").VerifyToken(context.Background(), "tok-good")
		var he *HTTPError
		if !errors.Is(err, ErrVerifierUnavailable) || !errors.As(err, &he) || he.Code != "invalid_client" {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(err.Error(), "wrong-password") || strings.Contains(err.Error(), "tok-good") {
			t.Fatalf("the error holds a secret: %v", err)
		}
	})
}

func TestIntrospectionDiscovery(t *testing.T) {
	is := newTestIssuer(t)
	var calls atomic.Int32
	is.srv.Config.Handler.(*http.ServeMux).HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"active":true,"sub":"alice","exp":` + jsonInt(testNow.Add(time.Hour).Unix()) + `}`))
	})
	v, err := NewIntrospectionVerifier(&IntrospectionOptions{Issuer: is.srv.URL, ClientID: "rs", Now: newFakeClock().now})
	if err != nil {
		t.Fatal(err)
	}
	info, err := v.VerifyToken(context.Background(), "anything")
	if err != nil || info.Subject != "alice" || info.Issuer != is.srv.URL || calls.Load() != 1 {
		t.Fatalf("%+v, %v, %d calls", info, err, calls.Load())
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestIntrospectionOptions(t *testing.T) {
	for _, o := range []*IntrospectionOptions{
		nil,
		{ClientID: "rs"},
		{Endpoint: "http://as.example/introspect", ClientID: "rs"},
		{Endpoint: "https://as.example/introspect"},
	} {
		if _, err := NewIntrospectionVerifier(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestIntrospectionFailures: an endpoint that hangs, answers too much or
// answers garbage makes verification fail with ErrVerifierUnavailable,
// within the configured timeout.
func TestIntrospectionFailures(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	tests := []struct {
		name string
		h    http.HandlerFunc
		want error
	}{
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // so that the server notices the client leaving
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, context.DeadlineExceeded},
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"active":true,"x":"` + strings.Repeat("a", MaxDocumentSize) + `"}`))
		}, ErrTooLarge},
		{"malformed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"active":"yes"}`))
		}, ErrVerifierUnavailable},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }, ErrVerifierUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.h)
			defer srv.Close()
			v, err := NewIntrospectionVerifier(&IntrospectionOptions{Endpoint: srv.URL, ClientID: "rs", ClientSecret: introspectionSecret, FetchTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.VerifyToken(context.Background(), "tok-secret-value")
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrVerifierUnavailable) || errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			checkNoSecrets(t, err.Error(), []string{"tok-secret-value", introspectionSecret})
		})
	}
}
