package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// members returns an object of n distinct members.
func members(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

// array returns an array of n zeros.
func array(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

func TestDecodeLimits(t *testing.T) {
	nested := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	// Each message is sent in two shapes: one the hand-written decoder
	// takes, and one with an escaped member name that only the reflection
	// fallback decodes. Both must be refused alike.
	shapes := []struct {
		name   string
		format string
	}{
		{"fast", `{"jsonrpc":"2.0","id":7,"method":"m","params":%s}`},
		{"reflect", `{"jsonrpc":"2.0","id":7,"m\u0065thod":"m","params":%s}`},
	}
	tests := []struct {
		name   string
		lim    DecodeLimits
		params string
		limit  string // the limit exceeded; "" when the message passes
	}{
		// The envelope's four members count too: inside params, four are
		// remembered already.
		{"members at the bound", DecodeLimits{MaxMembers: 104}, members(100), ""},
		{"members past the bound", DecodeLimits{MaxMembers: 103}, members(100), "MaxMembers"},
		{"sibling objects do not add up", DecodeLimits{MaxMembers: 60}, `{"a":` + members(30) + `,"b":` + members(30) + `}`, ""},
		{"nested objects add up", DecodeLimits{MaxMembers: 60}, `{"x":` + strings.TrimSuffix(members(30), "}") + `,"y":` + members(30) + `}}`, "MaxMembers"},
		{"names in strings do not count", DecodeLimits{MaxMembers: 6}, `{"a":"x:\":,y","b":"\\"}`, ""},
		{"depth at the bound", DecodeLimits{MaxDepth: 10}, nested(9), ""},
		{"depth past the bound", DecodeLimits{MaxDepth: 10}, nested(10), "MaxDepth"},
		// 1006 values: the message, its four members, params' one, the
		// array's 1000.
		{"values at the bound", DecodeLimits{MaxValues: 1006}, `{"a":` + array(1000) + `}`, ""},
		{"values past the bound", DecodeLimits{MaxValues: 1005}, `{"a":` + array(1000) + `}`, "MaxValues"},
		{"no bound", DecodeLimits{MaxDepth: -1, MaxMembers: -1, MaxValues: -1}, nested(2000), ""},
	}
	for _, tt := range tests {
		for _, sh := range shapes {
			t.Run(tt.name+"/"+sh.name, func(t *testing.T) {
				data := fmt.Sprintf(sh.format, tt.params)
				for _, owned := range []bool{false, true} {
					var (
						m   Message
						err error
					)
					if owned {
						m, err = tt.lim.decode([]byte(data), true, nil)
					} else {
						m, err = tt.lim.DecodeMessage([]byte(data))
					}
					if tt.limit == "" {
						if err != nil {
							t.Fatalf("decode: %v", err)
						}
						if r, ok := m.(*Request); !ok || r.Method != "m" {
							t.Fatalf("decoded %#v", m)
						}
						continue
					}
					var de *DecodeError
					var le *LimitError
					if !errors.As(err, &de) || !errors.As(err, &le) {
						t.Fatalf("decode = %v, %v; want a DecodeError caused by a LimitError", m, err)
					}
					// Nesting too deep is a syntax error for the JSON
					// decoder too: a parse error, whose id is not read.
					code, id := int64(CodeInvalidRequest), Int64ID(7)
					if tt.limit == "MaxDepth" {
						code, id = CodeParseError, ID{}
					}
					if de.Err.Code != code || le.Limit != tt.limit || de.ID != id {
						t.Fatalf("error code %d, limit %q, id %q (%v); want %d, %q, %q", de.Err.Code, le.Limit, de.ID.Raw(), err, code, tt.limit, id.Raw())
					}
				}
			})
		}
	}
}

func TestDecodeLimitsBatch(t *testing.T) {
	elem := `{"jsonrpc":"2.0","method":"n"}`
	batch := func(n int) []byte { return []byte("[" + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + "]") }
	lim := DecodeLimits{MaxBatch: 50}
	if m, err := lim.DecodeMessage(batch(50)); err != nil || len(m.(Batch)) != 50 {
		t.Fatalf("batch of 50: %v", err)
	}
	_, err := lim.DecodeMessage(batch(51))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxBatch" {
		t.Fatalf("batch of 51: %v; want MaxBatch", err)
	}
	if _, err := DecodeMessage(batch(DefaultMaxBatch + 1)); !errors.As(err, &le) || le.Limit != "MaxBatch" {
		t.Fatalf("default: %v; want MaxBatch", err)
	}
}

// TestDecodeMemoryBounded decodes a message whose params hold 200,000
// distinct member names, which the duplicate-name check would remember
// (at tens of bytes each) before the message could be refused: the
// decoder must refuse it for what it costs, allocating little more than
// the message's own size.
func TestDecodeMemoryBounded(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + members(200000) + `}`)
	for _, owned := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if owned {
			_, err = (*DecodeLimits)(nil).decode(data, true, nil)
		} else {
			_, err = DecodeMessage(data)
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(len(data))/4 {
			t.Errorf("decoding %d bytes allocated %d bytes", len(data), grew)
		}
		if err == nil {
			t.Error("a message with 200000 members was accepted")
		}
	}
}

