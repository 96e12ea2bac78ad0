package mcp

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// ServerSession is one client's session with a [Server]. It is created by
// [Server.Connect] and lives until the client disconnects or Close is
// called. Its methods are safe for concurrent use.
type ServerSession struct {
	endpoint
	server *Server
	id     string        // the transport's session ID, or random (guarded by mu); see ID
	recv   MethodHandler // receiving middleware chain; nil without middleware (see handle)
	// record, when the transport keeps the session in a shared store,
	// is where its snapshot goes (see attachRecord); set before the
	// session serves.
	record mcplink.SessionState
	// relayIDs, for a session with a record on a Server with a Bus,
	// numbers its requests to the client (see bus_addressed.go); nil
	// otherwise. Set before the session serves.
	relayIDs *relayIDs

	// settled is set, with mu held, once era is eraHandshake and state
	// is past stateNew, which neither ever leaves: the requests of an
	// initialized session then read it rather than take mu, a lock
	// that every request's goroutine would otherwise write.
	settled atomic.Bool

	mu            sync.Mutex
	stateless     bool // one exchange of a stateless transport; set before the session serves
	era           era  // what the first message chose (see modern.go)
	state         sessionState
	sendingNotes  bool // a goroutine is sending notes (kept here, where it packs with the other flags)
	version       string
	clientInfo    *Implementation
	clientCaps    *ClientCapabilities
	logLevel      LoggingLevel // "" until logging/setLevel
	subscriptions map[string]struct{}
	// generation is the server's feature generation when the session
	// was initialized: it is owed list_changed only for later changes.
	generation uint64
	// initWait is closed (and cleared) when an initialize request that
	// has arrived is handled: requests the client pipelined behind it
	// wait for it rather than be refused as coming before initialize.
	initWait chan struct{}

	notes noteQueue

	// ownerOnce makes ownerID, the session's identity as the owner of
	// tasks when the transport gives it no ID (see taskOwnerID).
	ownerOnce sync.Once
	ownerID   string
}

// noteQueue holds the notifications the server sends a session on its own
// account (see [Server.broadcast]). A goroutine, started when the first
// is queued, sends them in order and ends when the queue is empty.
type noteQueue struct {
	// Guarded by the session's mu.
	items []queuedNote
}

// queuedNote is a notification waiting in a noteQueue. A note with a key
// is not queued again while one with the same method and key waits.
type queuedNote struct {
	method string
	params Params
	key    string
	// droppable notes (log messages) are dropped when the queue is
	// full, rather than closing the session.
	droppable bool
}

type sessionState uint8

const (
	stateNew         sessionState = iota // waiting for initialize
	stateInitialized                     // initialize answered
	stateReady                           // notifications/initialized received
)

// ID returns the session's identifier: the transport's session ID where
// it has one (Streamable HTTP), otherwise a random ID, made on first use
// (reading the system's random source is a noticeable part of a stdio
// server's start).
func (ss *ServerSession) ID() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.id == "" {
		ss.id = newSessionID()
	}
	return ss.id
}

// Server returns the server the session belongs to.
func (ss *ServerSession) Server() *Server { return ss.server }

// ProtocolVersion returns the negotiated protocol revision, or "" before
// initialize.
func (ss *ServerSession) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// ClientInfo returns what the client said about itself in initialize.
func (ss *ServerSession) ClientInfo() *Implementation {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientInfo
}

// ClientCapabilities returns the capabilities the client declared, or nil
// before initialize.
func (ss *ServerSession) ClientCapabilities() *ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientCaps
}

func (ss *ServerSession) initialized() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state >= stateInitialized && ss.era != eraModern
}

// initGeneration returns the server's feature generation when the
// session was initialized, and false before initialize.
func (ss *ServerSession) initGeneration() (uint64, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.generation, ss.state >= stateInitialized && ss.era != eraModern
}

