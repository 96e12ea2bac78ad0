package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
)

// Bounds of the middleware.
const (
	// DefaultMaxAuthorizationSize bounds the Authorization header: 8 KiB.
	// A larger one is answered 431 without being parsed.
	DefaultMaxAuthorizationSize = 8 << 10
	// DefaultMaxBodySize bounds the JSON-RPC body the middleware reads to
	// find the tool a tools/call names (only with ToolScopes, and only
	// when the request does not name it in headers): 4 MiB. A larger
	// body is answered 413.
	DefaultMaxBodySize = 4 << 20
)

// ResourceOptions configure [RequireToken]. Verifier and Resource are
// required; the zero value of every other field is the documented
// default.
type ResourceOptions struct {
	// Verifier checks the access tokens. Required.
	Verifier TokenVerifier
	// Resource is the canonical URL of the MCP endpoint, such as
	// "https://mcp.example.com/mcp": the "resource" of its Protected
	// Resource Metadata and the audience its tokens must name. Required.
	Resource string
	// ResourceMetadataURL is the URL of the Protected Resource Metadata
	// that challenges name (resource_metadata). "" means the
	// path-suffixed well-known URL of Resource (see
	// [ProtectedResourceMetadataURLs] and [HandleProtectedResourceMetadata]).
	ResourceMetadataURL string
	// Scopes lists the scopes every request needs. A 401 challenge names
	// them (scope="..."), so that a client asks for them at first.
	Scopes []string
	// ToolScopes maps a tool's name to the scopes a tools/call of it needs
	// besides Scopes. The middleware finds the tool in the Mcp-Method and
	// Mcp-Name headers of a 2026-07-28 request without a session (which
	// the Streamable HTTP handler checks against the body), and otherwise
	// in the JSON-RPC body of a POST (every call of a batch), read up to
	// MaxBodySize and put back for the handler.
	ToolScopes map[string][]string
	// ScopeSatisfied reports whether the scopes granted satisfy a scope
	// needed, so that a broader scope can imply narrower ones (as the
	// authorization specification requires servers to account for).
	// Nil means an exact match.
	ScopeSatisfied func(granted []string, need string) bool
	// DPoP configures DPoP-bound tokens (RFC 9449). Its zero value
	// accepts them, with their proofs, beside bearer tokens.
	DPoP DPoPOptions
	// MaxAuthorizationSize bounds the Authorization header; zero means
	// [DefaultMaxAuthorizationSize].
	MaxAuthorizationSize int
	// MaxBodySize bounds the body read to find a tool; zero means
	// [DefaultMaxBodySize].
	MaxBodySize int64
	// Logger, when set, records each refused request at level Info (its
	// status, reason and remote address) and verifier failures at level
	// Warn. Tokens, proofs and secrets are never logged.
	Logger *slog.Logger
	// Now overrides the clock of DPoP checks, for tests; nil means
	// time.Now.
	Now func() time.Time
}

// RequireToken returns middleware that admits only requests with a valid
// access token, for use in front of the Streamable HTTP and SSE handlers:
//
//	guard, err := auth.RequireToken(&auth.ResourceOptions{Verifier: v, Resource: "https://mcp.example.com/mcp"})
//	...
//	mux.Handle("/mcp", guard(mcp.NewStreamableHTTPHandler(server, nil)))
//
// A request is answered, without reaching the handler:
//   - 400 error="invalid_request" when it carries a token in its query
//     (access_token; MCP allows only the header), more than one
//     Authorization header, or a malformed one;
//   - 431 when its Authorization header is larger than
//     MaxAuthorizationSize;
//   - 401 with WWW-Authenticate: Bearer resource_metadata="..." (and
//     scope="..." naming Scopes) when it carries no token, and with
//     error="invalid_token" when the token is refused, including a
//     DPoP-bound token sent with the Bearer scheme; a DPoP-bound token
//     with a bad proof gets a DPoP challenge with
//     error="invalid_dpop_proof", or error="use_dpop_nonce" and a
//     DPoP-Nonce header when the server wants its nonce;
//   - 403 error="insufficient_scope" with scope="..." naming all the
//     scopes the request needs (Scopes and the called tool's ToolScopes)
//     when the token lacks one;
//   - 503 when the verifier could not check the token.
//
// An admitted request's context carries the [TokenInfo]
// ([TokenInfoFromContext]) and the principal package transport binds
// sessions to (the token's issuer and subject, see [TokenInfo.Principal]),
// so a session created with one user's token is refused (403) with
// another's. A custom Verifier must therefore fill Subject: tokens without
// one would share sessions.
//
// Every request needs a token, CORS preflights (OPTIONS) included: a
// server for browser-based clients answers those in front of the
// middleware. The body is read (for ToolScopes) only after the token is
// verified, so only an authenticated client can make the middleware hold
// up to MaxBodySize; the http.Server's ReadTimeout bounds how long.
func RequireToken(opts *ResourceOptions) (func(http.Handler) http.Handler, error) {
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.serve(next, w, r)
		})
	}, nil
}

