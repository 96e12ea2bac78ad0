package redisstore

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is wrapped by the errors of the operations that Redis
// failed: it did not answer within Timeout, the connection broke or could
// not be made, it refused the command for want of memory (OOM under
// maxmemory-policy noeviction) or because it is loading, read-only or
// down (Cluster, Sentinel), or the store's [Breaker] is open and the
// operation was not tried. errors.Is(err, ErrUnavailable) tells such an
// error from an answer (not found, a conflict, a bound reached): the
// transport answers 503 with Retry-After, never 404, for a session
// record it could not read. The error also wraps its cause
// (context.DeadlineExceeded, a net.Error, the Redis error, or
// ErrBreakerOpen).
var ErrUnavailable = errors.New("redisstore: Redis unavailable")

// ErrBreakerOpen is the cause of the errors of operations that a store's
// [Breaker] refused without trying them; such errors also wrap
// [ErrUnavailable].
var ErrBreakerOpen = errors.New("redisstore: circuit breaker open after consecutive Redis failures")

// Defaults of [BreakerOptions].
const (
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = 500 * time.Millisecond
)

// BreakerOptions configures a [Breaker]. The zero value of each field
// means its default.
type BreakerOptions struct {
	// Failures is the number of consecutive failed operations (each
	// marked with ErrUnavailable, the breaker's refusals excepted) that
	// open the breaker (DefaultBreakerFailures).
	Failures int
	// Cooldown is how long an open breaker refuses operations before it
	// lets one through to probe Redis (DefaultBreakerCooldown). The probe
	// closes the breaker if it succeeds, and opens it for another
	// Cooldown if it fails; meanwhile every other operation is refused.
	Cooldown time.Duration
}

// Breaker is a circuit breaker on the Redis operations of the stores that
// share it: after Failures consecutive operations failed (timeouts, broken
// or refused connections, Redis refusing writes), it refuses operations at
// once with [ErrBreakerOpen] (wrapping [ErrUnavailable]) instead of letting
// each wait up to its Timeout and hold a pooled connection; every Cooldown
// it lets one operation through, and the first that succeeds closes it.
// So while Redis is down a request spends no time on it, and once Redis is
// back the stores use it again within Cooldown and a round trip, with no
// restart. With the defaults (Timeout 250 ms, Failures 3), operations in
// a row wait on a Redis that does not answer 750 ms at most before the
// breaker answers for them, and a probe waits one Timeout.
//
// Give the stores on one client one Breaker (each store's Options have a
// Breaker field), so that they trip and recover together; a store given
// none makes its own. A failure of the caller's (its context cancelled) or
// an answer of Redis that is not a failure (a key not found, a script's
// refusal) counts neither way. It is safe for concurrent use.
type Breaker struct {
	failures int32
	cooldown int64 // ns

	fails     atomic.Int32 // consecutive failures
	openUntil atomic.Int64 // Unix ns until which operations are refused; 0: closed
	probing   atomic.Bool  // an operation is probing an open breaker
}

// NewBreaker returns a closed breaker. Nil opts means the defaults.
func NewBreaker(opts *BreakerOptions) *Breaker {
	var o BreakerOptions
	if opts != nil {
		o = *opts
	}
	return &Breaker{
		failures: int32(cmp.Or(max(o.Failures, 0), DefaultBreakerFailures)),
		cooldown: int64(cmp.Or(max(o.Cooldown, 0), DefaultBreakerCooldown)),
	}
}

// Open reports whether the breaker refuses operations now (it is open and
// its Cooldown has not passed, or a probe is under way).
func (b *Breaker) Open() bool {
	u := b.openUntil.Load()
	return u != 0 && (time.Now().UnixNano() < u || b.probing.Load())
}

// allow reports whether an operation may be tried, and whether it is the
// probe of an open breaker.
func (b *Breaker) allow() (ok, probe bool) {
	u := b.openUntil.Load()
	if u == 0 {
		return true, false
	}
	if time.Now().UnixNano() < u || !b.probing.CompareAndSwap(false, true) {
		return false, false
	}
	return true, true
}