// queueNote queues n for sending, unless an equal note waits already. A
// session whose queue is full is closed; queueNote never waits.
func (ss *ServerSession) queueNote(n queuedNote) {
	select {
	case <-ss.conn.Done():
		return
	default:
	}
	q := &ss.notes
	ss.mu.Lock()
	if n.key != "" {
		for _, o := range q.items {
			if o.method == n.method && o.key == n.key {
				ss.mu.Unlock()
				return
			}
		}
	}
	if len(q.items) >= ss.server.opts.NotificationQueue {
		ss.mu.Unlock()
		if n.droppable {
			ss.server.logger.Debug("mcp: notification queue full, dropping", "method", n.method, "session", ss.ID())
			return
		}
		ss.server.logger.Warn("mcp: closing a session that does not keep up with its notifications",
			"session", ss.ID(), "queued", ss.server.opts.NotificationQueue)
		go ss.Close() // Close waits for the read loop; the caller must not
		return
	}
	q.items = append(q.items, n)
	start := !ss.sendingNotes
	ss.sendingNotes = true
	ss.mu.Unlock()
	if start {
		go ss.sendNotes()
	}
}

// errStalled is the cause of a queued notification's deadline.
var errStalled = errors.New("mcp: session stalled: a notification was not written in time")

// sendNotes sends the queued notifications until the queue is empty or
// the session fails. A write that takes longer than NotificationTimeout
// closes the session, which ends the write.
func (ss *ServerSession) sendNotes() {
	q := &ss.notes
	timeout := ss.server.opts.NotificationTimeout
	for {
		ss.mu.Lock()
		if len(q.items) == 0 {
			q.items = nil
			ss.sendingNotes = false
			ss.mu.Unlock()
			return
		}
		n := q.items[0]
		q.items[0] = queuedNote{}
		q.items = q.items[1:]
		ss.mu.Unlock()

		base := context.Background()
		if n.key != "" && ss.record != nil {
			// A list change or resource update, which every replica
			// holding a copy of the session is told of: the one
			// holding the GET stream sends it, the others keep it.
			base = mcplink.NoRelay(base)
		}
		ctx, cancel := context.WithTimeoutCause(base, timeout, errStalled)
		stop := context.AfterFunc(ctx, func() {
			if context.Cause(ctx) == errStalled {
				ss.server.logger.Warn("mcp: closing a stalled session", "session", ss.ID(), "method", n.method)
				ss.Close()
			}
		})
		err := ss.notify(ctx, n.method, n.params)
		stop()
		cancel()
		if err != nil {
			ss.server.logger.Debug("mcp: notification failed", "method", n.method, "session", ss.ID(), "err", err)
			select {
			case <-ss.conn.Done():
				ss.mu.Lock()
				q.items = nil
				ss.sendingNotes = false
				ss.mu.Unlock()
				return
			default:
			}
		}
	}
}

// Close ends the session and closes its transport. Handlers still running
// see their contexts cancelled.
func (ss *ServerSession) Close() error { return ss.conn.Close() }

// Wait blocks until the session has ended and its handlers have returned.
// It returns io.EOF when the client closed the connection.
func (ss *ServerSession) Wait() error { return ss.conn.Wait() }

// Done returns a channel closed when the session ends.
func (ss *ServerSession) Done() <-chan struct{} { return ss.conn.Done() }

func (ss *ServerSession) allowBatch() bool {
	return ss.ProtocolVersion() == Version20250326
}

// serverHandler is a ServerSession as its connection's [jsonrpc.Handler]
// (a conversion, which costs no allocation, where a method value would).
type serverHandler ServerSession

// Handle implements jsonrpc.Handler.
func (h *serverHandler) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	return (*ServerSession)(h).handle(ctx, req)
}

// handle is the session's jsonrpc handler (see serverHandler): the entry
// point for every incoming message.
func (ss *ServerSession) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method == MethodInitialize {
		defer ss.initHandled()
	}
	recv := ss.recv
	if recv == nil {
		recv = ss.handleRequest // does not escape: no allocation
	}
	return dispatch(ctx, ss, serverMethods, recv, req)
}

// received sees every incoming message in arrival order (see
// jsonrpc.ConnOptions.OnReceive): it applies notifications/cancelled at
// once, and records an initialize that has arrived, so that what the
// client sent after it is not refused as coming before it, whichever
// handler starts first.
func (ss *ServerSession) received(req *jsonrpc.Request) {
	if req.Method == NotificationCancelled {
		// Cancelled here, in arrival order: whatever the client sends
		// after it meets the request cancelled already.
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		if unmarshalStd(req.Params, &p) == nil && p.RequestID.IsValid() {
			ss.conn.Cancel(p.RequestID)
		}
		return
	}
	if req.Method != MethodInitialize {
		return
	}
	ss.mu.Lock()
	if ss.state == stateNew && ss.initWait == nil {
		ss.initWait = make(chan struct{})
	}
	ss.mu.Unlock()
}

