package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// BusOptions configures a [Bus]. The zero value of each field means its
// default.
type BusOptions struct {
	// Prefix starts the bus's channel, Prefix+"bus" (DefaultPrefix).
	// Replicas of one server share a prefix; servers that are not
	// replicas of each other need different ones.
	Prefix string
	// Timeout bounds each PUBLISH, and the wait for the confirmation of
	// a new subscription (DefaultTimeout). Give the client
	// ContextTimeoutEnabled so that go-redis honours it.
	Timeout time.Duration
	// Breaker is the circuit breaker of the bus's PUBLISHes (see
	// [Breaker]); nil means one of the bus's own. Give the stores on
	// one client the same.
	Breaker *Breaker
	// QueueSize bounds the messages received and not yet handled of one
	// subscription; a subscriber that falls behind by more is told of a
	// gap (mcp.DefaultBusQueue).
	QueueSize int
	// MaxMessageBytes bounds the size of a message a subscription
	// queues; a larger one is dropped, and the subscriber told of a gap
	// in its place (DefaultMaxBusMessage). Publish does not check it.
	MaxMessageBytes int
}

// DefaultMaxBusMessage is the default of BusOptions.MaxMessageBytes: the
// largest message an mcp.Server reads.
const DefaultMaxBusMessage = 64 << 10

// ErrBusMessageTooLarge is the cause given to BusGap for a message over
// BusOptions.MaxMessageBytes.
var ErrBusMessageTooLarge = errors.New("redisstore: a bus message over MaxMessageBytes was dropped")

// Bus is an [mcp.AddressedBus] on Redis Pub/Sub: give the same Bus, or Buses on
// the same Redis with the same prefix, to the replicas' mcp.Servers in
// ServerOptions.Bus. It passes mcptest.BusSuite.
//
// Pub/Sub rather than Streams: what the bus carries are notices that
// something changed, worth nothing once delivered, and a gap is made good
// by telling clients that everything may have changed. Pub/Sub fans one
// PUBLISH out to every replica and stores nothing: no key, no trimming,
// no memory that grows while a replica is away, no blocking read per
// replica. What Streams would add, replay across a short disconnection,
// is replaced by the gap signal.
//
// Pub/Sub delivers nothing published while a subscriber's connection is
// down, and go-redis reconnects and subscribes again on its own, without
// telling. The bus tells: Redis confirms every SUBSCRIBE, and a
// confirmation after the first one means the connection was renewed, so
// the subscriber is told of a gap (BusGap) before the messages that
// follow it. A connection Redis closes for its pubsub output buffer limit
// (client-output-buffer-limit pubsub) is renewed, and told, alike. A
// subscription whose first confirmation does not come within Timeout is
// kept and tells a gap when it comes.
//
// On a Cluster, go-redis subscribes on the master of the channel's hash
// slot, and the bus publishes there too: PUBLISH on any node reaches the
// subscribers of all (Redis Cluster's Pub/Sub is cluster-wide, every
// message crossing the cluster bus), but two messages published through
// different nodes may arrive out of order. After a failover of that
// master the subscriptions are renewed, which tells a gap.
//
// Messages addressed to one replica (PublishTo) go on a channel of that
// replica, Prefix+"bus:r:"+replica, which a subscriber naming its
// replica (mcp.ReplicaSubscriber) is subscribed to on the same
// connection as the broadcast channel: still one Pub/Sub connection per
// subscription, whatever the number of sessions, and one gap signal for
// both. One channel per replica rather than per session: a replica
// subscribes once, when it starts, so no message is lost to a
// subscription still under way, and Redis holds as many channels as
// there are replicas.
//
// Redis is inside the trust boundary: whoever may PUBLISH on the channel
// can make every replica's clients re-fetch their lists. The mcp.Server
// drops and logs the messages it cannot read.
type Bus struct {
	client  redis.UniversalClient
	opts    BusOptions
	bounds  bounds
	channel string
	batch   groupCommit // the publishes of concurrent callers, one round trip (not on a Cluster)
}

var _ mcp.ReplicaChecker = (*Bus)(nil)

// NewBus returns a bus on client, which may be a standalone, Sentinel
// (failover) or Cluster client. Nil opts means the defaults. The bus does
// not own client: closing its subscriptions does not close client.
func NewBus(client redis.UniversalClient, opts *BusOptions) (*Bus, error) {
	var o BusOptions
	if opts != nil {
		o = *opts
	}
	bd, err := checkCommon(client, &o.Prefix, &o.Timeout, o.Breaker)
	if err != nil {
		return nil, err
	}
	o.QueueSize = cmp.Or(max(o.QueueSize, 0), mcp.DefaultBusQueue)
	o.MaxMessageBytes = cmp.Or(max(o.MaxMessageBytes, 0), DefaultMaxBusMessage)
	return &Bus{client: client, opts: o, bounds: bd, channel: o.Prefix + "bus"}, nil
}

