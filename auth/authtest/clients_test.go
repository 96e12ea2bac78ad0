package authtest_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/mcpkit/mcpkit/auth/authtest"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// signer signs JWTs with an ES256 key.
type signer struct {
	key *ecdsa.PrivateKey
	kid string
}

func newSigner(t *testing.T, kid string) *signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{key: k, kid: kid}
}

func (s *signer) sign(t *testing.T, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	sg, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.key, KeyID: s.kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, err := sg.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (s *signer) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &s.key.PublicKey, KeyID: s.kid, Algorithm: "ES256", Use: "sig"}
}

// assertionClaims are valid private_key_jwt claims for client id at s.
func assertionClaims(s *authtest.Server, id string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": id, "sub": id, "aud": s.TokenEndpoint(), "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": rand.Text()}
}

func TestClientCredentials(t *testing.T) {
	key := newSigner(t, "k1")
	wrongKey := newSigner(t, "k1")
	s := newServer(t, &authtest.Options{
		Scopes: []string{"read", "write"},
		Clients: []authtest.Client{
			{ID: "basic", Secret: "b-secret"},
			{ID: "post", Secret: "p-secret", AuthMethod: "client_secret_post"},
			{ID: "jwt", PublicKeys: []crypto.PublicKey{&key.key.PublicKey}},
			{ID: "public", RedirectURIs: []string{redirectURI}},
		},
	})
	ctx := ctxWith(s)
	cc := func(id, secret string, style oauth2.AuthStyle, scopes ...string) *clientcredentials.Config {
		return &clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: s.TokenEndpoint(), AuthStyle: style, Scopes: scopes,
			EndpointParams: url.Values{"resource": {resourceURI}}}
	}
	t.Run("x/oauth2", func(t *testing.T) {
		tests := []struct {
			name string
			cfg  *clientcredentials.Config
			want string // error code, or "" for success
		}{
			{"basic", cc("basic", "b-secret", oauth2.AuthStyleInHeader, "read"), ""},
			{"post", cc("post", "p-secret", oauth2.AuthStyleInParams, "read", "write"), ""},
			{"wrong secret", cc("basic", "nope", oauth2.AuthStyleInHeader), "invalid_client"},
			{"unknown client", cc("ghost", "x", oauth2.AuthStyleInHeader), "invalid_client"},
			{"wrong method", cc("post", "p-secret", oauth2.AuthStyleInHeader), "invalid_client"},
			{"unknown scope", cc("basic", "b-secret", oauth2.AuthStyleInHeader, "admin"), "invalid_scope"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tok, err := tt.cfg.Token(ctx)
				if tt.want != "" {
					if retrieveCode(err) != tt.want {
						t.Fatalf("error %v, want %s", err, tt.want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				info, err := s.Verify(tok.AccessToken)
				if err != nil {
					t.Fatal(err)
				}
				if info.Subject != tt.cfg.ClientID || info.ClientID != tt.cfg.ClientID || !info.HasScopes(tt.cfg.Scopes...) || info.Audience[0] != resourceURI || tok.RefreshToken != "" {
					t.Errorf("token %+v", info)
				}
			})
		}
	})

	t.Run("private_key_jwt", func(t *testing.T) {
		replayed := assertionClaims(s, "jwt")
		form := func(assertion string) url.Values {
			return url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion}}
		}
		tests := []struct {
			name  string
			form  url.Values
			basic bool
			want  string
		}{
			{"valid, aud the token endpoint", form(key.sign(t, "", assertionClaims(s, "jwt"))), false, ""},
			{"valid, aud the issuer", form(key.sign(t, "", func() map[string]any { c := assertionClaims(s, "jwt"); c["aud"] = s.URL; return c }())), false, ""},
			{"first use", form(key.sign(t, "", replayed)), false, ""},
			{"replayed jti", form(key.sign(t, "", replayed)), false, "invalid_client"},
			{"wrong key", form(wrongKey.sign(t, "", assertionClaims(s, "jwt"))), false, "invalid_client"},
			{"wrong audience", form(key.sign(t, "", func() map[string]any { c := assertionClaims(s, "jwt"); c["aud"] = "https://elsewhere"; return c }())), false, "invalid_client"},
			{"expired", form(key.sign(t, "", func() map[string]any {
				c := assertionClaims(s, "jwt")
				c["exp"] = time.Now().Add(-time.Hour).Unix()
				return c
			}())), false, "invalid_client"},
			{"no jti", form(key.sign(t, "", func() map[string]any { c := assertionClaims(s, "jwt"); delete(c, "jti"); return c }())), false, "invalid_client"},
			{"sub not the client", form(key.sign(t, "", func() map[string]any { c := assertionClaims(s, "jwt"); c["sub"] = "x"; return c }())), false, "invalid_client"},
			{"not a JWT", form("abc.def"), false, "invalid_client"},
			{"two methods", form(key.sign(t, "", assertionClaims(s, "jwt"))), true, "invalid_request"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var h http.Header
				if tt.basic {
					h = basic("basic", "b-secret")
				}
				a := post(t, s, "/token", tt.form, h)
				if tt.want == "" {
					if a.status != 200 || a.str("access_token") == "" {
						t.Fatalf("HTTP %d %s", a.status, a.body)
					}
					return
				}
				if a.str("error") != tt.want {
					t.Fatalf("HTTP %d %s, want %s", a.status, a.body, tt.want)
				}
				if strings.Contains(a.body, tt.form.Get("client_assertion")) {
					t.Errorf("the answer echoes the assertion")
				}
			})
		}
	})

	t.Run("public client", func(t *testing.T) {
		a := post(t, s, "/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"public"}}, nil)
		if a.str("error") != "unauthorized_client" {
			t.Errorf("HTTP %d %s", a.status, a.body)
		}
	})
}