// initHandled releases the requests waiting for initialize.
func (ss *ServerSession) initHandled() {
	ss.mu.Lock()
	if ch := ss.initWait; ch != nil {
		ss.initWait = nil
		close(ch)
	}
	ss.mu.Unlock()
}

// handleRequest is the innermost receiving handler: it enforces the
// lifecycle and capabilities, then runs the method.
func (ss *ServerSession) handleRequest(ctx context.Context, req Request) (Result, error) {
	method := req.Method()
	m := serverMethods[method]
	if ss.settled.Load() {
		if isModernRequest(req) {
			return ss.handleModern(ctx, req, m) // which refuses it
		}
		return ss.runMethod(ctx, req, method, m)
	}
	ss.mu.Lock()
	state, wait, era := ss.state, ss.initWait, ss.era
	ss.mu.Unlock()
	if era == eraModern || isModernRequest(req) {
		return ss.handleModern(ctx, req, m)
	}
	if state == stateNew && wait != nil && method != MethodInitialize && method != MethodPing {
		// An initialize arrived before this message: wait for it.
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		ss.mu.Lock()
		state = ss.state
		ss.mu.Unlock()
	}
	if state == stateNew && method != MethodInitialize && method != MethodPing {
		if m.notification {
			return nil, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: %s before initialize", method)}
	}
	return ss.runMethod(ctx, req, method, m)
}

// runMethod runs m, the method of req, on a session whose lifecycle
// allows it, once the server is found to declare the capability it needs.
func (ss *ServerSession) runMethod(ctx context.Context, req Request, method string, m inMethod[*ServerSession]) (Result, error) {
	if cap := serverCapabilityFor(method); cap != "" && !ss.server.declares(cap) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method + " (server has no " + cap + " capability)"}
	}
	if supportsInput(method) {
		ctx = withStepStore(ctx) // Once records here as on 2026-07-28
	}
	return m.handle(ctx, ss, req)
}

// serverCapabilityFor names the server capability a method needs.
func serverCapabilityFor(method string) string {
	switch method {
	case MethodToolsList, MethodToolsCall:
		return "tools"
	case MethodResourcesList, MethodResourcesRead, MethodResourcesTemplatesList:
		return "resources"
	case MethodResourcesSubscribe, MethodResourcesUnsubscribe:
		return "resources.subscribe"
	case MethodPromptsList, MethodPromptsGet:
		return "prompts"
	case MethodCompletionComplete:
		return "completions"
	case MethodLoggingSetLevel:
		return "logging"
	case MethodSkillsList, MethodSkillsGet:
		return "skills"
	case MethodResourcesDirectoryRead:
		return "skills.directoryRead"
	}
	return ""
}

