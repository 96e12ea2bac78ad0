// Package replica configures one replica of a server from the -redis and
// -keys flags of the commands in redisstore/cmd: the stores every replica
// shares in Redis, and the key ring read from a file every replica is
// given. Several processes started with the same flags, behind any
// balancer, serve as one server.
package replica

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// Flags are the values of the flags Register adds.
type Flags struct {
	// Redis is the address of the Redis server, or several separated by
	// commas for a Cluster; empty means no Redis.
	Redis string
	// Keys is the key file; empty means a random key of this process.
	Keys string
	// ClientRequestTimeout is mcp.ServerOptions.ClientRequestTimeout (zero:
	// its default).
	ClientRequestTimeout time.Duration
}

// Register adds -redis, -keys and -client-request-timeout to fs.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Redis, "redis", "", "keep sessions, events, tasks and single-use request states in the Redis at this `ADDR` (host:port; several, comma-separated: a Cluster), and share list changes and resource updates through it")
	fs.DurationVar(&f.ClientRequestTimeout, "client-request-timeout", 0, "bound each request to the client (sampling, elicitation, roots) to this long (0: 10 minutes)")
	fs.StringVar(&f.Keys, "keys", "", "read the key ring from `FILE`: one hex-encoded key of at least 32 bytes per line, the first signs, all verify (every replica needs the same file)")
	return f
}

// State is what a replica shares with the others: the key ring and, with
// -redis, the stores. Its methods set them in a server's and a handler's
// options.
type State struct {
	// Keys is the ring read from the key file, or nil (a random key of
	// this process).
	Keys *mcp.KeyRing

	clientTimeout time.Duration

	client   redis.UniversalClient // nil without -redis
	sessions *redisstore.SessionStore
	events   *redisstore.EventStore
	bus      *redisstore.Bus
	tasks    *redisstore.TaskStore
	claimer  *redisstore.StateClaimer
}

// Open reads the key file and, with -redis, connects to Redis (checking
// it answers PING within ctx) and makes the stores.
func Open(ctx context.Context, f *Flags) (*State, error) {
	st := &State{clientTimeout: f.ClientRequestTimeout}
	if f.Keys != "" {
		file, err := os.Open(f.Keys)
		if err != nil {
			return nil, err
		}
		st.Keys, err = mcp.ReadKeyRing(file)
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Keys, err)
		}
	}
	if f.Redis == "" {
		return st, nil
	}
	st.client = redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 strings.Split(f.Redis, ","),
		ContextTimeoutEnabled: true,
	})
	if err := st.client.Ping(ctx).Err(); err != nil {
		st.client.Close()
		return nil, fmt.Errorf("redis %s: %w", f.Redis, err)
	}
	// One breaker for everything on this client: when Redis stops
	// answering, every store gives up at once, not each after its own
	// failures.
	br := redisstore.NewBreaker(nil)
	var errs [5]error
	st.sessions, errs[0] = redisstore.NewSessionStore(st.client, &redisstore.SessionStoreOptions{Breaker: br})
	st.events, errs[1] = redisstore.NewEventStore(st.client, &redisstore.EventStoreOptions{Breaker: br})
	st.bus, errs[2] = redisstore.NewBus(st.client, &redisstore.BusOptions{Breaker: br})
	st.tasks, errs[3] = redisstore.NewTaskStore(st.client, &redisstore.TaskStoreOptions{Breaker: br})
	st.claimer, errs[4] = redisstore.NewStateClaimer(st.client, &redisstore.StateClaimerOptions{Breaker: br})
	if err := errors.Join(errs[:]...); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Server sets the key ring, the client request timeout and, with Redis, the bus, the state claimer
// and the task store in o. The tasks' owner key is derived from the
// signing key, so that replicas sharing the key file agree on it.
func (st *State) Server(o *mcp.ServerOptions) {
	if st.clientTimeout != 0 {
		o.ClientRequestTimeout = st.clientTimeout
	}
	if st.Keys != nil {
		o.Keys = st.Keys
	}
	if st.client == nil {
		return
	}
	o.Bus = st.bus
	o.StateClaimer = st.claimer
	if o.Tasks == nil {
		o.Tasks = &mcp.TaskOptions{}
	}
	o.Tasks.Store = st.tasks
	if st.Keys != nil {
		o.Tasks.OwnerKey = []byte(st.Keys.SessionHash("", "mcpkit task owner key", ""))
	}
}

// HTTP sets the session store and the event log in o, with Redis.
// Sessions are rechecked on every request, so that a session deleted
// on one replica gets 404 on the next request to any other (one Redis
// command per request of the handshake era).
func (st *State) HTTP(o *transport.StreamableHTTPOptions) {
	if st.client == nil {
		return
	}
	o.SessionStore = st.sessions
	o.EventStore = st.events
	o.SessionRecheck = -1
}

// Client returns the Redis client, or nil without -redis.
func (st *State) Client() redis.UniversalClient { return st.client }

// Close closes the task store and the Redis client. Close the servers
// using them first.
func (st *State) Close() error {
	if st.client == nil {
		return nil
	}
	var err error
	if st.tasks != nil {
		err = st.tasks.Close()
	}
	return errors.Join(err, st.client.Close())
}
