package mcp_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
)

// TestBusReplicasMemory runs the scenarios of messages for one session
// across three replicas on a memory session store and a MemoryBus.
func TestBusReplicasMemory(t *testing.T) {
	mcptest.BusReplicas(t,
		func(*testing.T) transport.SessionStore { return transport.NewMemorySessionStore(nil) },
		func(*testing.T) mcp.Bus { return &mcp.MemoryBus{} })
}
