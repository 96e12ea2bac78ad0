package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// The client side of 2026-07-28. A client whose ClientOptions.ProtocolVersion
// names that revision (or a later one) speaks it: Connect asks the server
// with server/discover instead of initialize, every request carries the
// _meta envelope (the revision, the client's capabilities and name), and
// the input_required results of tools/call, prompts/get and
// resources/read are answered by the client's own handlers (sampling,
// elicitation, roots) and the request sent again, up to
// ClientOptions.MaxInputRounds rounds; the caller sees the final result.
// Over any transport: on Streamable HTTP the connection switches to the
// revision's rules (a POST per message, no session; see
// transport.StreamableClientTransport), the calls carry the Mcp-Param
// headers of their tools' x-mcp-header marks, and tools/list drops the
// tools whose marks break the rules. With ClientOptions.Era at its zero
// value, EraAuto, Connect finds the era of the server itself.
//
// The methods the revision removed keep working where they have a
// successor: SetLoggingLevel sets the logLevel every later request
// carries (before it, debug with a ClientOptions.LoggingMessageHandler,
// none without), Ping asks server/discover, and AddRoots/RemoveRoots send no
// notification (the server asks for roots within a request).
// Subscribe and Unsubscribe fail with ErrRemovedMethod: Listen is their
// successor.

// defaultMaxInputRounds bounds the input rounds of one request when
// ClientOptions.MaxInputRounds is zero.
const defaultMaxInputRounds = 8

// defaultMaxInputRequests bounds the input requests of one round when
// ClientOptions.MaxInputRequests is zero: as many as an mcpkit server
// asks for at most.
const defaultMaxInputRequests = maxInputRequests

// InputRoundsError reports a request the server still answered with
// input_required after ClientOptions.MaxInputRounds rounds.
type InputRoundsError struct {
	Method string
	Rounds int
}

// Error implements error.
func (e *InputRoundsError) Error() string {
	return fmt.Sprintf("mcp: %s: the server still asks for input after %d rounds (ClientOptions.MaxInputRounds)", e.Method, e.Rounds)
}

// InputRequestError reports an input request of the server that the
// client could not fulfil, such as one for a capability it did not
// declare; Err says why (a *jsonrpc.Error from the client's own handler).
type InputRequestError struct {
	Method string // the request the server answered with input_required
	Key    string // the input request's key
	Input  string // its method, such as "sampling/createMessage"
	Err    error
}

// Error implements error.
func (e *InputRequestError) Error() string {
	return fmt.Sprintf("mcp: %s: cannot fulfil the server's %s input request %q: %v", e.Method, e.Input, e.Key, e.Err)
}

// Unwrap returns Err.
func (e *InputRequestError) Unwrap() error { return e.Err }

// InputRequestsError reports an input_required result that asks for more
// inputs in one round than ClientOptions.MaxInputRequests allows: the
// client fulfils none of them.
type InputRequestsError struct {
	Method   string // the request the server answered with input_required
	Requests int    // the number of input requests in the round
	Max      int    // the bound, ClientOptions.MaxInputRequests or its default
}

// Error implements error.
func (e *InputRequestsError) Error() string {
	return fmt.Sprintf("mcp: %s: the server asks for %d inputs in one round, more than the %d this client fulfils (ClientOptions.MaxInputRequests)", e.Method, e.Requests, e.Max)
}

// ResultTypeError reports a 2026-07-28 result whose resultType the client
// cannot read as the method's result: an unknown one, one of an extension
// the request did not declare (such as "task" without the tasks
// extension), or "input_required" on a method that takes no input. The
// result is not handed out.
type ResultTypeError struct {
	Method     string     // the request's method
	ResultType ResultType // the result's resultType
}

// Error implements error.
func (e *ResultTypeError) Error() string {
	return fmt.Sprintf("mcp: %s: the server answered with a result of type %q, which this session did not negotiate (want %q)", e.Method, e.ResultType, ResultTypeComplete)
}

