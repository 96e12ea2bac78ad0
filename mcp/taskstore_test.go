package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcp/mcptest"
)

func closeAtEnd(t testing.TB, s mcp.TaskStore) mcp.TaskStore {
	t.Helper()
	t.Cleanup(func() {
		if err := s.(io.Closer).Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestMemoryTaskStoreSuite(t *testing.T) {
	mcptest.TaskStoreSuite(t, func(t *testing.T, opts *mcp.TaskStoreOptions) mcp.TaskStore {
		return closeAtEnd(t, mcp.NewMemoryTaskStore(opts))
	})
}

func TestFileTaskStoreSuite(t *testing.T) {
	mcptest.TaskStoreSuite(t, func(t *testing.T, opts *mcp.TaskStoreOptions) mcp.TaskStore {
		s, err := mcp.NewFileTaskStore(t.TempDir(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return closeAtEnd(t, s)
	})
}

// TestFileTaskStoreReopen: the tasks written to a directory are read back
// by a store opened on it later, with their versions, outcomes, unknown
// members, bounds and expiry.
func TestFileTaskStoreReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := new(mcptest.Clock)
	opts := &mcp.TaskStoreOptions{Now: clock.Now, MaxUnfinishedPerOwner: 2}
	s, err := mcp.NewFileTaskStore(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	running := &mcp.TaskRecord{Owner: "alice", Status: mcp.TaskInputRequired,
		Inputs:  map[string]json.RawMessage{"1": json.RawMessage(`{"method":"roots/list"}`)},
		Unknown: map[string]json.RawMessage{"x-later": json.RawMessage(`"kept"`)}}
	done := &mcp.TaskRecord{Owner: "alice", Status: mcp.TaskWorking, TTL: time.Minute}
	gone := &mcp.TaskRecord{Owner: "bob", Status: mcp.TaskWorking}
	for _, r := range []*mcp.TaskRecord{running, done, gone} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	done.Status, done.Result = mcp.TaskCompleted, json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
	if err := s.Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "bob", gone.ID); err != nil {
		t.Fatal(err)
	}
	// A write that died half way leaves a temporary file: ignored.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-crashed-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.(io.Closer).Close()

	s = closeAtEnd(t, must(mcp.NewFileTaskStore(dir, opts)))
	got, err := s.Get(ctx, "alice", running.ID)
	if err != nil || got.Version != 1 || got.Status != mcp.TaskInputRequired || string(got.Inputs["1"]) != `{"method":"roots/list"}` || string(got.Unknown["x-later"]) != `"kept"` {
		t.Fatalf("reopened: %+v, %v", got, err)
	}
	got, err = s.Get(ctx, "alice", done.ID)
	if err != nil || got.Version != 2 || got.Status != mcp.TaskCompleted || string(got.Result) != string(done.Result) || !got.EndedAt.Equal(done.EndedAt) {
		t.Fatalf("reopened: %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, "bob", gone.ID); !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Fatalf("deleted task after reopening: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-crashed-123")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file of a dead write is still there: %v", err)
	}
	// The bounds count the tasks read back.
	if err := s.Create(ctx, &mcp.TaskRecord{Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	var le *mcp.TaskLimitError
	if err := s.Create(ctx, &mcp.TaskRecord{Owner: "alice"}); !errors.As(err, &le) || le.Limit != "MaxUnfinishedPerOwner" {
		t.Fatalf("Create over the bound after reopening: %v", err)
	}
	// Expiry removes the file.
	clock.Advance(time.Minute)
	if _, err := s.Get(ctx, "alice", done.ID); !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Fatalf("expired task: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, done.ID+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file of an expired task is still there: %v", err)
	}
}

// TestFileTaskStoreBadFile: a record file that cannot be read fails the
// open, naming the file, and is left in place.
func TestFileTaskStoreBadFile(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"not JSON", "{"},
		{"another ID", `{"id":"other","owner":"a","status":"working","version":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "abc.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := mcp.NewFileTaskStore(dir, nil)
			if err == nil {
				s.(io.Closer).Close()
				t.Fatal("opened")
			}
			if _, serr := os.Stat(path); serr != nil || !strings.Contains(err.Error(), "abc.json") {
				t.Fatalf("err = %v (file: %v); want one naming abc.json, the file kept", err, serr)
			}
		})
	}
}

// TestTaskStoreClosed: a closed store refuses, and closing twice is fine.
func TestTaskStoreClosed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(t *testing.T) mcp.TaskStore
	}{
		{"memory", func(t *testing.T) mcp.TaskStore { return mcp.NewMemoryTaskStore(nil) }},
		{"file", func(t *testing.T) mcp.TaskStore { return must(mcp.NewFileTaskStore(t.TempDir(), nil)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t)
			rec := &mcp.TaskRecord{Owner: "a"}
			if err := s.Create(ctx, rec); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.(mcp.TaskWatcher).Watch(ctx, "a", rec.ID, rec.Version) }()
			for range 2 {
				if err := s.(io.Closer).Close(); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; !errors.Is(err, mcp.ErrTaskStoreClosed) {
				t.Fatalf("Watch across Close: %v", err)
			}
			if _, err := s.Get(ctx, "a", rec.ID); !errors.Is(err, mcp.ErrTaskStoreClosed) {
				t.Fatalf("Get after Close: %v", err)
			}
			if err := s.Create(ctx, &mcp.TaskRecord{Owner: "a"}); !errors.Is(err, mcp.ErrTaskStoreClosed) {
				t.Fatalf("Create after Close: %v", err)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkTaskStoreGet reads tasks from a store holding 10,000 (ended,
// each with a 1 KiB result).
func BenchmarkTaskStoreGet(b *testing.B) {
	for _, kind := range []string{"memory", "file"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			var s mcp.TaskStore
			if kind == "memory" {
				s = mcp.NewMemoryTaskStore(nil)
			} else {
				s = must(mcp.NewFileTaskStore(b.TempDir(), nil))
			}
			closeAtEnd(b, s)
			result := json.RawMessage(`"` + fmt.Sprintf("%01022d", 0) + `"`)
			ids, owners := make([]string, 10_000), make([]string, 10_000)
			for i := range ids {
				owners[i] = fmt.Sprint("owner", i%100)
				rec := &mcp.TaskRecord{Owner: owners[i], Status: mcp.TaskCompleted, Result: result}
				if err := s.Create(ctx, rec); err != nil {
					b.Fatal(err)
				}
				ids[i] = rec.ID
			}
			b.Run("1caller", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := s.Get(ctx, owners[i], ids[i]); err != nil {
						b.Fatal(err)
					}
					i = (i + 1) % len(ids)
				}
			})
			// 50 callers at once (as the HTTP benchmark has).
			b.Run("50callers", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism((50 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						i := int(next.Add(1)) % len(ids)
						if _, err := s.Get(ctx, owners[i], ids[i]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

// BenchmarkTaskStoreMemoryPerTask reports the heap a memory store holds
// per retained ended task beyond its result (bytes/task-overhead), and in
// all (bytes/task), for 10,000 tasks with a 1 KiB result.
func BenchmarkTaskStoreMemoryPerTask(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	result := `"` + fmt.Sprintf("%01022d", 0) + `"`
	var perTask float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := mcp.NewMemoryTaskStore(nil)
		for i := range n {
			rec := &mcp.TaskRecord{Owner: fmt.Sprint("owner", i%100), Method: mcp.MethodToolsCall,
				Status: mcp.TaskCompleted, Result: json.RawMessage(result)}
			if err := s.Create(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perTask = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(s)
		s.(io.Closer).Close()
	}
	b.ReportMetric(perTask, "bytes/task")
	b.ReportMetric(perTask-float64(len(result)), "bytes/task-overhead")
}

// TestFileTaskStoreFileCheck: Update compares the version in the file
// too, so a write by another store on the directory is a conflict, after
// which the store reads the newer record.
func TestFileTaskStoreFileCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := closeAtEnd(t, must(mcp.NewFileTaskStore(dir, nil)))
	rec := &mcp.TaskRecord{Owner: "alice"}
	if err := a.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	b := closeAtEnd(t, must(mcp.NewFileTaskStore(dir, nil)))
	fromB, err := b.Get(ctx, "alice", rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec.StatusMessage = "written by a"
	if err := a.Update(ctx, rec); err != nil {
		t.Fatal(err)
	}
	fromB.StatusMessage = "written by b"
	if err := b.Update(ctx, fromB); !errors.Is(err, mcp.ErrTaskConflict) {
		t.Fatalf("Update over another store's write: %v; want ErrTaskConflict", err)
	}
	got, err := b.Get(ctx, "alice", rec.ID)
	if err != nil || got.StatusMessage != "written by a" || got.Version != 2 {
		t.Fatalf("after the conflict: %+v, %v; want a's record, version 2", got, err)
	}
}
