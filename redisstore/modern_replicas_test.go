package redisstore

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestModernReplicas runs mcptest.ModernReplicas on the Redis bus and
// state claimer of each backend: three replicas serving 2026-07-28 behind
// a round-robin proxy (lists, input rounds across replicas, a key
// rotation, listen hearing another replica's change, plain requests with
// no Redis command, single-use request states).
func TestModernReplicas(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.client(t)
			// A Cluster client's own goroutines start with its first
			// command: before the scenarios' goroutine checks.
			if err := c.Ping(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			prefix := testPrefix()
			mcptest.ModernReplicas(t,
				func(t *testing.T) mcp.Bus {
					bus, err := NewBus(c, &BusOptions{Prefix: prefix, Timeout: testTimeout})
					if err != nil {
						t.Fatal(err)
					}
					return bus
				},
				func(t *testing.T) mcp.StateClaimer {
					claimer, err := NewStateClaimer(c, &StateClaimerOptions{Prefix: prefix, Timeout: testTimeout})
					if err != nil {
						t.Fatal(err)
					}
					return claimer
				})
		})
	}
}