// outcome is what an operation tells the breaker.
type outcome int

const (
	succeeded outcome = iota
	failed
	neutral // the caller's failure, or an operation refused by the breaker
)

// record counts the outcome of an operation that allow let through.
func (b *Breaker) record(o outcome, probe bool) {
	switch o {
	case succeeded:
		if b.fails.Load() != 0 {
			b.fails.Store(0)
		}
		if b.openUntil.Load() != 0 {
			b.openUntil.Store(0)
		}
	case failed:
		if n := b.fails.Add(1); probe || n >= b.failures {
			b.openUntil.Store(time.Now().UnixNano() + b.cooldown)
		}
	}
	if probe {
		b.probing.Store(false)
	}
}

// bounds bounds the Redis operations of a store: the deadline of each and
// the breaker they go through.
type bounds struct {
	timeout time.Duration
	breaker *Breaker
}

// checkCommon checks what every constructor takes: a client, and a key
// prefix (DefaultPrefix when empty; no brace, which would change the hash
// slot of every key) and timeout (DefaultTimeout when not positive),
// which it resolves in place. It returns the bounds of the store's
// operations: the timeout and the breaker (a new one when br is nil).
func checkCommon(client redis.UniversalClient, prefix *string, timeout *time.Duration, br *Breaker) (bounds, error) {
	if client == nil {
		return bounds{}, errors.New("redisstore: nil client")
	}
	*prefix = cmp.Or(*prefix, DefaultPrefix)
	if strings.ContainsAny(*prefix, "{}") {
		return bounds{}, fmt.Errorf("redisstore: prefix %q contains a brace", *prefix)
	}
	*timeout = cmp.Or(max(*timeout, 0), DefaultTimeout)
	if br == nil {
		br = NewBreaker(nil)
	}
	return bounds{timeout: *timeout, breaker: br}, nil
}

// call is one Redis operation under way: see bounds.op.
type call struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	b      *Breaker
	probe  bool
	refuse bool // the breaker refused it: ctx is done already
}

// op starts one Redis operation (one round trip, or a script and its
// EVAL fallback): a context with the bounds' timeout, refused at once
// (done already) when the breaker is open. The caller runs the
// operation with c.ctx and hands its error to c.end.
func (bd *bounds) op(ctx context.Context) call { return bd.opWithin(ctx, bd.timeout) }

// opWithin is op with a deadline of d: a blocking read's.
func (bd *bounds) opWithin(ctx context.Context, d time.Duration) call {
	ok, probe := bd.breaker.allow()
	if !ok {
		octx, cancel := context.WithCancelCause(ctx)
		cancel(ErrBreakerOpen)
		return call{parent: ctx, ctx: octx, cancel: func() {}, b: bd.breaker, refuse: true}
	}
	octx, cancel := context.WithTimeout(ctx, d)
	return call{parent: ctx, ctx: octx, cancel: cancel, b: bd.breaker, probe: probe}
}

// end ends the operation with the error it met: it releases the context,
// tells the breaker, and returns err, marked with ErrUnavailable when it
// is a failure of Redis (or ErrBreakerOpen when the breaker refused the
// operation).
func (c call) end(err error) error {
	c.cancel()
	if c.refuse {
		return fmt.Errorf("%w: %w", ErrUnavailable, ErrBreakerOpen)
	}
	o := classify(c.parent, err)
	c.b.record(o, c.probe)
	if o == failed || err != nil && isUnavailableReply(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// read runs fn, an idempotent read, as one operation; after a failure of
// the connection (not a timeout: the deadline is the operation's) it runs
// it once more within the same deadline.
func (bd *bounds) read(ctx context.Context, fn func(ctx context.Context) error) error {
	c := bd.op(ctx)
	if c.refuse {
		return c.end(nil)
	}
	err := fn(c.ctx)
	if err != nil && retryable(c.parent, c.ctx, err) {
		err = fn(c.ctx)
	}
	return c.end(err)
}

// classify tells whether err, the error of an operation of the caller's
// context parent, is a failure of Redis.
func classify(parent context.Context, err error) outcome {
	switch {
	case err == nil, errors.Is(err, redis.Nil):
		return succeeded
	case parent.Err() != nil:
		return neutral // the caller gave up, whatever Redis did
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return failed // the operation's own deadline
	case isConnError(err):
		return failed
	case isUnavailableReply(err):
		// Redis answered: it is up. Out of memory, it still serves
		// reads; loading or read-only, it will come back on its own.
		return neutral
	}
	var re redis.Error
	if errors.As(err, &re) {
		return succeeded // an answer: WRONGTYPE, a script error...
	}
	return failed
}

// isConnError reports whether err is a failure to reach Redis or of the
// connection to it.
func isConnError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout)
}

