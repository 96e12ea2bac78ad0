package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// benchTasksMeta is the _meta of the 2026-07-28 requests of the task
// benchmarks; undeclared leaves the tasks extension out.
const (
	benchTasksMeta      = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	benchUndeclaredMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
)

// benchTaskServer is a server with tasks and three tools: echo (no task
// support), echo-optional and echo-required, each answering its message.
func benchTaskServer(tb testing.TB, opts *TaskOptions) *Server {
	s := NewServer(&Implementation{Name: "tasks", Version: "1"}, &ServerOptions{Tasks: opts})
	type in struct {
		Message string `json:"message"`
	}
	echo := func(_ context.Context, _ *CallToolRequest, in in) (string, error) { return in.Message, nil }
	for _, t := range []*Tool{
		{Name: "echo"},
		{Name: "echo-optional", Execution: &ToolExecution{TaskSupport: TaskOptional}},
		{Name: "echo-required", Execution: &ToolExecution{TaskSupport: TaskRequired}},
	} {
		if err := AddTool(s, t, echo); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// benchConn connects a bare jsonrpc.Conn to s over the in-memory
// transport.
func benchConn(tb testing.TB, s *Server) *jsonrpc.Conn {
	ct, st := transport.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		tb.Fatal(err)
	}
	tc, err := ct.Connect(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonrpc.NewConn(tc, &jsonrpc.ConnOptions{})
	c.Start()
	tb.Cleanup(func() { c.Close(); ss.Close(); ss.Wait() })
	return c
}

// createTasks runs n calls of echo-required to their end and returns the
// task IDs.
func createTasks(tb testing.TB, c *jsonrpc.Conn, n int, message string) []string {
	ctx := context.Background()
	ids := make([]string, n)
	params := json.RawMessage(`{"name":"echo-required","arguments":{"message":` + fmt.Sprintf("%q", message) + `},` + benchTasksMeta + `}`)
	for i := range ids {
		res, err := c.Call(ctx, MethodToolsCall, params)
		if err != nil {
			tb.Fatal(err)
		}
		var d DetailedTask
		if err := json.Unmarshal(res, &d); err != nil || d.TaskID == "" {
			tb.Fatalf("not a task: %s %v", res, err)
		}
		ids[i] = d.TaskID
		waitDone(tb, c, d.TaskID) // one unfinished at a time: the store bounds them per owner
	}
	return ids
}

// waitDone polls tasks/get until task id has ended.
func waitDone(tb testing.TB, c *jsonrpc.Conn, id string) json.RawMessage {
	params := json.RawMessage(`{"taskId":"` + id + `",` + benchTasksMeta + `}`)
	for {
		res, err := c.Call(context.Background(), MethodTasksGet, params)
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.Contains(res, []byte(`"status":"completed"`)) {
			return res
		}
		if bytes.Contains(res, []byte(`"status":"failed"`)) || bytes.Contains(res, []byte(`"status":"cancelled"`)) {
			tb.Fatalf("task ended badly: %s", res)
		}
		runtime.Gosched()
	}
}

// BenchmarkTasks measures the task runtime in process (2026-07-28, a bare
// jsonrpc.Conn as the client, as BenchmarkServerCallByEra): a plain echo
// call beside tasks/get of one of 10,000 stored tasks, an optional tool
// called without declaring tasks (synchronous) and answered within
// SyncWindow, and a call run as a task to its end (the CreateTaskResult,
// then tasks/get until completed).
func BenchmarkTasks(b *testing.B) {
	ctx := context.Background()
	call := func(b *testing.B, c *jsonrpc.Conn, method, params string) {
		p := json.RawMessage(params)
		if _, err := c.Call(ctx, method, p); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(ctx, method, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("echo", func(b *testing.B) {
		c := benchConn(b, benchTaskServer(b, &TaskOptions{}))
		call(b, c, MethodToolsCall, `{"name":"echo","arguments":{"message":"hello"},`+benchTasksMeta+`}`)
	})
	b.Run("get-of-10k", func(b *testing.B) {
		c := benchConn(b, benchTaskServer(b, &TaskOptions{}))
		ids := createTasks(b, c, 10_000, "hello")
		params := make([]json.RawMessage, len(ids))
		for i, id := range ids {
			params[i] = json.RawMessage(`{"taskId":"` + id + `",` + benchTasksMeta + `}`)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.Call(ctx, MethodTasksGet, params[i%len(params)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("optional-undeclared", func(b *testing.B) {
		c := benchConn(b, benchTaskServer(b, &TaskOptions{}))
		call(b, c, MethodToolsCall, `{"name":"echo-optional","arguments":{"message":"hello"},`+benchUndeclaredMeta+`}`)
	})
	b.Run("optional-in-window", func(b *testing.B) {
		c := benchConn(b, benchTaskServer(b, &TaskOptions{SyncWindow: time.Hour}))
		call(b, c, MethodToolsCall, `{"name":"echo-optional","arguments":{"message":"hello"},`+benchTasksMeta+`}`)
	})
	b.Run("via-task", func(b *testing.B) {
		// Ended tasks are kept an hour: a store large enough for the run.
		store := NewMemoryTaskStore(&TaskStoreOptions{MaxTasks: 1 << 22, MaxUnfinishedPerOwner: 1 << 22})
		defer store.(io.Closer).Close()
		c := benchConn(b, benchTaskServer(b, &TaskOptions{Store: store}))
		params := json.RawMessage(`{"name":"echo-required","arguments":{"message":"hello"},` + benchTasksMeta + `}`)
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.Call(ctx, MethodToolsCall, params)
			if err != nil {
				b.Fatal(err)
			}
			i := bytes.Index(res, []byte(`"taskId":"`))
			id := res[i+len(`"taskId":"`):]
			id = id[:bytes.IndexByte(id, '"')]
			waitDone(b, c, string(id))
		}
	})
}

// BenchmarkTasksHTTP measures tasks/get of one of 10,000 stored tasks
// beside a plain echo call over Streamable HTTP (2026-07-28, one POST per
// request) on 127.0.0.1, with 50 callers at once.
func BenchmarkTasksHTTP(b *testing.B) {
	s := benchTaskServer(b, &TaskOptions{})
	ids := createTasks(b, benchConn(b, s), 10_000, "hello")
	h := NewStreamableHTTPHandler(s, nil)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	post := func(method, name, body string) error {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", Version20260728)
		req.Header.Set("Mcp-Method", method)
		req.Header.Set("Mcp-Name", name)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || bytes.Contains(data, []byte(`"error"`)) {
			return fmt.Errorf("%s: %d %s", method, resp.StatusCode, data)
		}
		return nil
	}
	run := func(b *testing.B, body func(i int) (method, name, body string)) {
		b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
		b.ReportAllocs()
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := post(body(int(n.Add(1)))); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("echo", func(b *testing.B) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},` + benchTasksMeta + `}}`
		run(b, func(int) (string, string, string) { return MethodToolsCall, "echo", body })
	})
	b.Run("get-of-10k", func(b *testing.B) {
		bodies := make([]string, len(ids))
		for i, id := range ids {
			bodies[i] = `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + id + `",` + benchTasksMeta + `}}`
		}
		run(b, func(i int) (string, string, string) { return MethodTasksGet, ids[i%len(ids)], bodies[i%len(ids)] })
	})
}

// BenchmarkTaskRetained measures what a task kept after its end costs
// beyond its result (the heap grown by 10,000 ended tasks of 1 KiB
// results, per task, less the result), and the goroutines left once
// 100,000 tasks have ended (the target is none).
func BenchmarkTaskRetained(b *testing.B) {
	result := strings.Repeat("x", 1024)
	b.Run("bytes-beyond-result", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			store := NewMemoryTaskStore(nil)
			s := benchTaskServer(b, &TaskOptions{Store: store})
			c := benchConn(b, s)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.StartTimer()
			createTasks(b, c, 10_000, result)
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			// The result as stored: the CallToolResult JSON around the text.
			stored := len(`{"content":[{"type":"text","text":""}]}`) + len(result)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/10_000-float64(stored), "B/task-beyond-result")
			runtime.KeepAlive(store)
			store.(io.Closer).Close()
			b.StartTimer()
		}
	})
	b.Run("goroutines-after-100k", func(b *testing.B) {
		for b.Loop() {
			store := NewMemoryTaskStore(&TaskStoreOptions{MaxTasks: 200_000})
			s := benchTaskServer(b, &TaskOptions{Store: store})
			c := benchConn(b, s)
			before := runtime.NumGoroutine()
			createTasks(b, c, 100_000, "hi")
			b.ReportMetric(float64(runtime.NumGoroutine()-before), "goroutines-left")
			store.(io.Closer).Close()
		}
	})
}