// declares reports whether the server declares capability name now. It
// runs for every request, so it reads the registries without building
// the capabilities object.
func (s *Server) declares(name string) bool {
	o := s.opts.Capabilities
	if o == nil {
		o = &ServerCapabilities{}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	resources := o.Resources != nil || s.resources.len() > 0 || s.templates.len() > 0
	switch name {
	case "tools":
		return o.Tools != nil || s.tools.len() > 0
	case "resources":
		return resources
	case "resources.subscribe":
		if o.Resources != nil {
			return o.Resources.Subscribe
		}
		return resources
	case "prompts":
		return o.Prompts != nil || s.prompts.len() > 0
	case "completions":
		return o.Completions != nil || s.opts.CompletionHandler != nil
	case "logging":
		return true
	case "skills", "skills.directoryRead":
		return s.declaresSkills(o, name == "skills.directoryRead")
	}
	return false
}

// serverMethods is every method a server receives.
var serverMethods = map[string]inMethod[*ServerSession]{
	MethodServerDiscover:         serverMethodFor(MethodServerDiscover, (*ServerSession).discover),
	MethodSubscriptionsListen:    serverMethodFor(MethodSubscriptionsListen, (*ServerSession).listen),
	MethodInitialize:             serverMethodFor(MethodInitialize, (*ServerSession).initialize),
	MethodPing:                   serverMethodFor(MethodPing, (*ServerSession).ping),
	MethodToolsList:              serverMethodFor(MethodToolsList, (*ServerSession).listTools),
	MethodToolsCall:              serverMethodFor(MethodToolsCall, (*ServerSession).callTool),
	MethodResourcesList:          serverMethodFor(MethodResourcesList, (*ServerSession).listResources),
	MethodResourcesTemplatesList: serverMethodFor(MethodResourcesTemplatesList, (*ServerSession).listResourceTemplates),
	MethodResourcesRead:          serverMethodFor(MethodResourcesRead, (*ServerSession).readResource),
	MethodResourcesSubscribe:     serverMethodFor(MethodResourcesSubscribe, (*ServerSession).subscribe),
	MethodResourcesUnsubscribe:   serverMethodFor(MethodResourcesUnsubscribe, (*ServerSession).unsubscribe),
	MethodPromptsList:            serverMethodFor(MethodPromptsList, (*ServerSession).listPrompts),
	MethodPromptsGet:             serverMethodFor(MethodPromptsGet, (*ServerSession).getPrompt),
	MethodCompletionComplete:     serverMethodFor(MethodCompletionComplete, (*ServerSession).complete),
	MethodLoggingSetLevel:        serverMethodFor(MethodLoggingSetLevel, (*ServerSession).setLevel),
	MethodSkillsList:             serverMethodFor(MethodSkillsList, (*ServerSession).listSkills),
	MethodSkillsGet:              serverMethodFor(MethodSkillsGet, (*ServerSession).getSkill),
	MethodResourcesDirectoryRead: serverMethodFor(MethodResourcesDirectoryRead, (*ServerSession).readDirectory),
	MethodTasksGet:               serverMethodFor(MethodTasksGet, (*ServerSession).getTask),
	MethodTasksUpdate:            serverMethodFor(MethodTasksUpdate, (*ServerSession).updateTask),
	MethodTasksCancel:            serverMethodFor(MethodTasksCancel, (*ServerSession).cancelTask),
	MethodTasksResult:            serverMethodFor(MethodTasksResult, (*ServerSession).taskPayload),
	MethodTasksList:              serverMethodFor(MethodTasksList, (*ServerSession).listTasks),
	NotificationInitialized:      notification(serverMethodFor(NotificationInitialized, (*ServerSession).initializedNote)),
	NotificationCancelled:        notification(serverMethodFor(NotificationCancelled, (*ServerSession).cancelledNote)),
	NotificationProgress:         notification(serverMethodFor(NotificationProgress, (*ServerSession).progressNote)),
	NotificationRootsListChanged: notification(serverMethodFor(NotificationRootsListChanged, (*ServerSession).rootsChangedNote)),
}

func (ss *ServerSession) initialize(ctx context.Context, req *InitializeRequest) (*InitializeResult, error) {
	p := req.Params
	version := negotiate(p.ProtocolVersion)
	generation := ss.server.currentGeneration()
	ss.mu.Lock()
	if ss.state != stateNew && !ss.stateless {
		ss.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: session already initialized"}
	}
	ss.state = stateInitialized
	ss.era = eraHandshake
	ss.settled.Store(true)
	ss.generation = generation
	ss.version = version
	ss.clientInfo = p.ClientInfo
	ss.clientCaps = p.Capabilities
	if ss.clientCaps == nil {
		ss.clientCaps = &ClientCapabilities{}
	}
	ss.mu.Unlock()
	if err := ss.saveState(ctx, nil); err != nil {
		return nil, err // saved before the answer: any replica serves what follows
	}
	caps := ss.server.capabilities()
	if ss.server.tasks != nil && version >= Version20251125 {
		caps.Tasks = &TasksCapabilities{
			List:     &struct{}{},
			Cancel:   &struct{}{},
			Requests: &TaskRequestsCapabilities{Tools: &ToolTaskCapabilities{Call: &struct{}{}}},
		}
	}
	// The result and the copy of the server's identity it carries (which
	// middleware may change), in one allocation.
	r := &struct {
		res  InitializeResult
		info Implementation
	}{info: ss.server.impl}
	r.res = InitializeResult{
		ProtocolVersion: version,
		Capabilities:    caps,
		ServerInfo:      &r.info,
		Instructions:    ss.server.opts.Instructions,
	}
	return &r.res, nil
}

func (ss *ServerSession) ping(context.Context, *ServerRequest[*PingParams]) (*EmptyResult, error) {
	return &EmptyResult{}, nil
}

func (ss *ServerSession) initializedNote(ctx context.Context, req *ServerRequest[*InitializedParams]) (*EmptyResult, error) {
	ss.mu.Lock()
	first := ss.state == stateInitialized
	if first {
		ss.state = stateReady
	}
	ss.mu.Unlock()
	if first && ss.server.opts.InitializedHandler != nil {
		ss.server.opts.InitializedHandler(ctx, req)
	}
	return nil, nil
}

// quickNote reports whether the session's handler of the notification
// req returns at once, running no code of the application's (see
// jsonrpc.ConnOptions.QuickNotification): one of the notifications the
// server handles itself, when no handler of the application's is set for
// it, once initialize has been handled (before, a notification waits for
// it). Sessions of servers with receiving middleware do not ask.
func (ss *ServerSession) quickNote(req *jsonrpc.Request) bool {
	if !ss.server.quickNote(req.Method) {
		return false
	}
	if ss.settled.Load() {
		return true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.state != stateNew && ss.era != eraModern
}

// quickNote reports whether the server handles the notification method
// itself, at once, running no code of the application's.
func (s *Server) quickNote(method string) bool {
	switch method {
	case NotificationInitialized:
		return s.opts.InitializedHandler == nil
	case NotificationCancelled:
		return true
	case NotificationProgress:
		return s.opts.ProgressHandler == nil
	case NotificationRootsListChanged:
		return s.opts.RootsListChangedHandler == nil
	}
	return false
}

// cancelledNote has nothing left to do: received applied the
// cancellation when it arrived. Applying it again here, later, would
// cancel a request that reused the id meanwhile.
func (ss *ServerSession) cancelledNote(context.Context, *ServerRequest[*CancelledParams]) (*EmptyResult, error) {
	return nil, nil
}

func (ss *ServerSession) progressNote(ctx context.Context, req *ServerRequest[*ProgressParams]) (*EmptyResult, error) {
	if h := ss.server.opts.ProgressHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (ss *ServerSession) rootsChangedNote(ctx context.Context, req *ServerRequest[*RootsListChangedParams]) (*EmptyResult, error) {
	if h := ss.server.opts.RootsListChangedHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (ss *ServerSession) setLevel(ctx context.Context, req *ServerRequest[*SetLevelParams]) (*EmptyResult, error) {
	if !req.Params.Level.valid() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: unknown logging level %q", req.Params.Level)}
	}
	set := func() { ss.logLevel = req.Params.Level }
	ss.mu.Lock()
	set()
	ss.mu.Unlock()
	if err := ss.saveState(ctx, set); err != nil {
		return nil, err
	}
	return &EmptyResult{}, nil
}

func (ss *ServerSession) complete(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
	h := ss.server.opts.CompletionHandler
	if h == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: completion/complete"}
	}
	res, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CompleteResult{}
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if len(res.Completion.Values) > 100 {
		// The spec caps a completion at 100 values.
		if res.Completion.Total == 0 {
			res.Completion.Total = len(res.Completion.Values)
		}
		res.Completion.Values = res.Completion.Values[:100]
		res.Completion.HasMore = true
	}
	return res, nil
}

// checkClient returns a CapabilityError unless the client declared cap:
// at initialize, or, for an ask of a handler serving a 2026-07-28 request
// (round non-nil), in that request's _meta, where the error is a
// MissingClientCapabilityError (-32021).
func (ss *ServerSession) checkClient(round *inputRound, method, capability string, has func(*ClientCapabilities) bool) error {
	if round != nil {
		if round.caps == nil || !has(round.caps) {
			return &MissingClientCapabilityError{Err: &CapabilityError{Method: method, Capability: capability, Peer: "client"}}
		}
		return nil
	}
	ss.mu.Lock()
	caps, state, era := ss.clientCaps, ss.state, ss.era
	ss.mu.Unlock()
	if era == eraModern {
		return fmt.Errorf("mcp: %s: a 2026-07-28 request can ask the client for input only in tools/call, prompts/get and resources/read", method)
	}
	if state == stateNew {
		return ErrNotInitialized
	}
	if caps == nil || !has(caps) {
		return &CapabilityError{Method: method, Capability: capability, Peer: "client"}
	}
	return nil
}

// errClientTimeout is the cause of a request to the client that took
// longer than ServerOptions.ClientRequestTimeout.
var errClientTimeout = errors.New("mcp: the client did not answer within ServerOptions.ClientRequestTimeout")

// request sends a request to the client, bounded by
// ServerOptions.ClientRequestTimeout when ctx has no deadline.
func (ss *ServerSession) request(ctx context.Context, method string, params Params, result Result) error {
	if d := ss.server.opts.ClientRequestTimeout; d > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, d, errClientTimeout)
			defer cancel()
		}
	}
	return ss.call(ss.withRelayID(ctx), method, params, result)
}

