package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUpToDate fails when mcp/jsonmethods.go is not what the generator
// writes for the current protocol types: run go generate ./mcp.
func TestUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..", "mcp")
	src, test, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{output: src, testOutput: test} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("mcp/%s is out of date: run go generate ./mcp", name)
		}
	}
}
