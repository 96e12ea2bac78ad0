package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkStdio/mcpkit-2   	    2000	     42792 ns/op	     23369 calls/s	        32.00 p50-µs	       104.0 p99-µs	    1005 B/op	      14 allocs/op
BenchmarkStdio/mcpkit-nostream   	    10	     5 ns/op
BenchmarkColdStart/mcpkit-example-2 	 20	 6190000 ns/op
PASS
`)
	got := map[string][]float64{}
	parse(out, got)
	parse(out, got)
	for key, want := range map[string]float64{
		"Stdio/mcpkit calls/s":           23369,
		"Stdio/mcpkit p99-µs":            104,
		"Stdio/mcpkit allocs/op":         14,
		"Stdio/mcpkit-nostream ns/op":    5,
		"ColdStart/mcpkit-example ns/op": 6190000,
	} {
		if v := got[key]; len(v) != 2 || v[0] != want || v[1] != want {
			t.Errorf("%s = %v, want [%v %v]", key, v, want, want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{[]float64{3}, 3, true},
		{[]float64{5, 1, 3}, 3, true},
		{[]float64{4, 1, 3, 2}, 2.5, true},
	} {
		if got, ok := median(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("median(%v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte("a\n"+beginMark+"\nold\n"+endMark+"\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replace(path, []byte(beginMark+"\nnew\n"+endMark+"\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "a\n" + beginMark + "\nnew\n" + endMark + "\nb\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replace(path, nil); err == nil || !strings.Contains(err.Error(), "block") {
		t.Errorf("replace without markers: %v", err)
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct{ bench, target, unit, want string }{
		{"Stdio", "mcpkit", "calls/s", "Stdio/mcpkit calls/s"},
		{"HTTPPaired50", "handshake/mcpkit:floor-calls/s", "calls/s", "HTTPPaired50/handshake/mcpkit floor-calls/s"},
	} {
		if got := key(tc.bench, tc.target, tc.unit); got != tc.want {
			t.Errorf("key(%q, %q, %q) = %q, want %q", tc.bench, tc.target, tc.unit, got, tc.want)
		}
	}
}