// Ping checks that the client is responsive.
//
// A connection of 2026-07-28 has no requests from server to client: Ping
// fails there with [ErrRemovedMethod].
func (ss *ServerSession) Ping(ctx context.Context) error {
	if ss.isModern() {
		return fmt.Errorf("%w: a server sends no requests in %s", ErrRemovedMethod, Version20260728)
	}
	return ss.request(ctx, MethodPing, &PingParams{}, &EmptyResult{})
}

// isModern reports whether the session serves 2026-07-28 requests.
func (ss *ServerSession) isModern() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.era == eraModern
}

// errSilentPeer closes a session whose client sent nothing for two
// KeepAlive intervals after connecting.
var errSilentPeer = errors.New("mcp: the client sent nothing within two keepalive intervals")

// keepAlivePinger returns the ping of ServerOptions.KeepAlive for ss: a
// ping in the handshake era; nothing on a connection of 2026-07-28, which
// the server cannot ask anything; and, until the client's first message
// says the era, nothing either, but a failure once two intervals have
// passed in silence.
func (ss *ServerSession) keepAlivePinger() func(context.Context) error {
	silent := 0 // intervals without a first message; keepAlive's goroutine only
	return func(ctx context.Context) error {
		ss.mu.Lock()
		era := ss.era
		ss.mu.Unlock()
		switch era {
		case eraHandshake:
			return ss.Ping(ctx)
		case eraModern:
			return nil
		}
		if silent++; silent >= 2 {
			return errSilentPeer
		}
		return nil
	}
}

