package authtest

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/auth"
)

// Options configure a Server. The zero value is a sensible default: an
// issuer at the root of the server, subject "user", any scope, no
// pre-registered clients, one-hour bearer or DPoP tokens.
type Options struct {
	// Path is the issuer's path, such as "/tenant1", to test discovery
	// of issuers with a path; "" puts the issuer at the server's root.
	Path string
	// Subject is the user who consents at the authorization endpoint
	// ("sub" of the tokens of the authorization code grant); "" means
	// "user".
	Subject string
	// Scopes lists the scopes the server knows, published as
	// scopes_supported; a request for any other is refused with
	// invalid_scope. Nil accepts any scope.
	Scopes []string
	// Clients are registered when the server starts.
	Clients []Client
	// TrustedIssuers are the identity providers and workload issuers
	// whose tokens the server accepts: ID tokens in token exchange, and
	// ID-JAGs and workload identity tokens in the JWT bearer grant. The
	// server always trusts the tokens it signs itself.
	TrustedIssuers []TrustedIssuer
	// Consent, when set, is called for every valid authorization
	// request before a code is issued. It may change the request's
	// Subject and narrow its Scopes; an error denies the request
	// (access_denied; the error text is not sent). It is called from the
	// server's goroutines, one per request.
	Consent func(*ConsentRequest) error
	// IDJAGClientID maps the client that asks for an ID-JAG in token
	// exchange (its client_id at this server) to the client_id the ID-JAG
	// names, the client's identifier at the authorization server
	// audience. Nil keeps the same client_id.
	IDJAGClientID func(audience, clientID string) string
	// AccessTokenTTL is the lifetime of access tokens; zero means
	// DefaultAccessTokenTTL.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the lifetime of refresh tokens; zero means
	// DefaultRefreshTokenTTL.
	RefreshTokenTTL time.Duration
	// CodeTTL is the lifetime of authorization codes; zero means
	// DefaultCodeTTL.
	CodeTTL time.Duration
	// RequireDPoP refuses token requests without a DPoP proof.
	RequireDPoP bool
	// RequireDPoPNonce refuses DPoP proofs without the server's current
	// nonce: the first token request with a proof is answered 400
	// use_dpop_nonce with a DPoP-Nonce header.
	RequireDPoPNonce bool
	// MaxClients bounds registered clients; zero means
	// DefaultMaxClients.
	MaxClients int
	// HTTPClient fetches client metadata documents and key sets; nil
	// means a client that follows no redirects.
	HTTPClient *http.Client
	// Misbehavior is how the server misbehaves from the start; see
	// Server.Misbehave to change it later.
	Misbehavior Misbehavior
	// Now is the server's clock, for tests; nil means time.Now.
	Now func() time.Time
}

// Misbehavior makes a Server break the rules, to test that clients
// notice. The zero value behaves.
type Misbehavior struct {
	// WrongIssuer publishes metadata whose "issuer" is not the server's
	// URL (it has "/wrong" appended).
	WrongIssuer bool
	// WrongResponseIssuer sends a wrong "iss" parameter in authorization
	// responses.
	WrongResponseIssuer bool
	// NoS256 leaves code_challenge_methods_supported out of the metadata.
	NoS256 bool
	// OversizedDocuments pads the metadata and the key set past
	// auth.MaxDocumentSize.
	OversizedDocuments bool
	// Delay holds every answer this long (or until the request ends).
	Delay time.Duration
	// Block, when not nil, holds every request until it is closed (or
	// yields a value), the request ends, or the server closes: a test
	// sees a slow server without sleeping.
	Block <-chan struct{}
}

// A Server is an OAuth 2.1 authorization server listening on a loopback
// port. It is safe for concurrent use.
type Server struct {
	// URL is the issuer identifier: the base URL of the server, such as
	// "http://127.0.0.1:50123", followed by Options.Path; it has no
	// trailing slash. It is set by Start.
	URL string

	opts   Options
	ts     *httptest.Server
	now    func() time.Time
	done   chan struct{}
	closed sync.Once

	assertionIDs *idSet // client and grant assertion "jti"s
	proofIDs     *idSet // DPoP proof "jti"s
	revoked      *idSet // revoked access token "jti"s

	mu        sync.Mutex
	misbehave Misbehavior
	keys      []*signingKey // the last one signs
	clients   map[string]*Client
	metaCache map[string]*metadataClient
	codes     map[string]*authCode
	refresh   map[string]*refreshGrant
	nonces    nonceState
}

