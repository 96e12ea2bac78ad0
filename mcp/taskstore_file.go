package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NewFileTaskStore returns a [TaskStore] that keeps each task in a file of
// its own in dir (created if missing), named after the task's ID with
// ".json" appended, holding the record's JSON. Writes are atomic (a
// temporary file, synced, then renamed over the old one), so a crash
// leaves the old record or the new one. Opening reads every record back;
// a record file that cannot be read fails the open, naming it, and is
// left in place.
//
// The store is bounded and expires tasks as [NewMemoryTaskStore] does
// (with the same opts), and keeps a copy of the records in memory for
// reads. Update compares versions under the store's lock and checks the
// file's version too, so a record another store wrote to the directory
// meanwhile is [ErrTaskConflict], but one directory is meant for one
// process at a time. Close (the store implements io.Closer) stops its
// reaper; it implements [TaskWatcher] for the changes made through it.
func NewFileTaskStore(dir string, opts *TaskStoreOptions) (TaskStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mcp: task store: %w", err)
	}
	p := &taskFiles{dir: dir}
	s := newMemoryTaskStore(opts.resolved(), p)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("mcp: task store: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, taskTempPrefix) {
			// A write that did not finish: the record it replaced is intact.
			os.Remove(filepath.Join(dir, name))
			continue
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !e.Type().IsRegular() || !ValidTaskID(id) {
			continue
		}
		rec, err := p.read(id)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		s.insertLocked(rec)
	}
	if len(s.tasks) > 0 {
		s.reaping = true
		go s.reap()
	}
	return s, nil
}

// taskTempPrefix starts the names of the temporary files of writes.
const taskTempPrefix = ".tmp-"

// taskFiles is the taskPersister of NewFileTaskStore.
type taskFiles struct {
	dir string
}

func (p *taskFiles) path(id string) string { return filepath.Join(p.dir, id+".json") }

// write implements taskPersister: temp file, sync, rename, sync dir.
func (p *taskFiles) write(rec *TaskRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("mcp: task store: %w", err)
	}
	f, err := os.CreateTemp(p.dir, taskTempPrefix+rec.ID+"-*")
	if err != nil {
		return fmt.Errorf("mcp: task store: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p.path(rec.ID))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mcp: task store: %w", err)
	}
	p.syncDir()
	return nil
}

// syncDir makes the directory's entries durable where the system
// supports it.
func (p *taskFiles) syncDir() {
	if d, err := os.Open(p.dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// remove implements taskPersister.
func (p *taskFiles) remove(id string) error {
	if err := os.Remove(p.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mcp: task store: %w", err)
	}
	p.syncDir()
	return nil
}

// read implements taskPersister.
func (p *taskFiles) read(id string) (*TaskRecord, error) {
	data, err := os.ReadFile(p.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: task store: %w", err)
	}
	rec := new(TaskRecord)
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("mcp: task store: %s: %w", p.path(id), err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("mcp: task store: %s holds task %q", p.path(id), rec.ID)
	}
	return rec, nil
}
