package authtest_test

import (
	"crypto"
	"crypto/rand"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth/authtest"
)

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	typeIDToken        = "urn:ietf:params:oauth:token-type:id_token"
	typeIDJAG          = "urn:ietf:params:oauth:token-type:id-jag"
)

// TestEnterpriseManagedAuthorization runs the enterprise-managed flow
// across two servers: the identity provider exchanges the user's ID token
// for an ID-JAG, and the MCP authorization server, which trusts the
// provider, exchanges the ID-JAG for an access token.
func TestEnterpriseManagedAuthorization(t *testing.T) {
	// The identity provider names the client as the MCP authorization
	// server knows it.
	idp := newServer(t, &authtest.Options{
		Clients:       []authtest.Client{{ID: "idp-app", Secret: "idp-secret"}, {ID: "idp-other", Secret: "x"}},
		IDJAGClientID: func(aud, id string) string { return map[string]string{"idp-app": "mcp-app"}[id] },
	})
	as := newServer(t, &authtest.Options{
		Scopes:         []string{"read", "write"},
		TrustedIssuers: []authtest.TrustedIssuer{idp.TrustedIssuer()},
		Clients:        []authtest.Client{{ID: "mcp-app", Secret: "as-secret"}, {ID: "intruder", Secret: "y"}},
	})
	untrusted := newServer(t, nil)
	idToken, err := idp.IDToken(authtest.IDTokenRequest{Subject: "alice", Audience: "idp-app", Email: "alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	exchange := func(subjectToken string, mod func(url.Values)) url.Values {
		f := url.Values{
			"grant_type": {grantTokenExchange}, "requested_token_type": {typeIDJAG},
			"subject_token": {subjectToken}, "subject_token_type": {typeIDToken},
			"audience": {as.URL}, "resource": {resourceURI}, "scope": {"read"},
		}
		if mod != nil {
			mod(f)
		}
		return f
	}

	t.Run("token exchange refusals", func(t *testing.T) {
		expired, _ := idp.IDToken(authtest.IDTokenRequest{Audience: "idp-app", TTL: -time.Hour})
		foreign, _ := untrusted.IDToken(authtest.IDTokenRequest{Audience: "idp-app"})
		access, _ := idp.Token(authtest.TokenRequest{})
		tests := []struct {
			name   string
			form   url.Values
			client string
			want   string
		}{
			{"ID token of another client", exchange(idToken, nil), "idp-other", "invalid_grant"},
			{"expired ID token", exchange(expired, nil), "idp-app", "invalid_grant"},
			{"untrusted issuer", exchange(foreign, nil), "idp-app", "invalid_grant"},
			{"an access token", exchange(access, nil), "idp-app", "invalid_grant"},
			{"no audience", exchange(idToken, func(f url.Values) { f.Del("audience") }), "idp-app", "invalid_request"},
			{"wrong requested type", exchange(idToken, func(f url.Values) { f.Set("requested_token_type", "urn:ietf:params:oauth:token-type:access_token") }), "idp-app", "invalid_request"},
			{"wrong subject type", exchange(idToken, func(f url.Values) { f.Set("subject_token_type", "urn:ietf:params:oauth:token-type:jwt") }), "idp-app", "invalid_request"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				secret := map[string]string{"idp-app": "idp-secret", "idp-other": "x"}[tt.client]
				a := post(t, idp, "/token", tt.form, basic(tt.client, secret))
				if a.str("error") != tt.want {
					t.Fatalf("HTTP %d %s, want %s", a.status, a.body, tt.want)
				}
				if strings.Contains(a.body, tt.form.Get("subject_token")) {
					t.Error("the answer echoes the subject token")
				}
			})
		}
	})

	a := post(t, idp, "/token", exchange(idToken, nil), basic("idp-app", "idp-secret"))
	if a.status != 200 || a.str("issued_token_type") != typeIDJAG || a.str("token_type") != "N_A" {
		t.Fatalf("token exchange: HTTP %d %s", a.status, a.body)
	}
	jag := a.str("access_token")

	bearer := func(assertion string) url.Values {
		return url.Values{"grant_type": {grantJWTBearer}, "assertion": {assertion}}
	}
	jagFor := func(mod func(*authtest.IDJAGRequest)) string {
		r := authtest.IDJAGRequest{Subject: "alice", Audience: as.URL, ClientID: "mcp-app", Resource: resourceURI, Scopes: []string{"read"}}
		if mod != nil {
			mod(&r)
		}
		j, err := idp.IDJAG(r)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	foreignJAG, _ := untrusted.IDJAG(authtest.IDJAGRequest{Audience: as.URL, ClientID: "mcp-app"})

	tests := []struct {
		name    string
		form    url.Values
		client  [2]string
		want    string
		subject string
	}{
		{"ID-JAG", bearer(jag), [2]string{"mcp-app", "as-secret"}, "", "alice"},
		{"replayed ID-JAG", bearer(jag), [2]string{"mcp-app", "as-secret"}, "invalid_grant", ""},
		{"ID-JAG of another client", bearer(jagFor(nil)), [2]string{"intruder", "y"}, "invalid_grant", ""},
		{"ID-JAG for another server", bearer(jagFor(func(r *authtest.IDJAGRequest) { r.Audience = "https://as.example.com" })), [2]string{"mcp-app", "as-secret"}, "invalid_grant", ""},
		{"expired ID-JAG", bearer(jagFor(func(r *authtest.IDJAGRequest) { r.TTL = -time.Hour })), [2]string{"mcp-app", "as-secret"}, "invalid_grant", ""},
		{"untrusted ID-JAG", bearer(foreignJAG), [2]string{"mcp-app", "as-secret"}, "invalid_grant", ""},
		{"ID-JAG without client authentication", bearer(jagFor(nil)), [2]string{}, "invalid_client", ""},
		{"scope beyond the ID-JAG", func() url.Values { f := bearer(jagFor(nil)); f.Set("scope", "write"); return f }(), [2]string{"mcp-app", "as-secret"}, "invalid_scope", ""},
		{"another resource", func() url.Values { f := bearer(jagFor(nil)); f.Set("resource", "https://other.example.com"); return f }(), [2]string{"mcp-app", "as-secret"}, "invalid_target", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h http.Header
			if tt.client[0] != "" {
				h = basic(tt.client[0], tt.client[1])
			}
			a := post(t, as, "/token", tt.form, h)
			if tt.want != "" {
				if a.str("error") != tt.want {
					t.Fatalf("HTTP %d %s, want %s", a.status, a.body, tt.want)
				}
				return
			}
			if a.status != 200 {
				t.Fatalf("HTTP %d %s", a.status, a.body)
			}
			info, err := as.Verify(a.str("access_token"))
			if err != nil {
				t.Fatal(err)
			}
			if info.Subject != tt.subject || info.ClientID != tt.client[0] || !slices.Equal(info.Audience, []string{resourceURI}) || !slices.Equal(info.Scopes, []string{"read"}) {
				t.Errorf("token %+v", info)
			}
		})
	}
}

