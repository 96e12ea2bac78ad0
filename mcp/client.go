package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// ClientOptions configures a [Client]. The zero value is usable: such a
// client declares no capabilities beyond roots.
type ClientOptions struct {
	// ProtocolVersion pins a revision. Empty means the newest revision
	// this client speaks in the era Connect finds (see Era):
	// [Version20260728], or [LatestVersion] in initialize. A handshake
	// revision is asked for in initialize; if the server answers with
	// another revision this client supports, the session uses it,
	// otherwise Connect fails. [Version20260728] pins the stateless era:
	// no initialize, server/discover at Connect, the _meta envelope on
	// every request, and input_required results answered by the handlers
	// below (see [ClientSession.DiscoverResult]).
	ProtocolVersion string
	// Era chooses the protocol era Connect speaks. The zero value,
	// [EraAuto], asks the server with server/discover first and speaks
	// 2026-07-28 when the server answers as a server of that era does,
	// and otherwise falls back to initialize (on stdio also when the
	// server does not answer within DiscoverTimeout; over Streamable HTTP
	// further to the 2024-11-05 HTTP+SSE transport when initialize is
	// refused too). [EraHandshake] goes straight to initialize;
	// [EraModern] never falls back. A ProtocolVersion pins the era of its
	// revision. The client remembers the servers EraAuto found to be of
	// the handshake era (by URL, or by command line for a subprocess) and
	// goes straight to initialize with them; should initialize fail, it
	// asks again next time. [ClientSession.Era] tells what a session got.
	Era Era
	// DiscoverTimeout bounds the server/discover probe of EraAuto on
	// transports other than Streamable HTTP, where some servers of the
	// handshake era never answer a request before initialize. Zero means
	// 2 seconds.
	DiscoverTimeout time.Duration
	// OmitClientInfo leaves the client's identity out of the _meta of its
	// requests of the stateless era (2026-07-28), which by default carry
	// the Implementation the client was made with on every request
	// (io.modelcontextprotocol/clientInfo, which the specification asks
	// clients to send unless configured not to). initialize names the
	// client in the handshake era either way.
	OmitClientInfo bool
	// MaxInputRounds bounds the input_required rounds of one 2026-07-28
	// request; past it the call fails with an [*InputRoundsError]. Zero
	// means 8.
	MaxInputRounds int
	// MaxInputRequests bounds the input requests of one input_required
	// round of a 2026-07-28 request; a round that asks for more fails the
	// call with an [*InputRequestsError], and none is fulfilled. Zero
	// means 64, the most an mcpkit server asks for in one round.
	MaxInputRequests int
	// Capabilities adds to the capabilities the client declares. Roots
	// (with listChanged) are always declared; sampling when
	// CreateMessageHandler is set; elicitation (form, and url if
	// URLElicitation is set) when ElicitationHandler is set.
	Capabilities *ClientCapabilities
	// URLElicitation declares support for URL-mode elicitation.
	URLElicitation bool

	// CreateMessageHandler answers sampling/createMessage.
	CreateMessageHandler func(context.Context, *CreateMessageRequest) (*CreateMessageResult, error)
	// ElicitationHandler answers elicitation/create. For form mode the
	// requested schema is checked to be the restricted kind MCP allows
	// before the handler runs, and accepted content is validated against
	// it, with defaults applied, before it is sent.
	ElicitationHandler func(context.Context, *ElicitRequest) (*ElicitResult, error)

	// Notification handlers; each is optional. Like every handler, each
	// receives the notification as a request: its session and its params.
	// They run one at a time, in arrival order, and the notifications a
	// server sends while it handles a request have reached their handlers
	// when the call returns. A handler that waits (for a call of its own,
	// say) holds the others up for at most 100 ms.
	ElicitationCompleteHandler func(context.Context, *ElicitationCompleteNotification)
	// LoggingMessageHandler receives the server's log messages. A client
	// with one gets the same messages in both eras until
	// [ClientSession.SetLoggingLevel] chooses a level: in 2026-07-28,
	// where a server logs only about requests that name a level, every
	// request carries the level debug (every message); in the handshake
	// era the server sends what it sends before logging/setLevel (an
	// mcpkit server: every message). Without a handler, 2026-07-28
	// requests name no level and the server sends none.
	LoggingMessageHandler      func(context.Context, *LoggingMessageNotification)
	ProgressHandler            func(context.Context, *ProgressNotification)
	ToolListChangedHandler     func(context.Context, *ToolListChangedNotification)
	PromptListChangedHandler   func(context.Context, *PromptListChangedNotification)
	ResourceListChangedHandler func(context.Context, *ResourceListChangedNotification)
	ResourceUpdatedHandler     func(context.Context, *ResourceUpdatedNotification)

	// RequestTimeout, if positive, bounds every request the client sends.
	RequestTimeout time.Duration
	// ResetTimeoutOnProgress restarts a request's RequestTimeout each time
	// a progress notification for it arrives (the request is sent with a
	// progress token for that purpose), but never beyond
	// MaxRequestTimeout when that is positive.
	ResetTimeoutOnProgress bool
	// MaxRequestTimeout caps the total time of a request whose timeout is
	// reset by progress.
	MaxRequestTimeout time.Duration

	// Tasks, when non-nil, lets servers run tool calls as tasks (see
	// [ClientSession.StartTool]) and configures how the client polls
	// them. In 2026-07-28 every request then declares the tasks extension
	// ([TasksExtensionID]); in 2025-11-25 tools/call asks for a task
	// where the tool's task support allows. Nil: no tool call runs as a
	// task, and a server's task answer is a [*TaskProtocolError].
	Tasks *ClientTaskOptions

	// KeepAlive, if positive, pings the server at this interval and closes
	// the session when a ping fails. In 2026-07-28 the ping is
	// server/discover (see [ClientSession.Ping]), over stream transports
	// only: over Streamable HTTP that revision has no connection to keep.
	KeepAlive time.Duration
	// MaxConcurrentRequests bounds server-to-client requests handled at
	// once. Zero means 256.
	MaxConcurrentRequests int
	// Logger receives the client's own diagnostics. Nil discards them,
	// except the warnings about a server's output that is not part of
	// the protocol (see [ClientSession.StrayLines]), which then go to
	// standard error as text.
	Logger *slog.Logger

	// Middleware wraps every method the client receives, outermost first.
	Middleware []Middleware
	// SendingMiddleware wraps every method the client sends.
	SendingMiddleware []Middleware
}

