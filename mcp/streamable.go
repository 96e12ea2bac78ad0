//go:build !mcpkit_nohttp

package mcp

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// NewStreamableHTTPHandler returns an http.Handler serving s over the
// Streamable HTTP transport (protocol revisions 2025-03-26 and later):
//
//	http.Handle("/mcp", mcp.NewStreamableHTTPHandler(server, nil))
//
// Each session is a [ServerSession] of s. opts may be nil; when its
// SupportedVersions is nil, every revision this package speaks is
// accepted (both eras; see [transport.StreamableHTTPOptions] for an
// endpoint of one era only); when its SessionIDs is nil, the session IDs
// are minted and checked with the server's key ring ([ServerOptions.Keys]),
// so that replicas sharing the ring accept each other's. See
// [transport.StreamableHTTPHandler] for the behaviour and
// [transport.StreamableHTTPOptions] for the settings, including the
// stateless mode.
func NewStreamableHTTPHandler(s *Server, opts *transport.StreamableHTTPOptions) *transport.StreamableHTTPHandler {
	var o transport.StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.SupportedVersions == nil {
		o.SupportedVersions = append(SupportedVersions(), modernVersions...)
	}
	if o.Logger == nil {
		o.Logger = s.opts.Logger
	}
	if o.SessionIDs == nil {
		o.SessionIDs = s.states.ring
	}
	h := mcplink.NewStreamableHTTPHandler(s.connectConn, &o).(*transport.StreamableHTTPHandler)
	if s.bus != nil && o.SessionStore != nil {
		// The sessions' messages cross replicas on the bus (see
		// bus_addressed.go).
		s.bus.attachRelay(h)
	}
	return h
}

// connectConn starts a session on an accepted connection (c is a
// transport.Conn; see mcplink.ConnectFunc).
func (s *Server) connectConn(ctx context.Context, c jsonrpc.Stream) error {
	_, err := s.Connect(ctx, acceptedTransport{c})
	return err
}

// acceptedTransport is a Transport whose connection already exists.
type acceptedTransport struct{ c transport.Conn }

func (t acceptedTransport) Connect(context.Context) (transport.Conn, error) { return t.c, nil }

// NewSSEHandler returns an http.Handler serving s over the legacy HTTP+SSE
// transport (the one revision 2024-11-05 defines), for clients that predate
// Streamable HTTP. The transport does not fix the protocol revision: a
// session over it negotiates any revision s supports, up to
// [LatestVersion], as over any other transport. Serve it on a path of its
// own beside the handler from [NewStreamableHTTPHandler]. opts may be nil;
// when its SessionIDs is nil, the server's key ring mints and checks the
// session IDs. See [transport.SSEHandler].
func NewSSEHandler(s *Server, opts *transport.SSEOptions) *transport.SSEHandler {
	var o transport.SSEOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = s.opts.Logger
	}
	if o.SessionIDs == nil {
		o.SessionIDs = s.states.ring
	}
	h := mcplink.NewSSEHandler(s.connectConn, &o).(*transport.SSEHandler)
	if s.bus != nil {
		// A POST reaching a replica that does not hold its session's
		// event stream goes to the one that does (see bus_addressed.go).
		s.bus.attachRelay(h)
	}
	return h
}

// attachRelay makes h (a *transport.StreamableHTTPHandler with a session
// store) relay its sessions' messages on the Server's bus.
func (l *busLink) attachRelay(h any) {
	t := mcplink.AttachRelay(h, (*busRelay)(l))
	if t == nil {
		return
	}
	l.mu.Lock()
	l.targets = append(slices.Clone(l.targets), t)
	l.mu.Unlock()
}
