package mcp

import (
	"bytes"
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"encoding/json"
	"errors"
	"fmt"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The stateless era (2026-07-28 and later). A request of that era carries
// its protocol revision and the client's capabilities in _meta, and a
// server serves it on its own: there is no initialize, and nothing carries
// over from one request to the next. One Server serves both eras: on a
// Streamable HTTP endpoint each modern POST is an exchange of its own (see
// mcplink.Stateless), and on a stream transport (stdio) the first
// message decides, an initialize selecting the handshake era for the
// connection and a modern request the stateless one.

// era is what a session's first message chose.
type era uint8

const (
	eraUnknown   era = iota // nothing decided yet
	eraHandshake            // initialize: the handshake-era lifecycle
	eraModern               // a 2026-07-28 request: each request on its own
)

// logLevelKey is the context key of a 2026-07-28 request's log level.
type logLevelKey struct{}

// removedInModern reports whether method is one that 2026-07-28 removed:
// on a modern request it does not exist (-32601, HTTP 404).
func removedInModern(method string) bool {
	switch method {
	case MethodInitialize, MethodPing, MethodLoggingSetLevel, MethodResourcesSubscribe, MethodResourcesUnsubscribe,
		NotificationInitialized, NotificationRootsListChanged:
		return true
	}
	return false
}

func errRemovedInModern(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " (removed in " + Version20260728 + ")"}
}

// decodeOptions returns the options the session decodes params with: the
// server's cache of decoded capabilities and _meta envelopes, which
// requests of 2026-07-28 carry, unless the session is of the handshake
// era, whose requests carry none (the cache's unmarshalers would slow
// every decode down); both skip the duplicate-name check the JSON-RPC
// layer made (see receivedOption).
func (ss *ServerSession) decodeOptions() []jsonv2.Options {
	if ss.settled.Load() {
		return wire().received
	}
	ss.mu.Lock()
	era := ss.era
	ss.mu.Unlock()
	if era == eraHandshake {
		return wire().received
	}
	return ss.server.caps.options
}

// metaCache returns the server's cache of decoded _meta envelopes for a
// connection that may carry 2026-07-28 requests, nil for a handshake-era
// session (see decodeOptions).
func (ss *ServerSession) metaCache() *capsCache {
	if ss.settled.Load() {
		return nil
	}
	ss.mu.Lock()
	era := ss.era
	ss.mu.Unlock()
	if era == eraHandshake {
		return nil
	}
	return &ss.server.caps
}

// chooseModern makes a connection whose first message is a modern
// request a modern one.
func (ss *ServerSession) chooseModern() {
	ss.mu.Lock()
	if ss.era == eraUnknown {
		ss.era = eraModern
	}
	ss.mu.Unlock()
}

// isModernRequest reports whether req is one of the stateless era by
// itself: it names a revision in _meta, or its method exists in no other
// era. (On a connection the first message made modern, every request is.)
func isModernRequest(req Request) bool {
	m := req.Method()
	return req.Parameters().meta().ProtocolVersion != "" || m == MethodServerDiscover || m == MethodSubscriptionsListen
}

