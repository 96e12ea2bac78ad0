package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/redis/go-redis/v9"
)

// The benchmarks of this file make the table of docs/SCALING.md
// ("Performance"): each runs in-memory (the stores of one process, as
// without Redis) and on a private redis-server on loopback (every store
// and the bus on it), and reports, beside ns/op and allocs/op, the Redis
// commands per operation (commands/op: the INFO commandstats delta, a
// script's commands counted one by one, those that set up connections
// left out), the commands the client sent (trips/op: a script, or a
// command of a pipeline, is one), the CPU time redis-server spent
// (redis-cpu-ns/op, from INFO cpu), the CPU time of this process, the
// replicas' and their clients' (cpu-ns/op), and the p99 of an operation's time
// (p99-ns; with 50 callers on 2 cores, mostly their wait for a CPU).

// scaleFleet is n replicas of one server sharing a key ring and either
// in-memory stores and bus (kind "memory") or Redis ones ("redis"): a
// session store (none for "memory" with one replica: sessions live in
// the process, as they do without a store), an event store when events,
// a bus and a state claimer. Tools: "echo" and "count" (progress from
// tokens until it is closed).
type scaleFleet struct {
	b       *testing.B
	redis   *redis.Client // nil for "memory"
	trips   tripCounter   // the commands the client sent (a script is one)
	urls    []string
	servers []*mcp.Server
	http    *http.Client
	tokens  chan int
	ids     atomic.Int64
}

func newScaleFleet(b *testing.B, kind string, n int, events bool) *scaleFleet {
	b.Helper()
	f := &scaleFleet{b: b, tokens: make(chan int)}
	ring := mcp.NewRandomKeyRing()
	opts := transport.StreamableHTTPOptions{MaxSessions: 1 << 20}
	var bus func() mcp.Bus
	var claimer mcp.StateClaimer
	switch kind {
	case "memory":
		if n > 1 {
			opts.SessionStore = transport.NewMemorySessionStore(nil)
		}
		if events {
			opts.EventStore = transport.NewMemoryEventStore(nil)
		}
		mb := &mcp.MemoryBus{}
		bus = func() mcp.Bus { return mb }
		claimer = mcp.NewMemoryStateClaimer(nil)
	case "redis":
		if serverAddr == "" {
			b.Skip("redisstore: no redis-server on PATH")
		}
		f.redis = redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true, PoolSize: 64})
		b.Cleanup(func() { f.redis.Close() })
		f.redis.AddHook(&f.trips)
		prefix, br := testPrefix(), NewBreaker(nil)
		var err error
		if opts.SessionStore, err = NewSessionStore(f.redis, &SessionStoreOptions{Prefix: prefix, Breaker: br}); err != nil {
			b.Fatal(err)
		}
		if events {
			if opts.EventStore, err = NewEventStore(f.redis, &EventStoreOptions{Prefix: prefix, Breaker: br}); err != nil {
				b.Fatal(err)
			}
		}
		bus = func() mcp.Bus {
			bus, err := NewBus(f.redis, &BusOptions{Prefix: prefix, Breaker: br})
			if err != nil {
				b.Fatal(err)
			}
			return bus
		}
		if claimer, err = NewStateClaimer(f.redis, &StateClaimerOptions{Prefix: prefix, Breaker: br}); err != nil {
			b.Fatal(err)
		}
	}
	for range n {
		s := mcp.NewServer(&mcp.Implementation{Name: "scale", Version: "1"}, &mcp.ServerOptions{
			Keys: ring, Bus: bus(), StateClaimer: claimer, ListChangedDelay: -1,
			Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		})
		type in struct {
			X int `json:"x"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (in, error) { return in, nil })
		s.AddTool(&mcp.Tool{Name: "count", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for k := range f.tokens {
				if err := req.ReportProgress(ctx, float64(k), 0, ""); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
		o := opts
		h := mcp.NewStreamableHTTPHandler(s, &o)
		srv := httptest.NewServer(h)
		b.Cleanup(func() {
			h.Close()
			srv.Close()
			s.Close()
		})
		f.servers = append(f.servers, s)
		f.urls = append(f.urls, srv.URL)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 128}
	f.http = &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	return f
}

// post sends body to replica i with the headers kv; it returns the
// status, the session ID header and the body.
func (f *scaleFleet) post(i int, body string, kv ...string) (int, string, string) {
	req, _ := http.NewRequest(http.MethodPost, f.urls[i], strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for j := 0; j+1 < len(kv); j += 2 {
		req.Header.Set(kv[j], kv[j+1])
	}
	resp, err := f.http.Do(req)
	if err != nil {
		f.b.Error(err)
		return 0, "", ""
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(data)
}

// session opens a session of the handshake era on replica i.
func (f *scaleFleet) session(i int) string {
	sid, err := f.open(i)
	if err != nil {
		f.b.Fatal(err)
	}
	return sid
}

// open opens a session of the handshake era on replica i, or says why
// not (for callers not running the benchmark's goroutine).
func (f *scaleFleet) open(i int) (string, error) {
	status, sid, body := f.post(i, initBody)
	if status != 200 || sid == "" {
		return "", fmt.Errorf("initialize: %d %s", status, body)
	}
	if status, _, body := f.post(i, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"); status != http.StatusAccepted {
		return "", fmt.Errorf("initialized: %d %s", status, body)
	}
	return sid, nil
}

// call calls echo in session sid on replica i.
func (f *scaleFleet) call(i int, sid string) error {
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(f.ids.Add(1), 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`
	status, _, data := f.post(i, body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	if status != 200 || !strings.Contains(data, `"result"`) {
		return fmt.Errorf("tools/call: %d %s", status, data)
	}
	return nil
}

// commands returns the commands Redis ran so far (INFO commandstats:
// those that scripts run count one by one), those of connections (see
// setup) and INFO left out, or 0 for "memory".
func (f *scaleFleet) commands() int64 {
	if f.redis == nil {
		return 0
	}
	info, err := f.redis.Info(context.Background(), "commandstats").Result()
	if err != nil {
		f.b.Fatal(err)
	}
	var n int64
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || setup(strings.TrimPrefix(name, "cmdstat_")) {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		c, _ := strconv.ParseInt(calls, 10, 64)
		n += c
	}
	return n
}

// redisCPU returns the CPU time redis-server used so far (INFO cpu:
// used_cpu_user and used_cpu_sys, its main thread's and others'), or 0
// for "memory".
func (f *scaleFleet) redisCPU() time.Duration {
	if f.redis == nil {
		return 0
	}
	info, err := f.redis.Info(context.Background(), "cpu").Result()
	if err != nil {
		f.b.Fatal(err)
	}
	var sum float64
	for line := range strings.Lines(info) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			x, _ := strconv.ParseFloat(v, 64)
			sum += x
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// processCPU returns the CPU time this process used so far (user and
// system), the servers' and their clients': what a replica costs when
// Redis runs on a machine of its own.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs b's loop (op in parallel by 50 goroutines when parallel)
// and reports the Redis commands per op and the p99 of op's time.
func (f *scaleFleet) measure(b *testing.B, parallel bool, op func(i int) error) {
	var mu sync.Mutex
	var times []time.Duration
	record := func(ts []time.Duration) {
		mu.Lock()
		times = append(times, ts...)
		mu.Unlock()
	}
	before, cpuBefore, selfBefore := f.commands(), f.redisCPU(), processCPU()
	f.trips.n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		var next atomic.Int64
		b.SetParallelism(25) // 50 callers on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			var ts []time.Duration
			for pb.Next() {
				start := time.Now()
				if err := op(int(next.Add(1))); err != nil {
					b.Error(err)
					return
				}
				ts = append(ts, time.Since(start))
			}
			record(ts)
		})
	} else {
		ts := make([]time.Duration, 0, b.N)
		for i := range b.N {
			start := time.Now()
			if err := op(i); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(start))
		}
		record(ts)
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-selfBefore).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if f.redis != nil {
		trips := f.trips.n.Load()
		b.ReportMetric(float64(f.commands()-before)/float64(b.N), "commands/op")
		b.ReportMetric(float64(trips)/float64(b.N), "trips/op")
		b.ReportMetric(float64((f.redisCPU()-cpuBefore).Nanoseconds())/float64(b.N), "redis-cpu-ns/op")
	}
	if len(times) > 0 {
		slices.Sort(times)
		b.ReportMetric(float64(times[(len(times)*99)/100].Nanoseconds()), "p99-ns")
	}
}

