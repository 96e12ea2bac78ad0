package mcptest

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// TestEventStoreSuiteMemory runs the event store suite on the in-memory
// store, and checks that no goroutine of it (the suite's tails) outlives
// it.
func TestEventStoreSuiteMemory(t *testing.T) {
	CheckGoroutines(t, func(context.Context) {
		EventStoreSuite(t, func(t *testing.T, opts EventStoreSuiteOptions) (transport.EventLog, func()) {
			o := &transport.MemoryEventStoreOptions{MaxTails: opts.MaxTails}
			if opts.Retain > 0 {
				o.MaxBytes = opts.Retain * EventStoreSuiteEventBytes
			}
			return transport.NewMemoryEventStore(o), nil
		})
	})
}