// handleModern serves a request of the stateless era: it checks the
// request's _meta (revision, client capabilities), refuses the methods
// the era removed, runs the method and marks its result complete.
func (ss *ServerSession) handleModern(ctx context.Context, req Request, m inMethod[*ServerSession]) (Result, error) {
	method := req.Method()
	meta := req.Parameters().meta()
	ss.mu.Lock()
	switch ss.era {
	case eraUnknown:
		ss.era = eraModern // the first message decides
	case eraHandshake:
		v := ss.version
		ss.mu.Unlock()
		if m.notification {
			return nil, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("invalid request: a %s request on a connection initialized with %s", meta.ProtocolVersion, v)}
	}
	ss.mu.Unlock()
	if m.notification {
		// The era defines one client notification: notifications/cancelled
		// (on stdio; on HTTP closing the response cancels).
		if method == NotificationCancelled {
			return m.handle(ctx, ss, req)
		}
		return nil, nil
	}
	if removedInModern(method) {
		return nil, errRemovedInModern(method)
	}
	if err := checkModernMeta(meta); err != nil {
		return nil, err
	}
	if cap := serverCapabilityFor(method); cap != "" && !ss.server.declares(cap) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " (server has no " + cap + " capability)"}
	}
	if meta.LogLevel != "" {
		ctx = context.WithValue(ctx, logLevelKey{}, meta.LogLevel)
	}
	var round *inputRound
	if supportsInput(method) {
		var err error
		if ctx, round, err = ss.server.startInputRound(ctx, req); err != nil {
			return nil, err
		}
	}
	res, err := m.handle(ctx, ss, req)
	if round != nil {
		// A run that asked for input the client has not given is answered
		// with the asks, whatever the handler made of the failed ask.
		ir, ierr := ss.server.finishInputRound(ctx, req, round)
		if ierr != nil {
			return nil, ierr
		}
		if ir != nil {
			ss.server.completeModern(ir)
			return ir, nil
		}
	}
	if err != nil {
		var nf *ResourceNotFoundError
		if errors.As(err, &nf) {
			// -32602 on this revision, with the URI (SEP-2164).
			e := nf.WireError()
			e.Code = jsonrpc.CodeInvalidParams
			return nil, e
		}
		return nil, err
	}
	if res == nil {
		return nil, nil
	}
	ss.server.completeModern(res)
	return res, nil
}

// checkModernMeta checks the _meta members every request of the stateless
// era must carry, and the revision it names.
func checkModernMeta(meta *Meta) error {
	if meta.ProtocolVersion == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: missing _meta member " + metaKeyProtocolVersion}
	}
	if !slices.Contains(modernVersions, meta.ProtocolVersion) {
		data, _ := json.Marshal(&UnsupportedProtocolVersionData{Supported: modernVersions, Requested: meta.ProtocolVersion})
		return &jsonrpc.Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version: " + meta.ProtocolVersion, Data: data}
	}
	if meta.ClientCapabilities == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: missing _meta member " + metaKeyClientCapabilities}
	}
	return nil
}

// completeModern fills in what a result of the stateless era carries
// beyond the handshake era's: its type, the server's identity (see
// ServerOptions.OmitServerInfo) and, for results a client may cache, how
// long and for whom (unless the handler set them).
func (s *Server) completeModern(res Result) {
	if rt := res.resultType(); *rt == "" {
		*rt = ResultTypeComplete
	}
	if e := s.infoMeta; e != nil {
		if m := res.resultMeta(); m.ServerInfo == nil {
			m.ServerInfo = e.server
			if m.pre == nil {
				m.pre = e
			}
		}
	}
	if ttl, scope := res.cacheHints(); ttl != nil {
		if *ttl == nil {
			ms := s.opts.CacheTTL.Milliseconds()
			*ttl = &ms
		}
		if *scope == "" {
			*scope = s.cacheScope()
		}
	}
}

// cacheScope is the scope of cacheable results without one of their own.
func (s *Server) cacheScope() CacheScope {
	if s.opts.CacheScope != "" {
		return s.opts.CacheScope
	}
	return CacheScopePrivate
}

// discover answers server/discover: the revisions served without a
// handshake, the capabilities and instructions, and the server's name in
// _meta.
func (ss *ServerSession) discover(_ context.Context, _ *ServerRequest[*DiscoverParams]) (*DiscoverResult, error) {
	s := ss.server
	info := s.impl
	caps := s.capabilities()
	if s.tasks != nil {
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]json.RawMessage{}
		}
		caps.Extensions[TasksExtensionID] = json.RawMessage("{}")
	}
	return &DiscoverResult{
		Meta:              Meta{ServerInfo: &info},
		SupportedVersions: slices.Clone(modernVersions),
		Capabilities:      caps,
		Instructions:      s.opts.Instructions,
	}, nil
}

// ProtocolVersion returns the revision the request is made under: the one
// its _meta names (2026-07-28 and later), or else the one its session
// negotiated.
func (r *ServerRequest[P]) ProtocolVersion() string {
	if v := r.Params.meta().ProtocolVersion; v != "" {
		return v
	}
	return r.Session.ProtocolVersion()
}

