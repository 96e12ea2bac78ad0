// Command everything-server is the conformance fixture server of
// internal/conformance/everything-server (the same tools, resources,
// prompts, skills and flags) with its state in Redis, so that several
// processes started with the same flags, behind any balancer, serve as
// one server:
//
//	everything-server -redis 127.0.0.1:6379 -keys keys.txt -http 127.0.0.1:3001
//
// -redis ADDR keeps the sessions of the handshake era
// (redisstore.NewSessionStore), the SSE event log (NewEventStore), the
// tasks (NewTaskStore) and the claims of single-use request states
// (NewStateClaimer) in that Redis, and carries list changes and resource
// updates between the replicas (NewBus). Several addresses separated by
// commas name the nodes of a Cluster.
//
// -keys FILE reads the key ring: one hex-encoded key of at least 32 bytes
// per line (make one with openssl rand -hex 32), the first signs, all
// verify. It signs the request states of 2026-07-28 input rounds and the
// session IDs, and derives the tasks' owner key: replicas need the same
// file. Without it each process has a random key of its own, and
// requests spread over replicas are refused.
//
// Other flags, as the core's everything-server: -http ADDR serves
// Streamable HTTP at http://ADDR/mcp (the first line on standard output
// is "listening on http://HOST:PORT/mcp", so ADDR may use port 0);
// without it the server serves one session on stdin and stdout (then only
// the tasks, the state claims and the keys are shared). -v logs debug
// diagnostics to standard error.
//
// Build it in the redisstore module, which keeps the core module free of
// Redis:
//
//	cd redisstore && go build ./cmd/everything-server
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/internal/conformance/everything"
	"github.com/mcpkit/mcpkit/redisstore/cmd/internal/replica"
	"github.com/redis/go-redis/v9"
)

func main() {
	httpAddr := flag.String("http", "", "serve Streamable HTTP at path /mcp on this address (host:port; port 0 picks one) instead of stdio")
	verbose := flag.Bool("v", false, "log debug diagnostics to standard error")
	rf := replica.Register(flag.CommandLine)
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *httpAddr, rf, logger); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "everything-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr string, rf *replica.Flags, logger *slog.Logger) error {
	if rf.Redis != "" && rf.Keys == "" {
		logger.Warn("-redis without -keys: this process signs with a random key that no other replica holds")
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	st, err := replica.Open(octx, rf)
	cancel()
	if err != nil {
		return err
	}
	defer st.Close()
	o := everything.Options{Logger: logger, Server: st.Server, HTTP: st.HTTP}
	if c := st.Client(); c != nil {
		o.Flags = redisFlags{c}
	}
	if httpAddr != "" {
		return everything.ServeHTTP(ctx, httpAddr, os.Stdout, o)
	}
	return everything.ServeStdio(ctx, o)
}

// redisFlags keeps the fixture's flags (whether its dynamic tool and
// prompt are listed) in Redis, so that a trigger called on one replica
// changes the lists of all: a flag is a counter, on when odd, under
// everything:flag:<name>, with no expiry (two keys in all).
type redisFlags struct{ c redis.UniversalClient }

// flagTimeout bounds each Redis round trip of the flags.
const flagTimeout = 250 * time.Millisecond

func (f redisFlags) Flip(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, flagTimeout)
	defer cancel()
	n, err := f.c.Incr(ctx, "everything:flag:"+name).Result()
	return n%2 == 1, err
}

func (f redisFlags) Get(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, flagTimeout)
	defer cancel()
	n, err := f.c.Get(ctx, "everything:flag:"+name).Int64()
	if err == redis.Nil {
		return false, nil
	}
	return n%2 == 1, err
}
