package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The npm packages the tests use. Their exact versions are pinned in
// package.json (and the whole tree in package-lock.json); nothing else
// names a version.
const (
	pkgSDK        = "@modelcontextprotocol/sdk"
	pkgEverything = "@modelcontextprotocol/server-everything"
)

// npmInstallTimeout bounds `npm ci` on a cold cache.
const npmInstallTimeout = 5 * time.Minute

// requireNode skips the test when node or npm is missing: the only
// reason these tests may skip.
func requireNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("interop tests need %s on PATH: %v", tool, err)
		}
	}
}

// pinnedVersions returns the exact versions package.json pins.
func pinnedVersions(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	for name, v := range pj.Dependencies {
		if strings.ContainsAny(v, "^~<>=*| x") {
			t.Fatalf("package.json: %s must be pinned to an exact version, not %q", name, v)
		}
	}
	for _, name := range []string{pkgSDK, pkgEverything} {
		if pj.Dependencies[name] == "" {
			t.Fatalf("package.json does not pin %s", name)
		}
	}
	return pj.Dependencies
}

var (
	installOnce sync.Once
	installDir  string
	installErr  error
)

// nodeModules returns a directory holding node_modules with the pinned
// packages, installing them on first use. The directory is
// <user cache dir>/mcpkit-interop/<hash of package.json and
// package-lock.json>, so a changed pin gets a fresh install and an
// unchanged one is re-used across runs.
func nodeModules(t *testing.T) string {
	t.Helper()
	requireNode(t)
	pins := pinnedVersions(t)
	installOnce.Do(func() { installDir, installErr = install() })
	if installErr != nil {
		t.Fatalf("installing the pinned npm packages: %v", installErr)
	}
	for name, want := range pins {
		raw, err := os.ReadFile(filepath.Join(installDir, "node_modules", name, "package.json"))
		if err != nil {
			t.Fatalf("installed %s: %v", name, err)
		}
		var pj struct{ Version string }
		if err := json.Unmarshal(raw, &pj); err != nil {
			t.Fatalf("installed %s: %v", name, err)
		}
		if pj.Version != want {
			t.Fatalf("installed %s is %s, package.json pins %s", name, pj.Version, want)
		}
	}
	t.Logf("npm packages (%s): %s %s, %s %s", installDir, pkgSDK, pins[pkgSDK], pkgEverything, pins[pkgEverything])
	return installDir
}

const installedMarker = ".mcpkit-interop-installed"

func install() (string, error) {
	var files [][]byte
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		files = append(files, b)
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "mcpkit-interop")
	dir := filepath.Join(parent, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, installedMarker)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	// Install into a fresh directory and rename it into place, so that an
	// interrupted install is never mistaken for a complete one.
	tmp, err := os.MkdirTemp(parent, "installing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for i, name := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(tmp, name), files[i], 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmInstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", tmp, err, out.Bytes())
	}
	if err := os.WriteFile(filepath.Join(tmp, installedMarker), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run may have finished the same install first.
		if _, statErr := os.Stat(filepath.Join(dir, installedMarker)); statErr == nil {
			return dir, nil
		}
		// A stale, unfinished directory is in the way: replace it.
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return "", errors.Join(err, rmErr)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// repoRoot returns the module root: the nearest directory above the
// working directory that holds go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// events collects values that arrive asynchronously (server requests,
// notifications) and lets a test wait, bounded by a context, until they
// satisfy a condition. No sleeping.
type events[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{}
}

func (e *events[T]) add(v T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.items = append(e.items, v)
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

func (e *events[T]) all() []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.items)
}

func (e *events[T]) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.items)
}

// wait blocks until cond holds for the items so far, or ctx ends.
func (e *events[T]) wait(ctx context.Context, cond func([]T) bool) error {
	for {
		e.mu.Lock()
		if cond(e.items) {
			e.mu.Unlock()
			return nil
		}
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// waitN waits for at least n items.
func (e *events[T]) waitN(ctx context.Context, n int) error {
	return e.wait(ctx, func(items []T) bool { return len(items) >= n })
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