// Publish implements mcp.Bus with one PUBLISH, bounded by Timeout.
func (b *Bus) Publish(ctx context.Context, msg []byte) error {
	_, err := b.publish(ctx, b.channel, msg)
	return err
}

// PublishTo implements mcp.AddressedBus with one PUBLISH on the
// replica's channel, Prefix+"bus:r:"+replica, bounded by Timeout. The
// replica ID is checked (mcp.ValidReplicaID) before the channel is
// named. When Redis answers that no subscription got msg (the replica's
// subscription is gone with its process), it returns an error matching
// mcp.ErrNoSubscriber: the count is exact, the subscriptions all being
// on the node PUBLISH goes to (see node).
func (b *Bus) PublishTo(ctx context.Context, replica string, msg []byte) error {
	if !mcp.ValidReplicaID(replica) {
		return wrap("bus publish", fmt.Errorf("invalid replica ID %q", replica))
	}
	n, err := b.publish(ctx, b.replicaChannel(replica), msg)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("redisstore: bus publish to %s: %w", replica, mcp.ErrNoSubscriber)
	}
	return nil
}

// Subscribed implements [mcp.ReplicaChecker] with one PUBSUB NUMSUB of
// the replica's channel, on the node the subscriptions are on (see
// send). Redis drops the subscriptions of a connection that closed, which
// the kernel closes when the replica's process ends, however it ends. It
// is an idempotent read: it retries once, like the stores' reads.
func (b *Bus) Subscribed(ctx context.Context, replica string) (bool, error) {
	if !mcp.ValidReplicaID(replica) {
		return false, wrap("bus subscribed", fmt.Errorf("invalid replica ID %q", replica))
	}
	channel := b.replicaChannel(replica)
	var n int64
	err := b.bounds.read(ctx, func(ctx context.Context) error {
		node, err := b.node(ctx)
		if err != nil {
			return err
		}
		res, err := process(ctx, node, "pubsub", "numsub", channel).Slice()
		if err != nil {
			return err
		}
		if len(res) != 2 {
			return fmt.Errorf("PUBSUB NUMSUB answered %d values", len(res))
		}
		n, _ = res[1].(int64)
		return nil
	})
	if err != nil {
		return false, wrap("bus subscribed", err)
	}
	return n > 0, nil
}

// replicaChannel is the channel of the messages addressed to replica.
func (b *Bus) replicaChannel(replica string) string { return b.channel + ":r:" + replica }

// publish sends msg on channel, through the node the subscriptions are
// on, and returns the number of subscriptions that got it.
func (b *Bus) publish(ctx context.Context, channel string, msg []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, wrap("bus publish", err)
	}
	if _, cluster := b.client.(*redis.ClusterClient); !cluster {
		// Concurrent publishes share a round trip, in order.
		cmd := redis.NewCmd(ctx, "publish", channel, msg)
		op := &pendingOp{cmds: []redis.Cmder{noRetry{cmd}}}
		b.batch.do(ctx, &b.bounds, b.client, op)
		if op.err != nil {
			return 0, wrap("bus publish", op.err)
		}
		return cmd.Int64()
	}
	c := b.bounds.op(ctx)
	n, err := b.send(c.ctx, channel, msg)
	if err := c.end(err); err != nil {
		return 0, wrap("bus publish", err)
	}
	return n, nil
}

// send sends msg on channel with one PUBLISH that go-redis does not
// retry, and returns the number of subscriptions that got it.
func (b *Bus) send(octx context.Context, channel string, msg []byte) (int64, error) {
	node, err := b.node(octx)
	if err != nil {
		return 0, err
	}
	return process(octx, node, "publish", channel, msg).Int64()
}