// scanReference measures data as limits.check does, with the JSON
// decoder's tokens: the deepest nesting, the most members remembered at
// once, the values past the first, the batch elements past the first.
func scanReference(data []byte) (depth, remembered, values, batch int, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	type frame struct {
		object bool
		entry  int // remembered on entry
		n      int // entries so far
	}
	var stack []frame
	cur := 0
	seen := false
	for {
		kind := dec.PeekKind()
		if kind == 0 || (seen && len(stack) == 0) {
			// One value only: the input must end after it.
			_, err := dec.ReadToken()
			return depth, remembered, values, batch, err == io.EOF
		}
		_, length := dec.StackIndex(dec.StackDepth())
		if len(stack) > 0 && stack[len(stack)-1].object && kind != '}' && length%2 == 0 {
			// A member name.
			if _, err := dec.ReadToken(); err != nil {
				return 0, 0, 0, 0, false
			}
			cur++
			remembered = max(remembered, cur)
			continue
		}
		if kind != ']' && kind != '}' {
			if seen {
				values++
			}
			seen = true
			if len(stack) == 1 && !stack[0].object {
				if stack[0].n > 0 {
					batch++
				}
				stack[0].n++
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return 0, 0, 0, 0, false
		}
		switch kind {
		case '{', '[':
			stack = append(stack, frame{object: kind == '{', entry: cur})
			depth = max(depth, len(stack))
		case '}', ']':
			if stack[len(stack)-1].object {
				cur = stack[len(stack)-1].entry
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// FuzzDecodeLimits holds the byte scanner of limits.check to a count made
// with the JSON decoder's tokens: for valid JSON, each limit set to what
// the input needs passes it, and one less refuses it.
func FuzzDecodeLimits(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"h\"i"}}}`,
		`[{"a":[1,2,{"b":"\\"}]},{"c":{}},[],[[]]]`,
		`{"a":{"b":{"c":1,"d":2},"e":3},"f":[{"g":4}]}`,
		` [ 1 , "x:,{" , { "y" : [ ] } ] `,
		`"just a string"`, `12`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimLeft(data, " \t\r\n")
		depth, remembered, values, batch, ok := scanReference(data)
		if !ok {
			return
		}
		top := len(data) > 0 && data[0] == '['
		if !top {
			batch = 0
		}
		all := limits{noLimit, noLimit, noLimit, noLimit}
		for _, c := range []struct {
			name string
			set  func(*limits, int)
			need int
		}{
			{"MaxDepth", func(l *limits, n int) { l.depth = n }, depth},
			{"MaxMembers", func(l *limits, n int) { l.members = n }, remembered},
			{"MaxValues", func(l *limits, n int) { l.values = n }, values + 1},
			{"MaxBatch", func(l *limits, n int) { l.batch = n }, batch + 1},
		} {
			lim := all
			c.set(&lim, max(c.need, 1))
			if le := lim.check(data); le != nil {
				t.Fatalf("%q: %s %d (what it needs) refused: %v", data, c.name, c.need, le)
			}
			if c.need <= 1 {
				continue
			}
			lim = all
			c.set(&lim, c.need-1)
			if le := lim.check(data); le == nil || le.Limit != c.name {
				t.Fatalf("%q: %s %d (one less than it needs) gave %v", data, c.name, c.need-1, le)
			}
		}
	})
}

// BenchmarkDecodeLimits decodes tools/list results of 20 and 1000 tools
// (about 6 KiB and 300 KiB of small tokens) with the default limits and
// with none, and measures the full scan alone. The small one is not
// checked at all; the large one has more members than MaxMembers, so
// that its bytes counts cannot clear it: it is scanned in full.
func BenchmarkDecodeLimits(b *testing.B) {
	none := &DecodeLimits{MaxDepth: -1, MaxMembers: -1, MaxValues: -1, MaxBatch: -1}
	for _, tools := range []int{20, 1000} {
		var sb strings.Builder
		sb.WriteString(`{"jsonrpc":"2.0","id":3,"result":{"tools":[`)
		for i := range tools {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"name":"tool%d","description":"Does thing %d.","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","minimum":0},"c":{"type":"array","items":{"type":"number"}}},"required":["a"]}}`, i, i)
		}
		sb.WriteString(`]}}`)
		data := []byte(sb.String())
		for _, c := range []struct {
			name string
			lim  *DecodeLimits
		}{{"default", nil}, {"none", none}} {
			b.Run(fmt.Sprintf("%d/%s", tools, c.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := c.lim.decode(data, true, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("%d/scan", tools), func(b *testing.B) {
			lim := (*DecodeLimits)(nil).resolve()
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if le := lim.scan(data); le != nil {
					b.Fatal(le)
				}
			}
		})
	}
}
