package authtest_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/auth/authtest"
)

func TestDPoP(t *testing.T) {
	key, err := auth.GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	ccForm := url.Values{"grant_type": {"client_credentials"}}
	proof := func(t *testing.T, s *authtest.Server, nonce string) http.Header {
		t.Helper()
		p, err := key.Proof(http.MethodPost, s.TokenEndpoint(), &auth.ProofOptions{Nonce: nonce})
		if err != nil {
			t.Fatal(err)
		}
		h := basic("m", "secret")
		h.Set("DPoP", p)
		return h
	}
	clients := []authtest.Client{{ID: "m", Secret: "secret"}}

	t.Run("bound token", func(t *testing.T) {
		s := newServer(t, &authtest.Options{Clients: clients})
		a := post(t, s, "/token", ccForm, proof(t, s, ""))
		if a.status != 200 || a.str("token_type") != "DPoP" {
			t.Fatalf("HTTP %d %s", a.status, a.body)
		}
		info, err := s.Verify(a.str("access_token"))
		if err != nil || info.ConfirmationThumbprint != key.Thumbprint() {
			t.Fatalf("cnf.jkt: %v %+v", err, info)
		}
		// A bearer request still gets a bearer token.
		if a := post(t, s, "/token", ccForm, basic("m", "secret")); a.str("token_type") != "Bearer" {
			t.Errorf("without a proof: %s", a.body)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		s := newServer(t, &authtest.Options{Clients: clients})
		replayed := proof(t, s, "")
		wrongURL, _ := key.Proof(http.MethodPost, s.URL+"/other", nil)
		wrongMethod, _ := key.Proof(http.MethodGet, s.TokenEndpoint(), nil)
		stale, _ := key.Proof(http.MethodPost, s.TokenEndpoint(), &auth.ProofOptions{Now: func() time.Time { return time.Now().Add(-time.Hour) }})
		tests := []struct {
			name   string
			header http.Header
			want   string
		}{
			{"first use", replayed, ""},
			{"replayed proof", replayed, "invalid_dpop_proof"},
			{"wrong htu", withDPoP(basic("m", "secret"), wrongURL), "invalid_dpop_proof"},
			{"wrong htm", withDPoP(basic("m", "secret"), wrongMethod), "invalid_dpop_proof"},
			{"stale iat", withDPoP(basic("m", "secret"), stale), "invalid_dpop_proof"},
			{"not a JWT", withDPoP(basic("m", "secret"), "nope"), "invalid_dpop_proof"},
			{"two proofs", http.Header{"Authorization": basic("m", "secret")["Authorization"], "Dpop": {wrongURL, wrongURL}}, "invalid_dpop_proof"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := post(t, s, "/token", ccForm, tt.header)
				if a.str("error") != tt.want || (tt.want == "") != (a.status == 200) {
					t.Fatalf("HTTP %d %s, want %q", a.status, a.body, tt.want)
				}
			})
		}
	})

	t.Run("nonce required", func(t *testing.T) {
		s := newServer(t, &authtest.Options{Clients: clients, RequireDPoPNonce: true})
		a := post(t, s, "/token", ccForm, proof(t, s, ""))
		nonce := a.header.Get("DPoP-Nonce")
		if a.status != http.StatusBadRequest || a.str("error") != "use_dpop_nonce" || nonce == "" {
			t.Fatalf("without a nonce: HTTP %d %s nonce %q", a.status, a.body, nonce)
		}
		if a := post(t, s, "/token", ccForm, proof(t, s, "not-the-nonce")); a.str("error") != "use_dpop_nonce" {
			t.Errorf("a wrong nonce: %s", a.body)
		}
		a = post(t, s, "/token", ccForm, proof(t, s, nonce))
		if a.status != 200 || a.str("token_type") != "DPoP" || a.header.Get("DPoP-Nonce") == "" {
			t.Fatalf("with the nonce: HTTP %d %s", a.status, a.body)
		}
	})

	t.Run("proof required", func(t *testing.T) {
		s := newServer(t, &authtest.Options{Clients: clients, RequireDPoP: true})
		if a := post(t, s, "/token", ccForm, basic("m", "secret")); a.str("error") != "invalid_dpop_proof" {
			t.Errorf("without a proof: HTTP %d %s", a.status, a.body)
		}
		if a := post(t, s, "/token", ccForm, proof(t, s, "")); a.status != 200 {
			t.Errorf("with a proof: HTTP %d %s", a.status, a.body)
		}
	})

	t.Run("public client refresh token bound to the key", func(t *testing.T) {
		s := newServer(t, &authtest.Options{Clients: []authtest.Client{{ID: "pub", RedirectURIs: []string{redirectURI}}}})
		verifier := "0123456789012345678901234567890123456789abc"
		cfg := config(s, "pub", "", redirectURI, 0)
		_, loc := authorize(t, s, cfg.AuthCodeURL("s")+"&code_challenge_method=S256&code_challenge="+s256(verifier)+"&dpop_jkt="+key.Thumbprint())
		p := func() http.Header {
			pr, _ := key.Proof(http.MethodPost, s.TokenEndpoint(), nil)
			return http.Header{"Dpop": {pr}}
		}
		form := url.Values{"grant_type": {"authorization_code"}, "client_id": {"pub"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}
		a := post(t, s, "/token", form, p())
		if a.status != 200 || a.str("token_type") != "DPoP" {
			t.Fatalf("code: HTTP %d %s", a.status, a.body)
		}
		refresh := url.Values{"grant_type": {"refresh_token"}, "client_id": {"pub"}, "refresh_token": {a.str("refresh_token")}}
		if a := post(t, s, "/token", refresh, nil); a.str("error") != "invalid_dpop_proof" {
			t.Errorf("refresh without the key: HTTP %d %s", a.status, a.body)
		}
		if a := post(t, s, "/token", refresh, p()); a.status != 200 || a.str("token_type") != "DPoP" {
			t.Errorf("refresh with the key: HTTP %d %s", a.status, a.body)
		}
	})
}

func withDPoP(h http.Header, proof string) http.Header {
	h.Set("DPoP", proof)
	return h
}