// ErrRemovedMethod reports a method the session's protocol revision
// removed and that has no successor the client could use in its place,
// such as resources/subscribe in 2026-07-28 (see [ClientSession.Listen]).
var ErrRemovedMethod = errors.New("mcp: method removed in the session's protocol revision")

// modernClient is the state of a client session of the stateless era.
type modernClient struct {
	version  string
	caps     *ClientCapabilities
	info     *Implementation
	pre      *metaEncodings               // caps and info, encoded once
	results  capsCache                    // the server's identity in its results (see readResultMeta)
	rounds   int                          // ClientOptions.MaxInputRounds, resolved
	asks     int                          // ClientOptions.MaxInputRequests, resolved
	logLevel atomic.Pointer[LoggingLevel] // set by SetLoggingLevel
	// defaultLevel is the logLevel of requests before SetLoggingLevel:
	// debug when the client has a LoggingMessageHandler, so that it gets
	// what a handshake-era server sends before logging/setLevel (every
	// message); otherwise none, and the server sends no log messages.
	defaultLevel LoggingLevel
}

func newModernClient(version string, caps *ClientCapabilities, info *Implementation, rounds, asks int, defaultLevel LoggingLevel) *modernClient {
	m := &modernClient{version: version, caps: caps, info: info, rounds: rounds, asks: asks, defaultLevel: defaultLevel}
	capsJSON, err1 := marshalStd(caps)
	var infoJSON []byte
	var err2 error
	if info != nil { // nil with ClientOptions.OmitClientInfo
		infoJSON, err2 = marshalStd(info)
	}
	if err1 == nil && err2 == nil {
		m.pre = &metaEncodings{caps: caps, capsJSON: capsJSON, info: info, infoJSON: infoJSON}
		m.encodeEnvelope()
	}
	return m
}

// encodeEnvelope encodes, once, the _meta of a request that carries
// nothing but the session's revision, capabilities and identity.
func (m *modernClient) encodeEnvelope() {
	pre := m.pre
	pre.envelope = nil
	if env, err := marshalStd(Meta{ProtocolVersion: m.version, ClientCapabilities: m.caps, ClientInfo: m.info, pre: pre}); err == nil {
		pre.version, pre.envelope = m.version, env
	}
}

// fill puts the _meta envelope into p, leaving what the caller set.
func (m *modernClient) fill(p Params) {
	meta := p.meta()
	if meta.ProtocolVersion == "" {
		meta.ProtocolVersion = m.version
	}
	if meta.ClientCapabilities == nil {
		meta.ClientCapabilities = m.caps
	}
	if meta.ClientInfo == nil {
		meta.ClientInfo = m.info
	}
	if meta.LogLevel == "" {
		if l := m.logLevel.Load(); l != nil {
			meta.LogLevel = *l
		} else {
			meta.LogLevel = m.defaultLevel
		}
	}
	meta.pre = m.pre
}

// Era is a protocol era a client can speak (see [ClientOptions.Era]).
type Era int

// Eras.
const (
	// EraAuto, the zero value, asks the server (server/discover) and
	// speaks its era: 2026-07-28 with a server of the stateless era,
	// otherwise initialize and the newest handshake revision both sides
	// speak.
	EraAuto Era = iota
	// EraHandshake speaks the handshake era (initialize), revisions
	// 2024-11-05 to 2025-11-25, without probing.
	EraHandshake
	// EraModern speaks the stateless era, 2026-07-28, and fails to
	// connect to a server that does not.
	EraModern
)

// Era returns the era the session speaks: [EraModern] (2026-07-28) or
// [EraHandshake]; [ClientSession.ProtocolVersion] names the revision.
func (cs *ClientSession) Era() Era {
	if cs.modernEra.Load() {
		return EraModern
	}
	return EraHandshake
}