// Client is an MCP client: it connects to servers, each connection a
// [ClientSession], and answers their requests for roots, sampling and
// elicitation. A Client is safe for concurrent use.
type Client struct {
	impl   Implementation
	opts   ClientOptions
	logger *slog.Logger

	mu         sync.Mutex
	roots      features[*Root]
	sessions   map[*ClientSession]struct{} // nil until the first session
	handshakes map[string]bool             // servers EraAuto found to be of the handshake era, by serverKey
	host       *taskRuntime                // the tasks the client runs for servers; nil without ClientTaskOptions.Host
}

// maxRememberedServers bounds Client.handshakes; past it, the client
// starts afresh.
const maxRememberedServers = 256

// serverKey names the server t reaches, for remembering its era: the URL
// of a Streamable HTTP transport, the command line of a subprocess; ""
// for other transports, whose servers are asked each time.
func serverKey(t transport.Transport) string {
	switch t := t.(type) {
	case *transport.LoggingTransport:
		return serverKey(t.Transport)
	case *transport.CommandTransport:
		if t.Command == nil {
			return ""
		}
		return "cmd\x00" + t.Command.Dir + "\x00" + t.Command.Path + "\x00" + strings.Join(t.Command.Args, "\x00")
	}
	if u, streamable, ok := httpClientURL(t); ok && streamable {
		return "url\x00" + u
	}
	return ""
}

// rememberEra records what EraAuto found the server of key to be.
func (c *Client) rememberEra(key string, handshake bool) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !handshake {
		delete(c.handshakes, key)
		return
	}
	if c.handshakes == nil || len(c.handshakes) >= maxRememberedServers {
		c.handshakes = make(map[string]bool)
	}
	c.handshakes[key] = true
}

// rememberedHandshake reports whether EraAuto found the server of key to
// be of the handshake era before.
func (c *Client) rememberedHandshake(key string) bool {
	if key == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handshakes[key]
}

// NewClient returns a client that identifies itself as impl. opts may be nil.
func NewClient(impl *Implementation, opts *ClientOptions) *Client {
	c := &Client{}
	if impl != nil {
		c.impl = *impl
	}
	if opts != nil {
		c.opts = *opts
	}
	c.logger = orDiscard(c.opts.Logger)
	if t := c.opts.Tasks; t != nil && t.Host != nil {
		c.host = newTaskRuntime(nil, c.logger, t.Host)
	}
	return c
}

// AddRoots adds roots (replacing any with the same URI) and tells
// connected servers the list changed.
func (c *Client) AddRoots(roots ...*Root) {
	c.mu.Lock()
	for _, r := range roots {
		root := *r
		c.roots.add(root.URI, &root)
	}
	c.mu.Unlock()
	c.rootsChanged()
}