// ListRoots asks the client for its roots. It fails with a
// [*CapabilityError] if the client did not declare roots.
// A ctx without a deadline is bounded by
// [ServerOptions.ClientRequestTimeout].
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (ss *ServerSession) ListRoots(ctx context.Context, params *ListRootsParams) (*ListRootsResult, error) {
	round := inputRoundFrom(ctx)
	if err := ss.checkClient(round, MethodRootsList, "roots", func(c *ClientCapabilities) bool { return c.Roots != nil }); err != nil {
		return nil, err
	}
	if params == nil {
		params = &ListRootsParams{}
	}
	res := &ListRootsResult{}
	if run := taskRunFrom(ctx); run != nil {
		if handled, err := run.ask(ctx, MethodRootsList, params, res); handled {
			return res, err
		}
	}
	if round != nil {
		return res, round.ask(ctx, MethodRootsList, params, res)
	}
	return res, ss.request(ctx, MethodRootsList, params, res)
}

// CreateMessage asks the client to sample from its language model. It
// fails with a [*CapabilityError] if the client did not declare sampling
// (or sampling with tools, when params carries tools).
// A ctx without a deadline is bounded by
// [ServerOptions.ClientRequestTimeout].
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (ss *ServerSession) CreateMessage(ctx context.Context, params *CreateMessageParams) (*CreateMessageResult, error) {
	round := inputRoundFrom(ctx)
	if err := ss.checkClient(round, MethodSamplingCreateMessage, "sampling", func(c *ClientCapabilities) bool { return c.Sampling != nil }); err != nil {
		return nil, err
	}
	if len(params.Tools) > 0 {
		if err := ss.checkClient(round, MethodSamplingCreateMessage, "sampling.tools", func(c *ClientCapabilities) bool { return c.Sampling.Tools != nil }); err != nil {
			return nil, err
		}
	}
	res := &CreateMessageResult{}
	if run := taskRunFrom(ctx); run != nil {
		if handled, err := run.ask(ctx, MethodSamplingCreateMessage, params, res); handled {
			return res, err
		}
	}
	if round != nil {
		return res, round.ask(ctx, MethodSamplingCreateMessage, withoutTask(params), res)
	}
	return res, ss.requestMaybeTask(ctx, MethodSamplingCreateMessage, params, res)
}

