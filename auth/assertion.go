package auth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Client assertions (RFC 7523 section 2.2, "private_key_jwt"): a client
// authenticates at a token endpoint with a JWT it signs with its own key.

// ClientAssertionLifetime is how long a client assertion is valid after
// it is made: short, since each is used for one request at once.
const ClientAssertionLifetime = time.Minute

// assertionParams are the inputs of one client assertion.
type assertionParams struct {
	ClientID string
	// Audience is the "aud": the authorization server's issuer, or its
	// token endpoint for servers that expect that.
	Audience string
	Key      crypto.Signer
	KeyID    string
	// Algorithm, when set, is the JWS algorithm to sign with.
	Algorithm string
	// Algorithms are the server's
	// token_endpoint_auth_signing_alg_values_supported; nil accepts the
	// key's default algorithm.
	Algorithms []string
	Now        time.Time
}

// assertionClaims are the claims of a client assertion.
type assertionClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	ID       string `json:"jti"`
}

// signClientAssertion returns a compact JWS whose claims are iss = sub =
// the client ID, aud, iat = now, exp = now + ClientAssertionLifetime and
// a random jti, signed with the algorithm assertionAlgorithm picks.
func signClientAssertion(p *assertionParams) (string, error) {
	alg, err := assertionAlgorithm(p.Key, p.Algorithm, p.Algorithms)
	if err != nil {
		return "", err
	}
	var key any = p.Key
	if p.KeyID != "" {
		key = jose.JSONWebKey{Key: p.Key, KeyID: p.KeyID}
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("auth: client assertion signer: %w", err)
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	payload, err := json.Marshal(assertionClaims{
		Issuer:   p.ClientID,
		Subject:  p.ClientID,
		Audience: p.Audience,
		Expiry:   p.Now.Add(ClientAssertionLifetime).Unix(),
		IssuedAt: p.Now.Unix(),
		ID:       base64.RawURLEncoding.EncodeToString(jti[:]),
	})
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("auth: signing a client assertion: %w", err)
	}
	return jws.CompactSerialize()
}

// assertionAlgorithm picks the JWS algorithm of a client assertion. An
// explicit choice (want) must suit the key. Otherwise it is the key's
// algorithm as for DPoP proofs (signingAlgorithm), except that an RSA key
// uses RS256 when the server lists RS256 and not PS256; when the server
// lists algorithms and the key's is not among them, it fails rather than
// send an assertion the server will refuse.
func assertionAlgorithm(key crypto.Signer, want string, supported []string) (string, error) {
	alg, err := signingAlgorithm(key)
	if err != nil {
		return "", fmt.Errorf("%w: client assertion key: %w", ErrGrantConfig, err)
	}
	_, isRSA := key.(*rsa.PrivateKey)
	if want != "" {
		if want == alg || isRSA && slices.Contains(rsaAlgorithms, want) {
			return want, nil
		}
		return "", fmt.Errorf("%w: a %s key cannot sign client assertions with %q", ErrGrantConfig, alg, want)
	}
	if len(supported) == 0 || slices.Contains(supported, alg) {
		return alg, nil
	}
	if isRSA && slices.Contains(supported, "RS256") {
		return "RS256", nil
	}
	return "", fmt.Errorf("%w: the server accepts client assertions signed with %q, not %s", ErrGrantConfig, supported, alg)
}

// rsaAlgorithms are the JWS algorithms an RSA key signs with.
var rsaAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