// isUnavailableReply reports whether err is Redis' refusal of a command
// for a state of the server, not of the data: out of memory, loading,
// read-only, a Cluster or Sentinel primary down.
func isUnavailableReply(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	s := re.Error()
	for _, p := range []string{"OOM ", "LOADING ", "READONLY ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "NOREPLICAS ", "BUSY "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// retryable reports whether a read that failed with err may run again:
// the connection broke or could not be made, and neither the caller nor
// the operation's deadline ended.
func retryable(parent, octx context.Context, err error) bool {
	if parent.Err() != nil || octx.Err() != nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return isConnError(err) && !errors.Is(err, redis.ErrClosed)
}

// noRetry is a command go-redis never sends twice: a write whose reply
// was lost may have been applied, and a second run would apply it again
// (or, for a claim, find its own claim).
type noRetry struct{ *redis.Cmd }

// NoRetry implements redis.Cmder.
func (noRetry) NoRetry() bool { return true }

// script is a Lua script run with EVALSHA, and EVAL when Redis does not
// have it; neither is retried (see noRetry), whatever the client's
// MaxRetries.
type script struct {
	src, hash string
}

// newScript returns the script of src.
func newScript(src string) *script {
	h := sha1.Sum([]byte(src))
	return &script{src: src, hash: hex.EncodeToString(h[:])}
}

// Run runs the script on the keys with args, as redis.Script's Run does.
func (s *script) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	cmd := s.eval(ctx, c, "evalsha", s.hash, keys, args)
	if err := cmd.Err(); err != nil && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")) {
		return s.eval(ctx, c, "eval", s.src, keys, args)
	}
	return cmd
}

// RunGrouped is Run through a group commit: the script's EVALSHA goes in
// the round trip of g that carries the other callers' operations, as one
// operation of bd; when Redis does not have the script, it runs again on
// its own with EVAL. It returns the script's reply, with the error of the
// operation.
func (s *script) RunGrouped(ctx context.Context, g *groupCommit, bd *bounds, client redis.UniversalClient, keys []string, args ...any) (*redis.Cmd, error) {
	cmd := s.cmd(ctx, "evalsha", s.hash, keys, args)
	op := &pendingOp{cmds: []redis.Cmder{noRetry{cmd}}}
	g.do(ctx, bd, client, op)
	if err := op.err; err != nil && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")) {
		c := bd.op(ctx)
		cmd = s.eval(c.ctx, client, "eval", s.src, keys, args)
		return cmd, c.end(cmd.Err())
	}
	return cmd, op.err
}