// NewServer starts and returns a new Server. The caller should call
// Close when done. A nil opts is the zero Options.
func NewServer(opts *Options) *Server {
	s := NewUnstartedServer(opts)
	s.Start()
	return s
}

// NewUnstartedServer returns a new Server that is not started: the
// caller starts it with Start or StartTLS and should call Close when
// done. Like httptest.NewUnstartedServer it panics when it cannot listen
// on a loopback port, and it panics when Options.Clients holds a client
// RegisterClient refuses.
func NewUnstartedServer(opts *Options) *Server {
	s := &Server{
		done:         make(chan struct{}),
		assertionIDs: newIDSet(MaxSeenIDs),
		proofIDs:     newIDSet(MaxSeenIDs),
		revoked:      newIDSet(MaxSeenIDs),
		clients:      map[string]*Client{},
		metaCache:    map[string]*metadataClient{},
		codes:        map[string]*authCode{},
		refresh:      map[string]*refreshGrant{},
	}
	if opts != nil {
		s.opts = *opts
	}
	s.opts.Path = strings.TrimSuffix(s.opts.Path, "/")
	if s.opts.Path != "" && !strings.HasPrefix(s.opts.Path, "/") {
		s.opts.Path = "/" + s.opts.Path
	}
	if s.opts.Subject == "" {
		s.opts.Subject = "user"
	}
	s.now = s.opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.misbehave = s.opts.Misbehavior
	k, err := newSigningKey()
	if err != nil {
		panic("authtest: " + err.Error()) // crypto/rand failed: nothing works
	}
	s.keys = []*signingKey{k}
	for _, c := range s.opts.Clients {
		if _, err := s.RegisterClient(c); err != nil {
			panic("authtest: Options.Clients: " + err.Error())
		}
	}
	s.ts = httptest.NewUnstartedServer(s.routes())
	return s
}

// Start starts the server on a loopback port.
func (s *Server) Start() {
	// The URL is set before the server serves (the handlers read it).
	s.URL = "http://" + s.ts.Listener.Addr().String() + s.opts.Path
	s.ts.Start()
}

// StartTLS starts the server on a loopback port with TLS (the issuer is
// then an https URL); Client returns a client that trusts it.
func (s *Server) StartTLS() {
	s.URL = "https://" + s.ts.Listener.Addr().String() + s.opts.Path
	s.ts.StartTLS()
}

// TLS returns the server's TLS configuration, or nil before StartTLS.
func (s *Server) TLS() *tls.Config { return s.ts.TLS }

// Client returns an HTTP client configured for the server (trusting its
// certificate after StartTLS).
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Close releases requests held by Misbehavior.Block, shuts the server
// down and waits for its requests to finish.
func (s *Server) Close() {
	s.closed.Do(func() { close(s.done) })
	s.ts.Close()
}

// Misbehave changes how the server misbehaves, from the next request on.
func (s *Server) Misbehave(m Misbehavior) {
	s.mu.Lock()
	s.misbehave = m
	s.mu.Unlock()
}

func (s *Server) misbehavior() Misbehavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.misbehave
}

// Endpoint paths, under the issuer's path.
const (
	pathAuthorize  = "/authorize"
	pathToken      = "/token"
	pathRegister   = "/register"
	pathJWKS       = "/jwks"
	pathIntrospect = "/introspect"
	pathRevoke     = "/revoke"

	wellKnownOAuth  = "/.well-known/oauth-authorization-server"
	wellKnownOpenID = "/.well-known/openid-configuration"
)

// TokenEndpoint returns the URL of the token endpoint.
func (s *Server) TokenEndpoint() string { return s.URL + pathToken }

func (s *Server) routes() http.Handler {
	p := s.opts.Path
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+wellKnownOAuth+p, s.handleMetadata)
	mux.HandleFunc("GET "+wellKnownOpenID+p, s.handleMetadata)
	if p != "" {
		mux.HandleFunc("GET "+p+wellKnownOpenID, s.handleMetadata)
	}
	mux.HandleFunc("GET "+p+pathAuthorize, s.handleAuthorize)
	mux.HandleFunc("POST "+p+pathToken, s.handleToken)
	mux.HandleFunc("POST "+p+pathRegister, s.handleRegister)
	mux.HandleFunc("GET "+p+pathJWKS, s.handleJWKS)
	mux.HandleFunc("POST "+p+pathIntrospect, s.handleIntrospect)
	mux.HandleFunc("POST "+p+pathRevoke, s.handleRevoke)
	return s.hold(mux)
}