func TestRegistration(t *testing.T) {
	key := newSigner(t, "reg")
	s := newServer(t, &authtest.Options{MaxClients: 4})
	register := func(t *testing.T, body string) *tokenAnswer {
		t.Helper()
		resp, err := s.Client().Post(s.Metadata().RegistrationEndpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		a := &tokenAnswer{status: resp.StatusCode}
		json.NewDecoder(resp.Body).Decode(&a.fields)
		return a
	}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{key.jwk()}})
	priv, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.key, KeyID: "p"}}})
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantError  string
		wantSecret bool
	}{
		{"public", `{"redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"none","client_name":"t"}`, 201, "", false},
		{"default method is client_secret_basic", `{"redirect_uris":["https://app.example.com/cb"]}`, 201, "", true},
		{"private_key_jwt", `{"grant_types":["client_credentials"],"token_endpoint_auth_method":"private_key_jwt","jwks":` + string(jwks) + `}`, 201, "", false},
		{"private key in jwks", `{"grant_types":["client_credentials"],"token_endpoint_auth_method":"private_key_jwt","jwks":` + string(priv) + `}`, 400, "invalid_client_metadata", false},
		{"http redirect off loopback", `{"redirect_uris":["http://app.example.com/cb"],"token_endpoint_auth_method":"none"}`, 400, "invalid_redirect_uri", false},
		{"redirect with a fragment", `{"redirect_uris":["https://app.example.com/cb#x"],"token_endpoint_auth_method":"none"}`, 400, "invalid_redirect_uri", false},
		{"no redirect_uris", `{"token_endpoint_auth_method":"none"}`, 400, "invalid_redirect_uri", false},
		{"unknown method", `{"redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"tls_client_auth"}`, 400, "invalid_client_metadata", false},
		{"not JSON", `{`, 400, "invalid_client_metadata", false},
		{"too large", `{"client_name":"` + strings.Repeat("x", authtest.MaxRequestBody) + `"}`, 400, "invalid_client_metadata", false},
		{"private_key_jwt again", `{"grant_types":["client_credentials"],"token_endpoint_auth_method":"private_key_jwt","jwks":` + string(jwks) + `}`, 201, "", false},
		{"over MaxClients", `{"redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"none"}`, 503, "temporarily_unavailable", false},
	}
	var jwtClient string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := register(t, tt.body)
			if a.status != tt.wantStatus || a.str("error") != tt.wantError {
				t.Fatalf("HTTP %d %v", a.status, a.fields)
			}
			if tt.wantStatus != 201 {
				return
			}
			if a.str("client_id") == "" || (a.str("client_secret") != "") != tt.wantSecret {
				t.Errorf("registration answer %v", a.fields)
			}
			if tt.name == "private_key_jwt" {
				jwtClient = a.str("client_id")
			}
		})
	}

	// The registered private_key_jwt client obtains a token.
	a := post(t, s, "/token", url.Values{"grant_type": {"client_credentials"},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {key.sign(t, "", assertionClaims(s, jwtClient))}}, nil)
	if a.status != 200 {
		t.Errorf("registered private_key_jwt client: HTTP %d %s", a.status, a.body)
	}

	// A registered public client runs the code flow.
	s2 := newServer(t, nil)
	resp, err := s2.Client().Post(s2.Metadata().RegistrationEndpoint, "application/json", strings.NewReader(`{"redirect_uris":["`+redirectURI+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	cfg := config(s2, reg.ClientID, "", redirectURI, oauth2.AuthStyleInParams)
	v := oauth2.GenerateVerifier()
	_, loc := authorize(t, s2, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v)))
	if _, err := cfg.Exchange(ctxWith(s2), loc.Query().Get("code"), oauth2.VerifierOption(v)); err != nil {
		t.Errorf("registered public client: %v", err)
	}
}

