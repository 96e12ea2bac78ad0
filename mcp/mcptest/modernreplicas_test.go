package mcptest_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

// TestModernReplicas runs the suite on the in-memory bus and claimer.
func TestModernReplicas(t *testing.T) {
	mcptest.ModernReplicas(t,
		func(*testing.T) mcp.Bus { return new(mcp.MemoryBus) },
		func(*testing.T) mcp.StateClaimer { return mcp.NewMemoryStateClaimer(nil) })
}