// ClientCapabilities returns the capabilities the client declared for the
// request: in its _meta (2026-07-28 and later), or else at initialize. Do
// not modify them: requests that declare the same share them.
func (r *ServerRequest[P]) ClientCapabilities() *ClientCapabilities {
	if c := r.Params.meta().ClientCapabilities; c != nil {
		return c
	}
	return r.Session.ClientCapabilities()
}

// ClientInfo returns what the client said about itself: in the request's
// _meta (2026-07-28 and later, optional there), or else at initialize.
func (r *ServerRequest[P]) ClientInfo() *Implementation {
	if c := r.Params.meta().ClientInfo; c != nil {
		return c
	}
	if r.Params.meta().ProtocolVersion != "" {
		return nil
	}
	return r.Session.ClientInfo()
}

// capsCache keeps the client capabilities of recent 2026-07-28 requests,
// decoded, by their JSON text, and whole _meta envelopes that carry
// nothing particular to one request (no progress token, no other keys):
// a client sends the same ones with every request, and decoding them is
// a good part of reading the request. The values are shared between the
// requests that carry the same text, so they must not be modified (see
// [ServerRequest.ClientCapabilities] and [ServerRequest.ClientInfo]).
type capsCache struct {
	option  jsonv2.Options   // decodes *ClientCapabilities and Meta through the cache, the rest with unmarshalers
	options []jsonv2.Options // option and receivedOption, for decoding params

	mu    sync.Mutex
	m     map[string]*ClientCapabilities
	metas map[string]Meta
	// last is the envelope decoded last: the one a client sends with
	// every request, found without hashing it, and skipped by readWire
	// without scanning it.
	last atomic.Pointer[cachedMeta]
	// result is a client's: the _meta of the result decoded last when it
	// held the server's identity alone, which a server of the stateless
	// era puts in every result (see readResultMeta).
	result atomic.Pointer[cachedMeta]
}

// cachedMeta is an envelope's text and its decoding.
type cachedMeta struct {
	text []byte
	meta Meta
}

// cacheableMeta reports whether m holds nothing particular to one
// request, so that a capsCache may keep it.
func cacheableMeta(m *Meta) bool {
	return !m.ProgressToken.IsValid() && !m.SubscriptionID.IsValid() && m.ServerInfo == nil && len(m.Other) == 0
}

// maxCachedCaps bounds the capsCache; past it, the cache starts afresh.
const maxCachedCaps = 64

// maxCachedText bounds the JSON text of an entry of the capsCache, so
// that a peer cannot make it hold more than maxCachedCaps times this much
// per kind of entry: longer texts are decoded each time.
const maxCachedText = 4 << 10

func (c *capsCache) init() {
	metas := jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, m *Meta) error {
		if dec.PeekKind() != '{' {
			return jsonv2.SkipFunc // Meta's own unmarshaler says what is wrong
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		c.mu.Lock()
		cached, ok := c.metas[string(raw)]
		c.mu.Unlock()
		if ok {
			*m = cached
			return nil
		}
		if err := m.unmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(raw), c.option)); err != nil {
			return err
		}
		if cacheableMeta(m) && len(raw) <= maxCachedText {
			c.mu.Lock()
			if c.metas == nil || len(c.metas) >= maxCachedCaps {
				c.metas = make(map[string]Meta)
			}
			c.metas[string(raw)] = *m
			c.mu.Unlock()
			c.last.Store(&cachedMeta{text: bytes.Clone(raw), meta: *m})
		}
		return nil
	})
	caps := jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v **ClientCapabilities) error {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if raw.Kind() == 'n' {
			*v = nil
			return nil
		}
		if cached := c.cachedCaps(raw); cached != nil {
			*v = cached
			return nil
		}
		caps := &ClientCapabilities{}
		if err := unmarshalStd(raw, caps); err != nil {
			return err
		}
		if len(raw) <= maxCachedText {
			c.keepCaps(raw, caps)
		}
		*v = caps
		return nil
	})
	c.option = jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(metas, caps, wire().unmarshalers))
	c.options = []jsonv2.Options{c.option, receivedOption}
}
