package transport_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/transport"
)

// A stream's log is replayed and then followed while its writer still
// appends to it, as a Streamable HTTP handler does for a client that
// resumes (Last-Event-ID) a stream another handler writes. Tail waits
// for the next events when there are none yet.
func ExampleMemoryEventStore_Tail() {
	store := transport.NewMemoryEventStore(nil)
	ctx := context.Background()
	const session, stream = "session-1", "s1"
	last := store.StreamStart(session, stream) // the priming event's ID
	if _, err := store.Write(ctx, session, stream, transport.LogEvent{Seq: 1, Data: []byte("progress")}); err != nil {
		log.Fatal(err)
	}
	written := make(chan error, 1)
	go func() { // the writer, still at work
		_, err := store.Write(ctx, session, stream, transport.LogEvent{Seq: 2, Data: []byte("result"), End: true})
		written <- err
	}()
	for {
		batch, err := store.Tail(ctx, session, last)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range batch.Events {
			fmt.Printf("%s\n", e.Data)
			last = e.ID
		}
		if batch.Ended {
			break
		}
	}
	if err := <-written; err != nil {
		log.Fatal(err)
	}
	// Output:
	// progress
	// result
}
