package auth

import (
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Client authentication methods at a token endpoint, as named by the
// "token_endpoint_auth_method" client metadata member (RFC 7591 section
// 2) and the "token_endpoint_auth_methods_supported" server metadata
// member (RFC 8414 section 2).
const (
	// AuthMethodNone sends only client_id: a public client, or one that
	// the grant's assertion identifies.
	AuthMethodNone = "none"
	// AuthMethodClientSecretBasic sends client_id and client_secret in
	// an HTTP Basic Authorization header (RFC 6749 section 2.3.1).
	AuthMethodClientSecretBasic = "client_secret_basic"
	// AuthMethodClientSecretPost sends client_id and client_secret as
	// form parameters.
	AuthMethodClientSecretPost = "client_secret_post"
	// AuthMethodPrivateKeyJWT sends a client assertion signed with the
	// client's private key (RFC 7523 section 2.2, OpenID Connect Core
	// section 9).
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// ErrNoAuthMethod reports that none of the client authentication methods
// the client's credentials allow is in the authorization server's
// token_endpoint_auth_methods_supported.
var ErrNoAuthMethod = errors.New("auth: no token endpoint authentication method in common with the server")

// ClientAuth is a client's identity and credentials at one token
// endpoint: how a grant authenticates the client. [ClientCredentials],
// [WorkloadGrant] and [EnterpriseGrant] embed one for the authorization
// server, and EnterpriseGrant.IdPAuth is one for the identity provider.
// The zero value is an anonymous client that sends nothing (method
// "none").
type ClientAuth struct {
	// ClientID is the client's identifier at the server.
	ClientID string
	// ClientSecret is the client's secret, for client_secret_basic and
	// client_secret_post.
	ClientSecret string
	// Key signs private_key_jwt client assertions: an *ecdsa.PrivateKey
	// (ES256/384/512 by curve), an *rsa.PrivateKey of at least 2048 bits
	// (PS256, or RS256 when the server lists only that) or an
	// ed25519.PrivateKey (EdDSA).
	Key crypto.Signer
	// KeyID, when set, is the "kid" header of client assertions.
	KeyID string
	// SigningAlgorithm, when set, is the JWS algorithm of client
	// assertions, such as "RS256"; it must suit Key. Empty picks the
	// key's algorithm as described for Key.
	SigningAlgorithm string
	// AuthMethod is how the client authenticates:
	// AuthMethodClientSecretBasic, AuthMethodClientSecretPost,
	// AuthMethodPrivateKeyJWT or AuthMethodNone. Empty picks one from the
	// server's token_endpoint_auth_methods_supported, in this order:
	// private_key_jwt when Key is set, then client_secret_basic and
	// client_secret_post when ClientSecret is set; with neither, none. A
	// server that lists no methods is taken to support
	// client_secret_basic (RFC 8414), and the first of that order is
	// used: private_key_jwt when Key is set.
	AuthMethod string
	// AssertionAudience is the "aud" of client assertions. Empty means
	// the server's issuer identifier, as RFC 7523bis requires; some
	// servers instead expect their token endpoint URL.
	AssertionAudience string
}

// method returns the authentication method to use with server.
func (ca *ClientAuth) method(server *ServerMetadata) (string, error) {
	if ca.AuthMethod != "" {
		switch ca.AuthMethod {
		case AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodPrivateKeyJWT, AuthMethodNone:
			return ca.AuthMethod, nil
		}
		return "", fmt.Errorf("%w: unknown client authentication method %q", ErrGrantConfig, ca.AuthMethod)
	}
	supported := server.TokenEndpointAuthMethodsSupported
	var want []string
	if ca.Key != nil {
		want = append(want, AuthMethodPrivateKeyJWT)
	}
	if ca.ClientSecret != "" {
		want = append(want, AuthMethodClientSecretBasic, AuthMethodClientSecretPost)
	}
	if len(want) == 0 {
		return AuthMethodNone, nil
	}
	if len(supported) == 0 {
		return want[0], nil
	}
	for _, m := range want {
		if slices.Contains(supported, m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("%w: the server supports %q", ErrNoAuthMethod, supported)
}

// apply authenticates a token request at server's token endpoint: it sets
// the Basic Authorization header or adds parameters to form.
func (ca *ClientAuth) apply(server *ServerMetadata, form url.Values, header http.Header) error {
	m, err := ca.method(server)
	if err != nil {
		return err
	}
	if ca.ClientID == "" && m != AuthMethodNone {
		return fmt.Errorf("%w: no client ID", ErrGrantConfig)
	}
	switch m {
	case AuthMethodClientSecretBasic:
		if ca.ClientSecret == "" {
			return fmt.Errorf("%w: client_secret_basic needs a client secret", ErrGrantConfig)
		}
		// RFC 6749 section 2.3.1: both are form-urlencoded before
		// joining, so a colon in the ID survives.
		header.Set("Authorization", "Basic "+basicAuth(url.QueryEscape(ca.ClientID), url.QueryEscape(ca.ClientSecret)))
	case AuthMethodClientSecretPost:
		if ca.ClientSecret == "" {
			return fmt.Errorf("%w: client_secret_post needs a client secret", ErrGrantConfig)
		}
		form.Set("client_id", ca.ClientID)
		form.Set("client_secret", ca.ClientSecret)
	case AuthMethodPrivateKeyJWT:
		if ca.Key == nil {
			return fmt.Errorf("%w: private_key_jwt needs a key", ErrGrantConfig)
		}
		aud := ca.AssertionAudience
		if aud == "" {
			aud = server.Issuer
		}
		if aud == "" {
			return fmt.Errorf("%w: no issuer for the client assertion's audience", ErrGrantConfig)
		}
		a, err := signClientAssertion(&assertionParams{
			ClientID:   ca.ClientID,
			Audience:   aud,
			Key:        ca.Key,
			KeyID:      ca.KeyID,
			Algorithm:  ca.SigningAlgorithm,
			Algorithms: server.TokenEndpointAuthSigningAlgValuesSupported,
			Now:        time.Now(),
		})
		if err != nil {
			return err
		}
		form.Set("client_id", ca.ClientID)
		form.Set("client_assertion_type", assertionTypeJWT)
		form.Set("client_assertion", a)
	case AuthMethodNone:
		if ca.ClientID != "" {
			form.Set("client_id", ca.ClientID)
		}
	}
	return nil
}

// basicAuth returns the base64 of "id:secret".
func basicAuth(id, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(id + ":" + secret))
}