// RemoveRoots removes roots by URI and tells connected servers.
func (c *Client) RemoveRoots(uris ...string) {
	c.mu.Lock()
	removed := c.roots.remove(uris...)
	c.mu.Unlock()
	if removed {
		c.rootsChanged()
	}
}

func (c *Client) rootsChanged() {
	c.mu.Lock()
	sessions := make([]*ClientSession, 0, len(c.sessions))
	for cs := range c.sessions {
		sessions = append(sessions, cs)
	}
	c.mu.Unlock()
	for _, cs := range sessions {
		if cs.modern != nil {
			continue // 2026-07-28: the server asks for roots within a request
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := cs.notify(ctx, NotificationRootsListChanged, &RootsListChangedParams{}); err != nil {
			c.logger.Debug("mcp: roots notification failed", "err", err)
		}
		cancel()
	}
}

// initializeCapabilities returns the capabilities declared in
// initialize: with the tasks the client hosts, if any.
func (c *Client) initializeCapabilities() *ClientCapabilities {
	caps := c.capabilities()
	if caps.Tasks == nil {
		caps.Tasks = c.hostCapabilities()
	}
	return caps
}

func (c *Client) capabilities() *ClientCapabilities {
	caps := &ClientCapabilities{}
	if c.opts.Capabilities != nil {
		cc := *c.opts.Capabilities
		caps = &cc
	}
	if caps.Roots == nil {
		caps.Roots = &RootsCapabilities{ListChanged: true}
	}
	if caps.Sampling == nil && c.opts.CreateMessageHandler != nil {
		caps.Sampling = &SamplingCapabilities{}
	}
	if caps.Elicitation == nil && c.opts.ElicitationHandler != nil {
		caps.Elicitation = &ElicitationCapabilities{Form: &FormElicitationCapabilities{}}
		if c.opts.URLElicitation {
			caps.Elicitation.URL = &URLElicitationCapabilities{}
		}
	}
	return caps
}

// ConnectOptions configures one connection of a [Client]. The zero value
// is usable.
type ConnectOptions struct {
	// Name is the host's name for the connection, such as the name of
	// the server in the host's configuration: [ClientSession.Name]
	// returns it, so that a handler of the Client, which serves every
	// session, can tell which one a request came from (req.Session.Name()),
	// and the session's diagnostics carry it (the attribute "session").
	// The Client does not require names to be unique. Empty means none.
	Name string
}

// Connect connects to a server over t and asks it what it offers, in the
// era ClientOptions.Era chooses: in 2026-07-28 with server/discover (no
// handshake; every later request carries the client's capabilities), in
// the handshake era with initialize and notifications/initialized. With
// EraAuto it asks server/discover first and falls back to initialize with
// a server that does not answer it as a 2026-07-28 server does; a
// failure names the step that failed. ctx bounds these first requests.
// The session lasts until Close or until the server goes away.
//
// opts, which may be omitted, configures the connection; Connect takes
// at most one, and nil means the zero value:
//
//	weather, err := client.Connect(ctx, t, &mcp.ConnectOptions{Name: "weather"})
func (c *Client) Connect(ctx context.Context, t transport.Transport, opts ...*ConnectOptions) (*ClientSession, error) {
	var o ConnectOptions
	switch {
	case len(opts) > 1:
		return nil, fmt.Errorf("mcp: Connect takes at most one *ConnectOptions, not %d", len(opts))
	case len(opts) == 1 && opts[0] != nil:
		o = *opts[0]
	}
	tc, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp: connecting: %w", err)
	}
	cs := &ClientSession{client: c, tconn: tc, name: o.Name}
	logger := c.logger
	cs.stray.logger, cs.stray.name = c.opts.Logger, o.Name
	if o.Name != "" {
		logger = logger.With("session", o.Name)
		if cs.stray.logger != nil {
			cs.stray.logger = cs.stray.logger.With("session", o.Name)
		}
	}
	if l, ok := tc.(interface{ SetLogger(*slog.Logger) }); ok {
		l.SetLogger(logger) // diagnostics of the transport, such as the answers it does not send
	}
	conn := jsonrpc.NewConn(tc, &jsonrpc.ConnOptions{
		Handler:     (*clientHandler)(cs),
		MaxInFlight: c.opts.MaxConcurrentRequests,
		AllowBatch:  func() bool { return cs.ProtocolVersion() == Version20250326 },
		// A server's stray output (a library printing to standard output)
		// is logged and skipped, not answered.
		SkipUndecodable: true,
		OnSkip:          cs.stray.report,
		OnCancel:        cs.onCancel,
		OnReceive:       cs.received,
		OnClose:         func(error) { c.mu.Lock(); delete(c.sessions, cs); c.mu.Unlock() },
		Logger:          logger,
	})
	cs.endpoint.init(conn, tc, c.opts.SendingMiddleware, logger)
	cs.self = cs
	cs.network, cs.serverURL = peerOf(t)
	cs.recv = chain(cs.handleRequest, c.opts.Middleware)
	conn.Start()

	version := c.opts.ProtocolVersion
	era := c.opts.Era
	key, remembered := "", false // EraAuto: the server, and whether it was found of the handshake era before
	var probed error             // why EraAuto's server/discover found no 2026-07-28 server
	switch {
	case version != "" && isModernVersion(version):
		era = EraModern // a pinned revision pins its era
	case version != "":
		era = EraHandshake
	case era == EraAuto:
		if h, ok := tc.(mcplink.HandshakeOnly); ok && h.HandshakeOnly() {
			era = EraHandshake // the legacy HTTP+SSE transport
			break
		}
		key = serverKey(t)
		if c.rememberedHandshake(key) {
			era, remembered = EraHandshake, true
		}
	}
	if era != EraHandshake {
		if version == "" || !isModernVersion(version) {
			version = modernVersions[0]
		}
		pv, isHTTP := tc.(mcplink.ProtocolVersionSetter)
		if isHTTP {
			pv.SetProtocolVersion(version) // the revision's Streamable HTTP: no session
			cs.httpHeaders = true
		}
		err := cs.connectModern(ctx, version, era == EraAuto)
		switch {
		case err == nil:
			cs.modernEra.Store(true)
			c.rememberEra(key, false)
			c.addSession(cs, !isHTTP) // over HTTP this era has no connection to keep
			return cs, nil
		case era == EraModern || !errors.Is(err, errNotModern):
			conn.Close()
			return nil, err
		}
		// EraAuto and a server of the handshake era: initialize.
		c.logger.Debug("mcp: the server is not of the stateless era; initializing", "err", err)
		probed = err
		cs.resetModern()
		if isHTTP {
			pv.SetProtocolVersion("")
		}
		version = c.opts.ProtocolVersion
		if version == "" || isModernVersion(version) {
			version = LatestVersion
		}
	}
	if version == "" {
		version = LatestVersion
	}
	// The params and the copy of the client's identity they carry (which
	// middleware may change), in one allocation.
	ip := &struct {
		params InitializeParams
		info   Implementation
	}{info: c.impl}
	ip.params = InitializeParams{
		ProtocolVersion: version,
		Capabilities:    c.initializeCapabilities(),
		ClientInfo:      &ip.info,
	}
	res := &InitializeResult{}
	if err := cs.call(ctx, MethodInitialize, &ip.params, res); err != nil {
		conn.Close()
		if remembered {
			c.rememberEra(key, false) // ask the server again next time
		}
		switch _, named := err.(*callError); {
		case probed != nil:
			err = fmt.Errorf("mcp: initialize, after server/discover found no %s server (%v): %w", Version20260728, probed, err)
		case remembered:
			err = fmt.Errorf("mcp: initialize (automatic era detection: the server was of the handshake era before): %w", err)
		case !named:
			err = fmt.Errorf("mcp: initialize: %w", err)
		}
		return nil, err
	}
	if key != "" && !remembered {
		c.rememberEra(key, true) // EraAuto fell back
	}
	if !slices.Contains(SupportedVersions(), res.ProtocolVersion) {
		conn.Close()
		return nil, &VersionError{Requested: version, Offered: res.ProtocolVersion}
	}
	cs.mu.Lock()
	cs.init = res
	cs.mu.Unlock()
	if pv, ok := tc.(mcplink.ProtocolVersionSetter); ok {
		pv.SetProtocolVersion(res.ProtocolVersion) // the MCP-Protocol-Version header of HTTP transports
	}
	if err := cs.notify(ctx, NotificationInitialized, &InitializedParams{}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("mcp: initialized: %w", err)
	}
	c.addSession(cs, true)
	return cs, nil
}

