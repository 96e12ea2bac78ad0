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
		limit   int64 // -1: none
		want    int   // the bytes read: the body, or limit+1 of it
		wantCap int   // the capacity the body is read into; 0: unchecked
	}{
		{"unknown length", "hello", -1, readBodyPrealloc, -1, 5, 0},
		{"empty", "", 0, readBodyPrealloc, -1, 0, 1},
		{"exact length", `{"jsonrpc":"2.0"}`, 17, readBodyPrealloc, -1, 17, 18},
		{"shorter than announced", "abc", 10, readBodyPrealloc, -1, 3, 11},
		{"longer than announced", "abcdefgh", 2, readBodyPrealloc, -1, 8, 0},
		{"large, unknown length", big, -1, readBodyPrealloc, -1, len(big), 0},
		// Past what is trusted, the buffer grows fourfold and ends at
		// the announced size.
		{"large, announced", big, int64(len(big)), readBodyPrealloc, -1, len(big), len(big) + 1},
		{"large, announced and trusted", big, int64(len(big)), 1 << 30, -1, len(big), len(big) + 1},
		// A limit stops the reading one byte past it, whatever was
		// announced, and bounds the buffer.
		{"at the limit", "0123456789", 10, readBodyPrealloc, 10, 10, 11},
		{"at the limit, unknown length", "0123456789", -1, readBodyPrealloc, 10, 10, 11},
		{"past the limit, unknown length", big, -1, readBodyPrealloc, 1000, 1001, 1001},
		{"past the limit, announced shorter", big, 10, readBodyPrealloc, 1000, 1001, 1001},
		{"past the limit, announced", big, int64(len(big)), 1 << 30, 1000, 1001, 1001},
		{"large, under the limit", big, -1, readBodyPrealloc, int64(len(big)), len(big), 0},
		{"zero limit", "a", -1, readBodyPrealloc, 0, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.body), iotest.OneByteReader(strings.NewReader(tt.body))} {
				got, err := readSized(r, tt.size, tt.trust, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != tt.want || string(got) != tt.body[:tt.want] {
					t.Fatalf("read %d bytes, want the first %d of the body", len(got), tt.want)
				}
				if tt.wantCap != 0 && cap(got) != tt.wantCap {
					t.Errorf("read into %d bytes, want %d", cap(got), tt.wantCap)
				}
			}
		})
	}
	// An announced size is trusted only so far.
	got, err := readSized(bytes.NewReader(nil), 1<<40, readBodyPrealloc, -1)
	if err != nil || len(got) != 0 || cap(got) > readBodyPrealloc+1 {
		t.Fatalf("readSized(empty, 1 TiB) = %d bytes (cap %d), %v", len(got), cap(got), err)
	}
	// Errors other than EOF come back with what was read.
	boom := errors.New("boom")
	got, err = readSized(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)), -1, readBodyPrealloc, 10)
	if !errors.Is(err, boom) || string(got) != "ab" {
		t.Fatalf("readSized(failing) = %q, %v", got, err)
	}
}
