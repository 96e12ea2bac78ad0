package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/yosida95/uritemplate/v3"
)

// ResourceHandler reads a resource for resources/read. For a template, it
// is called with the URI the client asked for, and req.TemplateVars holds
// the template's variables, decoded (see [ServerRequest]); return a
// [*ResourceNotFoundError] when nothing exists there.
type ResourceHandler func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error)

type serverResource struct {
	resource *Resource
	handler  ResourceHandler
}

type serverTemplate struct {
	template *ResourceTemplate
	compiled *uritemplate.Template
	handler  ResourceHandler
}

// AddResource registers a resource with a fixed URI. Adding a resource
// with the URI of an existing one replaces it (logged at warning level
// before the server first connects or within one Batch, as for
// [Server.AddTool]). Clients are told the resource list changed. A server that adds its first resource after
// clients connected must declare the resources capability in
// [ServerOptions.Capabilities] (see [Server.AddTool]).
func (s *Server) AddResource(r *Resource, h ResourceHandler) error {
	if r == nil || h == nil {
		return errors.New("mcp: AddResource needs a resource and a handler")
	}
	if r.URI == "" {
		return errors.New("mcp: resource has no URI")
	}
	res := *r
	s.mu.Lock()
	replaced := s.resources.add(res.URI, &serverResource{resource: &res, handler: h})
	s.noteAddedLocked("resource", res.URI, replaced)
	s.mu.Unlock()
	s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
	return nil
}

// RemoveResources removes the resources with the given URIs.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	removed := s.resources.remove(uris...)
	s.mu.Unlock()
	if removed {
		s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
	}
}

// AddResourceTemplate registers a resource template: an RFC 6570 URI
// template, compiled once here, whose matches h reads. Fixed resources
// are matched before templates; templates are tried in name order of
// their URI templates. A template with the URI template of an existing
// one replaces it, as for [Server.AddResource].
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceHandler) error {
	if t == nil || h == nil {
		return errors.New("mcp: AddResourceTemplate needs a template and a handler")
	}
	compiled, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("mcp: resource template %q: %w", t.URITemplate, err)
	}
	tmpl := *t
	s.mu.Lock()
	replaced := s.templates.add(tmpl.URITemplate, &serverTemplate{template: &tmpl, compiled: compiled, handler: h})
	s.noteAddedLocked("resource template", tmpl.URITemplate, replaced)
	s.mu.Unlock()
	s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
	return nil
}

// RemoveResourceTemplates removes templates by their URI templates.
func (s *Server) RemoveResourceTemplates(uriTemplates ...string) {
	s.mu.Lock()
	removed := s.templates.remove(uriTemplates...)
	s.mu.Unlock()
	if removed {
		s.broadcast(NotificationResourceListChanged, &ResourceListChangedParams{}, nil)
	}
}

// ResourceUpdated tells every session subscribed to params.URI that the
// resource changed (notifications/resources/updated). It queues the
// notification for each session and returns without waiting for any (see
// [ServerOptions.NotificationQueue]); an update already queued for a
// session and not yet sent is not queued again. It returns ctx's error,
// sending nothing, if ctx is done when it is called.
//
// With a [ServerOptions.Bus], the update is published for the other
// replicas' subscribers too (its URI only, not params.Meta), from a
// goroutine: ResourceUpdated does not wait for the bus.
func (s *Server) ResourceUpdated(ctx context.Context, params *ResourceUpdatedParams) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if params == nil || params.URI == "" {
		return errors.New("mcp: ResourceUpdated needs a URI")
	}
	s.deliverResourceUpdated(params)
	if s.bus != nil {
		s.bus.publishUpdate(params.URI)
	}
	return nil
}

// deliverResourceUpdated queues resources/updated for this server's
// sessions and listen streams subscribed to params.URI.
func (s *Server) deliverResourceUpdated(params *ResourceUpdatedParams) {
	p := *params
	for _, ss := range s.Sessions() {
		if !ss.initialized() {
			continue
		}
		ss.mu.Lock()
		_, ok := ss.subscriptions[p.URI]
		ss.mu.Unlock()
		if ok {
			ss.queueNote(queuedNote{method: NotificationResourceUpdated, params: &p, key: p.URI})
		}
	}
	s.notifyListeners(NotificationResourceUpdated, func(id jsonrpc.ID) Params {
		q := p
		q.Meta.SubscriptionID = id
		return &q
	}, func(l *listener) bool {
		_, ok := l.uris[p.URI]
		return ok
	})
}

