package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcplink"
)

// Bus carries, between the replicas of one server, the changes each
// replica's clients must be told of: a list of tools, prompts or
// resources that changed, a resource that was updated. Each replica's
// [Server] is given the same Bus in [ServerOptions.Bus]; it publishes
// the changes made on it and delivers those published by the others to
// its own sessions and subscriptions/listen streams, as if they had been
// made locally. Without a Bus a Server tells only its own clients. For
// the sessions of a Streamable HTTP handler with a shared session store
// (and of the legacy SSE handler), it also carries the messages of one
// session between the replicas: a deletion, a change of its record, a
// cancellation, the client's answer to a request a replica sent, what a
// replica sends outside any request to the one holding the GET stream.
//
// The replicas run the same application, which changes its features on
// every replica (so that every replica lists the same tools); the bus
// carries only the notifications, never the features.
//
// A Bus delivers opaque messages (the Server encodes its own, with a
// schema version, and drops and logs those it cannot read). A message
// published reaches every subscription, the publisher's own included
// (the Server ignores its own messages), once, in the order its publisher
// published it. A bus that may lose a message (a dropped connection, a
// subscriber that fell behind) must tell the subscriber with BusGap:
// delivery is then complete again from the next message on. It is never
// silently incomplete.
//
// [MemoryBus] connects the Servers of one process; package
// github.com/mcpkit/mcpkit/redisstore has one on Redis, and
// mcptest.BusSuite checks an implementation.
//
// Messages for one session held on another replica (the answer to a
// request a replica sent a client, a message for a GET stream another
// replica holds) are addressed to that replica: a bus that can address
// replicas implements [AddressedBus] too. See docs/SCALING.md
// ("Messages for one session").
type Bus interface {
	// Publish sends msg to every subscription of the bus. It returns once
	// the bus took msg, not once msg was delivered, and fails if the bus
	// could not take it; ctx bounds it. The bus does not keep msg after
	// Publish returns.
	Publish(ctx context.Context, msg []byte) error
	// Subscribe delivers to sub every message published after Subscribe
	// returns, until the subscription is closed: each with a call of
	// sub.BusMessage, one call at a time, or, where messages may have
	// been lost, a call of sub.BusGap before the next message. Close
	// waits for a call in progress and makes no more; it must not be
	// called from sub's methods. ctx bounds the setting up only.
	Subscribe(ctx context.Context, sub BusSubscriber) (io.Closer, error)
}

// BusSubscriber receives the messages of a [Bus] subscription. Its
// methods are called one at a time and should return quickly: a
// subscriber that falls behind by the bus's buffer is told of a gap.
type BusSubscriber interface {
	// BusMessage is called with each message, which it must not modify
	// nor keep after it returns.
	BusMessage(msg []byte)
	// BusGap is called when messages may have been lost: err says why.
	// The messages after it are delivered again.
	BusGap(err error)
}

// AddressedBus is a [Bus] that can also deliver a message to the
// subscriptions of one replica alone. A Server whose Bus is one makes
// its Streamable HTTP sessions kept in a shared session store whole
// across replicas: the answer to a request that a replica sent the
// client reaches that replica wherever the client POSTs it, and what a
// replica sends a session outside any request reaches the GET stream
// that another replica holds. Without it those stay where they are made
// (the broadcasts of the session store, deletions and cancellations, go
// on the plain Bus).
//
// A subscriber that is a [ReplicaSubscriber] is subscribed, with the
// same subscription, to the messages addressed to its replica. They
// come through the same BusSubscriber as the broadcast ones, with the
// same guarantees: once, in each publisher's order, and a gap where any
// may have been lost.
type AddressedBus interface {
	Bus
	// PublishTo sends msg to the subscriptions of replica only (those
	// whose subscriber's BusReplica returns replica), as Publish does
	// to all. A replica with no subscription loses msg: when the bus
	// knows it did (Redis answers PUBLISH with the number of
	// subscriptions that got the message), PublishTo returns an error
	// matching [ErrNoSubscriber], so that the sender can keep msg
	// elsewhere; a bus that cannot tell returns nil. Replica IDs are 1
	// to 64 bytes of [A-Za-z0-9_-].
	PublishTo(ctx context.Context, replica string, msg []byte) error
}

