package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/oauth2"
)

// Token type identifiers of enterprise-managed authorization.
const (
	// TokenTypeIDToken is the subject token type of an OpenID Connect ID
	// token (RFC 8693 section 3).
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeSAML2 is the subject token type of a SAML 2.0 assertion.
	TokenTypeSAML2 = "urn:ietf:params:oauth:token-type:saml2"
	// TokenTypeIDJAG is the token type of an Identity Assertion JWT
	// Authorization Grant (ID-JAG).
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
)

// ErrIssuedTokenType reports a token exchange answer whose
// issued_token_type is not the ID-JAG asked for.
var ErrIssuedTokenType = errors.New("auth: the identity provider issued another token type than an ID-JAG")

// EnterpriseGrant is enterprise-managed authorization (SEP-990, the
// io.modelcontextprotocol/enterprise-managed-authorization extension): the
// user signed in to the MCP client through the enterprise identity
// provider (IdP), and the IdP, not the user, decides which MCP servers the
// client may reach. Token obtains a token in two requests:
//
//  1. Token exchange (RFC 8693) at the IdP's token endpoint: the user's ID
//     token (or SAML assertion) for an ID-JAG, with
//     requested_token_type=urn:ietf:params:oauth:token-type:id-jag,
//     audience = the MCP authorization server's issuer, resource = the MCP
//     server and scope.
//  2. The JWT bearer grant (RFC 7523) at the MCP authorization server, with
//     the ID-JAG as the assertion, authenticated with the client's
//     credentials there.
//
// The user is never sent to the MCP authorization server's authorization
// endpoint. An EnterpriseGrant is safe for concurrent use; it keeps no
// ID-JAG between calls.
type EnterpriseGrant struct {
	// IDToken returns the identity assertion the IdP issued at sign-in,
	// by default an OpenID Connect ID token. Required.
	IDToken func(ctx context.Context) (string, error)
	// SubjectTokenType is the token type of what IDToken returns; empty
	// means TokenTypeIDToken (TokenTypeSAML2 for a SAML assertion).
	SubjectTokenType string

	// IdPTokenURL is the IdP's token endpoint. Required.
	IdPTokenURL string
	// IdPAuth is the client at the IdP, authenticated as [ClientAuth]
	// describes, except that the IdP's metadata is not known: an empty
	// AuthMethod picks private_key_jwt with a Key, else
	// client_secret_basic with a ClientSecret, else none (the client is
	// public there and sends only its ClientID, if any). The IdP's token
	// URL is not its issuer, so private_key_jwt needs AssertionAudience
	// (the IdP's issuer, or its token endpoint if it expects that);
	// without it Token fails with ErrGrantConfig before sending
	// anything.
	IdPAuth ClientAuth
	// IdPHTTPClient sends the token exchange; nil means a default client
	// with redirects limited to HTTPS or loopback targets. It is separate
	// from GrantRequest.HTTPClient, which may add DPoP proofs meant for
	// the MCP authorization server.
	IdPHTTPClient *http.Client

	// ClientAuth authenticates the client at the MCP authorization
	// server. Its ClientID is required: the ID-JAG names it, and the
	// server checks that they match.
	ClientAuth

	// Scopes, when non-nil, replace the scopes the Authorizer asks for.
	Scopes []string
}

// Token implements [Grant].
func (g *EnterpriseGrant) Token(ctx context.Context, r *GrantRequest) (*oauth2.Token, error) {
	if err := checkGrantRequest(r); err != nil {
		return nil, err
	}
	switch {
	case g.IDToken == nil:
		return nil, fmt.Errorf("%w: an enterprise grant needs an IDToken func", ErrGrantConfig)
	case g.IdPTokenURL == "":
		return nil, fmt.Errorf("%w: an enterprise grant needs the IdP's token endpoint", ErrGrantConfig)
	case g.ClientID == "":
		return nil, fmt.Errorf("%w: an enterprise grant needs the client ID at the authorization server", ErrGrantConfig)
	case r.Server.Issuer == "":
		return nil, fmt.Errorf("%w: the authorization server has no issuer", ErrGrantConfig)
	}
	jag, err := g.exchange(ctx, r)
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag}}
	addResourceScope(form, r, g.Scopes)
	tok, err := postToken(ctx, r, &g.ClientAuth, form, time.Now)
	if err != nil {
		return nil, fmt.Errorf("auth: JWT bearer grant with the ID-JAG: %w", err)
	}
	return tok, nil
}

// exchange trades the identity assertion for an ID-JAG at the IdP.
func (g *EnterpriseGrant) exchange(ctx context.Context, r *GrantRequest) (string, error) {
	idp := &ServerMetadata{TokenEndpoint: g.IdPTokenURL}
	if err := g.checkIdPAuth(idp); err != nil {
		return "", err
	}
	subject, err := g.IDToken(ctx)
	if err != nil {
		return "", fmt.Errorf("auth: enterprise identity assertion: %w", err)
	}
	if subject == "" {
		return "", fmt.Errorf("%w: the ID token is empty", ErrNoAssertion)
	}
	subjectType := g.SubjectTokenType
	if subjectType == "" {
		subjectType = TokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {TokenTypeIDJAG},
		"audience":             {r.Server.Issuer},
		"subject_token":        {subject},
		"subject_token_type":   {subjectType},
	}
	addResourceScope(form, r, g.Scopes)
	header := make(http.Header)
	if err := g.IdPAuth.apply(idp, form, header); err != nil {
		return "", fmt.Errorf("auth: client authentication at the IdP: %w", err)
	}
	raw, err := postForm(ctx, g.IdPHTTPClient, g.IdPTokenURL, form, header)
	if err != nil {
		return "", fmt.Errorf("auth: token exchange at the IdP: %w", err)
	}
	return parseIDJAGAnswer(raw)
}

// checkIdPAuth checks what IdPAuth can check before the exchange: its
// method, and an audience for private_key_jwt, which cannot default to
// an issuer since idp, the IdP's metadata, holds only its token endpoint.
func (g *EnterpriseGrant) checkIdPAuth(idp *ServerMetadata) error {
	m, err := g.IdPAuth.method(idp)
	if err != nil {
		return fmt.Errorf("auth: client authentication at the IdP: %w", err)
	}
	if m == AuthMethodPrivateKeyJWT && g.IdPAuth.AssertionAudience == "" {
		return fmt.Errorf("%w: private_key_jwt at the IdP needs IdPAuth.AssertionAudience (the IdP's issuer is not known)", ErrGrantConfig)
	}
	return nil
}

// parseIDJAGAnswer reads a token exchange answer (RFC 8693 section 2.2)
// that must carry an ID-JAG.
func parseIDJAGAnswer(raw []byte) (string, error) {
	var a struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", fmt.Errorf("auth: token exchange at the IdP: %w: %v", ErrMalformedToken, describeJSONError(err))
	}
	if a.AccessToken == "" {
		return "", fmt.Errorf("auth: token exchange at the IdP: %w: no access_token", ErrMalformedToken)
	}
	if a.IssuedTokenType != TokenTypeIDJAG {
		return "", fmt.Errorf("%w: %q", ErrIssuedTokenType, truncate(a.IssuedTokenType, 80))
	}
	return a.AccessToken, nil
}
