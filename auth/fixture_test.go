package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Distinctive prefixes of the secrets the fake authorization server
// hands out, so that tests can look for them in errors and logs.
const (
	secretPrefix  = "SECRET-"
	tokenPrefix   = "TOKEN-"
	codePrefix    = "CODE-"
	refreshPrefix = "REFRESH-"
)

// fakeAS is an authorization server for tests: metadata, authorization
// endpoint (an immediate redirect), token endpoint (with PKCE checks) and
// registration endpoint.
type fakeAS struct {
	t   *testing.T
	srv *httptest.Server

	// Configuration, set before use.
	issuer         string   // "" means the server's URL
	noS256         bool     // leave code_challenge_methods_supported out
	advertiseIss   bool     // authorization_response_iss_parameter_supported
	issInRedirect  string   // "correct" (default), "wrong", "omit", "normalized"
	authMethods    []string // token_endpoint_auth_methods_supported; nil means ["none"]
	cimd           bool     // client_id_metadata_document_supported
	noRegistration bool
	scopes         []string // scopes_supported
	expiresIn      int      // 0 means 3600
	refreshTokens  bool     // issue refresh tokens
	metadataBody   func(w http.ResponseWriter) bool

	mu       sync.Mutex
	n        int
	codes    map[string]codeGrant
	tokens   map[string][]string // access token -> scopes
	authReqs []url.Values
	tokReqs  []url.Values
	tokAuthz []string // Authorization headers at the token endpoint
	regs     []map[string]any
	paths    []string // every path requested
}

type codeGrant struct {
	challenge, scope, resource, clientID string
}

func newFakeAS(t *testing.T) *fakeAS {
	as := &fakeAS{t: t, codes: map[string]codeGrant{}, tokens: map[string][]string{}}
	as.srv = httptest.NewServer(http.HandlerFunc(as.serve))
	t.Cleanup(as.srv.Close)
	return as
}

func (as *fakeAS) URL() string { return as.srv.URL }

func (as *fakeAS) issuerID() string {
	if as.issuer != "" {
		return as.issuer
	}
	return as.srv.URL
}

func (as *fakeAS) next() int {
	as.n++
	return as.n
}

func (as *fakeAS) scopesOf(token string) ([]string, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	s, ok := as.tokens[token]
	return s, ok
}

func (as *fakeAS) counts() (auth, tok, reg int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return len(as.authReqs), len(as.tokReqs), len(as.regs)
}

