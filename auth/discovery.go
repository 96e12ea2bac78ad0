package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// A Discovery is what an [Authorizer] learned about a protected MCP
// server: its Protected Resource Metadata and its authorization server's
// metadata.
type Discovery struct {
	// Resource is the resource identifier sent as the "resource"
	// parameter (RFC 8707): the PRM's resource, exactly as published.
	// It is "" for a server of revision 2025-03-26, which publishes no
	// PRM.
	Resource string
	// ResourceMetadata is the server's Protected Resource Metadata, or
	// nil for a server of revision 2025-03-26.
	ResourceMetadata *ProtectedResourceMetadata
	// Server is the authorization server's validated metadata. For a
	// 2025-03-26 server that publishes none, it holds the default
	// endpoints /authorize, /token and /register at the server's origin.
	Server *ServerMetadata
	// Defaulted reports that Server holds those default endpoints.
	Defaulted bool
}

// Discover finds the authorization server of the MCP server at
// serverURL, as a client does after a 401: the Protected Resource
// Metadata from the challenge's resource_metadata (ch may be nil), else
// from the well-known URLs in order (path-suffixed, then root); its
// resource must name serverURL (same origin, and serverURL's path at or
// below the resource's), else [ErrResourceMismatch]; the first
// authorization server it lists; that server's metadata from the
// well-known URLs in order, whose issuer must be identical to the one
// listed, else [ErrIssuerMismatch]. When the server publishes no PRM
// (revision 2025-03-26), the metadata is looked for at the server's
// origin, and when there is none either, the default endpoints are
// used. Every fetch is bounded by [MaxDocumentSize] and
// [DefaultHTTPTimeout] (or ctx's earlier deadline); client nil means
// a default client following redirects only to HTTPS or loopback URLs.
func Discover(ctx context.Context, client *http.Client, serverURL string, ch *Challenge) (*Discovery, error) {
	client = defaultClient(client)
	su, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if err := checkURL(su); err != nil {
		return nil, err
	}
	su = canonicalServerURL(su)
	var candidates []string
	if ch != nil {
		if rm := ch.Param("resource_metadata"); rm != "" {
			if err := CheckURL(rm); err != nil {
				return nil, fmt.Errorf("auth: resource_metadata: %w", err)
			}
			candidates = append(candidates, rm)
		}
	}
	wk, err := ProtectedResourceMetadataURLs(su.String())
	if err != nil {
		return nil, err
	}
	for _, u := range wk {
		if len(candidates) == 0 || candidates[0] != u {
			candidates = append(candidates, u)
		}
	}
	prm, err := fetchFirst[ProtectedResourceMetadata](ctx, client, candidates)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		return discoverLegacy(ctx, client, su)
	}
	if prm.Resource == "" {
		return nil, fmt.Errorf("%w: the metadata names no resource", ErrResourceMismatch)
	}
	if !resourceCovers(prm.Resource, su) {
		return nil, fmt.Errorf("%w: %q does not cover %s", ErrResourceMismatch, truncate(prm.Resource, 200), su.Redacted())
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%w: the protected resource metadata lists none", ErrNoAuthorizationServer)
	}
	issuer := prm.AuthorizationServers[0]
	meta, err := ServerMetadataFor(ctx, client, issuer)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, fmt.Errorf("%w: no metadata for %s", ErrNoAuthorizationServer, redactURL(issuer))
	}
	return &Discovery{Resource: prm.Resource, ResourceMetadata: prm, Server: meta}, nil
}

// ServerMetadataFor fetches the metadata of the authorization server
// issuer from its well-known URLs in order ([ServerMetadataURLs]); the
// first found is checked: its issuer must be identical to issuer
// ([ErrIssuerMismatch]) and its endpoints HTTPS or loopback URLs. It
// returns nil and no error when no well-known URL has a document.
func ServerMetadataFor(ctx context.Context, client *http.Client, issuer string) (*ServerMetadata, error) {
	client = defaultClient(client)
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	meta, err := fetchFirst[ServerMetadata](ctx, client, urls)
	if err != nil || meta == nil {
		return nil, err
	}
	if meta.Issuer != issuer {
		return nil, fmt.Errorf("%w: metadata for %s names issuer %q", ErrIssuerMismatch, redactURL(issuer), truncate(meta.Issuer, 200))
	}
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", meta.AuthorizationEndpoint},
		{"token_endpoint", meta.TokenEndpoint},
		{"registration_endpoint", meta.RegistrationEndpoint},
	} {
		if e.url == "" {
			continue
		}
		if err := CheckURL(e.url); err != nil {
			return nil, fmt.Errorf("auth: %s of %s: %w", e.name, redactURL(issuer), err)
		}
	}
	return meta, nil
}

// discoverLegacy is discovery for a server of revision 2025-03-26: the
// authorization server is the MCP server's origin.
func discoverLegacy(ctx context.Context, client *http.Client, su *url.URL) (*Discovery, error) {
	origin := su.Scheme + "://" + su.Host
	meta, err := ServerMetadataFor(ctx, client, origin)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		return &Discovery{Server: meta}, nil
	}
	return &Discovery{
		Server: &ServerMetadata{
			Issuer:                        origin,
			AuthorizationEndpoint:         origin + "/authorize",
			TokenEndpoint:                 origin + "/token",
			RegistrationEndpoint:          origin + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		},
		Defaulted: true,
	}, nil
}

// fetchFirst fetches the first of urls that has a document: a 4xx answer
// moves on to the next URL; any other failure ends the search. It
// returns nil and no error when none has one.
func fetchFirst[T any](ctx context.Context, client *http.Client, urls []string) (*T, error) {
	for _, u := range urls {
		v := new(T)
		err := getJSON(ctx, client, u, v)
		if err == nil {
			return v, nil
		}
		var he *HTTPError
		if errors.As(err, &he) && he.StatusCode >= 400 && he.StatusCode <= 499 {
			continue
		}
		return nil, err
	}
	return nil, nil
}

// canonicalServerURL returns u without query and fragment, with a
// lower-case scheme and host.
func canonicalServerURL(u *url.URL) *url.URL {
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	return &c
}

// origin returns u's origin: scheme, host and port.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(hostPort(u))
}

// hostPort returns u's host with its port, the scheme's default port
// made explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

// resourceCovers reports whether the resource identifier names the MCP
// server at su: the same origin, and su's path equal to or below the
// resource's path.
func resourceCovers(resource string, su *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || checkURL(r) != nil {
		return false
	}
	if origin(r) != origin(su) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := su.EscapedPath()
	return rp == "" || sp == rp || strings.TrimSuffix(sp, "/") == rp || strings.HasPrefix(sp, rp+"/")
}
