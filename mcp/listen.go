package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// subscriptions/listen (2026-07-28): a long-lived request whose stream
// carries the change notifications the client opted in to, each tagged
// with the request's ID in _meta. It replaces the handshake era's GET
// stream and resources/subscribe. The request stays open until the client
// ends it (closing the HTTP response, or notifications/cancelled on
// stdio) or its session ends.

// listener is one open subscriptions/listen stream.
type listener struct {
	id         jsonrpc.ID
	filter     SubscriptionFilter // what was acknowledged
	uris       map[string]struct{}
	generation uint64 // the server's feature generation when it opened
	taskOwner  string // the owner key of the tasks in filter.TaskIDs

	// notes carries what the listen handler sends; broadcasters never
	// wait on it: a stream that falls behind by NotificationQueue
	// notifications is ended (overflow is closed).
	notes    chan queuedNote
	once     sync.Once
	overflow chan struct{}
	// gap is closed when the bus lost changes the stream may have been
	// owed: the stream ends with its graceful result, and the client
	// listens again (see Server.busGap).
	gapOnce sync.Once
	gap     chan struct{}
}

// endGap ends the stream gracefully, after what it has queued.
func (l *listener) endGap() {
	l.gapOnce.Do(func() { close(l.gap) })
}

// offer queues n for the stream without waiting, ending the stream if it
// is full.
func (l *listener) offer(n queuedNote) {
	select {
	case l.notes <- n:
	default:
		l.once.Do(func() { close(l.overflow) })
	}
}

// errListenerOverflow ends a subscription whose client does not keep up.
var errListenerOverflow = errors.New("mcp: subscription ended: the client did not keep up with its notifications (ServerOptions.NotificationQueue)")

// acknowledge returns the part of f the server honours: the list changes
// of the features it has, the updates of resources if it has resources.
func (s *Server) acknowledge(f *SubscriptionFilter) (SubscriptionFilter, error) {
	var ack SubscriptionFilter
	if f == nil {
		return ack, nil
	}
	ack.ToolsListChanged = f.ToolsListChanged && s.declares("tools")
	ack.PromptsListChanged = f.PromptsListChanged && s.declares("prompts")
	ack.ResourcesListChanged = f.ResourcesListChanged && s.declares("resources")
	if len(f.ResourceSubscriptions) > 0 && s.declares("resources.subscribe") {
		if len(f.ResourceSubscriptions) > s.opts.MaxSubscriptions {
			return ack, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: more resource subscriptions than the server's limit of %d (ServerOptions.MaxSubscriptions)", s.opts.MaxSubscriptions)}
		}
		for _, u := range f.ResourceSubscriptions {
			if len(u) > s.opts.MaxSubscriptionURILength {
				return ack, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: a resource URI is longer than the server's limit of %d bytes (ServerOptions.MaxSubscriptionURILength)", s.opts.MaxSubscriptionURILength)}
			}
		}
		ack.ResourceSubscriptions = append([]string(nil), f.ResourceSubscriptions...)
	}
	return ack, nil
}

// listen serves subscriptions/listen: it acknowledges what it will send,
// then forwards the matching notifications, tagged, until the request
// ends.
func (ss *ServerSession) listen(ctx context.Context, req *ServerRequest[*SubscriptionsListenParams]) (*SubscriptionsListenResult, error) {
	s := ss.server
	id, ok := jsonrpc.RelatedRequest(ctx)
	if !ok {
		return nil, errors.New("mcp: subscriptions/listen without a request ID")
	}
	ack, err := s.acknowledge(req.Params.Notifications)
	if err != nil {
		return nil, err
	}
	var taskOwner string
	if f := req.Params.Notifications; f != nil {
		if ack.TaskIDs, taskOwner, err = ss.acknowledgeTasks(ctx, &req.Params.Meta, f.TaskIDs); err != nil {
			return nil, err
		}
	}
	l := &listener{id: id, filter: ack, taskOwner: taskOwner, notes: make(chan queuedNote, s.opts.NotificationQueue), overflow: make(chan struct{})}
	if s.bus != nil {
		l.gap = make(chan struct{}) // nil, never ready, without a bus
	}
	if len(ack.ResourceSubscriptions) > 0 {
		l.uris = make(map[string]struct{}, len(ack.ResourceSubscriptions))
		for _, u := range ack.ResourceSubscriptions {
			l.uris[u] = struct{}{}
		}
	}
	// Registered before the acknowledgment, so that no change after it is
	// missed; sent only after it, as the stream's first message.
	s.mu.Lock()
	l.generation = s.generation
	if s.listeners == nil {
		s.listeners = make(map[*listener]struct{})
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	if err := ss.notify(ctx, NotificationSubscriptionsAcknowledged, &SubscriptionsAcknowledgedParams{Meta: Meta{SubscriptionID: id}, Notifications: &ack}); err != nil {
		return nil, err
	}
	for {
		select {
		case n := <-l.notes:
			if err := ctx.Err(); err != nil {
				return nil, err // ended: nothing more goes out on it
			}
			if err := ss.notify(ctx, n.method, n.params); err != nil {
				return nil, err
			}
		case <-l.overflow:
			return nil, errListenerOverflow
		case <-l.gap:
			// Send what was queued before the gap, then end.
			for {
				select {
				case n := <-l.notes:
					if err := ss.notify(ctx, n.method, n.params); err != nil {
						return nil, err
					}
				default:
					return &SubscriptionsListenResult{Meta: Meta{SubscriptionID: id}}, nil
				}
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ss.Done():
			return &SubscriptionsListenResult{Meta: Meta{SubscriptionID: id}}, nil
		}
	}
}

// notifyListeners offers a notification to the open listen streams that
// asked for it; wants decides, for each.
func (s *Server) notifyListeners(method string, params func(id jsonrpc.ID) Params, wants func(*listener) bool) {
	s.mu.RLock()
	var targets []*listener
	for l := range s.listeners {
		if wants(l) {
			targets = append(targets, l)
		}
	}
	s.mu.RUnlock()
	for _, l := range targets {
		l.offer(queuedNote{method: method, params: params(l.id)})
	}
}

// listChangedFor reports whether a stream acknowledged the list change
// method.
func (l *listener) listChangedFor(method string) bool {
	switch method {
	case NotificationToolListChanged:
		return l.filter.ToolsListChanged
	case NotificationPromptListChanged:
		return l.filter.PromptsListChanged
	case NotificationResourceListChanged:
		return l.filter.ResourcesListChanged
	}
	return false
}

// taggedListChanged returns the params of a list_changed notification on
// stream id.
func taggedListChanged(method string, id jsonrpc.ID) Params {
	p := listChangedParams(method)
	p.meta().SubscriptionID = id
	return p
}
