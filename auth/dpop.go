package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// DPoP (RFC 9449) binds an access token to a key the client holds: the
// client signs a proof for every request, and the token names the key's
// thumbprint ("cnf.jkt"). This file holds what both sides share: signing
// proofs (DPoPKey) and checking one proof (ParseDPoPProof). Replay and
// nonce state belong to the verifier that uses them.

// ErrInvalidDPoPProof reports a DPoP proof that is malformed, badly signed
// or does not match the request it came with.
var ErrInvalidDPoPProof = errors.New("auth: invalid DPoP proof")

// defaultAsymmetricAlgorithms are the JWS algorithms accepted where a
// public key verifies, when none are configured (see DefaultAlgorithms).
var defaultAsymmetricAlgorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// DefaultAlgorithms returns the JWS algorithms accepted when none are
// configured: the asymmetric ones (ES256/384/512, RS256/384/512,
// PS256/384/512, EdDSA). "none" and the HMAC algorithms are never
// accepted where a public key verifies.
func DefaultAlgorithms() []string { return slices.Clone(defaultAsymmetricAlgorithms) }

// A DPoPKey is a client's proof-of-possession key: it signs the DPoP
// proofs of token requests and of requests carrying a DPoP-bound token.
// It is safe for concurrent use.
type DPoPKey struct {
	signer     jose.Signer
	alg        string
	thumbprint string
}

// GenerateDPoPKey makes a new ECDSA P-256 key signing with ES256.
func GenerateDPoPKey() (*DPoPKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("auth: generating a DPoP key: %w", err)
	}
	return NewDPoPKey(k)
}