// Elicit asks the client to collect information from the user, in form
// mode (a restricted JSON Schema) or URL mode; params with a URL and no
// mode are sent in URL mode. It fails with a [*CapabilityError] if the
// client did not declare elicitation, or not the mode asked for.
// [ElicitAs] elicits a Go type.
// A ctx without a deadline is bounded by
// [ServerOptions.ClientRequestTimeout].
//
// On a 2026-07-28 request the handler does not wait here: until the
// client has answered, it returns [ErrInputRequired], which the handler
// returns, and the server runs the handler again from the start for each
// round of answers ([InputRound] tells the run). Whatever the handler
// does before its last ask is done again in every round, so work with
// effects outside it (a charge, a message, a write) belongs in [Once],
// which does it once and hands the retries its result. In the handshake
// era this is a request to the client and the handler runs once.
func (ss *ServerSession) Elicit(ctx context.Context, params *ElicitParams) (*ElicitResult, error) {
	if params.Mode == "" && params.URL != "" {
		p := *params
		p.Mode = ElicitModeURL
		params = &p
	}
	round := inputRoundFrom(ctx)
	if err := ss.checkClient(round, MethodElicitationCreate, "elicitation", func(c *ClientCapabilities) bool { return c.Elicitation != nil }); err != nil {
		return nil, err
	}
	if params.Mode == ElicitModeURL {
		if err := ss.checkClient(round, MethodElicitationCreate, "elicitation.url", func(c *ClientCapabilities) bool { return c.Elicitation.URL != nil }); err != nil {
			return nil, err
		}
	} else if err := ss.checkClient(round, MethodElicitationCreate, "elicitation.form", func(c *ClientCapabilities) bool {
		return c.Elicitation.Form != nil || c.Elicitation.URL == nil // {} means form
	}); err != nil {
		return nil, err
	}
	res := &ElicitResult{}
	if run := taskRunFrom(ctx); run != nil {
		if handled, err := run.ask(ctx, MethodElicitationCreate, params, res); handled {
			return res, err
		}
	}
	if round != nil {
		return res, round.ask(ctx, MethodElicitationCreate, withoutTask(params), res)
	}
	return res, ss.requestMaybeTask(ctx, MethodElicitationCreate, params, res)
}

// NotifyElicitationComplete tells the client that the URL-mode
// elicitation id has completed.
//
// 2026-07-28 removed the notification (the client's retry replaces it):
// on a connection of that revision it fails with [ErrRemovedMethod].
func (ss *ServerSession) NotifyElicitationComplete(ctx context.Context, id string) error {
	if ss.isModern() {
		return fmt.Errorf("%w: %s is not part of %s; the client's retry follows the elicitation", ErrRemovedMethod, NotificationElicitationComplete, Version20260728)
	}
	return ss.notify(ctx, NotificationElicitationComplete, &ElicitationCompleteParams{ElicitationID: id})
}

// queueLog queues a log message for the client, as Log would send it,
// without waiting; it is dropped if the session's queue is full.
func (ss *ServerSession) queueLog(params *LoggingMessageParams) {
	ss.mu.Lock()
	min, era := ss.logLevel, ss.era
	ss.mu.Unlock()
	if era == eraModern {
		return // 2026-07-28: log messages only about a request that asked
	}
	if min != "" && params.Level.less(min) {
		return
	}
	ss.queueNote(queuedNote{method: NotificationMessage, params: params, droppable: true})
}

// Log sends a log message to the client, if its level is at or above the
// level the client set with logging/setLevel (every message, before the
// client sets one). On a 2026-07-28 request the level is the request's
// own (its _meta logLevel), and without one nothing is sent. It is the
// one way a server logs to its client; [NewLoggingHandler] adapts it to
// log/slog. Inside a handler, pass the handler's ctx so the message
// travels with the request it concerns.
func (ss *ServerSession) Log(ctx context.Context, params *LoggingMessageParams) error {
	ss.mu.Lock()
	min, era := ss.logLevel, ss.era
	ss.mu.Unlock()
	if era == eraModern {
		min, _ = ctx.Value(logLevelKey{}).(LoggingLevel)
		if min == "" {
			return nil
		}
	}
	if min != "" && params.Level.less(min) {
		return nil
	}
	return ss.notify(ctx, NotificationMessage, params)
}