// addSession makes cs one of the client's sessions once it is connected,
// and starts its keepalive when ClientOptions.KeepAlive asks for one and
// ping is set.
func (c *Client) addSession(cs *ClientSession, ping bool) {
	c.mu.Lock()
	if c.sessions == nil {
		c.sessions = make(map[*ClientSession]struct{})
	}
	c.sessions[cs] = struct{}{}
	c.mu.Unlock()
	if ping && c.opts.KeepAlive > 0 {
		go keepAlive(c.opts.KeepAlive, cs.conn.Done(), cs.Ping, cs.Close)
	}
}

// VersionError reports that the server offered a protocol revision this
// client does not support.
type VersionError struct {
	Requested, Offered string
}

// Error implements error.
func (e *VersionError) Error() string {
	return fmt.Sprintf("mcp: asked for protocol %s, server offered unsupported %q", e.Requested, e.Offered)
}

// ClientSession is a client's connection to one server. Its methods are
// safe for concurrent use.
//
// # Errors
//
// A method that sends a request returns either its result or an error,
// never both: on error the result is nil. The error says what happened,
// and errors.Is and errors.As tell the cases apart:
//
//   - The server answered with a JSON-RPC error: errors.As finds the
//     [*jsonrpc.Error], with the server's code, message and data. Some
//     codes also come as a typed error wrapping it: a
//     [*ResourceNotFoundError] from ReadResource, a
//     [*URLElicitationRequiredError] for -32042.
//   - Nothing was sent: a [*CapabilityError] when the server did not
//     declare the capability the method needs, [ErrRemovedMethod] for a
//     method the session's revision removed.
//   - The answer was not one the client can use: a [*ResultError] for a
//     result that lacks a required member, a [*ResultTypeError] for a
//     result of a kind the session did not negotiate, and, in 2026-07-28,
//     an [*InputRoundsError] or [*InputRequestError] when the server's
//     requests for input could not be met; a [*TaskProtocolError] for a
//     task answer the client cannot use.
//   - A tool call that ran as a task was cancelled: the error matches
//     [ErrTaskCancelled].
//   - The session ended: the error matches [ErrSessionClosed]; or the
//     caller's context ended (context.Canceled, context.DeadlineExceeded);
//     or the transport failed (such as a [*transport.HTTPStatusError]).
type ClientSession struct {
	endpoint
	client *Client
	tconn  transport.Conn
	recv   MethodHandler
	name   string // ConnectOptions.Name
	// network and serverURL describe the transport, for observers (see
	// SessionView).
	network   string
	serverURL *url.URL

	stray       strayLines    // the server's output that is not protocol
	modern      *modernClient // set by Connect for a session of the stateless era
	modernEra   atomic.Bool   // set once Connect settled on the stateless era; read by Handle
	cache       resultCache   // the stateless era's cacheable results
	listeners   listenWaiters // Listen calls waiting for their acknowledgment
	httpHeaders bool          // over Streamable HTTP: tools' x-mcp-header marks apply

	mu       sync.Mutex
	init     *InitializeResult
	discover *DiscoverResult // the stateless era's server/discover answer
	// toolHeaders holds the x-mcp-header marks of the tools the last
	// tools/list returned, by name (stateless era, over HTTP).
	toolHeaders map[string][]headerParam
	progress    map[string]*progressWatch // by progress token: who waits for its notifications
	nextTok     int64
	// taskTools holds the task support of the tools that may run as
	// tasks, by name, from tools/list (2025-11-25); taskToolsListed is
	// set once every page was listed to learn it (see taskSupport).
	taskTools       map[string]string
	taskToolsListed bool

	// hostOnce makes hostOwner, the owner key of the tasks the server
	// makes this client run (see ClientTaskOptions.Host).
	hostOnce  sync.Once
	hostOwner string
}

