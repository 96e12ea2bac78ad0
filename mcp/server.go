package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/schema"
	"github.com/mcpkit/mcpkit/transport"
)

// ServerOptions configures a [Server]. The zero value is usable.
type ServerOptions struct {
	// Instructions tells the client how to use the server; sent in the
	// initialize result.
	Instructions string
	// PageSize is the number of items in one page of a list result.
	// Zero means 1000.
	PageSize int
	// CacheTTL is how long a 2026-07-28 client may cache a list result,
	// a resources/read result or the server/discover result (their ttlMs)
	// when the handler did not say. Zero means 0: the client should fetch
	// again each time it needs one. A Middleware may set TTLMs and
	// CacheScope on one call's result to override both.
	CacheTTL time.Duration
	// CacheScope says who may share those cached results when the handler
	// did not say: [CacheScopePublic] when they hold nothing specific to
	// a user. The zero value means [CacheScopePrivate].
	CacheScope CacheScope
	// OmitServerInfo leaves the server's identity out of its results of
	// the stateless era (2026-07-28 and later). By default every such
	// result carries the Implementation the server was made with in its
	// _meta (io.modelcontextprotocol/serverInfo, which the specification
	// asks servers to send unless configured not to), unless the handler
	// or a Middleware set one; the server/discover result carries it
	// either way. Results of the handshake era never do: initialize
	// names the server once.
	OmitServerInfo bool
	// Keys is the server's key ring: it signs the requestState of
	// 2026-07-28 input-required results (see [InputRequiredResult]) and
	// the tags of the session IDs of the HTTP handlers serving the server
	// ([NewStreamableHTTPHandler], [NewSSEHandler]). The first key signs,
	// every key verifies. Replicas that serve the same clients must hold
	// the same keys and the same server name (Implementation.Name, which
	// a requestState is bound to). Nil means a ring of one random key,
	// valid in this process only: behind a balancer that spreads a
	// client's requests, a retry of an input round or a request on a
	// session reaching another replica is then refused. So does a zero
	// KeyRing, which holds no key. See [KeyRing].
	Keys *KeyRing
	// StateClaimer, if set, makes each requestState single use: a retry
	// runs only if its state was not used before (claimed through the
	// StateClaimer, which replicas must share), and a replay is refused
	// with -32602; a claimer that fails refuses the retry. Nil means a
	// state may be used until it expires. See [NewMemoryStateClaimer].
	StateClaimer StateClaimer
	// RequestStateTTL is how long a requestState stays valid. Zero means
	// 10 minutes.
	RequestStateTTL time.Duration
	// Logger receives the server's own diagnostics (handler panics,
	// failed notifications). Nil discards them. Never the client's data.
	Logger *slog.Logger
	// KeepAlive, if positive, pings each client at this interval and
	// closes the session when a ping fails. Connections of 2026-07-28,
	// which have no requests from server to client, are not pinged; nor
	// is a client before its first message, which tells its era, but one
	// that sends nothing for two intervals is taken for dead.
	KeepAlive time.Duration
	// MaxConcurrentRequests bounds the requests one session handles at
	// once; past it, requests are refused with a JSON-RPC error. Zero
	// means 256.
	MaxConcurrentRequests int
	// InlineHandoff bounds how long a request that arrives on its own
	// over a transport that supports it (stdio on Linux, see
	// the jsonrpc connection's buffered-stream hook) runs on the goroutine that read it before
	// the session reads on in another goroutine; a handler that sends a
	// request to the client hands reading off at once. Zero means
	// [jsonrpc.DefaultInlineHandoff]; negative gives every request a
	// goroutine of its own from the start.
	InlineHandoff time.Duration
	// DrainTimeout bounds how long a session whose client ended its
	// input (over stdio: closed the server's standard input) goes on
	// answering the requests it has already read before it ends, so a
	// client that sends its requests and then closes its end still gets
	// every answer. Handlers still running when it passes are cancelled.
	// Zero means [jsonrpc.DefaultDrainTimeout] (5s); negative ends the
	// session at once.
	DrainTimeout time.Duration

	// Capabilities adds to the capabilities the server declares. Nil
	// means the defaults: the server always declares logging, declares
	// tools, resources and prompts (with listChanged, and subscribe for
	// resources) if any are registered when a client initializes, and
	// completions when CompletionHandler is set.
	//
	// A client learns the capabilities once, at initialize, and refuses
	// to use a feature the server did not declare then. A server that
	// registers its first tool, resource or prompt after clients may have
	// connected must declare the capability here, for example
	//
	//	Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	Capabilities *ServerCapabilities

	// SchemaReflector infers the schemas of typed tools' inputs and
	// outputs ([AddTool]) and of elicited types ([ElicitAs]); set its
	// fields (nullable pointers, per-type overrides, additionalProperties)
	// to change what is inferred. Nil means a zero [schema.Reflector] of
	// the server's own. A Reflector may be shared by servers.
	SchemaReflector *schema.Reflector

	// CompletionHandler answers completion/complete. Nil means the server
	// does not offer completions.
	CompletionHandler func(context.Context, *CompleteRequest) (*CompleteResult, error)
	// SubscribeHandler, if set, is told of each resources/subscribe
	// before the session records the subscription: an error refuses it,
	// and the session then stays unsubscribed from that URI. Nil accepts
	// every subscription to a non-empty URI.
	SubscribeHandler func(context.Context, *SubscribeRequest) error
	// UnsubscribeHandler, if set, is told of each resources/unsubscribe
	// before the session forgets the subscription; an error refuses the
	// request and the subscription stays.
	UnsubscribeHandler func(context.Context, *UnsubscribeRequest) error
	// InitializedHandler is called when a client sends
	// notifications/initialized.
	InitializedHandler func(context.Context, *ServerRequest[*InitializedParams])
	// RootsListChangedHandler is called when a client reports that its
	// roots changed.
	RootsListChangedHandler func(context.Context, *ServerRequest[*RootsListChangedParams])
	// ProgressHandler receives progress notifications from the client.
	ProgressHandler func(context.Context, *ServerRequest[*ProgressParams])

	// Middleware wraps every method the server receives, outermost first.
	Middleware []Middleware
	// SendingMiddleware wraps every method the server sends.
	SendingMiddleware []Middleware

	// ListChangedDelay is how long the server waits after a change to
	// its tools, resources or prompts before it tells the sessions, so
	// that a burst of registrations sends one list_changed per kind.
	// Zero means 10ms; negative means no wait (a notification still
	// queued for a session is never queued twice). [Server.Batch] sends
	// at its end, without waiting.
	ListChangedDelay time.Duration
	// NotificationQueue bounds the notifications the server queues for
	// one session on its own account (list_changed and
	// resources/updated, which are sent by a goroutine of the session's
	// that runs only while its queue is not empty). A session whose
	// queue is full cannot keep up and is closed: it never holds up the
	// code that changed the server, nor other sessions. Zero means 64.
	NotificationQueue int
	// NotificationTimeout bounds how long writing one queued
	// notification to a session may take; a session that takes longer
	// is closed as stalled. Zero means 10s.
	NotificationTimeout time.Duration

	// ClientRequestTimeout bounds each request the server sends a client
	// (roots/list, sampling/createMessage, elicitation/create, ping)
	// whose context has no deadline of its own, so that a client that
	// never answers cannot hold the caller, and what it holds, forever:
	// past it the request fails and the client is told it was
	// cancelled. Zero means 10 minutes (an elicitation waits for a
	// person); negative means no bound.
	ClientRequestTimeout time.Duration

	// MaxSubscriptions bounds the resources one session may be
	// subscribed to at once; resources/subscribe past it is refused
	// with an invalid-params error. Zero means 1000.
	MaxSubscriptions int
	// Tasks, when set, lets tools/call run as tasks (the tasks extension
	// of 2026-07-28, and the task utility of 2025-11-25) for the tools
	// whose Execution.TaskSupport allows it; see [TaskOptions]. Nil means
	// no tasks: tasks/* are unknown methods and every call is answered
	// synchronously. [Server.Close] ends the running tasks.
	Tasks *TaskOptions

	// MaxSubscriptionURILength bounds the length in bytes of a URI
	// given to resources/subscribe; a longer one is refused with an
	// invalid-params error. Zero means 8192.
	MaxSubscriptionURILength int

	// Bus, when set, connects the server to the other replicas of the
	// same server: the list changes and resource updates made on each
	// reach the sessions and subscriptions/listen streams of all (see
	// [Bus]). With a session store on its Streamable HTTP handler
	// (transport.StreamableHTTPOptions.SessionStore), the messages of one
	// session cross replicas on it too: deletions, cancellations, the
	// client's answers to server requests, and what is sent outside a
	// request to the replica holding the GET stream (the last two need
	// an [AddressedBus]). The server subscribes in NewServer and
	// unsubscribes in [Server.Close]. Nil means a server alone: no cost,
	// no goroutine.
	Bus Bus
}

