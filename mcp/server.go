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
	"time"

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
	// Logger receives the server's own diagnostics (handler panics,
	// failed notifications). Nil discards them. Never the client's data.
	Logger *slog.Logger
	// KeepAlive, if positive, pings each client at this interval and
	// closes the session when a ping fails.
	KeepAlive time.Duration
	// MaxConcurrentRequests bounds the requests one session handles at
	// once; past it, requests are refused with a JSON-RPC error. Zero
	// means 256.
	MaxConcurrentRequests int
	// InlineHandoff bounds how long a request that arrives on its own
	// over a transport that supports it (stdio on Linux, see
	// [jsonrpc.BufferedStream]) runs on the goroutine that read it before
	// the session reads on in another goroutine; a handler that sends a
	// request to the client hands reading off at once. Zero means
	// [jsonrpc.DefaultInlineHandoff]; negative gives every request a
	// goroutine of its own from the start.
	InlineHandoff time.Duration

	// Capabilities adds to the capabilities the server declares. The
	// server always declares logging, and declares tools, resources and
	// prompts once any are registered (with listChanged), and completions
	// when CompletionHandler is set. Set a capability here to declare it
	// before anything is registered.
	Capabilities *ServerCapabilities

	// CompletionHandler answers completion/complete. Nil means the server
	// does not offer completions.
	CompletionHandler func(context.Context, *CompleteRequest) (*CompleteResult, error)
	// SubscribeHandler, if set, is told of each resources/subscribe after
	// the session has recorded it; an error refuses the subscription.
	SubscribeHandler func(context.Context, *SubscribeRequest) error
	// UnsubscribeHandler, if set, is told of each resources/unsubscribe.
	UnsubscribeHandler func(context.Context, *UnsubscribeRequest) error
	// InitializedHandler is called when a client sends
	// notifications/initialized.
	InitializedHandler func(context.Context, *ServerSession)
	// RootsListChangedHandler is called when a client reports that its
	// roots changed.
	RootsListChangedHandler func(context.Context, *ServerSession)
	// ProgressHandler receives progress notifications from the client.
	ProgressHandler func(context.Context, *ServerSession, *ProgressParams)

	// Middleware wraps every method the server receives, outermost first.
	Middleware []Middleware
	// SendingMiddleware wraps every method the server sends.
	SendingMiddleware []Middleware
}

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
	reflector schema.Reflector

	mu        sync.RWMutex
	tools     features[*serverTool]
	resources features[*serverResource]
	templates features[*serverTemplate]
	prompts   features[*serverPrompt]
	sessions  map[*ServerSession]struct{}
}

// NewServer returns a server that identifies itself as impl.
// opts may be nil.
func NewServer(impl *Implementation, opts *ServerOptions) *Server {
	s := &Server{sessions: make(map[*ServerSession]struct{})}
	if impl != nil {
		s.impl = *impl
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 1000
	}
	s.logger = orDiscard(s.opts.Logger)
	return s
}

// Run serves one session on t and blocks until it ends or ctx is done;
// the one-line stdio server is
//
//	err := server.Run(ctx, &transport.StdioTransport{})
//
// A session that ends because the client closed its end returns nil.
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
	ss := &ServerSession{server: s}
	if sid, ok := tc.(interface{ SessionID() string }); ok {
		ss.id = sid.SessionID()
	}
	if sc, ok := tc.(transport.StatelessConn); ok {
		// One exchange of a stateless deployment: serve it as if the
		// handshake had happened, with no client capabilities.
		ss.stateless = true
		ss.state = stateReady
		ss.version = sc.ProtocolVersion()
		ss.clientCaps = &ClientCapabilities{}
	}
	conn := jsonrpc.NewConn(tc, &jsonrpc.ConnOptions{
		Handler:       ss,
		MaxInFlight:   s.opts.MaxConcurrentRequests,
		InlineHandoff: s.opts.InlineHandoff,
		AllowBatch:    ss.allowBatch,
		OnCancel:      ss.onCancel,
		OnClose:       func(error) { s.removeSession(ss) },
		Logger:        s.logger,
	})
	ss.endpoint.init(conn, s.opts.SendingMiddleware, s.logger)
	ss.recv = chain(ss.handleRequest, s.opts.Middleware)
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	conn.Start()
	if s.opts.KeepAlive > 0 && !ss.stateless {
		go keepAlive(s.opts.KeepAlive, conn.Done(), ss.Ping, ss.Close)
	}
	return ss, nil
}

func (s *Server) removeSession(ss *ServerSession) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// Sessions returns the sessions connected now.
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
	return caps
}

// broadcast sends a notification to every initialized session.
func (s *Server) broadcast(method string, params Params, filter func(*ServerSession) bool) {
	for _, ss := range s.Sessions() {
		if !ss.initialized() || (filter != nil && !filter(ss)) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := ss.notify(ctx, method, params); err != nil {
			s.logger.Debug("mcp: notification failed", "method", method, "session", ss.ID(), "err", err)
		}
		cancel()
	}
}

func newSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
