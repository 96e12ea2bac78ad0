package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
)

const (
	testIDToken = "eyJ.id-token.sig"
	testIDJAG   = "eyJ.id-jag.sig"
)

// idpServer answers token exchanges with the ID-JAG, checking nothing;
// tests inspect what it saw.
func newIdPServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, form url.Values)) *testServer {
	if answer == nil {
		answer = func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]string{
				"access_token": testIDJAG, "issued_token_type": TokenTypeIDJAG, "token_type": "N_A",
			})
		}
	}
	return newTestServer(t, answer)
}

func TestEnterpriseGrant(t *testing.T) {
	idpKey := newGrantECKey(t)
	tests := []struct {
		name     string
		idp      ClientAuth
		checkIdP func(t *testing.T, got seenRequest)
	}{
		{"public at the IdP", ClientAuth{ClientID: "idp-client"}, func(t *testing.T, got seenRequest) {
			if got.Form.Get("client_id") != "idp-client" || got.Header.Get("Authorization") != "" {
				t.Errorf("IdP client auth: client_id %q, Authorization %q", got.Form.Get("client_id"), got.Header.Get("Authorization"))
			}
		}},
		{"basic at the IdP", ClientAuth{ClientID: "idp-client", ClientSecret: "idp secret"}, func(t *testing.T, got seenRequest) {
			if c := basicCredentials(t, got.Header); c != "idp-client:idp+secret" {
				t.Errorf("IdP Basic credentials %q", c)
			}
		}},
		{"post at the IdP", ClientAuth{ClientID: "idp-client", ClientSecret: "idp-secret", AuthMethod: AuthMethodClientSecretPost}, func(t *testing.T, got seenRequest) {
			if got.Form.Get("client_secret") != "idp-secret" || got.Form.Get("client_id") != "idp-client" {
				t.Errorf("IdP form credentials %v", got.Form)
			}
		}},
		{"private_key_jwt at the IdP", ClientAuth{ClientID: "idp-client", Key: idpKey, KeyID: "idp-k", AssertionAudience: "https://idp.example"}, func(t *testing.T, got seenRequest) {
			if got.Header.Get("Authorization") != "" || got.Form.Has("client_secret") {
				t.Error("secret-based authentication sent with private_key_jwt")
			}
			if got.Form.Get("client_id") != "idp-client" || got.Form.Get("client_assertion_type") != assertionTypeJWT {
				t.Errorf("IdP form client_id %q, client_assertion_type %q", got.Form.Get("client_id"), got.Form.Get("client_assertion_type"))
			}
			c := verifyAssertion(t, got.Form.Get("client_assertion"), &idpKey.PublicKey, "ES256", "idp-k")
			if c.Issuer != "idp-client" || c.Subject != "idp-client" || c.Audience != "https://idp.example" {
				t.Errorf("IdP assertion iss=%q sub=%q aud=%q", c.Issuer, c.Subject, c.Audience)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newIdPServer(t, nil)
			as := newTestServer(t, okToken)
			g := &EnterpriseGrant{
				IDToken:     func(context.Context) (string, error) { return testIDToken, nil },
				IdPTokenURL: idp.URL + "/token",
				IdPAuth:     tt.idp,
				ClientAuth:  ClientAuth{ClientID: "mcp-client", ClientSecret: "mcp-secret"},
			}
			tok, err := g.Token(context.Background(), &GrantRequest{
				Server:   as.metadata("client_secret_basic"),
				Resource: "https://mcp.example/mcp",
				Scopes:   []string{"read"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tok.AccessToken != "at-1" {
				t.Errorf("token = %+v", tok)
			}
			ireqs, areqs := idp.requests(), as.requests()
			if len(ireqs) != 1 || len(areqs) != 1 {
				t.Fatalf("%d IdP and %d AS requests, want 1 and 1", len(ireqs), len(areqs))
			}
			want := map[string]string{
				"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
				"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
				"audience":             as.URL,
				"resource":             "https://mcp.example/mcp",
				"scope":                "read",
				"subject_token":        testIDToken,
				"subject_token_type":   "urn:ietf:params:oauth:token-type:id_token",
			}
			for k, v := range want {
				if got := ireqs[0].Form.Get(k); got != v {
					t.Errorf("token exchange %s = %q, want %q", k, got, v)
				}
			}
			tt.checkIdP(t, ireqs[0])
			want = map[string]string{
				"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
				"assertion":  testIDJAG,
				"resource":   "https://mcp.example/mcp",
				"scope":      "read",
			}
			for k, v := range want {
				if got := areqs[0].Form.Get(k); got != v {
					t.Errorf("JWT bearer %s = %q, want %q", k, got, v)
				}
			}
			if c := basicCredentials(t, areqs[0].Header); c != "mcp-client:mcp-secret" {
				t.Errorf("AS Basic credentials %q", c)
			}
			if areqs[0].Form.Has("client_secret") || areqs[0].Form.Has("subject_token") {
				t.Error("JWT bearer request carries a secret in the form")
			}
		})
	}
}

func TestEnterpriseGrantDPoPOnlyAtTheAS(t *testing.T) {
	key := newDPoPKeyT(t)
	idp := newIdPServer(t, nil)
	as := newDPoPServer(t, func(w http.ResponseWriter, _ *http.Request, _ *DPoPProof) {
		writeGrantJSON(w, 200, map[string]any{"access_token": "bound", "token_type": "DPoP"})
	})
	g := &EnterpriseGrant{
		IDToken:     func(context.Context) (string, error) { return testIDToken, nil },
		IdPTokenURL: idp.URL + "/token", IdPAuth: ClientAuth{ClientID: "idp-client"},
		ClientAuth: ClientAuth{ClientID: "mcp-client", ClientSecret: "mcp-secret"},
	}
	tok, err := g.Token(context.Background(), &GrantRequest{
		Server: as.metadata(), Resource: "https://mcp.example/mcp", HTTPClient: NewDPoPClient(key, nil), DPoP: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Type() != "DPoP" {
		t.Errorf("type %q", tok.Type())
	}
	if idp.requests()[0].Header.Get("DPoP") != "" {
		t.Error("the IdP got a DPoP proof")
	}
}

func TestEnterpriseGrantErrors(t *testing.T) {
	const secret = "mcp-secret"
	tests := []struct {
		name     string
		idp      func(w http.ResponseWriter, r *http.Request, form url.Values)
		as       func(w http.ResponseWriter, r *http.Request, form url.Values)
		idToken  func(context.Context) (string, error)
		wantErr  error
		wantCode string
		wantAS   int // requests the AS should see
	}{
		{name: "IdP refuses", idp: func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "Invalid ID token"})
		}, wantCode: "invalid_grant"},
		{name: "IdP issues another type", idp: func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]string{"access_token": testIDJAG, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
		}, wantErr: ErrIssuedTokenType},
		{name: "IdP answers no token", idp: func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 200, map[string]string{"issued_token_type": TokenTypeIDJAG})
		}, wantErr: ErrMalformedToken},
		{name: "AS refuses", as: func(w http.ResponseWriter, _ *http.Request, _ url.Values) {
			writeGrantJSON(w, 400, map[string]string{"error": "invalid_grant"})
		}, wantCode: "invalid_grant", wantAS: 1},
		{name: "no ID token", idToken: func(context.Context) (string, error) { return "", nil }, wantErr: ErrNoAssertion},
		{name: "ID token source fails", idToken: func(context.Context) (string, error) { return "", context.Canceled }, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newIdPServer(t, tt.idp)
			if tt.as == nil {
				tt.as = okToken
			}
			as := newTestServer(t, tt.as)
			if tt.idToken == nil {
				tt.idToken = func(context.Context) (string, error) { return testIDToken, nil }
			}
			g := &EnterpriseGrant{IDToken: tt.idToken, IdPTokenURL: idp.URL + "/token", IdPAuth: ClientAuth{ClientID: "i"}, ClientAuth: ClientAuth{ClientID: "c", ClientSecret: secret}}
			_, err := g.Token(context.Background(), &GrantRequest{Server: as.metadata(), Resource: "https://mcp.example/mcp"})
			if err == nil {
				t.Fatal("no error")
			}
			checkGrantNoSecrets(t, err, secret, testIDToken, testIDJAG)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantCode != "" {
				var he *HTTPError
				if !errors.As(err, &he) || he.Code != tt.wantCode {
					t.Errorf("err = %v, want *HTTPError %s", err, tt.wantCode)
				}
			}
			if got := len(as.requests()); got != tt.wantAS {
				t.Errorf("%d AS requests, want %d", got, tt.wantAS)
			}
		})
	}
}

