package mcptest

import (
	"testing"

	"github.com/mcpkit/mcpkit/transport"
)

// TestEventStoreSuiteMemory runs the event store suite on the in-memory
// store.
func TestEventStoreSuiteMemory(t *testing.T) {
	EventStoreSuite(t, func(t *testing.T, opts EventStoreSuiteOptions) (transport.EventLog, func()) {
		o := &transport.MemoryEventStoreOptions{MaxTails: opts.MaxTails}
		if opts.Retain > 0 {
			o.MaxBytes = opts.Retain * EventStoreSuiteEventBytes
		}
		return transport.NewMemoryEventStore(o), nil
	})
}