// progressWatch is what the session does with the progress notifications
// of one of its requests in flight.
type progressWatch struct {
	reset func()                                 // restarts the request's timeout (ResetTimeoutOnProgress)
	fn    func(context.Context, *ProgressParams) // CallToolOptions.Progress
}

// newProgressToken returns a progress token unique in the session.
func (cs *ClientSession) newProgressToken() ProgressToken {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.nextTok++
	return jsonrpc.StringID(fmt.Sprintf("mcpkit-%d", cs.nextTok))
}

// watchProgress passes the progress notifications of tok to fn until the
// function it returns is called.
func (cs *ClientSession) watchProgress(tok ProgressToken, fn func(context.Context, *ProgressParams)) (undo func()) {
	return cs.watchField(tok, func(w *progressWatch, on bool) {
		if on {
			w.fn = fn
		} else {
			w.fn = nil
		}
	})
}

// watchField sets a field of tok's watch with set(w, true), and returns
// the function that clears it with set(w, false) and forgets the watch
// once it has nothing left to do.
func (cs *ClientSession) watchField(tok ProgressToken, set func(w *progressWatch, on bool)) (undo func()) {
	key := tok.Raw()
	cs.mu.Lock()
	w := cs.progress[key]
	if w == nil {
		w = &progressWatch{}
		if cs.progress == nil {
			cs.progress = make(map[string]*progressWatch)
		}
		cs.progress[key] = w
	}
	set(w, true)
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		set(w, false)
		if w.reset == nil && w.fn == nil && cs.progress[key] == w {
			delete(cs.progress, key)
		}
	}
}

