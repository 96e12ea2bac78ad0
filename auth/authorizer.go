package auth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Defaults of an [Authorizer].
const (
	// DefaultMaxStepUps is how many times one request is re-authorized
	// for insufficient scope (HTTP 403) before it fails with
	// [ErrStepUpLimit].
	DefaultMaxStepUps = 2
	// RefreshBefore is how long before its expiry a token with a refresh
	// token is refreshed.
	RefreshBefore = 30 * time.Second
	// maxNonceSize bounds a DPoP-Nonce header kept: 1 KiB.
	maxNonceSize = 1 << 10
	// maxDrain bounds what is read of a refused response before it is
	// closed and the request sent again: 64 KiB.
	maxDrain = 64 << 10
)

// An Authorizer authorizes a host's requests to MCP servers that require
// OAuth 2.1 authorization. Wrap an HTTP transport with
// [Authorizer.RoundTripper], or give the Authorizer to a transport of
// package transport (its Authorizer field). Then a request refused with
// 401 makes the Authorizer discover the server's authorization server
// ([Discover]), identify the client there, obtain a token (the
// authorization code flow with PKCE through Agent, or Grant) and send
// the request again; a request refused with 403 insufficient_scope is
// re-authorized with the union of the scopes asked for before and the
// challenge's, up to MaxStepUps times. Tokens are refreshed shortly
// before they expire when the server gave a refresh token. Concurrent
// requests that need authorization share one flow.
//
// The zero value stores tokens in memory and has no way to send a user
// to an authorization server: set Agent and RedirectURL for the
// authorization code flow, or Grant. An Authorizer is safe for
// concurrent use and must not be copied after first use.
type Authorizer struct {
	// PreRegistered returns the client's pre-registered credentials at
	// the authorization server issuer, or nil. Credentials are offered
	// only to the issuer they were returned for.
	PreRegistered func(issuer string) *ClientInfo
	// ClientMetadataURL is the HTTPS URL of the client's Client ID
	// Metadata Document, used as client_id at authorization servers that
	// advertise client_id_metadata_document_supported, when none is
	// pre-registered. It must be an HTTPS URL with a path; another value
	// is not used.
	ClientMetadataURL string
	// Registration is the metadata sent in dynamic client registration,
	// used at servers with a registration endpoint when there is neither
	// a pre-registered client nor a usable metadata document URL.
	Registration ClientMetadata
	// RedirectURL is the redirect URI of the authorization code flow,
	// such as a [LoopbackAgent]'s.
	RedirectURL string
	// Agent sends the user to the authorization server and returns its
	// redirect; see [LoopbackAgent] and [HeadlessAgent].
	Agent Agent
	// Grant, when set, obtains tokens instead of the authorization code
	// flow (client credentials and the like).
	Grant Grant
	// Store keeps tokens and registrations; nil means one in memory.
	Store TokenStore
	// DPoP, when set, is the key DPoP-bound tokens (token_type "DPoP")
	// are bound to: requests carry "Authorization: DPoP" and a proof,
	// and a server's use_dpop_nonce challenge is answered once with its
	// nonce. Requests to the authorization server carry proofs only when
	// HTTPClient adds them.
	DPoP *DPoPKey
	// HTTPClient sends the requests for metadata and to the
	// authorization server. Nil means a client that follows redirects
	// only to HTTPS or loopback URLs. Each request is bounded by
	// DefaultHTTPTimeout and each answer by MaxDocumentSize.
	HTTPClient *http.Client
	// Scopes are added to every authorization request.
	Scopes []string
	// MaxStepUps bounds the re-authorizations of one request for
	// insufficient scope. Zero means DefaultMaxStepUps; negative means
	// none.
	MaxStepUps int
	// Logger receives events (discovery, registration, authorization,
	// refresh) at level Info; nil means none. No token, secret, code or
	// verifier is ever logged.
	Logger *slog.Logger

	now func() time.Time // nil means time.Now; set by tests

	mu       sync.Mutex
	servers  map[string]*serverState
	memStore MemoryStore
}

// serverState is what the Authorizer holds for one MCP server origin.
type serverState struct {
	key string

	mu        sync.Mutex
	loaded    bool         // tok has been loaded from the store
	tok       *StoredToken // the token in use, or nil
	meta      *ServerMetadata
	client    *ClientInfo
	requested []string // the scopes last asked for
	flight    *flight  // the flow in progress, or nil
	nonce     string   // the server's last DPoP nonce
}

// flight is one authorization in progress; others wait for it.
type flight struct {
	done chan struct{}
	err  error
}

func (a *Authorizer) store() TokenStore {
	if a.Store != nil {
		return a.Store
	}
	return &a.memStore
}

func (a *Authorizer) httpClient() *http.Client { return defaultClient(a.HTTPClient) }

