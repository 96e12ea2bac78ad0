package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"testing"
	"time"
)

// serverLabelKey is the key of the pprof label that serveHTTP puts on
// the goroutines of an HTTP server under test; its value is the target's
// name.
const serverLabelKey = "bench-server"

// serverLabels returns the pprof label set of the goroutines of the
// server of the target name.
func serverLabels(name string) pprof.LabelSet {
	return pprof.Labels(serverLabelKey, name)
}

// maxProfileSize bounds the CPU profile cpuMeter decompresses.
const maxProfileSize = 256 << 20

// A cpuMeter measures the CPU time spent during a timed loop: the whole
// process's (user and system, from getrusage; client and server
// together), and, from a CPU profile taken meanwhile, that of the
// goroutines carrying a server's label (serverLabels), which are the
// HTTP server's (its
// connections, its handler and the goroutines they start). The profile
// samples each thread's CPU clock 100 times a second, kernel time
// included, so the server figure of a run of about 50,000 calls rests on
// several hundred samples; CPU time no goroutine of either side is
// charged with (the collector's background workers, the scheduler) is
// in the process figure only.
type cpuMeter struct {
	proc0     time.Duration
	procOK    bool
	profiling bool
	prof      bytes.Buffer
	// apart, when not nil, reads the CPU time of a server running in a
	// process of its own (see BenchmarkHTTPApart50): the server figure
	// is then its delta, and this process's is the client's alone.
	apart  func() (time.Duration, bool)
	apart0 time.Duration
}

// startCPU starts measuring, the server's CPU time read with apart when
// it is not nil, else from a CPU profile, which is left out when one is
// already running (go test -cpuprofile).
func startCPU(apart func() (time.Duration, bool)) *cpuMeter {
	m := &cpuMeter{apart: apart}
	if apart != nil {
		m.apart0, m.procOK = apart()
	} else {
		m.profiling = pprof.StartCPUProfile(&m.prof) == nil
	}
	proc0, ok := processCPU()
	m.proc0, m.procOK = proc0, ok && (apart == nil || m.procOK)
	return m
}

// stop ends the measurement of n calls and reports cpu-µs/op, the
// process's CPU time per call, and server-cpu-µs/op, that of the server
// of the target named server.
func (m *cpuMeter) stop(b *testing.B, n int, server string) {
	proc1, ok := processCPU()
	if m.profiling {
		pprof.StopCPUProfile()
	}
	if n <= 0 {
		return
	}
	if m.apart != nil {
		if apart1, aok := m.apart(); ok && aok && m.procOK {
			b.ReportMetric(float64((proc1-m.proc0).Microseconds())/float64(n), "client-cpu-µs/op")
			b.ReportMetric(float64((apart1-m.apart0).Microseconds())/float64(n), "server-cpu-µs/op")
		}
		return
	}
	if ok && m.procOK {
		b.ReportMetric(float64((proc1-m.proc0).Microseconds())/float64(n), "cpu-µs/op")
	}
	if m.profiling {
		d, _, err := labelledCPU(m.prof.Bytes(), serverLabelKey, server)
		if err != nil {
			b.Fatalf("reading the CPU profile: %v", err)
		}
		b.ReportMetric(float64(d.Microseconds())/float64(n), "server-cpu-µs/op")
	}
}

// labelledCPU reads a gzipped CPU profile, as pprof.StartCPUProfile
// writes it, and returns the CPU time of the samples carrying the label
// key=value and of all samples.
func labelledCPU(gz []byte, key, value string) (labelled, total time.Duration, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return 0, 0, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxProfileSize+1))
	if err != nil {
		return 0, 0, err
	}
	if len(raw) > maxProfileSize {
		return 0, 0, errors.New("profile too large")
	}
	return labelledCPUProto(raw, key, value)
}

// errProto is returned for a malformed profile.
var errProto = errors.New("malformed profile")

// protoField is one field of a protocol buffer message: its number, wire
// type, and either its varint value (wire type 0) or its bytes (2).
type protoField struct {
	num  uint64
	wire uint64
	v    uint64
	data []byte
}

// protoFields splits a protocol buffer message into its fields. It
// accepts the wire types a pprof profile uses: varint, 64-bit, length
// delimited and 32-bit.
func protoFields(b []byte) ([]protoField, error) {
	var fs []protoField
	for len(b) > 0 {
		tag, n := uvarint(b)
		if n <= 0 {
			return nil, errProto
		}
		b = b[n:]
		f := protoField{num: tag >> 3, wire: tag & 7}
		switch f.wire {
		case 0:
			f.v, n = uvarint(b)
			if n <= 0 {
				return nil, errProto
			}
			b = b[n:]
		case 1, 5:
			size := 8
			if f.wire == 5 {
				size = 4
			}
			if len(b) < size {
				return nil, errProto
			}
			b = b[size:]
		case 2:
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errProto
			}
			f.data = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return nil, errProto
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// uvarint decodes a varint at the start of b and returns it and its
// length, or a length <= 0 if b holds none.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i := 0; i < len(b) && i < 10; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return x, i + 1
		}
	}
	return 0, -1
}