// InitializeResult returns the server's answer to initialize: its
// revision, capabilities, identity and instructions. In the stateless era
// (2026-07-28), which has no initialize, it holds the same from
// server/discover (see [ClientSession.DiscoverResult]).
func (cs *ClientSession) InitializeResult() *InitializeResult {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.init
}

// Name returns the name the host gave the connection in
// [ConnectOptions], or "" when it gave none. It tells a handler of the
// Client which session a request or notification came from:
// req.Session.Name().
func (cs *ClientSession) Name() string { return cs.name }

// ServerInfo returns what the server said about itself (its name,
// version and so on) in either era: from its answer to initialize, or in
// 2026-07-28 to server/discover. It is nil until that answer arrived,
// which is before Connect returns (a handler may run earlier, for a
// message the server sends while it answers); a server that named
// nothing gives an empty Implementation.
func (cs *ClientSession) ServerInfo() *Implementation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.init == nil {
		return nil
	}
	if cs.init.ServerInfo == nil {
		return &Implementation{}
	}
	return cs.init.ServerInfo
}

// ProtocolVersion returns the negotiated revision ("" during the handshake).
func (cs *ClientSession) ProtocolVersion() string {
	if cs.modern != nil {
		return cs.modern.version
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.init == nil {
		return ""
	}
	return cs.init.ProtocolVersion
}

// ID returns the session's identifier as the transport knows it, such as
// the Mcp-Session-Id the server assigned over Streamable HTTP; "" when the
// transport has none (stdio, in-memory, a stateless server). It may change
// when the transport re-initializes an expired session.
func (cs *ClientSession) ID() string {
	if sc, ok := cs.tconn.(transport.SessionConn); ok {
		return sc.SessionID()
	}
	return ""
}

// Close ends the session and closes the transport.
func (cs *ClientSession) Close() error { return cs.conn.Close() }

// Wait blocks until the session has ended and returns why, as Err does.
func (cs *ClientSession) Wait() error { return cs.conn.Wait() }

// Done returns a channel closed when the session ends.
func (cs *ClientSession) Done() <-chan struct{} { return cs.conn.Done() }

// Err returns why the session ended, or nil while it is open: for
// example io.EOF when the server closed the connection, or a
// [*transport.SessionExpiredError] when an HTTP server forgot the session
// (see [transport.StreamableClientTransport]).
func (cs *ClientSession) Err() error { return cs.conn.Err() }

// clientHandler is a ClientSession as its connection's [jsonrpc.Handler]
// (a conversion, which costs no allocation, where a method value would).
type clientHandler ClientSession

// Handle implements jsonrpc.Handler.
func (h *clientHandler) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	return (*ClientSession)(h).handle(ctx, req)
}

// handle is the session's jsonrpc handler (see clientHandler).
//
// A session of 2026-07-28 refuses requests (-32601): that revision has
// none from server to client; the server asks within a result instead.
func (cs *ClientSession) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if cs.modernEra.Load() && !req.IsNotification() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method + " (a server sends no requests in " + Version20260728 + ")"}
	}
	return dispatch(ctx, cs, clientMethods, cs.recv, req)
}

func (cs *ClientSession) handleRequest(ctx context.Context, req Request) (Result, error) {
	return clientMethods[req.Method()].handle(ctx, cs, req)
}

// serverCaps returns the server's capabilities, or an error before the
// handshake completed.
func (cs *ClientSession) serverCaps() *ServerCapabilities {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.discover != nil && cs.discover.Capabilities != nil {
		return cs.discover.Capabilities
	}
	if cs.init == nil || cs.init.Capabilities == nil {
		return &ServerCapabilities{}
	}
	return cs.init.Capabilities
}

// checkServer returns a CapabilityError unless the server declared cap.
func (cs *ClientSession) checkServer(method, capability string, has bool) error {
	if !has {
		return &CapabilityError{Method: method, Capability: capability, Peer: "server", discover: cs.modern != nil}
	}
	return nil
}