func TestEnterpriseGrantConfig(t *testing.T) {
	md := &ServerMetadata{Issuer: "https://as.example", TokenEndpoint: "https://as.example/token"}
	idt := func(context.Context) (string, error) { return "t", nil }
	key := newGrantECKey(t)
	tests := []struct {
		name string
		g    EnterpriseGrant
		md   *ServerMetadata
	}{
		{"no IDToken", EnterpriseGrant{IdPTokenURL: "https://idp.example/token", ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"no IdP URL", EnterpriseGrant{IDToken: idt, ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"no client ID", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token"}, md},
		{"no issuer", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", ClientAuth: ClientAuth{ClientID: "c"}}, &ServerMetadata{TokenEndpoint: "https://as.example/token"}},
		{"private_key_jwt at the IdP without a key", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", IdPAuth: ClientAuth{ClientID: "i", AuthMethod: AuthMethodPrivateKeyJWT, AssertionAudience: "https://idp.example"}, ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"private_key_jwt at the IdP, no audience", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", IdPAuth: ClientAuth{ClientID: "i", AuthMethod: AuthMethodPrivateKeyJWT, Key: key}, ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"a key at the IdP, no audience", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", IdPAuth: ClientAuth{ClientID: "i", Key: key, ClientSecret: "s"}, ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"unknown method at the IdP", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", IdPAuth: ClientAuth{ClientID: "i", AuthMethod: "tls_client_auth"}, ClientAuth: ClientAuth{ClientID: "c"}}, md},
		{"IdP secret without a client ID", EnterpriseGrant{IDToken: idt, IdPTokenURL: "https://idp.example/token", IdPAuth: ClientAuth{ClientSecret: "s"}, ClientAuth: ClientAuth{ClientID: "c"}}, md},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An IdP at 127.0.0.1 that records requests: none may be sent.
			idp := newIdPServer(t, nil)
			if tt.g.IdPTokenURL != "" {
				tt.g.IdPTokenURL = idp.URL + "/token"
			}
			_, err := tt.g.Token(context.Background(), &GrantRequest{Server: tt.md})
			if !errors.Is(err, ErrGrantConfig) {
				t.Errorf("err = %v, want ErrGrantConfig", err)
			}
			if n := len(idp.requests()); n != 0 {
				t.Errorf("%d requests to the IdP, want none", n)
			}
		})
	}
}

func FuzzParseIDJAGAnswer(f *testing.F) {
	f.Add([]byte(`{"access_token":"j","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`))
	f.Add([]byte(`{"access_token":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		jag, err := parseIDJAGAnswer(raw)
		if err == nil && jag == "" {
			t.Fatalf("accepted %q with an empty ID-JAG", raw)
		}
	})
}
