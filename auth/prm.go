package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ProtectedResourceMetadataHandler returns a handler serving md, the
// Protected Resource Metadata (RFC 9728) of an MCP server, as JSON to GET
// and HEAD, with CORS headers that let a browser-based client read it from
// any origin (an OPTIONS preflight is answered 204). Other methods get 405.
// md.Resource and every authorization server must pass [CheckURL], and
// MCP requires at least one authorization server. BearerMethodsSupported
// defaults to ["header"], the only method MCP allows. The document is
// encoded once; later changes to md are not seen.
func ProtectedResourceMetadataHandler(md *ProtectedResourceMetadata) (http.Handler, error) {
	if md == nil {
		return nil, errors.New("auth: protected resource metadata is required")
	}
	if err := CheckURL(md.Resource); err != nil {
		return nil, fmt.Errorf("auth: protected resource metadata: resource: %w", err)
	}
	if len(md.AuthorizationServers) == 0 {
		return nil, errors.New("auth: protected resource metadata names no authorization server")
	}
	for _, as := range md.AuthorizationServers {
		if err := CheckURL(as); err != nil {
			return nil, fmt.Errorf("auth: protected resource metadata: authorization server: %w", err)
		}
	}
	doc := *md
	if doc.BearerMethodsSupported == nil {
		doc.BearerMethodsSupported = []string{"header"}
	}
	body, err := json.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=3600")
			h.Set("X-Content-Type-Options", "nosniff")
			if r.Method == http.MethodGet {
				w.Write(body)
			}
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	}), nil
}

// HandleProtectedResourceMetadata registers the handler of
// [ProtectedResourceMetadataHandler] on mux at the well-known paths of
// md.Resource: the path-suffixed one (/.well-known/oauth-protected-resource
// followed by the resource's path, RFC 9728 section 3.1), which challenges
// name by default, and the root one, which clients of earlier revisions
// try. A resource at the root has only the root path. It returns an error,
// rather than panicking as ServeMux does, when a path is already
// registered.
func HandleProtectedResourceMetadata(mux *http.ServeMux, md *ProtectedResourceMetadata) (err error) {
	h, err := ProtectedResourceMetadataHandler(md)
	if err != nil {
		return err
	}
	urls, err := ProtectedResourceMetadataURLs(md.Resource)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("auth: registering protected resource metadata: %v", p)
		}
	}()
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			return err
		}
		path := pu.EscapedPath()
		if strings.ContainsAny(path, "{}") {
			return fmt.Errorf("auth: resource path %q holds a ServeMux wildcard", path)
		}
		mux.Handle(path, h)
	}
	return nil
}
