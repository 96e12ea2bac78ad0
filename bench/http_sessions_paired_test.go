package bench

import (
	"context"
	"testing"
)

// Blocks of BenchmarkHTTPSessionsPaired, in sessions: about 50 ms each.
const (
	setupPairedBlock = 400
	openPairedBlock  = 800
)

// BenchmarkHTTPSessionsPaired measures sessions set up and sessions opened
// by a target against a base in one run: both servers up in this process,
// the two sides taking turns in blocks of sessions (the side going first
// alternating), until each did b.N. Single runs of HTTPSessionSetup and
// HTTPSessionOpen drift by more than the gaps they are read for; blocks
// taken in turns see the same machine.
//
//   - setup/<target>: as HTTPSessionSetup (one session after another:
//     connect, tools/list, close), against the floor.
//   - open/<target>: as HTTPSessionOpen (sessionOpeners goroutines
//     opening and closing sessions), against mcp-go's default client.
//
// Each side reports sessions/s and the process's CPU time a session
// (client and server; base- prefixed for the base), and the ratios
// sessions/base and cpu/base.
func BenchmarkHTTPSessionsPaired(b *testing.B) {
	floor, mcpkit, mcpgo := httpTargets[0], httpTargets[1], httpTargets[3]
	for _, w := range []struct {
		name    string
		base    httpTarget
		targets []httpTarget
		block   int
		run     func(context.Context, httpTarget, *httpServer, int) error
	}{
		{"setup", floor, []httpTarget{mcpkitNoStream, mcpkit}, setupPairedBlock, setupSessions},
		{"open", mcpgo, []httpTarget{mcpkit, mcpkitNoStream}, openPairedBlock, openSessions},
	} {
		for _, t := range w.targets {
			b.Run(w.name+"/"+t.name, func(b *testing.B) {
				if _, ok := processCPU(); !ok {
					b.Skip("no process CPU time on this system")
				}
				ctx := context.Background()
				var sides [2]*pairedSide
				for i, target := range []httpTarget{w.base, t} {
					s := startHTTP(b, target)
					sides[i] = &pairedSide{name: target.name, run: func(n int) error {
						return w.run(ctx, target, s, n)
					}}
					if err := sides[i].run(1); err != nil { // warm the connections
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				alternate(b, sides, w.block)
				b.StopTimer()
				for i, sd := range sides {
					prefix := [2]string{"base-", ""}[i]
					b.ReportMetric(float64(sd.calls)/sd.wall.Seconds(), prefix+"sessions/s")
					b.ReportMetric(float64(sd.cpu.Microseconds())/float64(sd.calls), prefix+"cpu-µs/session")
				}
				f, m := sides[0], sides[1]
				b.ReportMetric((float64(m.calls)/m.wall.Seconds())/(float64(f.calls)/f.wall.Seconds()), "sessions/base")
				if f.cpu > 0 {
					b.ReportMetric((float64(m.cpu)/float64(m.calls))/(float64(f.cpu)/float64(f.calls)), "cpu/base")
				}
			})
		}
	}
}