// Defaults of the [ServerOptions] bounds, used where the option is zero.
const (
	// DefaultListChangedDelay is the default of ServerOptions.ListChangedDelay.
	DefaultListChangedDelay = 10 * time.Millisecond
	// DefaultNotificationQueue is the default of ServerOptions.NotificationQueue.
	DefaultNotificationQueue = 64
	// DefaultNotificationTimeout is the default of ServerOptions.NotificationTimeout.
	DefaultNotificationTimeout = 10 * time.Second
	// DefaultClientRequestTimeout is the default of ServerOptions.ClientRequestTimeout.
	DefaultClientRequestTimeout = 10 * time.Minute
	// DefaultMaxSubscriptions is the default of ServerOptions.MaxSubscriptions.
	DefaultMaxSubscriptions = 1000
	// DefaultMaxSubscriptionURILength is the default of ServerOptions.MaxSubscriptionURILength.
	DefaultMaxSubscriptionURILength = 8192
)

// Server is an MCP server: a set of tools, resources and prompts, served
// to any number of sessions. Create it once with [NewServer], register
// features (at any time; sessions are told of changes), then serve
// transports with [Server.Connect] or [Server.Run].
//
// A Server is safe for concurrent use.
type Server struct {
	impl      Implementation
	opts      ServerOptions
	logger    *slog.Logger
	reflector *schema.Reflector
	states    stateSigner // of 2026-07-28 request states
	caps      capsCache   // decoded client capabilities of 2026-07-28 requests
	// infoMeta is the _meta of 2026-07-28 results, the server's identity,
	// and its encoding; nil with OmitServerInfo.
	infoMeta *metaEncodings

	mu        sync.RWMutex
	tools     features[*serverTool]
	resources features[*serverResource]
	templates features[*serverTemplate]
	prompts   features[*serverPrompt]
	skills    skillSet     // see AddSkills
	tasks     *taskRuntime // nil without ServerOptions.Tasks
	bus       *busLink     // nil without ServerOptions.Bus
	sessions  map[*ServerSession]struct{}
	listeners map[*listener]struct{} // open subscriptions/listen streams
	// changed holds the list_changed notifications owed to the sessions
	// (at most one per method), each with the generation of the newest
	// change it reports: a session initialized at or after that
	// generation saw the change in its lists already. A change made on
	// another replica (told by the Bus) counts as one made here, but is
	// not published again. batches counts the Batch calls running, which
	// hold them back; flushArmed is set while a timer will send them.
	changed    []pendingChange
	generation uint64
	batches    int
	flushArmed bool
	// batchAdded holds the features added while batches run (by kind
	// and name), to tell a name added twice in one Batch; cleared when
	// the last Batch ends.
	batchAdded map[featureKey]struct{}
	// connected is set by the first Connect: until then, a name added
	// twice is a mistake in the server's setup.
	connected atomic.Bool
}