// guard is the state of a RequireToken middleware.
type guard struct {
	opts       ResourceOptions
	prmURL     string
	maxAuth    int
	maxBody    int64
	satisfied  func([]string, string) bool
	dpop       *dpopVerifier
	log        *slog.Logger
	bearerBase string // the parameters every Bearer challenge has
	dpopBase   string // the parameters every DPoP challenge has
}

func newGuard(opts *ResourceOptions) (*guard, error) {
	if opts == nil || opts.Verifier == nil {
		return nil, errors.New("auth: RequireToken: a Verifier is required")
	}
	if err := CheckURL(opts.Resource); err != nil {
		return nil, fmt.Errorf("auth: RequireToken: resource: %w", err)
	}
	g := &guard{opts: *opts, prmURL: opts.ResourceMetadataURL, log: opts.Logger}
	// Later changes to the caller's slices and map are not seen.
	g.opts.Scopes = slices.Clone(opts.Scopes)
	g.opts.ToolScopes = make(map[string][]string, len(opts.ToolScopes))
	for name, scopes := range opts.ToolScopes {
		g.opts.ToolScopes[name] = slices.Clone(scopes)
	}
	if g.prmURL == "" {
		urls, err := ProtectedResourceMetadataURLs(opts.Resource)
		if err != nil {
			return nil, err
		}
		g.prmURL = urls[0]
	} else if err := CheckURL(g.prmURL); err != nil {
		return nil, fmt.Errorf("auth: RequireToken: resource metadata URL: %w", err)
	}
	for _, s := range slices.Concat(opts.Scopes, slices.Concat(mapValues(opts.ToolScopes)...)) {
		if !validScope(s) {
			return nil, fmt.Errorf("auth: RequireToken: %q is not a valid scope", s)
		}
	}
	g.maxAuth = opts.MaxAuthorizationSize
	if g.maxAuth <= 0 {
		g.maxAuth = DefaultMaxAuthorizationSize
	}
	g.maxBody = opts.MaxBodySize
	if g.maxBody <= 0 {
		g.maxBody = DefaultMaxBodySize
	}
	g.satisfied = opts.ScopeSatisfied
	if g.satisfied == nil {
		g.satisfied = slices.Contains[[]string]
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	var err error
	if g.dpop, err = newDPoPVerifier(opts.DPoP, opts.Resource, now); err != nil {
		return nil, err
	}
	g.bearerBase = `resource_metadata="` + g.prmURL + `"`
	g.dpopBase = `algs="` + g.dpop.algList + `", resource_metadata="` + g.prmURL + `"`
	return g, nil
}

func mapValues(m map[string][]string) [][]string {
	out := make([][]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// validScope reports whether s is a scope token (RFC 6749 section 3.3):
// printable ASCII without space, '"' or '\'.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// A refusal is the answer to a request the middleware refuses.
type refusal struct {
	status int
	scheme string // "Bearer" or "DPoP"
	code   string // the OAuth error code, or "" for a bare challenge
	desc   string // error_description: never a token
	scope  []string
	nonce  string // DPoP-Nonce
	err    error  // logged
}

func (g *guard) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	info, nonce, ref := g.authenticate(r)
	if ref != nil {
		g.refuse(w, r, ref)
		return
	}
	if nonce != "" {
		w.Header().Set("DPoP-Nonce", nonce)
	}
	next.ServeHTTP(w, r.WithContext(WithTokenInfo(r.Context(), info)))
}

// authenticate checks r's token, proof and scopes.
func (g *guard) authenticate(r *http.Request) (*TokenInfo, string, *refusal) {
	scheme := "Bearer"
	if g.opts.DPoP.Required {
		scheme = "DPoP"
	}
	if r.URL.RawQuery != "" && strings.Contains(r.URL.RawQuery, "access_token") && r.URL.Query().Has("access_token") {
		return nil, "", &refusal{status: http.StatusBadRequest, scheme: scheme, code: "invalid_request",
			desc: "access tokens are accepted only in the Authorization header", err: errors.New("token in the query")}
	}
	values := r.Header["Authorization"]
	switch {
	case len(values) == 0:
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: scheme, scope: g.opts.Scopes, err: errors.New("no token")}
	case len(values) > 1:
		return nil, "", &refusal{status: http.StatusBadRequest, scheme: scheme, code: "invalid_request",
			desc: "more than one Authorization header", err: errors.New("more than one Authorization header")}
	case len(values[0]) > g.maxAuth:
		return nil, "", &refusal{status: http.StatusRequestHeaderFieldsTooLarge, scheme: scheme, code: "invalid_request",
			desc: "the Authorization header is too large", err: fmt.Errorf("an Authorization header of %d bytes", len(values[0]))}
	}
	got, token, ok := strings.Cut(values[0], " ")
	token = strings.TrimLeft(token, " ")
	switch {
	case strings.EqualFold(got, "Bearer"):
		got = "Bearer"
	case strings.EqualFold(got, "DPoP"):
		got = "DPoP"
	default:
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: scheme, scope: g.opts.Scopes, err: errors.New("an Authorization scheme other than Bearer and DPoP")}
	}
	if !ok || !isToken68(token) {
		return nil, "", &refusal{status: http.StatusBadRequest, scheme: got, code: "invalid_request",
			desc: "malformed Authorization header", err: errors.New("malformed Authorization header")}
	}
	if got == "Bearer" && g.opts.DPoP.Required {
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "invalid_token",
			desc: "a DPoP-bound token is required", err: errors.New("a bearer token where DPoP is required")}
	}
	info, err := g.opts.Verifier.VerifyToken(r.Context(), token)
	if err != nil {
		if errors.Is(err, ErrInvalidToken) {
			return nil, "", &refusal{status: http.StatusUnauthorized, scheme: got, code: "invalid_token", desc: describe(err), err: err}
		}
		return nil, "", &refusal{status: http.StatusServiceUnavailable, err: err}
	}
	if info == nil {
		return nil, "", &refusal{status: http.StatusServiceUnavailable, err: errors.New("the verifier returned no token information")}
	}
	var nonce string
	switch {
	case info.ConfirmationThumbprint == "" && got == "DPoP":
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "invalid_token",
			desc: "the token is not DPoP-bound", err: errors.New("a bearer token with the DPoP scheme")}
	case info.ConfirmationThumbprint == "" && g.opts.DPoP.Required:
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "invalid_token",
			desc: "a DPoP-bound token is required", err: errors.New("a bearer token where DPoP is required")}
	case info.ConfirmationThumbprint != "" && got != "DPoP":
		return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "invalid_token",
			desc: "a DPoP-bound token must be sent with the DPoP scheme", err: errors.New("a DPoP-bound token with the Bearer scheme")}
	case info.ConfirmationThumbprint != "":
		nonce, err = g.dpop.check(r, token, info.ConfirmationThumbprint)
		switch {
		case errors.Is(err, ErrDPoPNonceRequired):
			return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "use_dpop_nonce",
				desc: "use the server's DPoP nonce", nonce: nonce, err: err}
		case errors.Is(err, ErrVerifierUnavailable):
			return nil, "", &refusal{status: http.StatusServiceUnavailable, err: err}
		case err != nil:
			return nil, "", &refusal{status: http.StatusUnauthorized, scheme: "DPoP", code: "invalid_dpop_proof",
				desc: "the DPoP proof is not valid for this request", err: err}
		}
	}
	need, ref := g.neededScopes(r)
	if ref != nil {
		ref.scheme = got
		return nil, "", ref
	}
	for _, s := range need {
		if !g.satisfied(info.Scopes, s) {
			return nil, "", &refusal{status: http.StatusForbidden, scheme: got, code: "insufficient_scope",
				desc: "the token lacks a scope this request needs", scope: need, nonce: nonce,
				err: fmt.Errorf("insufficient scope: needs %q", strings.Join(need, " "))}
		}
	}
	return info, nonce, nil
}