// String returns "auto", "handshake" or "modern".
func (e Era) String() string {
	switch e {
	case EraAuto:
		return "auto"
	case EraHandshake:
		return "handshake"
	case EraModern:
		return "modern"
	}
	return "Era(" + strconv.Itoa(int(e)) + ")"
}

// errNotModern marks a server that did not answer server/discover as a
// server of the stateless era does.
var errNotModern = errors.New("mcp: the server is not of the stateless era")

// defaultDiscoverTimeout bounds EraAuto's probe on stream transports when
// ClientOptions.DiscoverTimeout is zero.
const defaultDiscoverTimeout = 2 * time.Second

// isModernError reports whether err is one of the errors only a server of
// the stateless era sends.
func isModernError(err error) bool {
	je := (*jsonrpc.Error)(nil)
	if !errors.As(err, &je) {
		return false
	}
	switch je.Code {
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// unanswered reports whether err says that no server answered the
// server/discover probe, so that initialize would fail alike and must not
// be tried: the HTTP request itself failed (the network, or an authorizer
// that could not obtain a token), the server refused it for want of
// authorization (401, 403), or the connection ended (a server process
// that exited, or whose input is closed). Falling back then would log in a second time, remember
// the server for the wrong era, and report a failure of initialize that
// never was. (A process that exited may fail the write itself, with the
// transport's ErrClosed, or the call, with jsonrpc's: which one depends on
// which side noticed first.)
func unanswered(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, transport.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
		return true
	}
	return authRefused(err)
}

// resetModern undoes connectModern's setup after a probe that found a
// server of the handshake era.
func (cs *ClientSession) resetModern() {
	cs.modern = nil
	cs.endpoint.modernCall = nil
	cs.httpHeaders = false
}

// connectModern finishes Connect for the stateless era: server/discover
// tells the client what the server offers. With probe (EraAuto), an
// answer that does not come from a server of that era is reported as
// errNotModern, for Connect to fall back to initialize.
func (cs *ClientSession) connectModern(ctx context.Context, version string, probe bool) error {
	c := cs.client
	info := c.impl
	rounds := c.opts.MaxInputRounds
	if rounds <= 0 {
		rounds = defaultMaxInputRounds
	}
	asks := c.opts.MaxInputRequests
	if asks <= 0 {
		asks = defaultMaxInputRequests
	}
	var level LoggingLevel
	if c.opts.LoggingMessageHandler != nil {
		level = LoggingLevelDebug
	}
	infoOf := &info
	if c.opts.OmitClientInfo {
		infoOf = nil
	}
	cs.modern = newModernClient(version, c.modernCapabilities(), infoOf, rounds, asks, level)
	cs.endpoint.modernCall = cs.modernCall
	res := &DiscoverResult{}
	for retried := false; ; retried = true {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if _, isHTTP := cs.tconn.(mcplink.ProtocolVersionSetter); probe && !isHTTP {
			d := c.opts.DiscoverTimeout
			if d <= 0 {
				d = defaultDiscoverTimeout
			}
			pctx, cancel = context.WithTimeoutCause(ctx, d, errNotModern)
		}
		err := cs.call(pctx, MethodServerDiscover, &DiscoverParams{}, res)
		cancel()
		if err == nil {
			break
		}
		if probe && !isModernError(err) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if unanswered(err) {
				return fmt.Errorf("mcp: server/discover (automatic era detection; no server answered): %w", err)
			}
			return fmt.Errorf("%w: server/discover: %w", errNotModern, err)
		}
		je := (*jsonrpc.Error)(nil)
		if !errors.As(err, &je) || je.Code != CodeUnsupportedProtocolVersion {
			return fmt.Errorf("mcp: server/discover: %w", err)
		}
		// The server names the revisions it serves: retry, once, with the
		// newest this client speaks too.
		var data UnsupportedProtocolVersionData
		json.Unmarshal(je.Data, &data)
		next := ""
		for _, v := range modernVersions {
			if slices.Contains(data.Supported, v) {
				next = v
				break
			}
		}
		if next == "" || retried {
			return &VersionError{Requested: cs.modern.version, Offered: strings.Join(data.Supported, ", ")}
		}
		cs.switchModernVersion(next)
	}
	// The answer names the revisions the server serves: the session
	// speaks the newest one this client speaks too. An answer naming
	// none (a server that is not of the stateless era, or one that serves
	// this client only with initialize) fails a pinned era and sends
	// EraAuto to initialize.
	if !slices.Contains(res.SupportedVersions, cs.modern.version) {
		next := ""
		for _, v := range modernVersions {
			if slices.Contains(res.SupportedVersions, v) {
				next = v
				break
			}
		}
		if next == "" {
			err := &VersionError{Requested: cs.modern.version, Offered: strings.Join(res.SupportedVersions, ", ")}
			if probe {
				return fmt.Errorf("%w: server/discover: %w", errNotModern, err)
			}
			return err
		}
		cs.switchModernVersion(next)
	}
	// InitializeResult answers the same questions in this era, from
	// server/discover, so code written for the handshake era keeps
	// working.
	serverInfo := res.Meta.ServerInfo
	if serverInfo == nil {
		serverInfo = &Implementation{}
	}
	caps := res.Capabilities
	if caps == nil {
		caps = &ServerCapabilities{}
	}
	cs.mu.Lock()
	cs.discover = res
	cs.init = &InitializeResult{ProtocolVersion: cs.modern.version, Capabilities: caps, ServerInfo: serverInfo, Instructions: res.Instructions}
	cs.mu.Unlock()
	return nil
}

