package mcp

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Subscription is what [ClientSession.Listen] opened: in 2026-07-28 a
// subscriptions/listen stream, whose change notifications reach the
// ClientOptions handlers (ToolListChangedHandler, ResourceUpdatedHandler
// and the like) until it is closed or its server ends it; in the
// handshake era the resources/subscribe subscriptions of its resources.
type Subscription struct {
	// Acknowledged is what the server agreed to send: the kinds asked for
	// that it supports.
	Acknowledged SubscriptionFilter

	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
}

// unsubscribeTimeout bounds each resources/unsubscribe of a handshake-era
// Subscription's Close.
const unsubscribeTimeout = 10 * time.Second

// Close ends the subscription (in 2026-07-28 on HTTP by closing its
// response, on stdio with notifications/cancelled; in the handshake era
// with resources/unsubscribe) and waits for it to end.
func (s *Subscription) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Done returns a channel closed when the subscription has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err returns why the subscription ended: nil when the server ended it
// gracefully or it was closed; nil while it is open.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// listenWaiters holds the subscriptions waiting for their acknowledgment,
// by subscription ID.
type listenWaiters struct {
	mu sync.Mutex
	m  map[string]chan *SubscriptionsAcknowledgedParams
}

// errListenNoAck ends a Listen whose request ended before the server
// acknowledged it.
var errListenNoAck = errors.New("mcp: the subscription ended before the server acknowledged it")

// Listen asks for the change notifications filter names, and returns
// once the server acknowledged them; they reach the ClientOptions
// handlers. ctx bounds the wait for the acknowledgment; the subscription
// lasts until Close or the session's end.
//
// In 2026-07-28 Listen opens a subscriptions/listen stream. In the
// handshake era, where a server sends list_changed notifications to every
// session unasked, Acknowledged holds the kinds the server declared
// (ServerCapabilities listChanged), and the resources are subscribed to
// with resources/subscribe (undone by Close); so code written with Listen
// works in both eras.
//
// On error the subscription is nil; a server's error answer is a
// *jsonrpc.Error through errors.As (see [ClientSession] for every case).
func (cs *ClientSession) Listen(ctx context.Context, filter *SubscriptionFilter) (*Subscription, error) {
	if filter == nil {
		filter = &SubscriptionFilter{}
	}
	if cs.modern == nil {
		return cs.listenHandshake(ctx, filter)
	}
	id := cs.nextListenID()
	ack := make(chan *SubscriptionsAcknowledgedParams, 1)
	cs.listeners.mu.Lock()
	if cs.listeners.m == nil {
		cs.listeners.m = make(map[string]chan *SubscriptionsAcknowledgedParams)
	}
	cs.listeners.m[id.Raw()] = ack
	cs.listeners.mu.Unlock()
	forget := func() {
		cs.listeners.mu.Lock()
		delete(cs.listeners.m, id.Raw())
		cs.listeners.mu.Unlock()
	}

	lctx, cancel := context.WithCancel(context.Background())
	s := &Subscription{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer forget()
		err := cs.call(rpclink.WithCallID(lctx, id), MethodSubscriptionsListen, &SubscriptionsListenParams{Notifications: filter}, &SubscriptionsListenResult{})
		if err != nil && lctx.Err() == nil {
			s.err = err
		}
	}()
	select {
	case a := <-ack:
		if a.Notifications != nil {
			s.Acknowledged = *a.Notifications
		}
		return s, nil
	case <-s.done:
		if s.err != nil {
			return nil, s.err
		}
		return nil, errListenNoAck
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// nextListenID returns the JSON-RPC ID of a new listen request: the
// subscription's ID, which its notifications carry.
func (cs *ClientSession) nextListenID() jsonrpc.ID {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.nextTok++
	return jsonrpc.StringID("mcpkit-listen-" + strconv.FormatInt(cs.nextTok, 10))
}

func (cs *ClientSession) subscriptionAcknowledged(_ context.Context, req *ClientRequest[*SubscriptionsAcknowledgedParams]) (*EmptyResult, error) {
	id := req.Params.Meta.SubscriptionID
	cs.listeners.mu.Lock()
	ack := cs.listeners.m[id.Raw()]
	cs.listeners.mu.Unlock()
	if ack != nil {
		select {
		case ack <- req.Params:
		default:
		}
	}
	return nil, nil
}

// listenHandshake is Listen in the handshake era: what the server
// declared, and resources/subscribe for the resources.
func (cs *ClientSession) listenHandshake(ctx context.Context, filter *SubscriptionFilter) (*Subscription, error) {
	caps := cs.serverCaps()
	var ack SubscriptionFilter
	ack.ToolsListChanged = filter.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	ack.PromptsListChanged = filter.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	ack.ResourcesListChanged = filter.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if len(filter.ResourceSubscriptions) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		for _, uri := range filter.ResourceSubscriptions {
			if err := cs.request(ctx, MethodResourcesSubscribe, &SubscribeParams{URI: uri}, &EmptyResult{}); err != nil {
				cs.unsubscribeAll(ack.ResourceSubscriptions)
				return nil, err
			}
			ack.ResourceSubscriptions = append(ack.ResourceSubscriptions, uri)
		}
	}
	lctx, cancel := context.WithCancel(context.Background())
	s := &Subscription{Acknowledged: ack, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		select {
		case <-lctx.Done():
			cs.unsubscribeAll(ack.ResourceSubscriptions)
		case <-cs.Done():
		}
	}()
	return s, nil
}

// unsubscribeAll undoes the resources/subscribe of each of uris.
func (cs *ClientSession) unsubscribeAll(uris []string) {
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		if err := cs.request(ctx, MethodResourcesUnsubscribe, &UnsubscribeParams{URI: uri}, &EmptyResult{}); err != nil {
			cs.client.logger.Debug("mcp: resources/unsubscribe failed", "uri", uri, "err", err)
		}
		cancel()
	}
}