// ErrNoSubscriber is the error of [AddressedBus.PublishTo] when no
// subscription of the replica got the message: the replica is gone (or
// never was). A Streamable HTTP handler relaying a notification to the
// replica holding a session's GET stream then stores it in that
// stream's event log, for the client's resumption (see docs/SCALING.md,
// "Failover").
var ErrNoSubscriber = mcplink.ErrNoSubscriber

// ReplicaChecker is an [AddressedBus] that can tell whether a replica is
// subscribed. A replica whose process ended is not: Redis drops the
// subscriptions of a client whose connection closed, which the kernel
// does when a process dies, however it dies. A Streamable HTTP handler
// that follows the event log of a response stream another replica writes
// asks, while the log is quiet, whether the writer is still subscribed;
// when it is not, the requests of the stream are answered with an error
// instead of waiting for a response that will never be written (see
// docs/SCALING.md, "Failover"). [MemoryBus] and redisstore.Bus implement
// it.
type ReplicaChecker interface {
	AddressedBus
	// Subscribed reports whether replica has a subscription that
	// PublishTo would deliver to.
	Subscribed(ctx context.Context, replica string) (bool, error)
}

// ReplicaSubscriber is a [BusSubscriber] that names its replica: an
// [AddressedBus] delivers it the messages addressed to that replica,
// besides the broadcast ones. BusReplica is called once, in Subscribe.
type ReplicaSubscriber interface {
	BusSubscriber
	BusReplica() string
}

// ValidReplicaID reports whether id can name a replica on a bus: 1 to
// 64 bytes of ASCII letters, digits, '_' and '-', so that it can be part
// of a channel name or key as it is.
func ValidReplicaID(id string) bool { return mcplink.ValidName(id) }

// ErrBusOverflow is the cause given to BusGap when a subscriber fell
// behind by the bus's buffer and messages were dropped.
var ErrBusOverflow = errors.New("mcp: bus subscriber fell behind; messages were dropped")

// DefaultBusQueue is the default of MemoryBus.QueueSize.
const DefaultBusQueue = 1024

// MemoryBus is an [AddressedBus] within one process, for Servers that serve as
// replicas of one server there (and for tests). Publish never waits for
// a subscriber: each subscription has a queue of QueueSize messages,
// delivered by a goroutine of its own while it is not empty, and a
// subscriber that falls behind by more is told of a gap. The zero value
// is ready to use; a MemoryBus is safe for concurrent use.
type MemoryBus struct {
	// QueueSize bounds the messages waiting for one subscription. Zero
	// means DefaultBusQueue.
	QueueSize int

	mu       sync.RWMutex
	subs     map[*memorySub]struct{}
	replicas map[string]map[*memorySub]struct{} // the subs of each replica
}

var _ ReplicaChecker = (*MemoryBus)(nil)

// Publish implements [Bus]: it queues a copy of msg for every
// subscription and returns.
func (b *MemoryBus) Publish(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mcp: bus publish: %w", err)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	b.push(b.subs, msg)
	return nil
}

// PublishTo implements [AddressedBus]: it queues a copy of msg for
// every subscription of replica and returns, or returns an error
// matching [ErrNoSubscriber] when replica has none.
func (b *MemoryBus) PublishTo(ctx context.Context, replica string, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mcp: bus publish: %w", err)
	}
	if !ValidReplicaID(replica) {
		return fmt.Errorf("mcp: bus publish: invalid replica ID %q", replica)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	subs := b.replicas[replica]
	if len(subs) == 0 {
		return fmt.Errorf("mcp: bus publish to %s: %w", replica, ErrNoSubscriber)
	}
	b.push(subs, msg)
	return nil
}