// matchTemplate reports whether uri matches the template and returns the
// values of its variables, percent-decoded.
func matchTemplate(t *uritemplate.Template, uri string) (map[string]string, bool) {
	vals := t.Match(uri)
	if vals == nil {
		return nil, false
	}
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		switch v.T {
		case uritemplate.ValueTypeList:
			out[k] = strings.Join(v.List(), ",")
		case uritemplate.ValueTypeKV:
			out[k] = strings.Join(v.KV(), ",")
		default:
			out[k] = v.String()
		}
	}
	return out, true
}

func (ss *ServerSession) listResources(_ context.Context, req *ServerRequest[*ListResourcesParams]) (*ListResourcesResult, error) {
	s := ss.server
	s.mu.RLock()
	items, next, err := s.resources.page(req.Params.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &ListResourcesResult{Resources: make([]*Resource, len(items)), NextCursor: next}
	for i, r := range items {
		res.Resources[i] = r.resource
	}
	return res, nil
}

func (ss *ServerSession) listResourceTemplates(_ context.Context, req *ServerRequest[*ListResourceTemplatesParams]) (*ListResourceTemplatesResult, error) {
	s := ss.server
	s.mu.RLock()
	items, next, err := s.templates.page(req.Params.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &ListResourceTemplatesResult{ResourceTemplates: make([]*ResourceTemplate, len(items)), NextCursor: next}
	for i, t := range items {
		res.ResourceTemplates[i] = t.template
	}
	return res, nil
}

func (ss *ServerSession) readResource(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
	uri := req.Params.URI
	if uri == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: missing uri"}
	}
	s := ss.server
	s.mu.RLock()
	var h ResourceHandler
	var vars map[string]string
	if r, ok := s.resources.get(uri); ok {
		h = r.handler
	} else {
		for _, t := range s.templates.all() {
			if v, ok := matchTemplate(t.compiled, uri); ok {
				h, vars = t.handler, v
				break
			}
		}
	}
	s.mu.RUnlock()
	if h == nil {
		return nil, &ResourceNotFoundError{URI: uri}
	}
	if vars != nil {
		r := *req
		r.TemplateVars = vars
		req = &r
	}
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Contents) == 0 {
		return nil, &ResourceNotFoundError{URI: uri}
	}
	return res, nil
}

func (ss *ServerSession) subscribe(ctx context.Context, req *SubscribeRequest) (*EmptyResult, error) {
	if req.Params.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: missing uri"}
	}
	opts := &ss.server.opts
	if len(req.Params.URI) > opts.MaxSubscriptionURILength {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: uri is longer than the server's limit of %d bytes (ServerOptions.MaxSubscriptionURILength)", opts.MaxSubscriptionURILength)}
	}
	uri := req.Params.URI
	ss.mu.Lock()
	_, had := ss.subscriptions[uri]
	if !had && len(ss.subscriptions) >= opts.MaxSubscriptions {
		ss.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: this session holds the server's limit of %d resource subscriptions (ServerOptions.MaxSubscriptions); unsubscribe first", opts.MaxSubscriptions)}
	}
	if ss.subscriptions == nil {
		ss.subscriptions = make(map[string]struct{})
	}
	ss.subscriptions[uri] = struct{}{}
	ss.mu.Unlock()
	if h := opts.SubscribeHandler; h != nil {
		if err := h(ctx, req); err != nil {
			if !had {
				ss.mu.Lock()
				delete(ss.subscriptions, uri)
				ss.mu.Unlock()
			}
			return nil, err
		}
	}
	if err := ss.saveState(ctx, func() {
		if ss.subscriptions == nil {
			ss.subscriptions = make(map[string]struct{})
		}
		ss.subscriptions[uri] = struct{}{}
	}); err != nil {
		return nil, err
	}
	return &EmptyResult{}, nil
}

func (ss *ServerSession) unsubscribe(ctx context.Context, req *UnsubscribeRequest) (*EmptyResult, error) {
	if h := ss.server.opts.UnsubscribeHandler; h != nil {
		if err := h(ctx, req); err != nil {
			return nil, err
		}
	}
	ss.mu.Lock()
	delete(ss.subscriptions, req.Params.URI)
	ss.mu.Unlock()
	if err := ss.saveState(ctx, func() { delete(ss.subscriptions, req.Params.URI) }); err != nil {
		return nil, err
	}
	return &EmptyResult{}, nil
}
