package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDPoPProofRoundTrip(t *testing.T) {
	k, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	other, err := GenerateDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	proof, err := k.Proof("POST", "https://rs.example/mcp?x=1#f", &ProofOptions{AccessToken: "tok", Nonce: "n1", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	good := DPoPCheck{Method: "POST", URL: "HTTPS://RS.example/mcp", AccessToken: "tok", Nonce: "n1", Now: clock}
	p, err := ParseDPoPProof(proof, &good)
	if err != nil {
		t.Fatal(err)
	}
	if p.Thumbprint != k.Thumbprint() || p.Thumbprint == other.Thumbprint() || p.ID == "" || p.Algorithm != "ES256" {
		t.Fatalf("proof = %+v", p)
	}
	tests := []struct {
		name  string
		proof string
		edit  func(c *DPoPCheck)
	}{
		{"method", proof, func(c *DPoPCheck) { c.Method = "GET" }},
		{"url", proof, func(c *DPoPCheck) { c.URL = "https://rs.example/other" }},
		{"token", proof, func(c *DPoPCheck) { c.AccessToken = "other" }},
		{"nonce", proof, func(c *DPoPCheck) { c.Nonce = "n2" }},
		{"too old", proof, func(c *DPoPCheck) { c.Now = func() time.Time { return now.Add(6 * time.Minute) } }},
		{"from the future", proof, func(c *DPoPCheck) { c.Now = func() time.Time { return now.Add(-6 * time.Minute) } }},
		{"algorithm not allowed", proof, func(c *DPoPCheck) { c.Algorithms = []string{"RS256"} }},
		{"tampered", tamper(proof), func(*DPoPCheck) {}},
		{"not a JWS", "a.b.c", func(*DPoPCheck) {}},
		{"oversized", strings.Repeat("a", maxProofSize+1), func(*DPoPCheck) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			if _, err := ParseDPoPProof(tt.proof, &c); !errors.Is(err, ErrInvalidDPoPProof) {
				t.Fatalf("err = %v, want ErrInvalidDPoPProof", err)
			}
		})
	}
}

// tamper changes one character of a JWS payload.
func tamper(jws string) string {
	parts := strings.Split(jws, ".")
	b := []byte(parts[1])
	if b[3] == 'A' {
		b[3] = 'B'
	} else {
		b[3] = 'A'
	}
	parts[1] = string(b)
	return strings.Join(parts, ".")
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://as.example/x", true},
		{"http://127.0.0.1:8080/cb", true},
		{"http://localhost/cb", true},
		{"http://[::1]:9/cb", true},
		{"http://as.example/x", false},
		{"http://127.0.0.1.evil.example/", false},
		{"https://user:pw@as.example/", false},
		{"https://as.example/#frag", false},
		{"/relative", false},
		{"ftp://as.example/", false},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInsecureURL)) {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}

func TestWellKnownURLs(t *testing.T) {
	got, err := ProtectedResourceMetadataURLs("https://mcp.example/public/mcp")
	if err != nil || strings.Join(got, " ") != "https://mcp.example/.well-known/oauth-protected-resource/public/mcp https://mcp.example/.well-known/oauth-protected-resource" {
		t.Errorf("PRM URLs = %v, %v", got, err)
	}
	got, err = ServerMetadataURLs("https://as.example/tenant1")
	if err != nil || strings.Join(got, " ") != "https://as.example/.well-known/oauth-authorization-server/tenant1 https://as.example/.well-known/openid-configuration/tenant1 https://as.example/tenant1/.well-known/openid-configuration" {
		t.Errorf("AS URLs = %v, %v", got, err)
	}
	got, err = ServerMetadataURLs("https://as.example")
	if err != nil || strings.Join(got, " ") != "https://as.example/.well-known/oauth-authorization-server https://as.example/.well-known/openid-configuration" {
		t.Errorf("AS URLs = %v, %v", got, err)
	}
}