func (as *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	as.paths = append(as.paths, r.URL.Path)
	as.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == wellKnownOAuth:
		if as.metadataBody != nil && as.metadataBody(w) {
			return
		}
		m := map[string]any{
			"issuer":                   as.issuerID(),
			"authorization_endpoint":   as.srv.URL + "/authorize",
			"token_endpoint":           as.srv.URL + "/token",
			"response_types_supported": []string{"code"},
			"grant_types_supported":    []string{"authorization_code", "refresh_token"},
		}
		if !as.noS256 {
			m["code_challenge_methods_supported"] = []string{"S256"}
		}
		if !as.noRegistration {
			m["registration_endpoint"] = as.srv.URL + "/register"
		}
		if as.advertiseIss {
			m["authorization_response_iss_parameter_supported"] = true
		}
		if as.authMethods != nil {
			m["token_endpoint_auth_methods_supported"] = as.authMethods
		} else {
			m["token_endpoint_auth_methods_supported"] = []string{"none"}
		}
		if as.cimd {
			m["client_id_metadata_document_supported"] = true
		}
		if as.scopes != nil {
			m["scopes_supported"] = as.scopes
		}
		writeJSON(w, 200, m)
	case r.Method == http.MethodGet && r.URL.Path == "/authorize":
		q := r.URL.Query()
		as.mu.Lock()
		as.authReqs = append(as.authReqs, q)
		code := fmt.Sprintf("%s%d", codePrefix, as.next())
		as.codes[code] = codeGrant{challenge: q.Get("code_challenge"), scope: q.Get("scope"), resource: q.Get("resource"), clientID: q.Get("client_id")}
		as.mu.Unlock()
		if q.Get("code_challenge_method") != "S256" {
			http.Error(w, "S256 required", 400)
			return
		}
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || to.Host == "" {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		rq := to.Query()
		rq.Set("code", code)
		rq.Set("state", q.Get("state"))
		switch as.issInRedirect {
		case "", "correct":
			rq.Set("iss", as.issuerID())
		case "wrong":
			rq.Set("iss", "https://evil.example.com")
		case "normalized":
			rq.Set("iss", as.issuerID()+"/")
		}
		to.RawQuery = rq.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		r.ParseForm()
		as.mu.Lock()
		defer as.mu.Unlock()
		as.tokReqs = append(as.tokReqs, r.PostForm)
		as.tokAuthz = append(as.tokAuthz, r.Header.Get("Authorization"))
		var scope string
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			g, ok := as.codes[r.PostForm.Get("code")]
			delete(as.codes, r.PostForm.Get("code"))
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			if r.PostForm.Get("resource") != g.resource {
				writeJSON(w, 400, map[string]string{"error": "invalid_target"})
				return
			}
			scope = g.scope
		case "refresh_token":
			if !strings.HasPrefix(r.PostForm.Get("refresh_token"), refreshPrefix) {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		tok := fmt.Sprintf("%s%d", tokenPrefix, as.next())
		as.tokens[tok] = strings.Fields(scope)
		exp := as.expiresIn
		if exp == 0 {
			exp = 3600
		}
		resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": exp}
		if as.refreshTokens {
			resp["refresh_token"] = fmt.Sprintf("%s%d", refreshPrefix, as.next())
		}
		writeJSON(w, 200, resp)
	case r.Method == http.MethodPost && r.URL.Path == "/register" && !as.noRegistration:
		var body map[string]any
		json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body)
		as.mu.Lock()
		as.regs = append(as.regs, body)
		n := as.next()
		as.mu.Unlock()
		resp := map[string]any{
			"client_id":     fmt.Sprintf("client-%s-%d", strings.TrimPrefix(as.srv.URL, "http://"), n),
			"client_secret": fmt.Sprintf("%s%d", secretPrefix, n),
			"redirect_uris": body["redirect_uris"],
		}
		if m, ok := body["token_endpoint_auth_method"]; ok {
			resp["token_endpoint_auth_method"] = m
		}
		writeJSON(w, 201, resp)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// fakeRS is a protected MCP server for tests: /mcp needs a token of its
// authorization server with the required scopes; its PRM is at the
// path-suffixed well-known URL.
type fakeRS struct {
	srv *httptest.Server

	mu         sync.Mutex
	as         *fakeAS  // the authorization server the PRM names
	resource   string   // "" means srv.URL+"/mcp"
	prmScopes  []string // scopes_supported
	challenge  []string // scope in the 401 challenge
	required   []string // scopes a request needs; 403 otherwise
	always403  bool
	refuseAll  bool   // answer 401 to every token
	noHeaderRM bool   // leave resource_metadata out of the challenge
	prmPath    string // "" means the path-suffixed well-known URL
	unauth     int    // 401s sent
	on401      func() // called after each 401 is decided
	paths      []string
}

func newFakeRS(t *testing.T, as *fakeAS) *fakeRS {
	rs := &fakeRS{as: as}
	rs.srv = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *fakeRS) MCP() string { return rs.srv.URL + "/mcp" }

func (rs *fakeRS) setAS(as *fakeAS) {
	rs.mu.Lock()
	rs.as = as
	rs.mu.Unlock()
}

func (rs *fakeRS) prmLocation() string {
	if rs.prmPath != "" {
		return rs.prmPath
	}
	return wellKnownPRM + "/mcp"
}

func (rs *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	as := rs.as
	rs.paths = append(rs.paths, r.URL.Path)
	rs.mu.Unlock()
	switch r.URL.Path {
	case rs.prmLocation():
		res := rs.resource
		if res == "" {
			res = rs.srv.URL + "/mcp"
		}
		m := map[string]any{"resource": res, "authorization_servers": []string{as.URL()}}
		if rs.prmScopes != nil {
			m["scopes_supported"] = rs.prmScopes
		}
		writeJSON(w, 200, m)
	case "/mcp":
		body, _ := io.ReadAll(r.Body)
		rm := ""
		if !rs.noHeaderRM {
			rm = fmt.Sprintf(`, resource_metadata="%s%s"`, rs.srv.URL, rs.prmLocation())
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		scopes, known := as.scopesOf(tok)
		if !ok || !known || rs.refuseAll {
			ch := `Bearer error="invalid_token"` + rm
			if rs.challenge != nil {
				ch += fmt.Sprintf(`, scope="%s"`, strings.Join(rs.challenge, " "))
			}
			w.Header().Set("WWW-Authenticate", ch)
			w.WriteHeader(401)
			rs.mu.Lock()
			rs.unauth++
			f := rs.on401
			rs.mu.Unlock()
			if f != nil {
				f()
			}
			return
		}
		missing := rs.always403
		for _, s := range rs.required {
			if !slices.Contains(scopes, s) {
				missing = true
			}
		}
		if missing {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s"%s`, strings.Join(rs.required, " "), rm))
			w.WriteHeader(403)
			return
		}
		w.Write(append([]byte("ok:"), body...))
	default:
		http.NotFound(w, r)
	}
}

// post sends body to url through rt and returns the status and body.
func post(t *testing.T, rt http.RoundTripper, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// testAuthorizer returns an Authorizer with the headless agent.
func testAuthorizer() *Authorizer {
	return &Authorizer{
		Agent:       &HeadlessAgent{},
		RedirectURL: "http://127.0.0.1:1/callback",
	}
}