func TestWorkloadIdentity(t *testing.T) {
	const wlIssuer = "https://workload.example.com"
	wl := newSigner(t, "wl1")
	as := newServer(t, &authtest.Options{
		TrustedIssuers: []authtest.TrustedIssuer{{Issuer: wlIssuer, Keys: []crypto.PublicKey{wl.jwk()}}},
		Clients:        []authtest.Client{{ID: "worker", GrantTypes: []string{grantJWTBearer}}},
	})
	other := newSigner(t, "wl1")
	claims := func(mod func(map[string]any)) map[string]any {
		now := time.Now()
		c := map[string]any{"iss": wlIssuer, "sub": "spiffe://example.com/worker", "aud": as.URL, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text()}
		if mod != nil {
			mod(c)
		}
		return c
	}
	reused := wl.sign(t, "JWT", claims(nil))
	tests := []struct {
		name     string
		token    string
		clientID string
		want     string
		wantCID  string
	}{
		{"workload token, no client", wl.sign(t, "JWT", claims(nil)), "", "", "spiffe://example.com/worker"},
		{"workload token with a public client", reused, "worker", "", "worker"},
		{"the same workload token again", reused, "worker", "", "worker"},
		{"aud the token endpoint", wl.sign(t, "JWT", claims(func(c map[string]any) { c["aud"] = as.TokenEndpoint() })), "", "", "spiffe://example.com/worker"},
		{"wrong audience", wl.sign(t, "JWT", claims(func(c map[string]any) { c["aud"] = "https://elsewhere" })), "", "invalid_grant", ""},
		{"expired", wl.sign(t, "JWT", claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), "", "invalid_grant", ""},
		{"no exp", wl.sign(t, "JWT", claims(func(c map[string]any) { delete(c, "exp") })), "", "invalid_grant", ""},
		{"wrong key", other.sign(t, "JWT", claims(nil)), "", "invalid_grant", ""},
		{"untrusted issuer", wl.sign(t, "JWT", claims(func(c map[string]any) { c["iss"] = "https://evil.example.com" })), "", "invalid_grant", ""},
		{"garbage", "a.b.c", "", "invalid_grant", ""},
		{"unknown client", wl.sign(t, "JWT", claims(nil)), "ghost", "invalid_client", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := url.Values{"grant_type": {grantJWTBearer}, "assertion": {tt.token}, "resource": {resourceURI}}
			if tt.clientID != "" {
				f.Set("client_id", tt.clientID)
			}
			a := post(t, as, "/token", f, nil)
			if tt.want != "" {
				if a.str("error") != tt.want {
					t.Fatalf("HTTP %d %s, want %s", a.status, a.body, tt.want)
				}
				return
			}
			if a.status != 200 {
				t.Fatalf("HTTP %d %s", a.status, a.body)
			}
			info, err := as.Verify(a.str("access_token"))
			if err != nil || info.Subject != "spiffe://example.com/worker" || info.ClientID != tt.wantCID || info.Audience[0] != resourceURI {
				t.Errorf("token %v %+v", err, info)
			}
		})
	}

	// A private_key_jwt client's own assertion as the grant: single use.
	key := newSigner(t, "c")
	as.RegisterClient(authtest.Client{ID: "svc", PublicKeys: []crypto.PublicKey{key.jwk()}})
	own := key.sign(t, "", assertionClaims(as, "svc"))
	for i, want := range []int{200, 400} {
		a := post(t, as, "/token", url.Values{"grant_type": {grantJWTBearer}, "assertion": {own}}, nil)
		if a.status != want {
			t.Errorf("client assertion as a grant, use %d: HTTP %d %s", i+1, a.status, a.body)
		}
	}
}