// Subscribed implements [ReplicaChecker].
func (b *MemoryBus) Subscribed(ctx context.Context, replica string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("mcp: bus subscribed: %w", err)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.replicas[replica]) > 0, nil
}

// push queues a copy of msg for each of subs; b.mu is held.
func (b *MemoryBus) push(subs map[*memorySub]struct{}, msg []byte) {
	if len(subs) == 0 {
		return
	}
	msg = append([]byte(nil), msg...)
	limit := b.QueueSize
	if limit <= 0 {
		limit = DefaultBusQueue
	}
	for s := range subs {
		s.q.push(msg, limit)
	}
}

// Subscribe implements [Bus].
func (b *MemoryBus) Subscribe(ctx context.Context, sub BusSubscriber) (io.Closer, error) {
	if sub == nil {
		return nil, errors.New("mcp: bus subscribe: nil subscriber")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mcp: bus subscribe: %w", err)
	}
	s := &memorySub{bus: b}
	s.q.sub = sub
	if rs, ok := sub.(ReplicaSubscriber); ok {
		s.replica = rs.BusReplica()
		if !ValidReplicaID(s.replica) {
			return nil, fmt.Errorf("mcp: bus subscribe: invalid replica ID %q", s.replica)
		}
	}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[*memorySub]struct{})
	}
	b.subs[s] = struct{}{}
	if s.replica != "" {
		if b.replicas == nil {
			b.replicas = make(map[string]map[*memorySub]struct{})
		}
		if b.replicas[s.replica] == nil {
			b.replicas[s.replica] = make(map[*memorySub]struct{})
		}
		b.replicas[s.replica][s] = struct{}{}
	}
	b.mu.Unlock()
	return s, nil
}

// memorySub is one subscription of a MemoryBus.
type memorySub struct {
	bus     *MemoryBus
	replica string // "" for a subscriber that names none
	q       busQueue
}

// Close ends the subscription and waits for a delivery in progress.
func (s *memorySub) Close() error {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	if m := s.bus.replicas[s.replica]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(s.bus.replicas, s.replica)
		}
	}
	s.bus.mu.Unlock()
	s.q.close()
	return nil
}

// busQueue holds the messages waiting for one subscriber, and runs a
// goroutine that delivers them while there are any. A nil message in
// items stands for a gap.
type busQueue struct {
	sub BusSubscriber

	mu      sync.Mutex
	items   [][]byte
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// push queues msg, or, when limit messages wait already, drops it and
// marks a gap (once, until a message is queued after it).
func (q *busQueue) push(msg []byte, limit int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if len(q.items) >= limit {
		if q.items[len(q.items)-1] != nil {
			q.items = append(q.items, nil)
		}
		return
	}
	q.items = append(q.items, msg)
	if !q.running {
		q.running = true
		q.wg.Add(1)
		go q.deliver()
	}
}

// deliver hands the queued messages to the subscriber, in order, until
// the queue is empty or closed.
func (q *busQueue) deliver() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.items) == 0 || q.closed {
			q.items = nil
			q.running = false
			q.mu.Unlock()
			return
		}
		m := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.mu.Unlock()
		if m == nil {
			q.sub.BusGap(ErrBusOverflow)
		} else {
			q.sub.BusMessage(m)
		}
	}
}

// close drops what waits and waits for a delivery in progress.
func (q *busQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
	q.wg.Wait()
}

// The Server's side of the bus.

// busVersion is the schema version of the messages a Server publishes.
// A reader takes the members it knows of a message of a later version
// and ignores the others.
const busVersion = 1

// maxBusMessage bounds the size of a message a Server reads.
const maxBusMessage = 64 << 10