// switchModernVersion makes the session speak revision v of the stateless
// era, which the server named: in the _meta envelope and, over HTTP, in
// the MCP-Protocol-Version header.
func (cs *ClientSession) switchModernVersion(v string) {
	cs.modern.version = v
	if cs.modern.pre != nil {
		cs.modern.encodeEnvelope()
	}
	if pv, ok := cs.tconn.(mcplink.ProtocolVersionSetter); ok {
		pv.SetProtocolVersion(v)
	}
}

// modernCall sends a request of the stateless era: with the _meta
// envelope, and again with the answers while the server asks for input.
func (cs *ClientSession) modernCall(ctx context.Context, o *outgoing) (Result, error) {
	m := cs.modern
	m.fill(o.params)
	if p, ok := o.params.(*CallToolParams); ok && cs.httpHeaders {
		cs.mu.Lock()
		marks := cs.toolHeaders[p.Name]
		cs.mu.Unlock()
		ctx = withParamHeaders(ctx, marks, p.Arguments)
	}
	responses, state := retryFields(o.params)
	key := cacheKey(o.method, o.params)
	if key != "" && ctx.Value(withoutCacheKey{}) == nil {
		if data, ok := cs.cache.get(key, time.Now()); ok && unmarshalReceived(data, o.result) == nil {
			return o.result, nil
		}
	}
	observe := cs.observerOf(ctx, o)
	for round := 0; ; round++ {
		var done func(error)
		params, callCtx := o.params, ctx
		if observe != nil {
			callCtx, params, done = cs.observed(ctx, o, observe, round)
		}
		res, err := callEncoded(callCtx, cs.conn, cs.framed, o, params)
		if done != nil {
			done(err)
		}
		if err != nil {
			return nil, fromWire(err)
		}
		if !readFinal(o, res, &m.results) {
			if responses != nil && bytes.Contains(res, []byte(ResultTypeInputRequired)) {
				var ir InputRequiredResult
				if err := unmarshalReceived(res, &ir); err != nil {
					return nil, fmt.Errorf("mcp: decoding %s result: %w", o.method, err)
				}
				if ir.ResultType == ResultTypeInputRequired {
					if round+1 >= m.rounds {
						return nil, &InputRoundsError{Method: o.method, Rounds: round + 1}
					}
					if len(ir.InputRequests) > m.asks {
						return nil, &InputRequestsError{Method: o.method, Requests: len(ir.InputRequests), Max: m.asks}
					}
					answers, err := cs.fulfil(ctx, o.method, ir.InputRequests)
					if err != nil {
						return nil, err
					}
					*responses, *state = answers, ir.RequestState
					continue
				}
			}
			if done, err := captureTask(ctx, o, res, true); done {
				if err != nil {
					return nil, err
				}
				return o.result, nil
			}
			if err := unmarshalReceived(res, o.result); err != nil {
				return nil, fmt.Errorf("mcp: decoding %s result: %w", o.method, err)
			}
			// A result without resultType is complete (a server of an earlier
			// revision); any other type is one this session did not negotiate.
			if rt := *o.result.resultType(); rt != "" && rt != ResultTypeComplete {
				return nil, &ResultTypeError{Method: o.method, ResultType: rt}
			}
		}
		if mm := lackingMember(o.result); mm != "" {
			return nil, &ResultError{Method: o.method, Member: mm}
		}
		if list, ok := o.result.(*ListToolsResult); ok && cs.httpHeaders {
			cs.checkToolHeaders(list)
		}
		if key != "" {
			cs.cache.put(key, o.result, res, time.Now())
		}
		return o.result, nil
	}
}

