package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadSized(t *testing.T) {
	big := strings.Repeat("x", 3*readBodyPrealloc)
	tests := []struct {
		name    string
		body    string
		size    int64
		trust   int64
		wantCap int // the capacity the body is read into; 0: unchecked
	}{
		{"unknown length", "hello", -1, readBodyPrealloc, 0},
		{"empty", "", 0, readBodyPrealloc, 1},
		{"exact length", `{"jsonrpc":"2.0"}`, 17, readBodyPrealloc, 18},
		{"shorter than announced", "abc", 10, readBodyPrealloc, 11},
		{"longer than announced", "abcdefgh", 2, readBodyPrealloc, 0},
		{"large, unknown length", big, -1, readBodyPrealloc, 0},
		// Past what is trusted, the buffer grows fourfold and ends at
		// the announced size.
		{"large, announced", big, int64(len(big)), readBodyPrealloc, len(big) + 1},
		{"large, announced and trusted", big, int64(len(big)), 1 << 30, len(big) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.body), iotest.OneByteReader(strings.NewReader(tt.body))} {
				got, err := readSized(r, tt.size, tt.trust)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.body {
					t.Fatalf("read %d bytes, want %d", len(got), len(tt.body))
				}
				if tt.wantCap != 0 && cap(got) != tt.wantCap {
					t.Errorf("read into %d bytes, want %d", cap(got), tt.wantCap)
				}
			}
		})
	}
	// An announced size is trusted only so far.
	got, err := readSized(bytes.NewReader(nil), 1<<40, readBodyPrealloc)
	if err != nil || len(got) != 0 || cap(got) > readBodyPrealloc+1 {
		t.Fatalf("readSized(empty, 1 TiB) = %d bytes (cap %d), %v", len(got), cap(got), err)
	}
	// Errors other than EOF come back with what was read.
	boom := errors.New("boom")
	got, err = readSized(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)), -1, readBodyPrealloc)
	if !errors.Is(err, boom) || string(got) != "ab" {
		t.Fatalf("readSized(failing) = %q, %v", got, err)
	}
}