// request sends a request with the client's timeout policy applied.
func (cs *ClientSession) request(ctx context.Context, method string, params Params, result Result) error {
	o := &cs.client.opts
	if o.RequestTimeout <= 0 {
		return cs.call(ctx, method, params, result)
	}
	if !o.ResetTimeoutOnProgress {
		ctx, cancel := context.WithTimeoutCause(ctx, o.RequestTimeout, errRequestTimeout)
		defer cancel()
		return cs.call(ctx, method, params, result)
	}
	if o.MaxRequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.MaxRequestTimeout, errRequestTimeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(o.RequestTimeout, func() { cancel(errRequestTimeout) })
	defer timer.Stop()
	tok, ok := progressTokenOf(params)
	if !ok {
		tok = cs.newProgressToken()
		SetProgressToken(params, tok)
	}
	timeout := o.RequestTimeout
	reset := func() { timer.Reset(timeout) }
	defer cs.watchField(tok, func(w *progressWatch, on bool) {
		if on {
			w.reset = reset
		} else {
			w.reset = nil
		}
	})()
	return cs.call(ctx, method, params, result)
}

var errRequestTimeout = errors.New("mcp: request timed out")

// clientMethods is every method a client receives.
var clientMethods = map[string]inMethod[*ClientSession]{
	MethodPing:                            clientMethodFor(MethodPing, (*ClientSession).ping),
	MethodRootsList:                       clientMethodFor(MethodRootsList, (*ClientSession).listRoots),
	MethodSamplingCreateMessage:           clientMethodFor(MethodSamplingCreateMessage, (*ClientSession).hostedCreateMessage),
	MethodElicitationCreate:               clientMethodFor(MethodElicitationCreate, (*ClientSession).hostedElicit),
	MethodTasksGet:                        clientMethodFor(MethodTasksGet, (*ClientSession).hostGetTask),
	MethodTasksResult:                     clientMethodFor(MethodTasksResult, (*ClientSession).hostTaskResult),
	MethodTasksList:                       clientMethodFor(MethodTasksList, (*ClientSession).hostListTasks),
	MethodTasksCancel:                     clientMethodFor(MethodTasksCancel, (*ClientSession).hostCancelTask),
	NotificationCancelled:                 notification(clientMethodFor(NotificationCancelled, (*ClientSession).cancelledNote)),
	NotificationProgress:                  notification(clientMethodFor(NotificationProgress, (*ClientSession).progressNote)),
	NotificationMessage:                   notification(clientMethodFor(NotificationMessage, (*ClientSession).logNote)),
	NotificationToolListChanged:           notification(clientMethodFor(NotificationToolListChanged, (*ClientSession).toolsChangedNote)),
	NotificationPromptListChanged:         notification(clientMethodFor(NotificationPromptListChanged, (*ClientSession).promptsChangedNote)),
	NotificationResourceListChanged:       notification(clientMethodFor(NotificationResourceListChanged, (*ClientSession).resourcesChangedNote)),
	NotificationResourceUpdated:           notification(clientMethodFor(NotificationResourceUpdated, (*ClientSession).resourceUpdatedNote)),
	NotificationElicitationComplete:       notification(clientMethodFor(NotificationElicitationComplete, (*ClientSession).elicitationCompleteNote)),
	NotificationSubscriptionsAcknowledged: notification(clientMethodFor(NotificationSubscriptionsAcknowledged, (*ClientSession).subscriptionAcknowledged)),
}

func (cs *ClientSession) ping(context.Context, *ClientRequest[*PingParams]) (*EmptyResult, error) {
	return &EmptyResult{}, nil
}

func (cs *ClientSession) listRoots(context.Context, *ListRootsRequest) (*ListRootsResult, error) {
	c := cs.client
	c.mu.Lock()
	roots := c.roots.all()
	c.mu.Unlock()
	return &ListRootsResult{Roots: roots}, nil
}

func (cs *ClientSession) createMessage(ctx context.Context, req *CreateMessageRequest) (*CreateMessageResult, error) {
	h := cs.client.opts.CreateMessageHandler
	if h == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: client does not support sampling"}
	}
	return h(ctx, req)
}

// received cancels the request a notifications/cancelled names as the
// notification is read, in arrival order: a request the server sends
// after it, even with the same id, is not cancelled by it.
func (cs *ClientSession) received(req *jsonrpc.Request) {
	if req.Method != NotificationCancelled {
		return
	}
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if unmarshalStd(req.Params, &p) == nil && p.RequestID.IsValid() {
		cs.conn.Cancel(p.RequestID)
	}
}

// cancelledNote does nothing: received applied the cancellation on
// arrival.
func (cs *ClientSession) cancelledNote(context.Context, *ClientRequest[*CancelledParams]) (*EmptyResult, error) {
	return nil, nil
}

