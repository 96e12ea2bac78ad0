package mcp

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Single-use request states. A requestState verifies wherever the key
// ring does, as often as the client sends it, until it expires: a client
// (or whoever saw its traffic) may send a retry twice, and each runs the
// handler with the same answers. A server for which a state must be
// consumed at most once, as the 2026-07-28 revision asks of those, sets
// [ServerOptions.StateClaimer]: each state carries a unique ID, and a
// retry runs only if it is the first to claim its state's ID. Replicas
// must share the claimer (redisstore has one on Redis).

// A StateClaimer records the request states used, for single-use
// request states (see [ServerOptions.StateClaimer]).
type StateClaimer interface {
	// Claim records the state of the given ID as used until the given
	// time, and reports whether it was the first to: false means the
	// state was used already. An error refuses the retry whatever the
	// boolean says (the server fails closed); [ErrStateClaimsFull],
	// wrapped, says the claimer is at its bound. Claim returns within
	// the context's deadline.
	Claim(ctx context.Context, id string, until time.Time) (bool, error)
}

// ErrStateClaimsFull is the error a [StateClaimer] returns, wrapped, when
// it holds as many claims as it may: the retry is refused (the server
// answers -32000, server overloaded), and no claim is dropped to make
// room, which would let a replay through.
var ErrStateClaimsFull = errors.New("mcp: too many request states claimed")

// DefaultMaxStateClaims is the default of
// MemoryStateClaimerOptions.MaxClaims.
const DefaultMaxStateClaims = 100_000

// maxStateIDBytes bounds the IDs a claimer accepts; the server's are 22
// bytes.
const maxStateIDBytes = 128

// stateClaimSkew is how long a claim outlives its state's expiry, so that
// a replica whose clock lags the claimer's still finds the claim while it
// takes the state for valid.
const stateClaimSkew = time.Minute

// MemoryStateClaimerOptions configures a [MemoryStateClaimer]. The zero
// value is usable.
type MemoryStateClaimerOptions struct {
	// MaxClaims bounds the claims held at once; each is dropped when its
	// state expires. At the bound, Claim refuses with
	// [ErrStateClaimsFull]. Zero means DefaultMaxStateClaims.
	MaxClaims int
	// Now returns the current time (time.Now); tests give a fake clock.
	Now func() time.Time
}

// MemoryStateClaimer is a [StateClaimer] in this process's memory: for
// one replica, or for replicas behind a balancer that sends every request
// of a client to one of them. It holds at most MaxClaims claims, each
// until its state expires. It is safe for concurrent use.
type MemoryStateClaimer struct {
	max int
	now func() time.Time

	mu     sync.Mutex
	claims map[string]time.Time
	byEnd  claimHeap
}

// NewMemoryStateClaimer returns an empty claimer. opts may be nil.
func NewMemoryStateClaimer(opts *MemoryStateClaimerOptions) *MemoryStateClaimer {
	c := &MemoryStateClaimer{max: DefaultMaxStateClaims, now: time.Now, claims: make(map[string]time.Time)}
	if opts != nil {
		if opts.MaxClaims > 0 {
			c.max = opts.MaxClaims
		}
		if opts.Now != nil {
			c.now = opts.Now
		}
	}
	return c
}

// Claim implements [StateClaimer].
func (c *MemoryStateClaimer) Claim(_ context.Context, id string, until time.Time) (bool, error) {
	if id == "" || len(id) > maxStateIDBytes {
		return false, fmt.Errorf("mcp: state ID of %d bytes", len(id))
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.byEnd) > 0 && !c.byEnd[0].until.After(now) {
		e := heap.Pop(&c.byEnd).(claim)
		delete(c.claims, e.id)
	}
	if _, ok := c.claims[id]; ok {
		return false, nil
	}
	if !until.After(now) {
		// Expired already: the state is refused before it is claimed,
		// and a claim would go at once.
		return true, nil
	}
	if len(c.claims) >= c.max {
		return false, fmt.Errorf("%w (%d)", ErrStateClaimsFull, c.max)
	}
	c.claims[id] = until
	heap.Push(&c.byEnd, claim{id: id, until: until})
	return true, nil
}

// Len returns the number of claims held.
func (c *MemoryStateClaimer) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.claims)
}

type claim struct {
	id    string
	until time.Time
}

// claimHeap orders claims by their end, the soonest first.
type claimHeap []claim

func (h claimHeap) Len() int           { return len(h) }
func (h claimHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h claimHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *claimHeap) Push(x any)        { *h = append(*h, x.(claim)) }
func (h *claimHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// claimState claims a verified request state when the server's states
// are single use: a state used already is refused (-32602), and so is
// any retry when the claimer fails (-32000 at its bound, -32603
// otherwise), as a replay cannot be ruled out.
func (s *Server) claimState(ctx context.Context, st *requestState) error {
	c := s.states.claimer
	if c == nil {
		return nil
	}
	if st.ID == "" {
		return errBadState("has no ID, and this server's states are single use")
	}
	ok, err := c.Claim(ctx, st.ID, time.Unix(st.Expires, 0).Add(time.Second+stateClaimSkew))
	switch {
	case errors.Is(err, ErrStateClaimsFull):
		s.logger.Warn("mcp: request state refused: the claimer is full", "err", err)
		return &jsonrpc.Error{Code: jsonrpc.CodeServerOverloaded, Message: "server overloaded: too many request states in use; retry the request from its start later"}
	case err != nil:
		s.logger.Error("mcp: request state refused: the single-use check failed", "err", err)
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: could not check that the requestState is used once"}
	case !ok:
		return errBadState("was used already (this server's request states are single use)")
	}
	return nil
}
