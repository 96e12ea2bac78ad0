package mcptest_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

func TestBusSuiteMemory(t *testing.T) {
	mcptest.BusSuite(t, func(*testing.T) mcp.Bus { return &mcp.MemoryBus{} })
}

// broadcastOnly hides the PublishTo of the bus it wraps.
type broadcastOnly struct{ mcp.Bus }

// TestBusSuiteBroadcastOnly: a bus that cannot address replicas passes
// the suite, whose addressed part it skips.
func TestBusSuiteBroadcastOnly(t *testing.T) {
	mcptest.BusSuite(t, func(*testing.T) mcp.Bus { return broadcastOnly{&mcp.MemoryBus{}} })
}
