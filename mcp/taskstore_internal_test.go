package mcp

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemoryTaskStoreReaper: the store's one reaper drops expired tasks
// (and the files of a file store) with no call to the store, keeps the
// unexpired ones, and ends at Close. It runs in a synctest bubble, whose
// clock moves only when every goroutine in it waits.
func TestMemoryTaskStoreReaper(t *testing.T) {
	for _, kind := range []string{"memory", "file"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				opts := &TaskStoreOptions{ReapInterval: time.Minute}
				var s *memoryTaskStore
				if kind == "memory" {
					s = NewMemoryTaskStore(opts).(*memoryTaskStore)
				} else {
					fs, err := NewFileTaskStore(dir, opts)
					if err != nil {
						t.Fatal(err)
					}
					s = fs.(*memoryTaskStore)
				}
				before := runtime.NumGoroutine()
				short := &TaskRecord{Owner: "a", Status: TaskCompleted, TTL: time.Second}
				long := &TaskRecord{Owner: "a", Status: TaskCompleted, TTL: time.Hour}
				running := &TaskRecord{Owner: "a", Status: TaskWorking, TTL: time.Second}
				for _, r := range []*TaskRecord{short, long, running} {
					if err := s.Create(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
				if n := runtime.NumGoroutine(); n > before+1 {
					t.Fatalf("goroutines: %d before the first task, %d after three; want one reaper at most", before, n)
				}
				time.Sleep(2 * time.Minute) // the bubble's clock: two reaper ticks
				synctest.Wait()
				s.mu.Lock()
				_, hasShort := s.tasks[short.ID]
				_, hasLong := s.tasks[long.ID]
				_, hasRunning := s.tasks[running.ID]
				n := len(s.tasks)
				s.mu.Unlock()
				if hasShort || !hasLong || !hasRunning || n != 2 {
					t.Fatalf("after the reaper: short %v, long %v, running %v, %d tasks; want only long and running", hasShort, hasLong, hasRunning, n)
				}
				if s.persist != nil {
					if rec, err := s.persist.read(short.ID); rec != nil || err != nil {
						t.Fatalf("the file of the reaped task: %v, %v", rec, err)
					}
				}
				// synctest.Test fails if the reaper outlives Close.
				s.Close()
			})
		})
	}
}