// setup reports whether a command (its INFO commandstats name) is one
// that go-redis sends to set up or check a connection, or INFO.
func setup(name string) bool {
	return name == "hello" || name == "ping" || name == "info" || strings.HasPrefix(name, "client")
}

// tripCounter counts the commands a client sends but those of setup: a
// script or a command of a pipeline is one.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !setup(cmd.Name()) {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if !setup(cmd.Name()) {
				c.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

var scaleKinds = []string{"memory", "redis"}

// BenchmarkScaleCall measures a tools/call of the handshake era over
// Streamable HTTP by 50 callers, each in a live session of its own, on
// one replica, with and without an event store.
func BenchmarkScaleCall(b *testing.B) {
	for _, events := range []bool{false, true} {
		for _, kind := range scaleKinds {
			name := kind
			if events {
				name += "/events"
			}
			b.Run(name, func(b *testing.B) {
				f := newScaleFleet(b, kind, 1, events)
				sids := make([]string, 50)
				for i := range sids {
					sids[i] = f.session(0)
				}
				f.measure(b, true, func(i int) error { return f.call(0, sids[i%len(sids)]) })
			})
		}
	}
}

// BenchmarkScaleSetup measures the setup of a session (initialize,
// notifications/initialized, DELETE) one at a time: its latency, which
// the store's round trips add to.
func BenchmarkScaleSetup(b *testing.B) { benchmarkSetup(b, false) }

// BenchmarkScaleSetupParallel measures the same by 50 clients at once:
// the sessions a replica sets up per second, where the round trips
// overlap and what counts is the CPU they cost (Redis' included, on the
// same 2 cores here).
func BenchmarkScaleSetupParallel(b *testing.B) { benchmarkSetup(b, true) }