// Kinds of bus messages.
const (
	busListChanged = "list"    // Lists changed
	busUpdated     = "updated" // the resource URI was updated
	busGap         = "gap"     // the publisher lost messages it owed
)

// busMessage is what a Server publishes on its Bus, encoded as JSON.
type busMessage struct {
	V      int      `json:"v"`
	Origin string   `json:"o"` // the publishing Server's replica ID
	Kind   string   `json:"k"`
	Lists  []string `json:"l,omitempty"` // list_changed methods
	URI    string   `json:"u,omitempty"`
	// Of the messages about one session (see bus_addressed.go): the
	// session, the record's version (changed), the replica addressed
	// (answer, stream) and the JSON-RPC message (cancel, answer,
	// stream).
	Session string          `json:"s,omitempty"`
	Version int64           `json:"n,omitempty"`
	To      string          `json:"t,omitempty"`
	Msg     json.RawMessage `json:"m,omitempty"`
}

// listMethods are the list_changed notifications a bus carries.
var listMethods = [...]string{NotificationToolListChanged, NotificationPromptListChanged, NotificationResourceListChanged}

// decodeBusMessage reads a message, checking every member a Server acts
// on.
func decodeBusMessage(data []byte, maxURI int) (*busMessage, error) {
	if len(data) > maxBusMessage {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", len(data), maxBusMessage)
	}
	var m busMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m.V < 1 {
		return nil, fmt.Errorf("schema version %d", m.V)
	}
	if m.Origin == "" || len(m.Origin) > 64 {
		return nil, errors.New("no origin, or one over 64 bytes")
	}
	switch m.Kind {
	case busListChanged:
		if len(m.Lists) == 0 || len(m.Lists) > len(listMethods) {
			return nil, errors.New("list change without lists")
		}
		for _, l := range m.Lists {
			if listBit(l) == 0 {
				return nil, fmt.Errorf("unknown list %q", l)
			}
		}
	case busUpdated:
		if m.URI == "" || len(m.URI) > maxURI {
			return nil, errors.New("resource update without a URI, or with one over the limit")
		}
	case busGap:
	default:
		if !slices.Contains(relayKinds[:], m.Kind) {
			return nil, fmt.Errorf("unknown kind %q", m.Kind)
		}
		if err := checkRelayMessage(&m); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// listBit returns the bit of a list_changed method in busLink.lists, or 0.
func listBit(method string) uint8 {
	for i, m := range listMethods {
		if m == method {
			return 1 << i
		}
	}
	return 0
}

// maxBusOutbox bounds the resource updates waiting to be published;
// past it, they are replaced by one gap message.
const maxBusOutbox = 1024

// Bounds of the wait between attempts to publish while the bus fails.
const (
	busRetryMin = 100 * time.Millisecond
	busRetryMax = 5 * time.Second
)

// busLink connects a Server to its Bus: it subscribes when the Server is
// made, and publishes the changes made on the Server from a goroutine
// that runs while some wait, so that no change to the Server waits for
// the bus.
type busLink struct {
	s      *Server
	bus    Bus
	origin string
	own    []byte // how this link's messages begin (see ownPrefix)
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	targets []mcplink.RelayTarget // the handlers relaying their sessions here; replaced, never modified
	sub     io.Closer             // nil if Subscribe failed
	lists   uint8                 // list_changed methods to publish, by listBit
	uris    []string              // resource updates to publish, in order
	queued  map[string]struct{}   // the members of uris
	gap     bool                  // publish a gap: the others missed messages
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// newBusLink returns the link of s to bus, not subscribed yet.
func newBusLink(s *Server, bus Bus) *busLink {
	ctx, cancel := context.WithCancel(context.Background())
	origin := newSessionID()
	return &busLink{s: s, bus: bus, origin: origin, own: ownPrefix(origin), ctx: ctx, cancel: cancel}
}

// ReplicaID returns the ID by which the replicas sharing the server's
// [ServerOptions.Bus] address this one (a session's record names the
// replica holding its GET stream by it): random for each Server, made in
// NewServer; "" without a Bus.
func (s *Server) ReplicaID() string {
	if s.bus == nil {
		return ""
	}
	return s.bus.origin
}

// subscribe subscribes the link to its bus; the Server's bus field is
// set already, as a message may come at once.
func (l *busLink) subscribe() {
	sub, err := l.bus.Subscribe(l.ctx, (*busSubscriber)(l))
	if err != nil {
		// Nothing from the other replicas reaches this one: say so
		// loudly. Its own changes are still published.
		l.s.logger.Error("mcp: subscribing to the bus failed; changes made on other replicas will not reach this one's clients", "err", err)
	}
	l.mu.Lock()
	l.sub = sub
	l.mu.Unlock()
}

// publishLists queues list_changed methods for publishing.
func (l *busLink) publishLists(methods []string) {
	var bits uint8
	for _, m := range methods {
		bits |= listBit(m)
	}
	if bits == 0 {
		return
	}
	l.mu.Lock()
	l.lists |= bits
	l.startLocked()
	l.mu.Unlock()
}

// publishUpdate queues a resource update for publishing, unless one of
// the same URI waits.
func (l *busLink) publishUpdate(uri string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.queued[uri]; !ok {
		if len(l.uris) >= maxBusOutbox {
			l.gap = true
		} else {
			if l.queued == nil {
				l.queued = make(map[string]struct{})
			}
			l.queued[uri] = struct{}{}
			l.uris = append(l.uris, uri)
		}
	}
	l.startLocked()
}

// startLocked starts the publishing goroutine if it is not running.
func (l *busLink) startLocked() {
	if l.running || l.closed {
		return
	}
	l.running = true
	l.wg.Add(1)
	go l.run()
}

// next takes the messages to publish now, or returns nil and marks the
// goroutine stopped.
func (l *busLink) next() []busMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []busMessage
	switch {
	case l.closed:
	case l.gap:
		// A gap tells the others to assume every change: it stands for
		// the changes waiting too.
		out = append(out, busMessage{V: busVersion, Origin: l.origin, Kind: busGap})
		l.gap, l.lists, l.uris, l.queued = false, 0, nil, nil
	default:
		if l.lists != 0 {
			m := busMessage{V: busVersion, Origin: l.origin, Kind: busListChanged}
			for i, method := range listMethods {
				if l.lists&(1<<i) != 0 {
					m.Lists = append(m.Lists, method)
				}
			}
			out = append(out, m)
			l.lists = 0
		}
		for _, u := range l.uris {
			out = append(out, busMessage{V: busVersion, Origin: l.origin, Kind: busUpdated, URI: u})
		}
		l.uris, l.queued = nil, nil
	}
	if len(out) == 0 {
		l.running = false
	}
	return out
}

// run publishes what waits until nothing does. When the bus fails, the
// others may have missed messages: it publishes a gap instead, trying
// again with a growing wait until it succeeds or the Server closes.
func (l *busLink) run() {
	defer l.wg.Done()
	wait := busRetryMin
	for {
		msgs := l.next()
		if msgs == nil {
			return
		}
		for _, m := range msgs {
			data, _ := json.Marshal(&m) // plain strings: never fails
			err := l.bus.Publish(l.ctx, data)
			if err == nil {
				wait = busRetryMin
				continue
			}
			if l.ctx.Err() != nil {
				return
			}
			l.s.logger.Warn("mcp: publishing on the bus failed; the other replicas will be told of a gap", "kind", m.Kind, "err", err)
			l.mu.Lock()
			l.gap = true
			l.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
				return
			}
			wait = min(2*wait, busRetryMax)
			break
		}
	}
}

// close stops publishing and ends the subscription.
func (l *busLink) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	sub := l.sub
	l.mu.Unlock()
	if sub != nil {
		if err := sub.Close(); err != nil {
			l.s.logger.Debug("mcp: closing the bus subscription", "err", err)
		}
	}
}