// tokenClient is the client for token requests (the code exchange,
// refresh, and a Grant's requests): the one place where requests to the
// token endpoint would gain DPoP proofs when DPoP is set.
func (a *Authorizer) tokenClient() *http.Client { return a.httpClient() }

func (a *Authorizer) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

func (a *Authorizer) maxStepUps() int {
	switch {
	case a.MaxStepUps == 0:
		return DefaultMaxStepUps
	case a.MaxStepUps < 0:
		return 0
	}
	return a.MaxStepUps
}

func (a *Authorizer) log(ctx context.Context, msg string, args ...any) {
	if a.Logger != nil {
		a.Logger.InfoContext(ctx, msg, args...)
	}
}

func (a *Authorizer) state(key string) *serverState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.servers == nil {
		a.servers = map[string]*serverState{}
	}
	st := a.servers[key]
	if st == nil {
		st = &serverState{key: key}
		a.servers[key] = st
	}
	return st
}

// RoundTripper returns an http.RoundTripper that authorizes the requests
// it sends with base (nil means http.DefaultTransport). A token is kept
// per origin (scheme, host and port) and sent only there. Requests with a
// body must be replayable (GetBody set, as http.NewRequest does for
// in-memory bodies) to be sent again after authorization; others are
// answered with the server's refusal. Authorization failures are
// *AuthorizationError values.
func (a *Authorizer) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{a: a, base: base}
}

type roundTripper struct {
	a    *Authorizer
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	a := t.a
	ctx := req.Context()
	st := a.state(origin(req.URL))
	server := canonicalServerURL(req.URL).String()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	stepUps := 0
	authorized, nonceRetried := false, false
	for attempt := 0; ; attempt++ {
		tok, err := a.currentToken(ctx, st)
		if err != nil {
			if attempt == 0 && req.Body != nil {
				req.Body.Close()
			}
			return nil, &AuthorizationError{Server: st.key, Step: "token", Err: err}
		}
		r := req.Clone(ctx)
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		sent := ""
		if tok != nil {
			sent = tok.Token.AccessToken
			if err := a.setAuthorization(r, st, tok); err != nil {
				if r.Body != nil {
					r.Body.Close()
				}
				return nil, &AuthorizationError{Server: st.key, Step: "dpop", Err: err}
			}
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		a.noteNonce(st, resp.Header)
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		chs := challenges(resp.Header)
		ch := pickChallenge(chs)
		if !replayable {
			return resp, nil
		}
		if resp.StatusCode == http.StatusUnauthorized {
			if !nonceRetried && tok != nil && a.DPoP != nil && isNonceChallenge(chs, resp.Header) {
				nonceRetried = true
				discard(resp)
				continue
			}
			if authorized {
				discard(resp)
				return nil, &AuthorizationError{Server: st.key, Step: "retry", Err: ErrUnauthorized}
			}
			discard(resp)
			if err := a.authorizeServer(ctx, st, server, sent, ch, false); err != nil {
				return nil, err
			}
			authorized = true
			continue
		}
		// 403: only insufficient_scope is ours to handle.
		if ch == nil || ch.Param("error") != "insufficient_scope" {
			return resp, nil
		}
		discard(resp)
		if stepUps >= a.maxStepUps() {
			return nil, &AuthorizationError{Server: st.key, Step: "step-up", Code: "insufficient_scope", Err: ErrStepUpLimit}
		}
		stepUps++
		if err := a.authorizeServer(ctx, st, server, sent, ch, true); err != nil {
			return nil, err
		}
	}
}

// discard reads a little of resp's body, so the connection may be kept,
// and closes it.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
}

// pickChallenge returns the first Bearer or DPoP challenge, or nil.
func pickChallenge(chs []Challenge) *Challenge {
	for i := range chs {
		if chs[i].Is("Bearer") || chs[i].Is("DPoP") {
			return &chs[i]
		}
	}
	return nil
}

