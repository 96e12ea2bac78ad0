package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/redis/go-redis/v9"
)

// maxStateIDBytes bounds the request-state IDs the claimer builds keys
// from; mcp servers issue 22-byte IDs.
const maxStateIDBytes = 64

// StateClaimerOptions configures a [StateClaimer]. The zero value of
// each field means its default.
type StateClaimerOptions struct {
	// Prefix starts every key of the claimer (DefaultPrefix). It may not
	// contain '{' or '}', which would break the hash tags.
	Prefix string
	// Timeout bounds each Claim's round trip (DefaultTimeout). Give the
	// client ContextTimeoutEnabled so that go-redis honours it.
	Timeout time.Duration
	// Breaker is the circuit breaker of the claimer's operations (see
	// [Breaker]); nil means one of the claimer's own. Give the stores on
	// one client the same.
	Breaker *Breaker
	// Now returns the current time (time.Now), from which the TTL of a
	// claim is computed.
	Now func() time.Time
}

// StateClaimer is an [mcp.StateClaimer] on Redis, for single-use request
// states shared by replicas (mcp.ServerOptions.StateClaimer): each claim
// is one SET NX PX of the key
//
//	<prefix>{r<id>}:used
//
// whose TTL runs to the end the server gives (the state's expiry and a
// margin for clock skew), so the claims take memory for as long as the
// states they record can verify, about 100 bytes each, and no more. The
// ID is checked (base64url, at most 64 bytes) before the key is built. A
// claim is never retried: a reply lost after the SET would make the
// retry see its own claim. Errors (Redis down, the deadline passed)
// refuse the retry: the server fails closed. It is safe for concurrent
// use.
type StateClaimer struct {
	client redis.UniversalClient
	opts   StateClaimerOptions
	bounds bounds
}

var _ mcp.StateClaimer = (*StateClaimer)(nil)

// NewStateClaimer returns a claimer on client, which may be a standalone,
// Sentinel (failover) or Cluster client. Nil opts means the defaults. The
// claimer does not own client.
func NewStateClaimer(client redis.UniversalClient, opts *StateClaimerOptions) (*StateClaimer, error) {
	var o StateClaimerOptions
	if opts != nil {
		o = *opts
	}
	bd, err := checkCommon(client, &o.Prefix, &o.Timeout, o.Breaker)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &StateClaimer{client: client, opts: o, bounds: bd}, nil
}

// validStateID reports whether id may go into a key: 1 to 64 bytes of
// base64url.
func validStateID(id string) bool {
	if id == "" || len(id) > maxStateIDBytes {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// key returns the key of the claim of id, which must be valid.
func (c *StateClaimer) key(id string) string { return c.opts.Prefix + "{r" + id + "}:used" }

// Claim implements [mcp.StateClaimer]: one SET NX PX.
func (c *StateClaimer) Claim(ctx context.Context, id string, until time.Time) (bool, error) {
	if !validStateID(id) {
		return false, fmt.Errorf("redisstore: request state ID of %d bytes is not base64url of at most %d", len(id), maxStateIDBytes)
	}
	ttl := until.Sub(c.opts.Now()).Truncate(time.Millisecond)
	if ttl <= 0 {
		// The state has ended: the server refuses it before it claims,
		// and a claim would go at once.
		return true, nil
	}
	op := c.bounds.op(ctx)
	err := op.end(process(op.ctx, c.client, "set", c.key(id), "1", "nx", "px", ttl.Milliseconds()).Err())
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil // claimed before
	case err != nil:
		return false, fmt.Errorf("redisstore: claiming a request state: %w", err)
	}
	return true, nil
}