// busSubscriber is the busLink as the Bus sees it.
type busSubscriber busLink

// BusMessage delivers another replica's change to this one's clients.
func (b *busSubscriber) BusMessage(data []byte) {
	l := (*busLink)(b)
	if bytes.HasPrefix(data, l.own) {
		return // this Server's own: its clients were told already
	}
	m, err := decodeBusMessage(data, l.s.opts.MaxSubscriptionURILength)
	if err != nil {
		l.s.logger.Warn("mcp: dropping a malformed bus message", "err", err, "bytes", len(data))
		return
	}
	if m.Origin == l.origin {
		return // this Server's own: its clients were told already
	}
	switch m.Kind {
	case busListChanged:
		for _, method := range m.Lists {
			l.s.noteListChange(method, false)
		}
	case busUpdated:
		l.s.deliverResourceUpdated(&ResourceUpdatedParams{URI: m.URI})
	case busGap:
		l.s.busGap(errors.New("mcp: another replica could not publish its changes"))
	default:
		l.deliverRelayed(m)
	}
}

// ownPrefix returns how the messages published with origin begin,
// through the origin: a message that begins so is the link's own, which
// BusMessage drops without decoding it (every broadcast comes back to
// its publisher).
func ownPrefix(origin string) []byte {
	sample, _ := json.Marshal(&busMessage{V: busVersion, Origin: origin})
	if i := bytes.Index(sample, []byte(`,"k":`)); i > 0 {
		return sample[:i+1]
	}
	return sample // never a prefix of a message with a kind
}