// isNonceChallenge reports a DPoP use_dpop_nonce challenge with a nonce.
func isNonceChallenge(chs []Challenge, h http.Header) bool {
	if h.Get("DPoP-Nonce") == "" {
		return false
	}
	for i := range chs {
		if chs[i].Is("DPoP") && chs[i].Param("error") == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

func (a *Authorizer) noteNonce(st *serverState, h http.Header) {
	if a.DPoP == nil {
		return
	}
	if n := h.Get("DPoP-Nonce"); n != "" && len(n) <= maxNonceSize {
		st.mu.Lock()
		st.nonce = n
		st.mu.Unlock()
	}
}

// setAuthorization adds tok to r: a Bearer token, or a DPoP-bound token
// with its proof.
func (a *Authorizer) setAuthorization(r *http.Request, st *serverState, tok *StoredToken) error {
	at := tok.Token.AccessToken
	if a.DPoP != nil && strings.EqualFold(tok.Token.TokenType, "DPoP") {
		st.mu.Lock()
		nonce := st.nonce
		st.mu.Unlock()
		proof, err := a.DPoP.Proof(r.Method, r.URL.String(), &ProofOptions{AccessToken: at, Nonce: nonce, Now: a.now})
		if err != nil {
			return err
		}
		r.Header.Set("Authorization", "DPoP "+at)
		r.Header.Set("DPoP", proof)
		return nil
	}
	r.Header.Set("Authorization", "Bearer "+at)
	return nil
}

// expiring reports whether tok expires within RefreshBefore.
func (a *Authorizer) expiring(tok *oauth2.Token) bool {
	return !tok.Expiry.IsZero() && a.clock().Add(RefreshBefore).After(tok.Expiry)
}

// currentToken returns the token to send to st's server, loading it from
// the store on first use and refreshing it when it is about to expire.
func (a *Authorizer) currentToken(ctx context.Context, st *serverState) (*StoredToken, error) {
	st.mu.Lock()
	if !st.loaded {
		t, err := a.store().LoadToken(ctx, st.key)
		if err != nil {
			st.mu.Unlock()
			return nil, err
		}
		st.loaded = true
		if t != nil && t.Token != nil && t.Token.AccessToken != "" {
			st.tok, st.requested = t, t.Scopes
		}
	}
	tok := st.tok
	canRefresh := tok != nil && tok.Token.RefreshToken != "" && st.meta != nil && st.client != nil && a.expiring(tok.Token)
	st.mu.Unlock()
	if !canRefresh {
		return tok, nil
	}
	err := a.single(ctx, st, func() bool { return st.tok != tok }, func(ctx context.Context) error {
		st.mu.Lock()
		meta, client := st.meta, st.client
		st.mu.Unlock()
		nt, err := a.refresh(ctx, meta, client, tok)
		if err != nil {
			// The next 401 starts afresh.
			a.log(ctx, "auth: refresh failed", "issuer", meta.Issuer, "error", err)
			st.mu.Lock()
			st.tok = nil
			st.mu.Unlock()
			return a.store().DeleteToken(ctx, st.key)
		}
		a.log(ctx, "auth: refreshed a token", "issuer", meta.Issuer)
		return a.keep(ctx, st, &StoredToken{Token: nt, Issuer: tok.Issuer, Resource: tok.Resource, Scopes: tok.Scopes}, meta, client)
	})
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tok, nil
}

// single runs fn unless skip (called with st.mu held) says another flow
// made it needless, or waits for the flow already in progress.
// A flow that ended because its own caller gave up is run again for a
// waiter still waiting.
func (a *Authorizer) single(ctx context.Context, st *serverState, skip func() bool, fn func(context.Context) error) error {
	st.mu.Lock()
	for st.flight != nil {
		f := st.flight
		st.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			return f.err
		}
		st.mu.Lock()
	}
	if skip != nil && skip() {
		st.mu.Unlock()
		return nil
	}
	f := &flight{done: make(chan struct{})}
	st.flight = f
	st.mu.Unlock()
	err := fn(ctx)
	st.mu.Lock()
	st.flight = nil
	f.err = err
	close(f.done)
	st.mu.Unlock()
	return err
}

// authorizeServer obtains a new token for st's server after a 401
// (stepUp false) or a 403 insufficient_scope (stepUp true) answered a
// request that carried the access token sent ("" for none).
func (a *Authorizer) authorizeServer(ctx context.Context, st *serverState, server, sent string, ch *Challenge, stepUp bool) error {
	skip := func() bool { return st.tok != nil && st.tok.Token.AccessToken != sent }
	return a.single(ctx, st, skip, func(ctx context.Context) error {
		return a.flow(ctx, st, server, ch, stepUp)
	})
}

// Login authorizes the host at the MCP server at serverURL now, without
// waiting for a refusal, replacing any token held for it.
func (a *Authorizer) Login(ctx context.Context, serverURL string) error {
	u, err := url.Parse(serverURL)
	if err != nil {
		return &AuthorizationError{Server: redactURL(serverURL), Step: "discovery", Err: err}
	}
	st := a.state(origin(u))
	return a.single(ctx, st, nil, func(ctx context.Context) error {
		return a.flow(ctx, st, canonicalServerURL(u).String(), nil, false)
	})
}

// Logout forgets the token held for the MCP server at serverURL, in
// memory and in the store.
func (a *Authorizer) Logout(ctx context.Context, serverURL string) error {
	u, err := url.Parse(serverURL)
	if err != nil {
		return err
	}
	st := a.state(origin(u))
	st.mu.Lock()
	st.tok, st.loaded = nil, true
	st.mu.Unlock()
	return a.store().DeleteToken(ctx, st.key)
}

// flow discovers st's authorization server and obtains a token.
func (a *Authorizer) flow(ctx context.Context, st *serverState, server string, ch *Challenge, stepUp bool) error {
	fail := func(step string, err error) error {
		var ae *AuthorizationError
		if errors.As(err, &ae) && ae.Server == "" {
			ae.Server = st.key
			return ae
		}
		var he *HTTPError
		code := ""
		if errors.As(err, &he) {
			code = he.Code
		}
		return &AuthorizationError{Server: st.key, Step: step, Code: code, Err: err}
	}
	d, err := Discover(ctx, a.HTTPClient, server, ch)
	if err != nil {
		return fail("discovery", err)
	}
	meta := d.Server
	a.log(ctx, "auth: discovered", "server", st.key, "resource", d.Resource, "issuer", meta.Issuer)
	st.mu.Lock()
	prev, requested := st.tok, st.requested
	st.mu.Unlock()
	if prev != nil && prev.Issuer != meta.Issuer {
		// Another authorization server: nothing of the old one is used.
		prev = nil
	}
	scopes := a.selectScopes(ch, d, requested)
	if !stepUp && prev != nil && prev.Token.RefreshToken != "" && a.expiring(prev.Token) {
		if client, err := a.clientFor(ctx, meta); err == nil {
			if tok, err := a.refresh(ctx, meta, client, prev); err == nil {
				a.log(ctx, "auth: refreshed a token", "issuer", meta.Issuer)
				return a.keep(ctx, st, &StoredToken{Token: tok, Issuer: meta.Issuer, Resource: prev.Resource, Scopes: prev.Scopes}, meta, client)
			}
		}
	}
	var tok *oauth2.Token
	var client *ClientInfo
	if a.Grant != nil {
		var gs []string
		if len(scopes) > 0 {
			gs = scopes
		}
		tok, err = a.Grant.Token(ctx, &GrantRequest{Server: meta, Resource: d.Resource, Scopes: gs, HTTPClient: a.tokenClient(), DPoP: a.DPoP})
		if err != nil {
			return fail("grant", err)
		}
	} else {
		client, err = a.clientFor(ctx, meta)
		if err != nil {
			return fail("registration", err)
		}
		tok, err = a.authorizationCode(ctx, d, client, a.withOfflineAccess(scopes, meta))
		if err != nil {
			return fail("authorization", err)
		}
	}
	if tok == nil || tok.AccessToken == "" {
		return fail("token", errors.New("auth: the authorization server issued no access token"))
	}
	a.log(ctx, "auth: authorized", "server", st.key, "issuer", meta.Issuer, "scopes", strings.Join(scopes, " "))
	st.mu.Lock()
	st.requested = scopes
	st.mu.Unlock()
	return a.keep(ctx, st, &StoredToken{Token: tok, Issuer: meta.Issuer, Resource: d.Resource, Scopes: scopes}, meta, client)
}

// keep makes t st's token and stores it.
func (a *Authorizer) keep(ctx context.Context, st *serverState, t *StoredToken, meta *ServerMetadata, client *ClientInfo) error {
	st.mu.Lock()
	st.tok, st.loaded, st.meta, st.client = t, true, meta, client
	st.mu.Unlock()
	if err := a.store().SaveToken(ctx, st.key, t); err != nil {
		return &AuthorizationError{Server: st.key, Step: "store", Err: err}
	}
	return nil
}

// selectScopes returns the scopes to ask for: those asked for before,
// with the challenge's scope, or when it has none the PRM's
// scopes_supported (the scope selection strategy), and a.Scopes.
func (a *Authorizer) selectScopes(ch *Challenge, d *Discovery, requested []string) []string {
	var sel []string
	if ch != nil {
		sel = ch.Scopes()
	}
	if len(sel) == 0 && d.ResourceMetadata != nil {
		sel = d.ResourceMetadata.ScopesSupported
	}
	return union(requested, sel, a.Scopes)
}

// withOfflineAccess adds offline_access to a non-empty scope list when
// the authorization server lists it and the client asks for refresh
// tokens.
func (a *Authorizer) withOfflineAccess(scopes []string, meta *ServerMetadata) []string {
	if len(scopes) == 0 || !slices.Contains(meta.ScopesSupported, "offline_access") || slices.Contains(scopes, "offline_access") {
		return scopes
	}
	if gt := a.Registration.GrantTypes; len(gt) > 0 && !slices.Contains(gt, "refresh_token") {
		return scopes
	}
	return append(slices.Clip(scopes), "offline_access")
}

// union returns the distinct strings of lists, in order of first
// appearance.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