// cmd returns the command that runs the script by name (evalsha or
// eval) with payload (its hash or its source).
func (s *script) cmd(ctx context.Context, name, payload string, keys []string, args []any) *redis.Cmd {
	a := make([]any, 3, 3+len(keys)+len(args))
	a[0], a[1], a[2] = name, payload, len(keys)
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	cmd := redis.NewCmd(ctx, a...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}

func (s *script) eval(ctx context.Context, c redis.Scripter, name, payload string, keys []string, args []any) *redis.Cmd {
	cmd := s.cmd(ctx, name, payload, keys, args)
	p, ok := c.(processor)
	if !ok {
		// A Scripter without Process (none of go-redis' clients):
		// go-redis' own path, retries and all.
		if name == "eval" {
			return c.Eval(ctx, payload, keys, args...)
		}
		return c.EvalSha(ctx, payload, keys, args...)
	}
	_ = p.Process(ctx, noRetry{cmd})
	return cmd
}

// processor is a client of go-redis: it runs commands.
type processor interface {
	Process(context.Context, redis.Cmder) error
}

// process runs one command on c that go-redis must not retry.
func process(ctx context.Context, c processor, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	_ = c.Process(ctx, noRetry{cmd})
	return cmd
}

// maxGroupCommit bounds the operations one round trip of a groupCommit
// carries.
const maxGroupCommit = 128

// groupCommit gathers the writes of concurrent callers into one round
// trip: an operation that finds no round trip under way sends its own,
// with the operations queued meanwhile, and hands the next round trip to
// the first operation waiting, if any, so that each caller sends at most
// one. It starts no goroutine and waits for no timer: an operation alone
// goes at once, and the batching comes from those that arrive while a
// round trip is under way, which saves concurrent callers most of their
// system calls, and Redis most of its reads and replies. The order of the
// operations is kept. The zero value is ready to use.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*pendingOp
	sending bool // a round trip is under way or about to be
}

// pendingOp is one operation of a groupCommit: its commands, sent in one
// pipeline with the others' and never sent twice (go-redis retries no
// pipeline holding a noRetry command), and then its outcome.
type pendingOp struct {
	cmds []redis.Cmder
	done chan struct{} // closed when err is set, or lead is
	lead bool          // the operation is to send the next round trip
	err  error         // the round trip's, or the first of its commands'
}

// do runs op, alone or with others, and sets its outcome; op's commands
// hold their replies. An operation waiting for another's round trip does
// not give up with ctx: its round trip is bounded by the bounds' timeout,
// and what it waits before that by the round trips of the operations
// queued before it (maxGroupCommit each).
func (g *groupCommit) do(ctx context.Context, bd *bounds, client redis.UniversalClient, op *pendingOp) {
	g.mu.Lock()
	g.queue = append(g.queue, op)
	if g.sending {
		op.done = make(chan struct{})
		g.mu.Unlock()
		<-op.done
		if !op.lead {
			return
		}
		g.mu.Lock()
	}
	g.sending = true
	n := min(len(g.queue), maxGroupCommit)
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	sent := false
	defer func() {
		// Even if send panicked (net/http recovers a handler's panic and
		// the server goes on), the others learn their outcome and the next
		// round trip has a sender.
		for _, o := range batch {
			if !sent {
				o.err = errAbandoned
			}
			if o != op {
				close(o.done)
			}
		}
		g.mu.Lock()
		if len(g.queue) > 0 {
			next := g.queue[0]
			next.lead = true
			close(next.done)
		} else {
			g.sending = false
		}
		g.mu.Unlock()
	}()
	send(context.WithoutCancel(ctx), bd, client, batch)
	sent = true
}

// errAbandoned is the outcome of the operations of a round trip whose
// sender panicked.
var errAbandoned = errors.New("redisstore: round trip abandoned")

// send sends the commands of batch in one pipeline, as one operation of
// bd, and sets each operation's err.
func send(ctx context.Context, bd *bounds, client redis.UniversalClient, batch []*pendingOp) {
	c := bd.op(ctx)
	_, err := client.Pipelined(c.ctx, func(p redis.Pipeliner) error {
		for _, op := range batch {
			for _, cmd := range op.cmds {
				if err := p.Process(c.ctx, cmd); err != nil {
					return err
				}
			}
		}
		return nil
	})
	err = c.end(err)
	for _, op := range batch {
		for _, cmd := range op.cmds {
			e := cmd.Err()
			if e == nil || errors.Is(e, redis.Nil) {
				continue
			}
			var re redis.Error
			switch {
			case errors.As(e, &re) && isUnavailableReply(e):
				op.err = fmt.Errorf("%w: %w", ErrUnavailable, e)
			case errors.As(e, &re):
				op.err = e // a reply of its own: a script's error, WRONGTYPE...
			case err != nil:
				op.err = err // the round trip's failure, as bd's breaker saw it
			default:
				op.err = e
			}
			break
		}
	}
}