// featureKey names a feature: its kind ("tool", "prompt", "resource",
// "resource template") and its name or URI.
type featureKey struct{ kind, name string }

// noteAddedLocked records that a feature was added, and warns when it
// replaced one added before the server first connected or earlier in the
// same Batch: replacing is how a running server updates a feature, but
// twice the same name in its setup is almost always a mistake. s.mu is
// held.
func (s *Server) noteAddedLocked(kind, name string, replaced bool) {
	k := featureKey{kind, name}
	_, inBatch := s.batchAdded[k]
	if replaced && (inBatch || !s.connected.Load()) {
		where := "before the server connected"
		if inBatch {
			where = "twice in one Batch"
		}
		s.logger.Warn("mcp: a "+kind+" was added "+where+"; the second replaces the first", kind, name)
	}
	if s.batches > 0 {
		if s.batchAdded == nil {
			s.batchAdded = make(map[featureKey]struct{})
		}
		s.batchAdded[k] = struct{}{}
	}
}

// pendingChange is a list_changed notification owed to the sessions.
type pendingChange struct {
	method     string
	generation uint64
	local      bool // made on this server: published on the Bus
}

// NewServer returns a server that identifies itself as impl.
// opts may be nil.
func NewServer(impl *Implementation, opts *ServerOptions) *Server {
	s := &Server{sessions: make(map[*ServerSession]struct{})}
	s.caps.init()
	if impl != nil {
		s.impl = *impl
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 1000
	}
	if s.opts.ListChangedDelay == 0 {
		s.opts.ListChangedDelay = DefaultListChangedDelay
	}
	if s.opts.NotificationQueue <= 0 {
		s.opts.NotificationQueue = DefaultNotificationQueue
	}
	if s.opts.NotificationTimeout <= 0 {
		s.opts.NotificationTimeout = DefaultNotificationTimeout
	}
	if s.opts.ClientRequestTimeout == 0 {
		s.opts.ClientRequestTimeout = DefaultClientRequestTimeout
	}
	if s.opts.MaxSubscriptions <= 0 {
		s.opts.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if s.opts.MaxSubscriptionURILength <= 0 {
		s.opts.MaxSubscriptionURILength = DefaultMaxSubscriptionURILength
	}
	if !s.opts.OmitServerInfo {
		s.infoMeta = serverMeta(s.impl)
	}
	s.logger = orDiscard(s.opts.Logger)
	s.states = newStateSigner(s.opts.Keys, s.impl.Name, s.opts.RequestStateTTL)
	s.states.claimer = s.opts.StateClaimer
	s.opts.Keys = s.states.ring
	if s.opts.Tasks != nil {
		s.tasks = newTaskRuntime(s, s.logger, s.opts.Tasks)
	}
	s.reflector = s.opts.SchemaReflector
	if s.reflector == nil {
		s.reflector = &schema.Reflector{}
	}
	if s.opts.Bus != nil {
		s.bus = newBusLink(s, s.opts.Bus)
		s.bus.subscribe()
	}
	return s
}

// Run serves one session on t and blocks until it ends or ctx is done;
// the one-line stdio server is
//
//	err := server.Run(ctx, &transport.StdioTransport{})
//
// A session that ends because the client closed its end returns nil, once
// the requests already read are answered (see [ServerOptions.DrainTimeout]).
func (s *Server) Run(ctx context.Context, t transport.Transport) error {
	ss, err := s.Connect(ctx, t)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		ss.Close()
		ss.Wait()
		return ctx.Err()
	case <-ss.conn.Done():
	}
	err = ss.Wait()
	if errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Connect starts a session on t and returns at once; the session serves
// until the client disconnects or it is closed. ctx bounds only the
// connection setup.
func (s *Server) Connect(ctx context.Context, t transport.Transport) (*ServerSession, error) {
	tc, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connecting: %w", err)
	}
	if !s.connected.Load() {
		s.connected.Store(true)
	}
	ss := &ServerSession{server: s}
	if sid, ok := tc.(interface{ SessionID() string }); ok {
		ss.id = sid.SessionID()
	}
	if sc, ok := tc.(mcplink.Stateless); ok {
		// One exchange of a stateless deployment: serve it as if the
		// handshake had happened, with no client capabilities.
		ss.stateless = true
		ss.state = stateReady
		ss.generation = s.currentGeneration()
		ss.version = sc.StatelessProtocolVersion()
		ss.clientCaps = &ClientCapabilities{}
		if isModernVersion(ss.version) {
			ss.era = eraModern // an exchange of 2026-07-28 or later
		}
	}
	if st, ok := tc.(mcplink.SessionState); ok {
		ss.attachRecord(st) // a session kept in a shared store
	}
	// A 2026-07-28 exchange is no session: nothing is broadcast to it
	// (its listen streams register themselves as listeners), and it
	// takes no lock of the server's to come and go.
	registered := !ss.stateless || ss.era != eraModern
	opts := &jsonrpc.ConnOptions{
		Handler:       (*serverHandler)(ss),
		MaxInFlight:   s.opts.MaxConcurrentRequests,
		InlineHandoff: s.opts.InlineHandoff,
		DrainTimeout:  s.opts.DrainTimeout,
		Logger:        s.logger,
	}
	if registered {
		// A 2026-07-28 exchange leaves these unset: it carries one
		// request (no batch, no notification to see in arrival order, no
		// call of the server's to abandon: its questions are
		// input_required results), and is in no session set. That saves
		// four closures and method values per exchange.
		opts.OnClose = func(error) { s.removeSession(ss) }
		opts.AllowBatch = ss.allowBatch
		opts.OnCancel = ss.onCancel
		opts.OnReceive = ss.received
		if len(s.opts.Middleware) == 0 {
			opts.QuickNotification = ss.quickNote
		}
	}
	conn := jsonrpc.NewConn(tc, opts)
	ss.endpoint.init(conn, tc, s.opts.SendingMiddleware, s.logger)
	ss.self = ss
	if len(s.opts.Middleware) > 0 {
		ss.recv = chain(ss.handleRequest, s.opts.Middleware)
	}
	if registered {
		s.mu.Lock()
		s.sessions[ss] = struct{}{}
		s.mu.Unlock()
	}
	conn.Start()
	if s.opts.KeepAlive > 0 && !ss.stateless {
		go keepAlive(s.opts.KeepAlive, conn.Done(), ss.keepAlivePinger(), ss.Close)
	}
	return ss, nil
}