// isToken68 reports whether s is a token68 (RFC 9110 section 11.2).
func isToken68(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	for i < len(s) && token68Chars[s[i]] {
		i++
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// token68Chars marks the characters of a token68 before its padding.
var token68Chars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()

// describe returns an error_description for a refused token: a fixed
// text by its cause, never anything the token says.
func describe(err error) string {
	switch {
	case errors.Is(err, ErrExpiredToken):
		return "the access token expired"
	case errors.Is(err, ErrTokenNotYetValid):
		return "the access token is not yet valid"
	case errors.Is(err, ErrWrongAudience):
		return "the access token was issued for another resource"
	case errors.Is(err, ErrWrongIssuer):
		return "the access token was issued by an untrusted issuer"
	case errors.Is(err, ErrBadSignature):
		return "the access token's signature does not verify"
	case errors.Is(err, ErrInactiveToken):
		return "the access token is not active"
	}
	return "the access token is not valid"
}

// refuse writes a refusal and logs it.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, ref *refusal) {
	if g.log != nil {
		level := slog.LevelInfo
		if ref.status == http.StatusServiceUnavailable {
			level = slog.LevelWarn
		}
		g.log.LogAttrs(r.Context(), level, "auth: request refused",
			slog.Int("status", ref.status), slog.String("reason", ref.err.Error()),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr))
	}
	h := w.Header()
	if ref.status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "5")
		http.Error(w, "the access token could not be checked; try again later", ref.status)
		return
	}
	if ref.status == http.StatusUnauthorized || ref.status == http.StatusForbidden || ref.status == http.StatusBadRequest {
		h.Set("WWW-Authenticate", g.challenge(ref))
	}
	if ref.nonce != "" {
		h.Set("DPoP-Nonce", ref.nonce)
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ref.status)
	code := ref.code
	if code == "" {
		code = "unauthorized"
	}
	body, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{code, ref.desc})
	w.Write(body)
}

