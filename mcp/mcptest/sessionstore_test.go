package mcptest_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// ringIDs returns n session IDs a random key ring mints.
func ringIDs(n int) []string {
	r := mcp.NewRandomKeyRing()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = r.MintSessionID()
	}
	return ids
}

// TestMemorySessionStoreSuite runs the session store suite on the
// transport's memory store.
func TestMemorySessionStoreSuite(t *testing.T) {
	mcptest.SessionStoreSuite(t, func(t *testing.T, clock *mcptest.SessionStoreClock) transport.SessionStore {
		return transport.NewMemorySessionStore(&transport.MemorySessionStoreOptions{Now: clock.Now})
	}, ringIDs)
}

// TestMemorySessionStoreReplicas runs the replica scenarios on the
// transport's memory store.
func TestMemorySessionStoreReplicas(t *testing.T) {
	mcptest.SessionStoreReplicas(t, func(t *testing.T) transport.SessionStore {
		return transport.NewMemorySessionStore(nil)
	})
}