func TestClientIDMetadataDocument(t *testing.T) {
	docs := map[string]string{}
	var host *httptest.Server
	host = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.ReplaceAll(body, "{{host}}", host.URL)))
	}))
	defer host.Close()
	docs["/good.json"] = `{"client_id":"{{host}}/good.json","client_name":"Good","redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"none"}`
	docs["/mismatch.json"] = `{"client_id":"{{host}}/other.json","redirect_uris":["` + redirectURI + `"]}`
	docs["/secret.json"] = `{"client_id":"{{host}}/secret.json","redirect_uris":["` + redirectURI + `"],"token_endpoint_auth_method":"client_secret_basic"}`
	docs["/huge.json"] = `{"client_id":"{{host}}/huge.json","redirect_uris":["` + redirectURI + `"],"client_name":"` + strings.Repeat("x", authtest.MaxClientDocument) + `"}`
	docs["/other-redirect.json"] = `{"client_id":"{{host}}/other-redirect.json","redirect_uris":["http://127.0.0.1:1/cb"]}`
	s := newServer(t, nil)
	tests := []struct {
		name   string
		path   string
		wantOK bool
	}{
		{"valid", "/good.json", true},
		{"client_id is not the URL", "/mismatch.json", false},
		{"shared secret", "/secret.json", false},
		{"too large", "/huge.json", false},
		{"redirect_uri not listed", "/other-redirect.json", false},
		{"not found", "/missing.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config(s, host.URL+tt.path, "", redirectURI, oauth2.AuthStyleInParams)
			v := oauth2.GenerateVerifier()
			status, loc := authorize(t, s, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v)))
			if !tt.wantOK {
				if status != http.StatusBadRequest {
					t.Fatalf("HTTP %d, want 400", status)
				}
				return
			}
			if status != http.StatusFound {
				t.Fatalf("HTTP %d", status)
			}
			tok, err := cfg.Exchange(ctxWith(s), loc.Query().Get("code"), oauth2.VerifierOption(v))
			if err != nil {
				t.Fatal(err)
			}
			if info, err := s.Verify(tok.AccessToken); err != nil || info.ClientID != host.URL+tt.path {
				t.Errorf("token: %v %+v", err, info)
			}
		})
	}
}