func (cs *ClientSession) progressNote(ctx context.Context, req *ClientRequest[*ProgressParams]) (*EmptyResult, error) {
	var reset func()
	var fn func(context.Context, *ProgressParams)
	cs.mu.Lock()
	if w := cs.progress[req.Params.ProgressToken.Raw()]; w != nil {
		reset, fn = w.reset, w.fn
	}
	cs.mu.Unlock()
	if reset != nil {
		reset()
	}
	if h := cs.client.opts.ProgressHandler; h != nil {
		h(ctx, req)
	}
	if fn != nil {
		fn(ctx, req.Params)
	}
	return nil, nil
}

func (cs *ClientSession) logNote(ctx context.Context, req *ClientRequest[*LoggingMessageParams]) (*EmptyResult, error) {
	if h := cs.client.opts.LoggingMessageHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (cs *ClientSession) toolsChangedNote(ctx context.Context, req *ClientRequest[*ToolListChangedParams]) (*EmptyResult, error) {
	cs.cache.clear(MethodToolsList) // what changed is fetched again
	cs.forgetToolTasks()
	if h := cs.client.opts.ToolListChangedHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (cs *ClientSession) promptsChangedNote(ctx context.Context, req *ClientRequest[*PromptListChangedParams]) (*EmptyResult, error) {
	cs.cache.clear(MethodPromptsList) // what changed is fetched again
	if h := cs.client.opts.PromptListChangedHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (cs *ClientSession) resourcesChangedNote(ctx context.Context, req *ClientRequest[*ResourceListChangedParams]) (*EmptyResult, error) {
	cs.cache.clear(MethodResourcesList, MethodResourcesTemplatesList) // what changed is fetched again
	if h := cs.client.opts.ResourceListChangedHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (cs *ClientSession) resourceUpdatedNote(ctx context.Context, req *ClientRequest[*ResourceUpdatedParams]) (*EmptyResult, error) {
	cs.cache.clear(MethodResourcesRead) // what changed is fetched again
	if h := cs.client.opts.ResourceUpdatedHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

func (cs *ClientSession) elicitationCompleteNote(ctx context.Context, req *ClientRequest[*ElicitationCompleteParams]) (*EmptyResult, error) {
	if h := cs.client.opts.ElicitationCompleteHandler; h != nil {
		h(ctx, req)
	}
	return nil, nil
}

// StrayLines returns how many messages from the server the session has
// skipped because they were not protocol messages: typically lines a
// stdio server printed to its standard output, which is reserved for the
// protocol. Each is reported at warning level with its first
// [jsonrpc.MaxDecodeErrorInput] bytes, at most 10 a minute
// (then a count of those not shown), the first with a hint.
func (cs *ClientSession) StrayLines() int64 { return cs.stray.count.Load() }

// strayLogMax bounds the stray lines logged a minute.
const strayLogMax = 10

// strayLines counts and reports the server's stray output.
type strayLines struct {
	count atomic.Int64

	mu sync.Mutex
	// logger is ClientOptions.Logger, or one made when the first line is
	// reported, on standard error (most sessions never report one).
	logger  *slog.Logger
	name    string    // ConnectOptions.Name, for the logger made here
	window  time.Time // start of the current minute of reports
	logged  int       // lines logged in the window
	dropped int       // lines not logged in the window
}

// report counts the skipped message de and reports it, within the rate
// limit.
func (s *strayLines) report(de *jsonrpc.DecodeError) {
	n := s.count.Add(1)
	now := time.Now()
	s.mu.Lock()
	dropped := 0
	if now.Sub(s.window) >= time.Minute {
		dropped, s.window, s.logged, s.dropped = s.dropped, now, 0, 0
	}
	show := s.logged < strayLogMax
	if show {
		s.logged++
	} else {
		s.dropped++
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		if s.name != "" {
			s.logger = s.logger.With("session", s.name)
		}
	}
	logger := s.logger
	s.mu.Unlock()
	ctx := context.Background()
	if dropped > 0 {
		logger.Log(ctx, slog.LevelWarn, "mcp: more output from the server that is not protocol messages was skipped and not shown", "lines", dropped)
	}
	if !show {
		return
	}
	text := string(de.Input)
	if de.Input == nil {
		text = de.Error()
	}
	if n == 1 {
		logger.Log(ctx, slog.LevelWarn, "mcp: skipping an undecodable message from the server: output that is not a protocol message (a stdio server must write only protocol messages to its standard output; logs belong on standard error)", "line", text)
		return
	}
	logger.Log(ctx, slog.LevelWarn, "mcp: skipping an undecodable message from the server: output that is not a protocol message", "line", text, "count", n)
}