func benchmarkSetup(b *testing.B, parallel bool) {
	for _, kind := range scaleKinds {
		b.Run(kind, func(b *testing.B) {
			f := newScaleFleet(b, kind, 1, false)
			f.measure(b, parallel, func(int) error {
				sid, err := f.open(0)
				if err != nil {
					return err
				}
				req, _ := http.NewRequest(http.MethodDelete, f.urls[0], nil)
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				resp, err := f.http.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent && resp.StatusCode != 200 {
					return fmt.Errorf("DELETE: %d", resp.StatusCode)
				}
				return nil
			})
		})
	}
}

// BenchmarkScaleModern measures a plain 2026-07-28 tools/call by 50
// callers on a server whose stores and bus are in memory or on Redis:
// the target is no Redis command.
func BenchmarkScaleModern(b *testing.B) {
	for _, kind := range scaleKinds {
		b.Run(kind, func(b *testing.B) {
			f := newScaleFleet(b, kind, 1, true)
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},` + modernMeta + `}}`
			f.measure(b, true, func(int) error {
				status, _, data := f.post(0, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo")
				if status != 200 || !strings.Contains(data, `"result"`) {
					return fmt.Errorf("tools/call: %d %s", status, data)
				}
				return nil
			})
		})
	}
}

// BenchmarkScaleListen measures the fan-out of a resource update made on
// replica B to 50 subscriptions/listen streams (2026-07-28) on replica A,
// through the bus: an op ends when every listener has it; p99-ns is the
// p99 of that.
func BenchmarkScaleListen(b *testing.B) {
	for _, kind := range scaleKinds {
		b.Run(kind, func(b *testing.B) {
			f := newScaleFleet(b, kind, 2, false)
			got := make(chan struct{}, 1024)
			copts := &mcp.ClientOptions{ResourceUpdatedHandler: func(context.Context, *mcp.ClientRequest[*mcp.ResourceUpdatedParams]) {
				got <- struct{}{}
			}}
			const listeners = 50
			for range listeners {
				cs := mcptest.Connect(b, f.servers[0], &mcptest.Options{Client: copts})
				sub, err := cs.Listen(b.Context(), &mcp.SubscriptionFilter{ResourceSubscriptions: []string{"test://r"}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { sub.Close() })
			}
			ctx := context.Background()
			f.measure(b, false, func(int) error {
				if err := f.servers[1].ResourceUpdated(ctx, &mcp.ResourceUpdatedParams{URI: "test://r"}); err != nil {
					return err
				}
				for range listeners {
					select {
					case <-got:
					case <-time.After(10 * time.Second):
						return fmt.Errorf("a listener missed an update")
					}
				}
				return nil
			})
		})
	}
}

// BenchmarkScaleResume measures a resumption on replica B (GET with
// Last-Event-ID from the stream's start) of a POST stream that replica A
// wrote and ended: 10 progress events and the response.
func BenchmarkScaleResume(b *testing.B) {
	for _, kind := range scaleKinds {
		b.Run(kind, func(b *testing.B) {
			f := newScaleFleet(b, kind, 2, true)
			sid := f.session(0)
			req, _ := http.NewRequest(http.MethodPost, f.urls[0], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{},"_meta":{"progressToken":"p"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, err := f.http.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			r := &sseReader{bufio.NewScanner(resp.Body)}
			start := r.next()["id"]
			go func() {
				for k := 1; k <= 10; k++ {
					f.tokens <- k
				}
				close(f.tokens)
			}()
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			f.measure(b, false, func(int) error {
				req, _ := http.NewRequest(http.MethodGet, f.urls[1], nil)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				req.Header.Set("Last-Event-ID", start)
				resp, err := f.http.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				r := &sseReader{bufio.NewScanner(resp.Body)}
				n := 0
				for ev := r.next(); ev != nil; ev = r.next() {
					n++
				}
				if resp.StatusCode != 200 || n != 11 {
					return fmt.Errorf("resume: %d, %d events; want 11", resp.StatusCode, n)
				}
				return nil
			})
		})
	}
}

// BenchmarkScaleRoundTrip measures one bare Redis round trip (PING) by
// 50 callers: the unit the other Redis rows are made of, its CPU on both
// sides (cpu-ns/op, redis-cpu-ns/op) on this machine.
func BenchmarkScaleRoundTrip(b *testing.B) {
	if serverAddr == "" {
		b.Skip("redisstore: no redis-server on PATH")
	}
	f := &scaleFleet{b: b, redis: redis.NewClient(&redis.Options{Addr: serverAddr, ContextTimeoutEnabled: true, PoolSize: 64})}
	b.Cleanup(func() { f.redis.Close() })
	f.redis.AddHook(&f.trips)
	ctx := context.Background()
	f.measure(b, true, func(int) error {
		// ECHO, not PING: commands/op leaves PING out as connection setup.
		return f.redis.Echo(ctx, "x").Err()
	})
}
