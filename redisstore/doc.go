// Package redisstore keeps mcpkit server state in Redis, so that several
// replicas of one server behind a balancer serve any request. It is a
// module of its own (github.com/mcpkit/mcpkit/redisstore) so that the
// core module never depends on a Redis client.
//
// It holds the task store: [NewTaskStore] returns an
// [mcp.TaskStore] (and [mcp.TaskWatcher]) that replicas share through
// [mcp.TaskOptions].Store, so that a task created on one replica is read,
// updated and cancelled on any other. It passes mcptest.TaskStoreSuite.
// And the event log: [NewEventStore] returns a [transport.EventLog] for
// transport.StreamableHTTPOptions.EventStore, a Redis Stream per session
// holding its SSE streams, which any replica replays and follows while
// another writes them;
// it passes mcptest.EventStoreSuite. Its keys, bounds and costs are in
// docs/SCALING.md ("Event log") and on [EventStore]. And the session
// store: [NewSessionStore] returns a [transport.SessionStore] for
// transport.StreamableHTTPOptions.SessionStore, so that any replica serves
// any session of the handshake era, with admission exact across replicas;
// it passes mcptest.SessionStoreSuite (keys and costs on [SessionStore],
// design in docs/SCALING.md, "Sessions").
// [NewStateClaimer] makes 2026-07-28 request states single-use across the
// replicas (see [mcp.ServerOptions].StateClaimer), one SET NX PX each.
// [NewBus] returns an [mcp.Bus] on Pub/Sub for [mcp.ServerOptions].Bus,
// which carries list changes and resource updates between the replicas
// (see [Bus]); it passes mcptest.BusSuite. All under the same prefix.
//
// # Deployments
//
// The store takes a [redis.UniversalClient]: a standalone server, a
// Sentinel-managed primary (failover client) or a Cluster (its tests run
// on a 3-node one). Every script touches the keys of one hash slot: those
// of one owner, or the store-wide bounds; the owner scripts also delete
// expired task keys of that slot they do not declare, which Redis Cluster
// allows for scripts without flags. Give the client ContextTimeoutEnabled, so that the
// per-operation Timeout is honoured, and run Redis with
// maxmemory-policy noeviction: an evicted record is a lost task.
//
// # Keys
//
// With the default prefix "mcpkit:", for a task ID id of owner key o,
// whose base64url encoding (never the raw key) goes in the hash tag:
//
//	mcpkit:{o<owner>}:task:<id>  hash: v (the version), rec (the record as JSON)
//	mcpkit:{o<owner>}:order      sorted set of "<created>:<id>", by creation then ID (List)
//	mcpkit:{o<owner>}:exp        the same members by expiry (ms)
//	mcpkit:{o<owner>}:run        the unfinished ones by lease expiry (ms)
//	mcpkit:{tasks}:exp           sorted set: every ID by expiry (MaxTasks)
//	mcpkit:{tasks}:meta          hash: ID to "<version> <payload bytes>"
//	mcpkit:{tasks}:bytes         the payload total (MaxPayloadBytes)
//	mcpkit:tasks:changed         the Pub/Sub channel of changes (task IDs)
//	mcpkit:bus                   the Pub/Sub channel of the Bus
//
// Records are the versioned JSON of [mcp.TaskRecord] (its MarshalJSON),
// so members a newer version adds survive an older one. IDs are checked
// ([mcp.TaskRecord] IDs: letters, digits, '-' and '_', at most 256 bytes)
// and owner keys bounded ([MaxOwnerBytes]) before any key is built; no
// operation scans keys. Create, Update (compare and swap on the version)
// and Delete are Lua scripts (EVALSHA, with EVAL when Redis lost the
// script).
//
// # Time and bounds
//
// Expiry follows TaskStoreOptions.Now: an ended task is gone once its TTL
// has passed since its end, one whose runner's lease expired reads as
// failed ("server restarted") and then expires as ended ones do, and a
// task running without a lease never expires. Every key gets a Redis TTL
// from the latest expiry of what it holds (none while a task runs without
// a lease), and the scripts drop expired entries as they go, so Redis
// memory is reclaimed without a reaper goroutine.
//
// The bounds are those of [mcp.TaskStoreOptions]: MaxTasks and
// MaxPayloadBytes store-wide, kept in the {tasks} slot (every Create, and
// an Update that grows a task's payload, goes through it: one slot's
// throughput bounds task creation), MaxUnfinishedPerOwner per owner. At a
// bound the store refuses with an [*mcp.TaskLimitError] and evicts
// nothing. A process that dies between a task's admission and its write
// leaves the admission to count until the expiry it was given.
//
// Every change of a task is announced on one channel that each store
// subscribes to, so Pub/Sub traffic grows with the changes times the
// replicas, whether or not a replica watches the task.
//
// Each Redis round trip is bounded by Timeout (250 ms by default). Get
// takes one (two when it settles a task), Create two, Update two, three
// when the task's expiry or payload changes (a lease renewed, the end) and
// four when its payload grows, Delete three. A
// Watch holds no connection of its own: the store has one subscription,
// and rereads the task every WatchRecheck in case an announcement was
// lost while go-redis resubscribed.
package redisstore
