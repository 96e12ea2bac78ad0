package mcp

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Subscription is an open subscriptions/listen stream of a client of the
// stateless era (2026-07-28): the change notifications it asked for reach
// the ClientOptions handlers (ToolListChangedHandler,
// ResourceUpdatedHandler and the like) until it is closed or its server
// ends it.
type Subscription struct {
	// Acknowledged is what the server agreed to send: the kinds asked for
	// that it supports.
	Acknowledged SubscriptionFilter

	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
}

// Close ends the subscription (on HTTP by closing its response, on stdio
// with notifications/cancelled) and waits for it to end.
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

// Listen opens a subscriptions/listen stream asking for the notifications
// filter names, and returns once the server acknowledged it. It needs a
// session of the stateless era (see [ClientOptions.Era]). ctx bounds the
// wait for the acknowledgment; the subscription lasts until Close or the
// session's end.
func (cs *ClientSession) Listen(ctx context.Context, filter *SubscriptionFilter) (*Subscription, error) {
	if cs.modern == nil {
		return nil, errors.New("mcp: Listen needs a session of the stateless era (2026-07-28); in the handshake era, notifications come unasked and resources/subscribe subscribes")
	}
	if filter == nil {
		filter = &SubscriptionFilter{}
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
		err := cs.call(jsonrpc.WithCallID(lctx, id), MethodSubscriptionsListen, &SubscriptionsListenParams{Notifications: filter}, &SubscriptionsListenResult{})
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