// varints returns the values of a repeated integer field, packed (wire
// type 2) or not (0).
func varints(f protoField, to []uint64) ([]uint64, error) {
	if f.wire == 0 {
		return append(to, f.v), nil
	}
	if f.wire != 2 {
		return nil, errProto
	}
	for b := f.data; len(b) > 0; {
		v, n := uvarint(b)
		if n <= 0 {
			return nil, errProto
		}
		to = append(to, v)
		b = b[n:]
	}
	return to, nil
}

// labelledCPUProto is labelledCPU on the decompressed profile: a
// perftools.profiles.Profile message, of which it reads the sample types
// (field 1), the samples (2: their values, 2, and string labels, 3) and
// the string table (6). The CPU time of a sample is its value of type
// "cpu" in "nanoseconds".
func labelledCPUProto(raw []byte, key, value string) (labelled, total time.Duration, err error) {
	fs, err := protoFields(raw)
	if err != nil {
		return 0, 0, err
	}
	var (
		strs    []string
		types   [][2]uint64 // (type, unit) string indexes
		samples []protoField
	)
	for _, f := range fs {
		switch {
		case f.num == 1 && f.wire == 2:
			vt, err := protoFields(f.data)
			if err != nil {
				return 0, 0, err
			}
			var t [2]uint64
			for _, g := range vt {
				if g.wire == 0 && (g.num == 1 || g.num == 2) {
					t[g.num-1] = g.v
				}
			}
			types = append(types, t)
		case f.num == 2 && f.wire == 2:
			samples = append(samples, f)
		case f.num == 6 && f.wire == 2:
			strs = append(strs, string(f.data))
		}
	}
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return strs[i]
		}
		return ""
	}
	cpu := -1
	for i, t := range types {
		if str(t[0]) == "cpu" && str(t[1]) == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return 0, 0, fmt.Errorf("%w: no cpu/nanoseconds sample type", errProto)
	}
	var vals []uint64
	for _, s := range samples {
		sfs, err := protoFields(s.data)
		if err != nil {
			return 0, 0, err
		}
		vals = vals[:0]
		match := false
		for _, g := range sfs {
			switch g.num {
			case 2:
				if vals, err = varints(g, vals); err != nil {
					return 0, 0, err
				}
			case 3:
				if g.wire != 2 {
					return 0, 0, errProto
				}
				lfs, err := protoFields(g.data)
				if err != nil {
					return 0, 0, err
				}
				var k, v uint64
				for _, h := range lfs {
					if h.wire == 0 && h.num == 1 {
						k = h.v
					} else if h.wire == 0 && h.num == 2 {
						v = h.v
					}
				}
				if str(k) == key && str(v) == value {
					match = true
				}
			}
		}
		if cpu >= len(vals) {
			return 0, 0, fmt.Errorf("%w: a sample with %d values", errProto, len(vals))
		}
		d := time.Duration(vals[cpu])
		total += d
		if match {
			labelled += d
		}
	}
	return labelled, total, nil
}

// TestLabelledCPU checks labelledCPU on a real profile: CPU burnt in a
// goroutine with the server's label is counted as the server's, and
// CPU burnt without it is not.
func TestLabelledCPU(t *testing.T) {
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		t.Skipf("a CPU profile is running: %v", err)
	}
	// burn does the same work each time (about 0.2 s of CPU), so that
	// the halves cost the same CPU time however loaded the machine is.
	burn := func() {
		x := 1
		for range 150_000_000 {
			x = x*31 + 7
		}
		sink = x
	}
	done := make(chan struct{})
	pprof.Do(context.Background(), serverLabels("test"), func(context.Context) {
		go func() { // inherits the label
			defer close(done)
			burn()
		}()
	})
	<-done
	burn()
	pprof.StopCPUProfile()
	server, total, err := labelledCPU(prof.Bytes(), serverLabelKey, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The samples are 10 ms of CPU apart; each half is a few dozen.
	if share := float64(server) / float64(total); total < 100*time.Millisecond || share < 0.3 || share > 0.7 {
		t.Errorf("labelled %v of %v, want about half", server, total)
	}
	if _, _, err := labelledCPU(prof.Bytes(), serverLabelKey, "other"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := labelledCPU([]byte("not gzip"), serverLabelKey, "test"); err == nil {
		t.Error("labelledCPU accepted garbage")
	}
}

// sink keeps TestLabelledCPU's loop from being optimised away.
var sink int

// FuzzLabelledCPU checks that labelledCPUProto does not panic on any
// input.
func FuzzLabelledCPU(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x04, 0x12, 0x02, 0x01, 0x02, 0x32, 0x00, 0x32, 0x03, 'c', 'p', 'u', 0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's'})
	f.Fuzz(func(t *testing.T, raw []byte) {
		labelledCPUProto(raw, serverLabelKey, "server")
	})
}
