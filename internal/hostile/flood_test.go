package hostile_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAttackPingFloodAllAnswered writes 100,000 pings to the stdio-server
// example while reading nothing, until its writes stall (the server
// stopped reading) or all are written, then reads: every ping gets
// exactly one answer, a result or an overload refusal. The server used
// to drop refusals once 64 waited, leaving a third of the pings without
// an answer.
func TestAttackPingFloodAllAnswered(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	p := startServer(t)
	if err := p.WriteLine(initialize); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.ReadUntil(`"id":0`, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteLine(initialized); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	finished := make(chan error, 1)
	go func() {
		const chunk = 1000
		var b strings.Builder
		for i := 1; i <= n; {
			b.Reset()
			for j := 0; j < chunk && i <= n; j, i = j+1, i+1 {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(`{"jsonrpc":"2.0","id":`)
				b.WriteString(strconv.Itoa(i))
				b.WriteString(`,"method":"ping"}`)
			}
			if err := p.WriteLine(b.String()); err != nil {
				finished <- err
				return
			}
			written.Store(int64(i - 1))
		}
		finished <- nil
	}()
	// Read nothing until the writes stall or end.
	tick := time.NewTicker(100 * time.Millisecond)
	last := int64(-1)
wait:
	for {
		select {
		case err := <-finished:
			if err != nil {
				t.Fatal(err)
			}
			finished <- nil
			break wait
		case <-tick.C:
			if now := written.Load(); now != last {
				last = now
				continue
			}
			break wait
		}
	}
	tick.Stop()
	stalledAt := written.Load()
	counts := make([]uint8, n+1)
	refused := 0
	for range n {
		line, err := p.ReadLine(30 * time.Second)
		if err != nil {
			t.Fatalf("after %d answers: %v", countAnswered(counts), err)
		}
		var m message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		id, err := strconv.Atoi(string(m.ID))
		if err != nil || id < 1 || id > n {
			t.Fatalf("answer %q", line)
		}
		counts[id]++
		if m.Error != nil {
			refused++
		}
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= n; id++ {
		if counts[id] != 1 {
			t.Fatalf("ping %d answered %d times", id, counts[id])
		}
	}
	// Nothing more: the next answer is to the next request.
	if err := p.WriteLine(`{"jsonrpc":"2.0","id":"last","method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	if line, err := p.ReadLine(30 * time.Second); err != nil || !strings.Contains(line, `"id":"last"`) {
		t.Fatalf("after the flood: %q, %v; want the last ping's answer", line, err)
	}
	t.Logf("%d pings, %d written before the client read, all answered once (%d refused)", n, stalledAt, refused)
}

func countAnswered(counts []uint8) int {
	k := 0
	for _, c := range counts {
		if c > 0 {
			k++
		}
	}
	return k
}