// hold delays or blocks requests as Misbehavior says.
func (s *Server) hold(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := s.misbehavior()
		if m.Block != nil {
			select {
			case <-m.Block:
			case <-r.Context().Done():
				return
			case <-s.done:
				http.Error(w, "server closing", http.StatusServiceUnavailable)
				return
			}
		}
		if m.Delay > 0 {
			t := time.NewTimer(m.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-s.done:
				t.Stop()
				http.Error(w, "server closing", http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Supported values published in the metadata.
var (
	grantTypes = []string{
		"authorization_code", "refresh_token", "client_credentials",
		grantTokenExchange, grantJWTBearer,
	}
	authMethods = []string{methodNone, methodBasic, methodPost, methodPrivateKeyJWT}
)

// Metadata returns the server's Authorization Server Metadata, as it
// publishes it (misbehavior aside).
func (s *Server) Metadata() *auth.ServerMetadata {
	algs := auth.DefaultAlgorithms()
	return &auth.ServerMetadata{
		Issuer:                            s.URL,
		AuthorizationEndpoint:             s.URL + pathAuthorize,
		TokenEndpoint:                     s.URL + pathToken,
		RegistrationEndpoint:              s.URL + pathRegister,
		JWKSURI:                           s.URL + pathJWKS,
		IntrospectionEndpoint:             s.URL + pathIntrospect,
		RevocationEndpoint:                s.URL + pathRevoke,
		ScopesSupported:                   append([]string(nil), s.opts.Scopes...),
		ResponseTypesSupported:            []string{"code"},
		GrantTypesSupported:               append([]string(nil), grantTypes...),
		TokenEndpointAuthMethodsSupported: append([]string(nil), authMethods...),
		TokenEndpointAuthSigningAlgValuesSupported: algs,
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
		DPoPSigningAlgValuesSupported:              auth.DefaultAlgorithms(),
	}
}

// metadataDocument is the published metadata: RFC 8414 members and those
// OpenID Connect discovery adds.
type metadataDocument struct {
	*auth.ServerMetadata
	ResponseModes            []string `json:"response_modes_supported"`
	SubjectTypes             []string `json:"subject_types_supported"`
	IDTokenAlgs              []string `json:"id_token_signing_alg_values_supported"`
	IntrospectionAuthMethods []string `json:"introspection_endpoint_auth_methods_supported"`
	RevocationAuthMethods    []string `json:"revocation_endpoint_auth_methods_supported"`
	Padding                  string   `json:"x_padding,omitempty"`
}

func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	m := s.misbehavior()
	md := metadataDocument{
		ServerMetadata:           s.Metadata(),
		ResponseModes:            []string{"query"},
		SubjectTypes:             []string{"public"},
		IDTokenAlgs:              []string{"ES256"},
		IntrospectionAuthMethods: []string{methodBasic, methodPost},
		RevocationAuthMethods:    []string{methodNone, methodBasic, methodPost},
	}
	if m.WrongIssuer {
		md.Issuer += "/wrong"
	}
	if m.NoS256 {
		md.CodeChallengeMethodsSupported = nil
	}
	if m.OversizedDocuments {
		md.Padding = strings.Repeat("x", auth.MaxDocumentSize)
	}
	writeJSON(w, http.StatusOK, md, false)
}

// writeJSON answers v as JSON; noStore marks the answer uncacheable, as
// answers carrying credentials must be.
func writeJSON(w http.ResponseWriter, status int, v any, noStore bool) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if noStore {
		h.Set("Cache-Control", "no-store")
		h.Set("Pragma", "no-cache")
	}
	w.WriteHeader(status)
	w.Write(b)
}

// An oauthError is an OAuth error answer (RFC 6749 section 5.2). Its
// description never holds a credential.
type oauthError struct {
	status      int
	code        string
	description string
	header      http.Header // extra headers, such as DPoP-Nonce
}

func (e *oauthError) Error() string { return e.code + ": " + e.description }

func errInvalidRequest(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_request", description: desc}
}

func errInvalidGrant(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_grant", description: desc}
}

func errInvalidClient(desc string) *oauthError {
	return &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: desc}
}

func errInvalidScope(desc string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_scope", description: desc}
}

func errUnavailable(desc string) *oauthError {
	return &oauthError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", description: desc}
}

// writeError answers e as JSON.
func writeError(w http.ResponseWriter, e *oauthError) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	body := map[string]string{"error": e.code}
	if e.description != "" {
		body["error_description"] = e.description
	}
	writeJSON(w, e.status, body, true)
}
