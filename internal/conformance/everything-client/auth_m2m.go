package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/auth"
)

// m2mContext is the union of the MCP_CONFORMANCE_CONTEXT members of the
// suite's machine-to-machine authorization scenarios.
type m2mContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// m2mAuthorizer returns what the Authorizer of scenario needs beyond
// discovery: the Grant that obtains its token (nil: the authorization
// code flow), and the DPoP key tokens are bound to (nil: bearer tokens).
// ok is false for scenarios that are not machine-to-machine or DPoP ones.
// ctxJSON is MCP_CONFORMANCE_CONTEXT.
//
//   - auth/client-credentials-basic: client credentials, the secret in a
//     Basic header (the server lists only client_secret_basic).
//   - auth/client-credentials-jwt: client credentials with a
//     private_key_jwt assertion signed by the PEM key (aud = issuer).
//   - auth/enterprise-managed-authorization: token exchange of the ID
//     token at the IdP for an ID-JAG, then the JWT bearer grant at the
//     authorization server with client_secret_basic.
//   - auth/wif-jwt-bearer: the JWT bearer grant with valid_jwt, client_id
//     in the form (the server lists only "none"); errors are reported, not
//     retried.
//   - auth/dpop, auth/dpop-nonce: no grant (authorization code with PKCE
//     and dynamic registration), a fresh DPoP key.
func m2mAuthorizer(scenario string, ctxJSON []byte) (grant auth.Grant, dpop *auth.DPoPKey, ok bool, err error) {
	var c m2mContext
	switch scenario {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt",
		"auth/enterprise-managed-authorization", "auth/wif-jwt-bearer":
		if err := json.Unmarshal(ctxJSON, &c); err != nil {
			return nil, nil, true, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	switch scenario {
	case "auth/client-credentials-basic":
		return &auth.ClientCredentials{ClientAuth: auth.ClientAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret}}, nil, true, nil
	case "auth/client-credentials-jwt":
		key, err := parsePrivateKeyPEM(c.PrivateKeyPEM)
		if err != nil {
			return nil, nil, true, err
		}
		return &auth.ClientCredentials{ClientAuth: auth.ClientAuth{
			ClientID:         c.ClientID,
			Key:              key,
			SigningAlgorithm: c.SigningAlgorithm,
			AuthMethod:       auth.AuthMethodPrivateKeyJWT,
		}}, nil, true, nil
	case "auth/enterprise-managed-authorization":
		idToken := c.IdPIDToken
		return &auth.EnterpriseGrant{
			IDToken:     func(context.Context) (string, error) { return idToken, nil },
			IdPTokenURL: c.IdPTokenEndpoint,
			IdPAuth:     auth.ClientAuth{ClientID: c.IdPClientID},
			ClientAuth:  auth.ClientAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret},
		}, nil, true, nil
	case "auth/wif-jwt-bearer":
		jwt := c.ValidJWT
		return &auth.WorkloadGrant{
			Assertion:  func(context.Context) (string, error) { return jwt, nil },
			ClientAuth: auth.ClientAuth{ClientID: c.ClientID},
		}, nil, true, nil
	case "auth/dpop", "auth/dpop-nonce":
		key, err := auth.GenerateDPoPKey()
		if err != nil {
			return nil, nil, true, err
		}
		return nil, key, true, nil
	}
	return nil, nil, false, nil
}

// parsePrivateKeyPEM reads a PKCS #8, SEC 1 (EC) or PKCS #1 (RSA) private
// key.
func parsePrivateKeyPEM(s string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("private_key_pem: no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private_key_pem: %T cannot sign", key)
	}
	return signer, nil
}