func (s *Server) removeSession(ss *ServerSession) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// Sessions returns the sessions connected now: those of the handshake era
// (including the exchanges of a stateless handshake-era endpoint in
// progress) and connections of the stateless era over stream transports.
// A 2026-07-28 exchange over Streamable HTTP, one POST, is not a session
// and is not listed.
func (s *Server) Sessions() []*ServerSession {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	slices.SortFunc(out, func(a, b *ServerSession) int {
		return strings.Compare(a.ID(), b.ID())
	})
	return out
}

// capabilities computes what the server declares now.
func (s *Server) capabilities() *ServerCapabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	caps := &ServerCapabilities{Logging: &LoggingCapabilities{}}
	if o := s.opts.Capabilities; o != nil {
		c := *o
		caps = &c
		if caps.Logging == nil {
			caps.Logging = &LoggingCapabilities{}
		}
	}
	if caps.Tools == nil && s.tools.len() > 0 {
		caps.Tools = &ToolCapabilities{ListChanged: true}
	}
	if caps.Prompts == nil && s.prompts.len() > 0 {
		caps.Prompts = &PromptCapabilities{ListChanged: true}
	}
	if caps.Resources == nil && (s.resources.len() > 0 || s.templates.len() > 0) {
		caps.Resources = &ResourceCapabilities{ListChanged: true, Subscribe: true}
	}
	if caps.Completions == nil && s.opts.CompletionHandler != nil {
		caps.Completions = &CompletionCapabilities{}
	}
	s.skillsCapability(caps)
	return caps
}