// challenge returns the WWW-Authenticate value of a refusal.
func (g *guard) challenge(ref *refusal) string {
	var b strings.Builder
	b.WriteString(ref.scheme)
	b.WriteByte(' ')
	if ref.code != "" {
		b.WriteString(`error="` + ref.code + `", `)
		if ref.desc != "" {
			b.WriteString(`error_description="` + ref.desc + `", `)
		}
	}
	if len(ref.scope) > 0 {
		b.WriteString(`scope="` + strings.Join(ref.scope, " ") + `", `)
	}
	if ref.scheme == "DPoP" {
		b.WriteString(g.dpopBase)
	} else {
		b.WriteString(g.bearerBase)
	}
	return b.String()
}

// Headers of Streamable HTTP of 2026-07-28 that mirror the body.
const (
	headerMCPMethod          = "Mcp-Method"
	headerMCPName            = "Mcp-Name"
	headerMCPProtocolVersion = "Mcp-Protocol-Version"
	headerMCPSessionID       = "Mcp-Session-Id"
	firstStatelessVersion    = "2026-07-28"
)

// neededScopes returns the scopes r needs: Scopes, and those of every
// tool it calls.
func (g *guard) neededScopes(r *http.Request) ([]string, *refusal) {
	if len(g.opts.ToolScopes) == 0 || r.Method != http.MethodPost {
		return g.opts.Scopes, nil
	}
	names, ref := g.calledTools(r)
	if ref != nil {
		return nil, ref
	}
	need := g.opts.Scopes
	for _, n := range names {
		for _, s := range g.opts.ToolScopes[n] {
			if !slices.Contains(need, s) {
				need = append(slices.Clip(need), s)
			}
		}
	}
	return need, nil
}

// calledTools returns the names of the tools r calls. A 2026-07-28
// request without a session names its method and tool in headers, which
// the Streamable HTTP handler refuses unless they match the body; any
// other request's body is read (up to maxBody) and put back.
func (g *guard) calledTools(r *http.Request) ([]string, *refusal) {
	h := r.Header
	if m := h[headerMCPMethod]; len(m) == 1 && len(h[headerMCPSessionID]) == 0 && h.Get(headerMCPProtocolVersion) >= firstStatelessVersion {
		if m[0] != "tools/call" {
			return nil, nil
		}
		if n := h[headerMCPName]; len(n) == 1 {
			if name, ok := mcpheader.Decode(n[0]); ok {
				return []string{name}, nil
			}
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, g.maxBody+1))
	r.Body.Close()
	if err != nil {
		return nil, &refusal{status: http.StatusBadRequest, code: "invalid_request", desc: "the body could not be read", err: fmt.Errorf("reading the body: %w", err)}
	}
	if int64(len(body)) > g.maxBody {
		return nil, &refusal{status: http.StatusRequestEntityTooLarge, code: "invalid_request", desc: "the body is too large", err: fmt.Errorf("a body over %d bytes", g.maxBody)}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	names, err := toolsCalled(body)
	if err != nil {
		return nil, &refusal{status: http.StatusBadRequest, code: "invalid_request", desc: "the body is not JSON-RPC", err: err}
	}
	return names, nil
}

// toolsCalled returns the tools the tools/call requests of a JSON-RPC
// message or batch name. Member names match exactly (as JSON-RPC reads
// them), not case-insensitively.
func toolsCalled(body []byte) ([]string, error) {
	body = bytes.TrimLeft(body, " \t\r\n")
	var msgs []map[string]json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &msgs); err != nil {
			return nil, fmt.Errorf("a malformed JSON-RPC batch: %w", err)
		}
	} else {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("a malformed JSON-RPC message: %w", err)
		}
		msgs = []map[string]json.RawMessage{m}
	}
	var names []string
	for _, m := range msgs {
		var method string
		if raw, ok := m["method"]; !ok || json.Unmarshal(raw, &method) != nil || method != "tools/call" {
			continue
		}
		var params map[string]json.RawMessage
		if err := json.Unmarshal(m["params"], &params); err != nil {
			return nil, fmt.Errorf("tools/call params: %w", err)
		}
		var name string
		if raw, ok := params["name"]; ok {
			if err := json.Unmarshal(raw, &name); err != nil {
				return nil, fmt.Errorf("tools/call name: %w", err)
			}
		}
		names = append(names, name)
	}
	return names, nil
}