// BusReplica implements [ReplicaSubscriber]: the messages addressed to
// this Server's replica ID come through this subscription too.
func (b *busSubscriber) BusReplica() string { return (*busLink)(b).origin }

// BusGap tells this replica's clients that changes may have been missed.
func (b *busSubscriber) BusGap(err error) {
	l := (*busLink)(b)
	l.s.busGap(err)
	l.relayGap()
}

// busGap handles a gap on the bus: this replica's clients may have
// missed changes made on others. The Server caches nothing it learned
// from the bus, so nothing is dropped; the clients are told to assume
// everything changed: the subscriptions/listen streams that carry what
// the bus does end with their graceful result (clients listen again and
// fetch afresh), and each session of the handshake era is sent
// list_changed for every list the server declares and resources/updated
// for every resource it is subscribed to.
func (s *Server) busGap(cause error) {
	s.logger.Warn("mcp: bus gap: ending listen streams and telling sessions every list changed", "err", cause)
	s.mu.RLock()
	var ended []*listener
	for l := range s.listeners {
		if l.filter.ToolsListChanged || l.filter.PromptsListChanged || l.filter.ResourcesListChanged || len(l.uris) > 0 {
			ended = append(ended, l)
		}
	}
	s.mu.RUnlock()
	for _, l := range ended {
		l.endGap()
	}
	caps := s.capabilities()
	var methods []string
	if caps.Tools != nil {
		methods = append(methods, NotificationToolListChanged)
	}
	if caps.Prompts != nil {
		methods = append(methods, NotificationPromptListChanged)
	}
	if caps.Resources != nil {
		methods = append(methods, NotificationResourceListChanged)
	}
	for _, ss := range s.Sessions() {
		if !ss.initialized() {
			continue
		}
		for _, m := range methods {
			ss.queueNote(queuedNote{method: m, params: listChangedParams(m), key: m})
		}
		ss.mu.Lock()
		uris := make([]string, 0, len(ss.subscriptions))
		for u := range ss.subscriptions {
			uris = append(uris, u)
		}
		ss.mu.Unlock()
		for _, u := range uris {
			ss.queueNote(queuedNote{method: NotificationResourceUpdated, params: &ResourceUpdatedParams{URI: u}, key: u})
		}
	}
}