// broadcast queues a notification for every initialized session that
// filter accepts (every one, if filter is nil). It never waits for a
// session: each has a bounded queue (see [ServerOptions.NotificationQueue]).
// list_changed notifications are coalesced: they are held for
// ListChangedDelay, or until the running [Server.Batch] calls end, and
// sent once however many changes were made meanwhile.
func (s *Server) broadcast(method string, params Params, filter func(*ServerSession) bool) {
	switch method {
	case NotificationToolListChanged, NotificationResourceListChanged, NotificationPromptListChanged:
		s.listChanged(method)
		return
	}
	for _, ss := range s.Sessions() {
		if ss.initialized() && (filter == nil || filter(ss)) {
			ss.queueNote(queuedNote{method: method, params: params})
		}
	}
}

// listChanged records that sessions are owed the list_changed
// notification method for a change made here, and arranges for it to be
// sent.
func (s *Server) listChanged(method string) { s.noteListChange(method, true) }

// noteListChange records that sessions are owed the list_changed
// notification method, for a change made here (local: it is published on
// the Bus too) or on another replica, and arranges for it to be sent.
// Changes are coalesced alike, wherever they were made.
func (s *Server) noteListChange(method string, local bool) {
	s.mu.Lock()
	s.generation++
	i := slices.IndexFunc(s.changed, func(c pendingChange) bool { return c.method == method })
	if i < 0 {
		s.changed = append(s.changed, pendingChange{method: method})
		i = len(s.changed) - 1
	}
	s.changed[i].generation = s.generation
	s.changed[i].local = s.changed[i].local || local
	if s.batches > 0 || s.flushArmed {
		s.mu.Unlock()
		return
	}
	delay := s.opts.ListChangedDelay
	if delay > 0 {
		s.flushArmed = true
	}
	s.mu.Unlock()
	if delay < 0 {
		s.flushChanges()
		return
	}
	time.AfterFunc(delay, func() {
		s.mu.Lock()
		s.flushArmed = false
		s.mu.Unlock()
		s.flushChanges()
	})
}

