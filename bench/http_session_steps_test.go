package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// sessionSteps names the four exchanges of a session of
// BenchmarkHTTPSessionSetup, in order.
var sessionSteps = [4]string{"init", "initialized", "list", "delete"}

// BenchmarkHTTPSessionSteps splits the sessions of
// BenchmarkHTTPSessionSetup (one after another: initialize,
// notifications/initialized, tools/list, DELETE) into their four HTTP
// exchanges, timed where the server sees them, for the targets that make
// no other exchange (no GET stream). For each exchange it reports the
// median time in the server's handler (<step>-µs) and the median time
// from the end of the handler of the exchange before to the start of this
// one's (before-<step>-µs): the client's work and net/http's and the
// kernel's on both sides; before-init also holds the end of the session
// before and the construction of the next session's client. Medians say
// where the typical session spends its time; sessions/s, against the sum
// of the medians, says what the slow sessions add (the collector's
// pauses and the like). Where BenchmarkHTTPSessionSetup shows a gap
// between two targets, this says in which exchange and on which side it
// is.
func BenchmarkHTTPSessionSteps(b *testing.B) {
	for _, t := range []httpTarget{httpTargets[0], mcpkitNoStream} {
		b.Run(t.name, func(b *testing.B) {
			rec := &stepRecorder{}
			s := startHTTPWrapped(b, t, rec.wrap)
			ctx := context.Background()
			if err := setupSessions(ctx, t, s, 1); err != nil { // warm the connections
				b.Fatal(err)
			}
			rec.reset(b.N)
			b.ResetTimer()
			if err := setupSessions(ctx, t, s, b.N); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if sec := b.Elapsed().Seconds(); sec > 0 {
				b.ReportMetric(float64(b.N)/sec, "sessions/s")
			}
			in, before, err := rec.medians(b.N)
			if err != nil {
				b.Fatal(err)
			}
			for i, step := range sessionSteps {
				b.ReportMetric(in[i], step+"-µs")
				b.ReportMetric(before[i], "before-"+step+"-µs")
			}
		})
	}
}

// stepRecorder records when each request's handler started and ended.
type stepRecorder struct {
	mu    sync.Mutex
	marks []time.Time // start and end of each exchange, in order
}

// wrap returns h recording each request's start and end.
func (r *stepRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, req)
		end := time.Now()
		r.mu.Lock()
		r.marks = append(r.marks, start, end)
		r.mu.Unlock()
	})
}

// reset forgets what was recorded and makes room for n sessions.
func (r *stepRecorder) reset(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = make([]time.Time, 0, 2*len(sessionSteps)*n)
}

// medians returns, for n sessions of four exchanges each, the median time
// in the handler of each step and the median time before it, in µs. The
// first session has no time before its initialize: that median is over
// the others.
func (r *stepRecorder) medians(n int) (in, before [4]float64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if got, want := len(r.marks), 2*len(sessionSteps)*n; got != want {
		return in, before, &stepCountError{got: got / 2, want: want / 2}
	}
	var ins, befores [4][]time.Duration
	for i := 0; i < len(r.marks); i += 2 {
		step := i / 2 % len(sessionSteps)
		ins[step] = append(ins[step], r.marks[i+1].Sub(r.marks[i]))
		if i > 0 {
			befores[step] = append(befores[step], r.marks[i].Sub(r.marks[i-1]))
		}
	}
	for i := range sessionSteps {
		in[i] = medianMicros(ins[i])
		if len(befores[i]) > 0 { // one session has none before its initialize
			before[i] = medianMicros(befores[i])
		}
	}
	return in, before, nil
}

// stepCountError reports sessions that made other exchanges than the four
// of BenchmarkHTTPSessionSteps.
type stepCountError struct{ got, want int }

func (e *stepCountError) Error() string {
	return fmt.Sprintf("the server saw %d exchanges, want %d (four a session)", e.got, e.want)
}