// checkToolHeaders drops from a tools/list result the tools whose
// x-mcp-header marks break the rules (a client over Streamable HTTP must
// not call them), saying why in the log, and keeps the marks of the
// others for their calls.
func (cs *ClientSession) checkToolHeaders(list *ListToolsResult) {
	kept := list.Tools[:0]
	cs.mu.Lock()
	if cs.toolHeaders == nil {
		cs.toolHeaders = make(map[string][]headerParam)
	}
	for _, t := range list.Tools {
		marks, err := headerParams(t.InputSchema)
		if err != nil {
			cs.client.logger.Warn("mcp: dropping a tool with an invalid x-mcp-header", "tool", t.Name, "err", err)
			delete(cs.toolHeaders, t.Name)
			continue
		}
		if marks == nil {
			delete(cs.toolHeaders, t.Name)
		} else {
			cs.toolHeaders[t.Name] = marks
		}
		kept = append(kept, t)
	}
	cs.mu.Unlock()
	list.Tools = kept
}

// inputID is the JSON-RPC ID input requests are handled under; it never
// goes on the wire.
var inputID = jsonrpc.StringID("input-request")

// fulfil answers the input requests of an input_required result with the
// client's own handlers (and middleware), as if the server had sent them
// as requests.
func (cs *ClientSession) fulfil(ctx context.Context, method string, reqs map[string]*InputRequest) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(reqs))
	for key, in := range reqs {
		if in == nil {
			continue
		}
		switch in.Method {
		case MethodElicitationCreate, MethodSamplingCreateMessage, MethodRootsList:
		default:
			return nil, &InputRequestError{Method: method, Key: key, Input: in.Method,
				Err: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not an input request method"}}
		}
		res, err := dispatch(ctx, cs, clientMethods, cs.recv, &jsonrpc.Request{ID: inputID, Method: in.Method, Params: in.Params})
		if err != nil {
			return nil, &InputRequestError{Method: method, Key: key, Input: in.Method, Err: err}
		}
		var data json.RawMessage
		if f, ok := res.(*rpclink.Framed); ok {
			data = f.Value() // dispatch's encoding, which nothing else holds
		} else if data, err = marshalStd(res); err != nil {
			return nil, &InputRequestError{Method: method, Key: key, Input: in.Method, Err: err}
		}
		out[key] = data
	}
	return out, nil
}

// DiscoverResult returns what server/discover said of a server of the
// stateless era (2026-07-28): its revisions, capabilities, identity (in
// _meta) and instructions; nil for a session of the handshake era.
func (cs *ClientSession) DiscoverResult() *DiscoverResult {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.discover
}