// flushChanges queues the list_changed notifications owed, once each,
// for every initialized session and listen stream, unless a Batch is
// running (its end flushes), and publishes those made here on the Bus.
func (s *Server) flushChanges() {
	s.mu.Lock()
	if s.batches > 0 || len(s.changed) == 0 {
		s.mu.Unlock()
		return
	}
	changes := s.changed
	s.changed = nil
	sessions := make([]*ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		seen, ok := ss.initGeneration()
		if !ok {
			continue
		}
		for _, c := range changes {
			if c.generation > seen {
				ss.queueNote(queuedNote{method: c.method, params: listChangedParams(c.method), key: c.method})
			}
		}
	}
	for _, c := range changes {
		s.notifyListeners(c.method, func(id jsonrpc.ID) Params { return taggedListChanged(c.method, id) },
			func(l *listener) bool { return l.listChangedFor(c.method) && c.generation > l.generation })
	}
	if s.bus != nil {
		var local []string
		for _, c := range changes {
			if c.local {
				local = append(local, c.method)
			}
		}
		s.bus.publishLists(local)
	}
}

// currentGeneration returns the generation of the newest change to the
// server's features.
func (s *Server) currentGeneration() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.generation
}

func listChangedParams(method string) Params {
	switch method {
	case NotificationToolListChanged:
		return &ToolListChangedParams{}
	case NotificationResourceListChanged:
		return &ResourceListChangedParams{}
	}
	return &PromptListChangedParams{}
}

// Batch runs f, which registers and removes tools, resources and prompts
// on s (with [Server.AddTool], [AddTool], [Server.RemoveTools] and the
// like), and sends the sessions one list_changed notification for each
// kind of feature that changed, when f returns, instead of one per
// change. To replace a set of tools, remove the old ones and add the new
// ones in one Batch. f's error is returned; the changes f made before it
// failed stay made and are notified.
//
// Each change is visible to clients as soon as it is made: Batch groups
// notifications, it is not a transaction. Batch is safe for concurrent
// use and may be nested; notifications held back by overlapping batches
// (including changes other goroutines make meanwhile) go out when the
// last of them ends.
func (s *Server) Batch(f func() error) error {
	s.mu.Lock()
	s.batches++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.batches--
		if s.batches == 0 {
			s.batchAdded = nil
		}
		s.mu.Unlock()
		s.flushChanges()
	}()
	return f()
}

func newSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