// node returns the node the subscriptions are on. On a Cluster, go-redis
// subscribes on the master of the first channel's slot: PUBLISH on any
// node reaches them, but messages sent through different nodes may
// overtake each other, and PUBSUB NUMSUB counts the subscriptions of one
// node. A subscription is on the node of the broadcast channel, whichever
// other channel it has, so an addressed message goes there too, keeping
// its order with the broadcast ones, and is counted there.
func (b *Bus) node(ctx context.Context) (processor, error) {
	cc, ok := b.client.(*redis.ClusterClient)
	if !ok {
		return b.client, nil
	}
	m, err := cc.MasterForKey(ctx, b.channel)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ErrResubscribed is the cause given to BusGap when the subscription's
// connection was renewed: what was published meanwhile was lost.
var ErrResubscribed = errors.New("redisstore: the bus subscription was renewed; messages published meanwhile were lost")

// Subscribe implements mcp.Bus: the subscription has a Pub/Sub
// connection of its own, a goroutine that reads it (go-redis adds two:
// its reader and a health check), and one that delivers to sub while
// messages wait. It waits up to Timeout for Redis to confirm the
// subscription; without the confirmation it succeeds still, and sub is
// told of a gap once it comes. It fails only when ctx is done.
func (b *Bus) Subscribe(ctx context.Context, sub mcp.BusSubscriber) (io.Closer, error) {
	if sub == nil {
		return nil, errors.New("redisstore: bus subscribe: nil subscriber")
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("bus subscribe", err)
	}
	channels := []string{b.channel}
	if rs, ok := sub.(mcp.ReplicaSubscriber); ok {
		replica := rs.BusReplica()
		if !mcp.ValidReplicaID(replica) {
			return nil, wrap("bus subscribe", fmt.Errorf("invalid replica ID %q", replica))
		}
		// One connection for both: the broadcast channel first, which
		// places the subscription on a Cluster (see publish).
		channels = append(channels, b.replicaChannel(replica))
	}
	octx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	ps := b.client.Subscribe(octx, channels...)
	confirmed := make(map[string]bool, len(channels))
	var err error
	for len(confirmed) < len(channels) && err == nil {
		var m any
		if m, err = ps.Receive(octx); err == nil {
			if c, ok := m.(*redis.Subscription); ok && c.Kind == "subscribe" {
				confirmed[c.Channel] = true
			}
		}
	}
	cancel()
	if err != nil && ctx.Err() != nil {
		ps.Close()
		return nil, wrap("bus subscribe", ctx.Err())
	}
	s := &busSub{ps: ps, confirmed: confirmed, maxBytes: b.opts.MaxMessageBytes, done: make(chan struct{})}
	s.q.sub, s.q.limit = sub, b.opts.QueueSize
	go s.read(ps.ChannelWithSubscriptions())
	return s, nil
}

// busSub is one subscription of a Bus.
type busSub struct {
	ps        *redis.PubSub
	confirmed map[string]bool // the channels Redis confirmed once; read's alone after Subscribe
	maxBytes  int
	q         busQueue
	done      chan struct{} // closed when read returns
	once      sync.Once
}

// read queues what the Pub/Sub connection receives, until it is closed.
// It never waits for the subscriber, so go-redis never drops a message
// for a full channel.
func (s *busSub) read(ch <-chan any) {
	defer close(s.done)
	for m := range ch {
		switch m := m.(type) {
		case *redis.Message:
			if len(m.Payload) > s.maxBytes {
				s.q.gap(ErrBusMessageTooLarge)
				continue
			}
			s.q.push([]byte(m.Payload))
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			// A renewed subscription, or the first one, confirmed
			// late: what was published before it was lost.
			if s.confirmed[m.Channel] {
				s.q.gap(ErrResubscribed)
			} else {
				s.confirmed[m.Channel] = true
				s.q.gap(errors.New("redisstore: the bus subscription was confirmed late; messages published before were lost"))
			}
		}
	}
}

// Close ends the subscription: it closes its connection and waits for a
// delivery in progress. It may be called more than once.
func (s *busSub) Close() error {
	var err error
	s.once.Do(func() {
		err = s.ps.Close()
		<-s.done
		s.q.close()
	})
	return err
}

// busQueue holds the messages waiting for a subscriber and runs a
// goroutine that delivers them while there are any. A nil item stands
// for a gap, whose cause is in gaps.
type busQueue struct {
	sub   mcp.BusSubscriber
	limit int

	mu      sync.Mutex
	items   [][]byte
	causes  []error // of the gaps in items, in order
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// push queues msg, or, when limit messages wait already, drops it and
// marks a gap.
func (q *busQueue) push(msg []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= q.limit {
		q.gapLocked(mcp.ErrBusOverflow)
		return
	}
	q.add(msg)
}

// gap marks a gap.
func (q *busQueue) gap(cause error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.gapLocked(cause)
}

func (q *busQueue) gapLocked(cause error) {
	if n := len(q.items); n > 0 && q.items[n-1] == nil {
		return // one gap stands for both
	}
	q.causes = append(q.causes, cause)
	q.add(nil)
}

func (q *busQueue) add(item []byte) {
	if q.closed {
		return
	}
	q.items = append(q.items, item)
	if !q.running {
		q.running = true
		q.wg.Add(1)
		go q.deliver()
	}
}

// deliver hands the queued items to the subscriber, in order, until the
// queue is empty or closed.
func (q *busQueue) deliver() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.items) == 0 || q.closed {
			q.items, q.causes = nil, nil
			q.running = false
			q.mu.Unlock()
			return
		}
		m := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		var cause error
		if m == nil {
			cause = q.causes[0]
			q.causes = q.causes[1:]
		}
		q.mu.Unlock()
		if m == nil {
			q.sub.BusGap(cause)
		} else {
			q.sub.BusMessage(m)
		}
	}
}

// close drops what waits and waits for a delivery in progress.
func (q *busQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items, q.causes = nil, nil
	q.mu.Unlock()
	q.wg.Wait()
}
