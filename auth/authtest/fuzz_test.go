package authtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzParseJWT feeds arbitrary text to the JWT parser every assertion,
// ID token and access token goes through: it must never panic, and what
// it accepts must be a three-part compact serialization.
func FuzzParseJWT(f *testing.F) {
	f.Add("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.AAAA")
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseJWT(s)
		if err != nil {
			return
		}
		if strings.Count(s, ".") != 2 || p.jws == nil {
			t.Fatalf("accepted %q", s)
		}
		_ = p.verify(nil)
		_ = p.claims.checkTimes(p.claims.Expiry.Time(), MaxAssertionLifetime)
	})
}

// FuzzRegister feeds arbitrary bodies to dynamic client registration: it
// must answer 201 or 400 (never panic, never 5xx but for a full table),
// and a registered client must satisfy the rules.
func FuzzRegister(f *testing.F) {
	f.Add(`{"redirect_uris":["http://127.0.0.1:1/cb"],"token_endpoint_auth_method":"none"}`)
	f.Add(`{"grant_types":["client_credentials"],"token_endpoint_auth_method":"private_key_jwt","jwks":{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}}`)
	f.Add(`{"redirect_uris":["javascript:alert(1)"]}`)
	f.Add(`[]`)
	s := NewUnstartedServer(&Options{MaxClients: 1 << 20})
	defer s.Close()
	s.URL = "http://127.0.0.1:1"
	f.Fuzz(func(t *testing.T, body string) {
		w := httptest.NewRecorder()
		s.handleRegister(w, httptest.NewRequest(http.MethodPost, "/register", strings.NewReader(body)))
		switch w.Code {
		case http.StatusCreated:
			var reg struct {
				ClientID string `json:"client_id"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &reg); err != nil {
				t.Fatalf("registration answer %q", w.Body)
			}
			s.mu.Lock()
			c := s.clients[reg.ClientID]
			delete(s.clients, reg.ClientID)
			s.mu.Unlock()
			if c == nil {
				t.Fatal("the registered client is not held")
			}
			for _, u := range c.RedirectURIs {
				if checkRedirectURI(u) != nil {
					t.Fatalf("registered redirect URI %q", u)
				}
			}
			if c.AuthMethod == methodPrivateKeyJWT && len(c.keys) == 0 && c.JWKSURI == "" {
				t.Fatal("registered a private_key_jwt client without keys")
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("HTTP %d for %q", w.Code, body)
		}
	})
}
