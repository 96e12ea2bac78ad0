package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/mcpkit/mcpkit/auth"
)

// A signingKey is one of the server's ES256 keys.
type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newSigningKey() (*signingKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a signing key: %w", err)
	}
	return &signingKey{kid: strings.ToLower(rand.Text()[:12]), priv: k}, nil
}

func (k *signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"}
}

// RotateKeys makes a new signing key the one that signs from now on, and
// returns its key ID ("kid"). The keys before it stay published at the
// jwks_uri, so that tokens they signed still verify, until
// DropRetiredKeys; past MaxSigningKeys the oldest is dropped.
func (s *Server) RotateKeys() (string, error) {
	k, err := newSigningKey()
	if err != nil {
		return "", fmt.Errorf("authtest: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
	if len(s.keys) > MaxSigningKeys {
		s.keys = append([]*signingKey(nil), s.keys[len(s.keys)-MaxSigningKeys:]...)
	}
	return k.kid, nil
}

// DropRetiredKeys stops publishing every key but the one that signs:
// tokens the others signed no longer verify.
func (s *Server) DropRetiredKeys() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = []*signingKey{s.keys[len(s.keys)-1]}
}

// KeySet returns the server's published keys, the signing one last.
func (s *Server) KeySet() *jose.JSONWebKeySet {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := &jose.JSONWebKeySet{}
	for _, k := range s.keys {
		set.Keys = append(set.Keys, k.public())
	}
	return set
}

func (s *Server) handleJWKS(w http.ResponseWriter, r *http.Request) {
	set := s.KeySet()
	if s.misbehavior().OversizedDocuments {
		writeJSON(w, http.StatusOK, struct {
			*jose.JSONWebKeySet
			Padding string `json:"x_padding"`
		}{set, strings.Repeat("x", auth.MaxDocumentSize)}, false)
		return
	}
	writeJSON(w, http.StatusOK, set, false)
}

// SignJWT signs claims as a JWT with the server's current key, with the
// given "typ" header (such as "JWT", "at+jwt" or "oauth-id-jag+jwt";
// "" for none). Tests use it to make tokens and assertions the helpers
// do not, malformed ones included.
func (s *Server) SignJWT(typ string, claims map[string]any) (string, error) {
	return s.sign(typ, claims)
}

// sign signs claims (a value encoding/json turns into an object) with the
// current key.
func (s *Server) sign(typ string, claims any) (string, error) {
	s.mu.Lock()
	k := s.keys[len(s.keys)-1]
	s.mu.Unlock()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	if err != nil {
		return "", fmt.Errorf("authtest: signer: %w", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("authtest: claims: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("authtest: signing: %w", err)
	}
	return jws.CompactSerialize()
}

// ownKeys returns the published keys, for verifying the server's own
// tokens.
func (s *Server) ownKeys() []jose.JSONWebKey {
	return s.KeySet().Keys
}

// errNoKey reports a token no known key verifies.
var errNoKey = errors.New("no key verifies the signature")