// NewDPoPKey returns a DPoPKey signing with key: an *ecdsa.PrivateKey
// (ES256, ES384 or ES512 by its curve), an *rsa.PrivateKey (PS256) or an
// ed25519.PrivateKey (EdDSA).
func NewDPoPKey(key crypto.Signer) (*DPoPKey, error) {
	alg, err := signingAlgorithm(key)
	if err != nil {
		return nil, err
	}
	pub := jose.JSONWebKey{Key: key.Public()}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("auth: DPoP key thumbprint: %w", err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, fmt.Errorf("auth: DPoP signer: %w", err)
	}
	return &DPoPKey{signer: s, alg: alg, thumbprint: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// signingAlgorithm picks the JWS algorithm for a private key.
func signingAlgorithm(key crypto.Signer) (string, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", errors.New("auth: unsupported ECDSA curve")
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return "", errors.New("auth: RSA keys must have at least 2048 bits")
		}
		return "PS256", nil
	case ed25519.PrivateKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("auth: unsupported key type %T", key)
}

// Algorithm returns the JWS algorithm of the key's proofs, such as "ES256".
func (k *DPoPKey) Algorithm() string { return k.alg }

// Thumbprint returns the key's JWK SHA-256 thumbprint (RFC 7638),
// base64url-encoded: the "jkt" a DPoP-bound token names.
func (k *DPoPKey) Thumbprint() string { return k.thumbprint }

// ProofOptions are the optional members of a DPoP proof.
type ProofOptions struct {
	// AccessToken, when set, is hashed into "ath": required on requests
	// to a resource server that carry a DPoP-bound token.
	AccessToken string
	// Nonce, when set, is the server-provided nonce ("nonce").
	Nonce string
	// Now overrides the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// dpopClaims are the claims of a DPoP proof.
type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// Proof returns a signed DPoP proof for a request with the given method
// and target URL (its query and fragment are left out of "htu").
func (k *DPoPKey) Proof(method, target string, opts *ProofOptions) (string, error) {
	htu, err := proofURL(target)
	if err != nil {
		return "", err
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	now := time.Now
	c := dpopClaims{JTI: base64.RawURLEncoding.EncodeToString(jti[:]), HTM: method, HTU: htu}
	if opts != nil {
		if opts.Now != nil {
			now = opts.Now
		}
		if opts.AccessToken != "" {
			c.ATH = AccessTokenHash(opts.AccessToken)
		}
		c.Nonce = opts.Nonce
	}
	c.IAT = now().Unix()
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	jws, err := k.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("auth: signing a DPoP proof: %w", err)
	}
	return jws.CompactSerialize()
}

// AccessTokenHash returns the "ath" of a DPoP proof for token: the
// base64url SHA-256 of its ASCII text.
func AccessTokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// proofURL returns the "htu" of a request URL: scheme, host and path,
// without query and fragment.
func proofURL(target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("auth: DPoP target %q is not an absolute URL", redactURL(target))
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.EscapedPath(), nil
}

// A DPoPProof is a DPoP proof whose signature and syntax were verified.
type DPoPProof struct {
	// Thumbprint is the JWK SHA-256 thumbprint of the key that signed it.
	Thumbprint string
	// Algorithm is the proof's JWS algorithm.
	Algorithm string
	// ID is the proof's unique identifier ("jti"), for replay detection.
	ID string
	// Method and URL are the request's method and URL the proof was
	// made for ("htm", "htu").
	Method, URL string
	// IssuedAt is when the client made the proof ("iat").
	IssuedAt time.Time
	// Nonce is the server nonce the proof carries, or "".
	Nonce string
	// AccessTokenHash is the proof's "ath", or "".
	AccessTokenHash string
}

// DPoPCheck says what request a proof must match.
type DPoPCheck struct {
	// Method and URL are the request's method and URL. The URL's query
	// and fragment are ignored, as are the case of scheme and host.
	Method, URL string
	// AccessToken, when set, must hash to the proof's "ath".
	AccessToken string
	// Nonce, when set, must equal the proof's "nonce".
	Nonce string
	// Algorithms lists the JWS algorithms accepted; nil means
	// [DefaultAlgorithms].
	Algorithms []string
	// Window bounds how far the proof's "iat" may be from now, either
	// way; zero means 5 minutes.
	Window time.Duration
	// Now overrides the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// maxProofSize bounds the size of a DPoP proof accepted for parsing.
const maxProofSize = 8 << 10

// ParseDPoPProof verifies a DPoP proof: it is a compact JWS of type
// "dpop+jwt" signed with an accepted asymmetric algorithm by the public
// key in its "jwk" header, and its claims match check. It does not
// detect replays; a verifier keeps the IDs it saw. Errors wrap
// [ErrInvalidDPoPProof].
func ParseDPoPProof(proof string, check *DPoPCheck) (*DPoPProof, error) {
	if len(proof) > maxProofSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidDPoPProof, maxProofSize)
	}
	algs := check.Algorithms
	if algs == nil {
		algs = defaultAsymmetricAlgorithms
	}
	jalgs := make([]jose.SignatureAlgorithm, 0, len(algs))
	for _, a := range algs {
		if a == "none" || strings.HasPrefix(a, "HS") {
			continue
		}
		jalgs = append(jalgs, jose.SignatureAlgorithm(a))
	}
	jws, err := jose.ParseSignedCompact(proof, jalgs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidDPoPProof, err)
	}
	if len(jws.Signatures) != 1 {
		return nil, fmt.Errorf("%w: want one signature", ErrInvalidDPoPProof)
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return nil, fmt.Errorf("%w: typ is not dpop+jwt", ErrInvalidDPoPProof)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.Valid() {
		return nil, fmt.Errorf("%w: no valid jwk header", ErrInvalidDPoPProof)
	}
	if !h.JSONWebKey.IsPublic() {
		return nil, fmt.Errorf("%w: jwk holds a private key", ErrInvalidDPoPProof)
	}
	payload, err := jws.Verify(h.JSONWebKey.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: signature does not verify", ErrInvalidDPoPProof)
	}
	var c dpopClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", ErrInvalidDPoPProof, err)
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("%w: thumbprint: %v", ErrInvalidDPoPProof, err)
	}
	p := &DPoPProof{
		Thumbprint:      base64.RawURLEncoding.EncodeToString(tp),
		Algorithm:       h.Algorithm,
		ID:              c.JTI,
		Method:          c.HTM,
		URL:             c.HTU,
		IssuedAt:        time.Unix(c.IAT, 0),
		Nonce:           c.Nonce,
		AccessTokenHash: c.ATH,
	}
	if err := p.match(check); err != nil {
		return nil, err
	}
	return p, nil
}

// match checks the proof's claims against the request.
func (p *DPoPProof) match(check *DPoPCheck) error {
	if p.ID == "" {
		return fmt.Errorf("%w: no jti", ErrInvalidDPoPProof)
	}
	if p.Method != check.Method {
		return fmt.Errorf("%w: htm %q does not match the request", ErrInvalidDPoPProof, p.Method)
	}
	if strings.ContainsAny(p.URL, "?#") {
		return fmt.Errorf("%w: htu has a query or fragment", ErrInvalidDPoPProof)
	}
	want, err := proofURL(check.URL)
	if err != nil {
		return err
	}
	got, err := proofURL(p.URL)
	if err != nil || got != want {
		return fmt.Errorf("%w: htu does not match the request URL", ErrInvalidDPoPProof)
	}
	now := time.Now
	if check.Now != nil {
		now = check.Now
	}
	window := check.Window
	if window == 0 {
		window = 5 * time.Minute
	}
	if d := now().Sub(p.IssuedAt); p.IssuedAt.Unix() == 0 || d > window || d < -window {
		return fmt.Errorf("%w: iat outside the accepted window", ErrInvalidDPoPProof)
	}
	if check.AccessToken != "" && p.AccessTokenHash != AccessTokenHash(check.AccessToken) {
		return fmt.Errorf("%w: ath does not match the access token", ErrInvalidDPoPProof)
	}
	if check.Nonce != "" && p.Nonce != check.Nonce {
		return fmt.Errorf("%w: nonce does not match", ErrInvalidDPoPProof)
	}
	return nil
}
