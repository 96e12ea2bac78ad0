package mcptest_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

func TestBusSuiteMemory(t *testing.T) {
	mcptest.BusSuite(t, func(*testing.T) mcp.Bus { return &mcp.MemoryBus{} })
}
