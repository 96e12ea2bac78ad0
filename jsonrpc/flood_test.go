package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// whenStalled returns a channel closed once finished is closed or progress
// has stopped advancing for a while: a peer that writes without reading
// waits for either before it starts reading. What a test asserts never
// depends on which comes first.
func whenStalled(progress *atomic.Int64, finished <-chan struct{}) <-chan struct{} {
	stalled := make(chan struct{})
	go func() {
		defer close(stalled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-finished:
				return
			case <-tick.C:
				now := progress.Load()
				if now == last {
					return
				}
				last = now
			}
		}
	}()
	return stalled
}

// heapSampler records the peak of runtime.MemStats.HeapInuse until stop
// is called, which returns it.
func heapSampler() (stop func() uint64) {
	var peak atomic.Uint64
	quit, done := make(chan struct{}), make(chan struct{})
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		sample()
		return peak.Load()
	}
}

// parseAnswer reads the id of an answer to a ping, the only kinds of
// line the flood tests expect: a result or an overload refusal. Decoding
// a million answers with the real decoder under the race detector would
// take most of the test's time.
func parseAnswer(line []byte) (id int, refusal, ok bool) {
	const (
		head    = `{"jsonrpc":"2.0","id":`
		result  = `,"result":{}}` + "\n"
		refused = `,"error":{"code":-32000,`
	)
	rest, found := bytes.CutPrefix(line, []byte(head))
	if !found {
		return 0, false, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		id = id*10 + int(rest[i]-'0')
		i++
	}
	switch tail := rest[i:]; {
	case i == 0:
		return 0, false, false
	case string(tail) == result:
		return id, false, true
	case bytes.HasPrefix(tail, []byte(refused)):
		return id, true, true
	}
	return 0, false, false
}

// maxHeap bounds the peak heap the flood tests allow: far below what a
// connection that kept everything it read would hold.
const maxHeap = 128 << 20

// TestConnFloodEveryRequestAnswered floods a Conn with requests from a
// raw peer over a pipe that reads nothing until it can write no more,
// then reads everything: every request gets exactly one answer (results
// or overload refusals), because the Conn stops reading when the answers
// it owes cannot be written, instead of dropping them.
func TestConnFloodEveryRequestAnswered(t *testing.T) {
	tests := []struct {
		name        string
		n           int
		maxInFlight int
		long        bool
	}{
		{"100k", 100_000, 0, false},
		{"100k, 4 in flight", 100_000, 4, false},
		// Mostly refusals, which is where answers used to be lost, and
		// cheaper than handling a million requests under the race
		// detector.
		{"1M, 4 in flight", 1_000_000, 4, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long && testing.Short() {
				t.Skip("long flood skipped with -short")
			}
			checkGoroutines(t)
			runtime.GC()
			stopSampling := heapSampler()
			start := time.Now()
			s, p := newLinePipe(t)
			c := NewConn(s, &ConnOptions{
				MaxInFlight: tt.maxInFlight,
				Handler:     HandlerFunc(func(context.Context, *Request) (any, error) { return nil, nil }),
			})
			c.Start()

			var written atomic.Int64
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				defer p.w.Close() // end of input once everything is sent
				const chunk = 512
				buf := make([]byte, 0, chunk*64)
				for i := 1; i <= tt.n; {
					buf = buf[:0]
					for j := 0; j < chunk && i <= tt.n; j, i = j+1, i+1 {
						buf = append(buf, `{"jsonrpc":"2.0","id":`...)
						buf = strconv.AppendInt(buf, int64(i), 10)
						buf = append(buf, `,"method":"ping"}`+"\n"...)
					}
					if _, err := p.w.Write(buf); err != nil {
						t.Errorf("peer write: %v", err)
						return
					}
					written.Store(int64(i - 1))
				}
			}()
			<-whenStalled(&written, finished)
			stalledAt := written.Load()

			counts := make([]uint8, tt.n+1)
			refused, answers := 0, 0
			for {
				line, err := p.br.ReadSlice('\n')
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("peer read: %v", err)
					}
					break
				}
				id, isRefusal, ok := parseAnswer(line)
				if !ok || id < 1 || id > tt.n {
					t.Fatalf("unexpected answer %q", line)
				}
				counts[id]++
				answers++
				if isRefusal {
					refused++
				}
			}
			<-finished
			c.Wait()
			peak := stopSampling()
			missing, dup := 0, 0
			for id := 1; id <= tt.n; id++ {
				switch counts[id] {
				case 0:
					missing++
				case 1:
				default:
					dup++
				}
			}
			t.Logf("%d requests, %d written before the peer read, %d answers (%d refused), peak HeapInuse %.1f MiB, %v",
				tt.n, stalledAt, answers, refused, float64(peak)/(1<<20), time.Since(start).Round(time.Millisecond))
			if missing != 0 || dup != 0 {
				t.Errorf("%d requests unanswered, %d answered more than once", missing, dup)
			}
			if peak > maxHeap {
				t.Errorf("peak HeapInuse %d MiB, want at most %d MiB", peak>>20, maxHeap>>20)
			}
		})
	}
}

// TestConnFloodNotificationsDelivered floods a Conn whose notification
// handler is stuck with notifications: none is dropped, because reading
// stops while the queue is full; then a request sent after them is
// answered.
func TestConnFloodNotificationsDelivered(t *testing.T) {
	checkGoroutines(t)
	const n = 20_000
	release := make(chan struct{})
	var delivered atomic.Int64
	var once sync.Once
	s, p := newLinePipe(t)
	c := NewConn(s, &ConnOptions{
		Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.IsNotification() {
				once.Do(func() { <-release })
				delivered.Add(1)
			}
			return nil, nil
		}),
	})
	c.Start()
	var written atomic.Int64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for i := range n {
			if _, err := fmt.Fprintf(p.w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", i); err != nil {
				t.Errorf("peer write: %v", err)
				return
			}
			written.Add(1)
		}
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	}()
	<-whenStalled(&written, finished)
	close(release)
	if line, err := p.recv(); err != nil {
		t.Fatalf("no answer to the request after the flood: %v", err)
	} else if want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"; line != want {
		t.Fatalf("answer = %q, want %q", line, want)
	}
	<-finished
	p.w.Close() // end of input: the Conn delivers what it read, then shuts down
	c.Wait()
	if got := delivered.Load(); got != n {
		t.Errorf("%d of %d notifications delivered", got, n)
	}
}
