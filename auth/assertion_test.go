package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
	"time"
)

func TestAssertionAlgorithm(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	smallRSA, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		key       crypto.Signer
		choice    string
		supported []string
		want      string
		wantErr   error
	}{
		{"P-256", newGrantECKey(t), "", nil, "ES256", nil},
		{"P-256 listed", newGrantECKey(t), "", []string{"RS256", "ES256"}, "ES256", nil},
		{"P-384", p384, "", nil, "ES384", nil},
		{"RSA", rsaKey, "", nil, "PS256", nil},
		{"RSA, server lists RS256 only", rsaKey, "", []string{"RS256"}, "RS256", nil},
		{"RSA, server lists both", rsaKey, "", []string{"RS256", "PS256"}, "PS256", nil},
		{"Ed25519", edKey, "", nil, "EdDSA", nil},
		{"EC key, server wants RSA", newGrantECKey(t), "", []string{"RS256"}, "", ErrGrantConfig},
		{"RSA too small", smallRSA, "", nil, "", ErrGrantConfig},
		{"RSA, RS384 chosen", rsaKey, "RS384", []string{"PS256"}, "RS384", nil},
		{"P-256, ES256 chosen", newGrantECKey(t), "ES256", nil, "ES256", nil},
		{"P-256, ES384 chosen", newGrantECKey(t), "ES384", nil, "", ErrGrantConfig},
		{"P-256, HS256 chosen", newGrantECKey(t), "HS256", nil, "", ErrGrantConfig},
		{"RSA, none chosen", rsaKey, "none", nil, "", ErrGrantConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := assertionAlgorithm(tt.key, tt.choice, tt.supported)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("assertionAlgorithm() = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSignClientAssertion(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		key     crypto.Signer
		pub     any
		choice  string
		algs    []string
		wantAlg string
	}{
		{"ES256", newGrantECKey(t), nil, "", nil, "ES256"},
		{"RS256", rsaKey, &rsaKey.PublicKey, "", []string{"RS256"}, "RS256"},
		{"PS256", rsaKey, &rsaKey.PublicKey, "", nil, "PS256"},
		{"RS512 chosen", rsaKey, &rsaKey.PublicKey, "RS512", nil, "RS512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			a, err := signClientAssertion(&assertionParams{
				ClientID: "client-1", Audience: "https://as.example", Key: tt.key, KeyID: "kid-1", Algorithm: tt.choice, Algorithms: tt.algs, Now: now,
			})
			if err != nil {
				t.Fatal(err)
			}
			pub := tt.pub
			if pub == nil {
				pub = tt.key.Public()
			}
			c := verifyAssertion(t, a, pub, tt.wantAlg, "kid-1")
			if c.Issuer != "client-1" || c.Subject != "client-1" || c.Audience != "https://as.example" || c.IssuedAt != now.Unix() {
				t.Errorf("claims = %+v", c)
			}
			b, err := signClientAssertion(&assertionParams{ClientID: "client-1", Audience: "x", Key: tt.key, Algorithm: tt.choice, Algorithms: tt.algs, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if c2 := verifyAssertion(t, b, pub, tt.wantAlg, ""); c2.ID == c.ID {
				t.Error("two assertions share a jti")
			}
		})
	}
}
