package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/mcplink"
	"github.com/mcpkit/mcpkit/internal/rpclink"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Messages for one session across replicas.
//
// A Streamable HTTP handler whose sessions are kept in a shared
// SessionStore, made by NewStreamableHTTPHandler for a Server with a
// Bus, relays its sessions' messages over the bus (mcplink.Relay): the
// deletion of a session and the change of its record (to all replicas),
// a cancellation of a request not running where it was POSTed (to all:
// no record says where a request runs, and keeping one would cost a
// store write per call), the client's answer to a request a replica sent
// (to that replica, which the request's ID names) and what a replica
// sends a session outside any request (to the replica holding its GET
// stream, which the record names). The transport decides what to relay
// and to whom; the Server carries it and hands what reaches it to its
// handlers.

// Kinds of bus messages about one session (see mcplink.Relay), besides
// those of bus.go.
var relayKinds = [...]string{mcplink.RelayDeleted, mcplink.RelayChanged, mcplink.RelayCancel, mcplink.RelayAnswer, mcplink.RelayStream, mcplink.RelaySSE}

// maxRelaySessionID bounds the session ID a relayed message names.
const maxRelaySessionID = 256

// checkRelayMessage checks the members of a message about one session.
func checkRelayMessage(m *busMessage) error {
	if m.Session == "" || len(m.Session) > maxRelaySessionID {
		return errors.New("no session, or one over 256 bytes")
	}
	for _, c := range []byte(m.Session) {
		if c < 0x21 || c > 0x7e {
			return errors.New("a session ID with a byte that is not visible ASCII")
		}
	}
	switch m.Kind {
	case mcplink.RelayChanged:
		if m.Version < 1 {
			return errors.New("a change without a version")
		}
	case mcplink.RelayCancel, mcplink.RelayAnswer, mcplink.RelayStream, mcplink.RelaySSE:
		if len(m.Msg) == 0 || len(m.Msg) > mcplink.MaxRelayBytes {
			return errors.New("no message, or one over the limit")
		}
		if m.Kind != mcplink.RelayCancel && !ValidReplicaID(m.To) {
			return errors.New("an addressed message without a valid replica")
		}
	}
	return nil
}

// busRelay is a Server's bus link as the relay of its Streamable HTTP
// handlers' sessions.
type busRelay busLink

var _ mcplink.Relay = (*busRelay)(nil)

// Replica implements mcplink.Relay: the Server's replica ID on the bus.
func (r *busRelay) Replica() string { return r.origin }

// Addressed implements mcplink.Relay.
func (r *busRelay) Addressed() bool {
	_, ok := r.bus.(AddressedBus)
	return ok
}

// errNotAddressed is the error of a relay whose bus cannot address a
// replica.
var errNotAddressed = errors.New("mcp: the bus cannot address one replica (no AddressedBus)")

// Send implements mcplink.Relay.
func (r *busRelay) Send(ctx context.Context, replica, kind, sid string, version int64, data []byte) error {
	if len(data) > mcplink.MaxRelayBytes {
		return fmt.Errorf("mcp: relaying a message of %d bytes, over %d", len(data), mcplink.MaxRelayBytes)
	}
	m := busMessage{V: busVersion, Origin: r.origin, Kind: kind, Session: sid, Version: version, To: replica, Msg: data}
	raw, err := json.Marshal(&m)
	if err != nil {
		return fmt.Errorf("mcp: relaying a message: %w", err)
	}
	if replica == "" {
		return r.bus.Publish(ctx, raw)
	}
	ab, ok := r.bus.(AddressedBus)
	if !ok {
		return errNotAddressed
	}
	return ab.PublishTo(ctx, replica, raw)
}

// Subscribed implements mcplink.Relay.
func (r *busRelay) Subscribed(ctx context.Context, replica string) (bool, error) {
	rc, ok := r.bus.(ReplicaChecker)
	if !ok {
		return false, errors.ErrUnsupported
	}
	return rc.Subscribed(ctx, replica)
}

// Detach implements mcplink.Relay.
func (r *busRelay) Detach(t mcplink.RelayTarget) {
	l := (*busLink)(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.targets = slices.DeleteFunc(slices.Clone(l.targets), func(x mcplink.RelayTarget) bool { return x == t })
}

// relayTargets returns the handlers relayed messages go to.
func (l *busLink) relayTargets() []mcplink.RelayTarget {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.targets // never modified in place
}

// deliverRelayed hands a message about one session to the handlers.
func (l *busLink) deliverRelayed(m *busMessage) {
	if m.To != "" && m.To != l.origin {
		l.s.logger.Warn("mcp: dropping a bus message addressed to another replica", "kind", m.Kind, "to", m.To)
		return
	}
	for _, t := range l.relayTargets() {
		t.RelayReceive(m.Kind, m.Session, m.Version, m.Msg)
	}
}

// relayGap tells the handlers that relayed messages may have been lost.
func (l *busLink) relayGap() {
	for _, t := range l.relayTargets() {
		t.RelayReceive(mcplink.RelayGap, "", 0, nil)
	}
}

// relayIDs numbers the requests a session kept in a shared store sends
// its client when the Server has a Bus: their IDs name the replica (see
// mcplink.RelayRequestID), so that the answer reaches it from whichever
// replica the client POSTs it to.
type relayIDs struct {
	replica string // "" when the session's requests keep jsonrpc's IDs
	n       atomic.Int64
}

// withRelayID returns ctx under which the next request of ss to its
// client gets a relayed ID, when it needs one.
func (ss *ServerSession) withRelayID(ctx context.Context) context.Context {
	ids := ss.relayIDs
	if ids == nil {
		return ctx
	}
	if h := rpclink.CallHookOf[jsonrpc.ID](ctx); h != nil && h.Chosen {
		return ctx
	}
	return rpclink.WithCallID(ctx, jsonrpc.StringID(mcplink.RelayRequestID(ids.replica, ids.n.Add(1))))
}