// sessionSnapshot is what a session of the handshake era saves of itself
// in a shared session store (transport.StreamableHTTPOptions.SessionStore),
// for a replica that never saw its initialize to restore it: what the
// client said in initialize and what it set since.
type sessionSnapshot struct {
	ProtocolVersion string              `json:"protocolVersion"`
	ClientInfo      *Implementation     `json:"clientInfo,omitempty"`
	Capabilities    *ClientCapabilities `json:"capabilities,omitempty"`
	LogLevel        LoggingLevel        `json:"logLevel,omitempty"`
	Subscriptions   []string            `json:"subscriptions,omitempty"`
}

// attachRecord makes the session save its snapshot through st, and, when
// st restored it from its record, starts it initialized with the
// snapshot: no initialize exchange. It runs before the session serves.
func (ss *ServerSession) attachRecord(st mcplink.SessionState) {
	ss.record = st
	if l := ss.server.bus; l != nil {
		ss.relayIDs = &relayIDs{replica: l.origin}
	}
	if raw := st.RestoredState(); raw != nil {
		ss.mu.Lock()
		ss.state = stateReady
		ss.era = eraHandshake
		ss.settled.Store(true)
		ss.generation = ss.server.currentGeneration()
		ss.clientCaps = &ClientCapabilities{}
		ss.mu.Unlock()
		ss.applySnapshot(raw)
	}
	st.WatchState(ss.applySnapshot)
}

// applySnapshot sets what a snapshot holds: on restore, and when another
// replica changed the session.
func (ss *ServerSession) applySnapshot(raw []byte) {
	var snap sessionSnapshot
	if err := stdjson.Unmarshal(raw, &snap); err != nil {
		ss.server.logger.Warn("mcp: undecodable session snapshot", "session", ss.id, "err", err)
		return
	}
	ss.apply(&snap)
}

// apply makes the session as snap says.
func (ss *ServerSession) apply(snap *sessionSnapshot) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if snap.ProtocolVersion != "" {
		ss.version = snap.ProtocolVersion
	}
	if snap.ClientInfo != nil {
		ss.clientInfo = snap.ClientInfo
	}
	if snap.Capabilities != nil {
		ss.clientCaps = snap.Capabilities
	}
	ss.logLevel = snap.LogLevel
	ss.subscriptions = nil
	for _, uri := range snap.Subscriptions {
		if ss.subscriptions == nil {
			ss.subscriptions = make(map[string]struct{}, len(snap.Subscriptions))
		}
		ss.subscriptions[uri] = struct{}{}
	}
}

// saveState saves the session's snapshot in its record, when it has one
// (a session of a Streamable HTTP handler with a session store). redo,
// when not nil, makes the change being saved again (under ss.mu): when
// another replica changed the record meanwhile, the transport passes its
// snapshot in (applySnapshot) and the change is made anew on it, then
// saved again, so that neither change is lost.
func (ss *ServerSession) saveState(ctx context.Context, redo func()) error {
	if ss.record == nil {
		return nil
	}
	var err error
	for try := 0; try < 3; try++ {
		ss.mu.Lock()
		if try > 0 {
			redo()
		}
		snap := sessionSnapshot{
			ProtocolVersion: ss.version,
			ClientInfo:      ss.clientInfo,
			Capabilities:    ss.clientCaps,
			LogLevel:        ss.logLevel,
		}
		for uri := range ss.subscriptions {
			snap.Subscriptions = append(snap.Subscriptions, uri)
		}
		ss.mu.Unlock()
		slices.Sort(snap.Subscriptions)
		var raw []byte
		if raw, err = stdjson.Marshal(&snap); err == nil {
			err = ss.record.SaveState(ctx, snap.ProtocolVersion, raw)
		}
		if err == nil {
			// The record's newest version is this snapshot: the
			// session is as saved, whatever snapshot of another replica
			// the transport applied meanwhile.
			ss.apply(&snap)
		}
		if err == nil || redo == nil || !errors.Is(err, transport.ErrVersionConflict) {
			break
		}
	}
	if err != nil {
		if !errors.Is(err, mcplink.ErrNotAdmitted) {
			ss.server.logger.Warn("mcp: saving the session's state failed", "session", ss.id, "err", err)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the session's state could not be saved; retry"}
	}
	return nil
}
