package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// fuzzMax is the message size limit under fuzzing: small, so inputs reach
// it easily.
const fuzzMax = 64

// FuzzReadFraming feeds arbitrary bytes to the line reader, with lines both
// shorter and longer than its buffer, and checks that it never panics or
// hangs, that it agrees with a naive split of the input on "\n", and that
// every message it returns re-encodes to valid JSON that decodes again to
// the same encoding.
func FuzzReadFraming(f *testing.F) {
	for _, s := range []string{
		"",
		"\n",
		`{"jsonrpc":"2.0","method":"a"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n\r\n" + `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},3]` + "\n",
		sized(64) + "\n" + sized(65) + "\r\n" + sized(66) + "\n",
		"{nope\n\xff\xfe\n   \n" + `{"jsonrpc":"2.0","method":"\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := referenceOutcomes(t, data, fuzzMax)
		for _, bufSize := range []int{16, readBufferSize} {
			c := newLineConn(nil, io.Discard, fuzzMax, nil)
			c.fr = newFrameReader(bytes.NewReader(data), fuzzMax, bufSize)
			var got []string
			// Every outcome but the last consumes at least one byte.
			for range len(data) + 2 {
				m, err := c.Read(context.Background())
				got = append(got, outcome(t, m, err))
				if err == nil {
					checkReencodes(t, m)
					continue
				}
				var de *jsonrpc.DecodeError
				if !errors.As(err, &de) {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("buffer %d:\ngot  %q\nwant %q", bufSize, got, want)
			}
		}
	})
}

// referenceOutcomes is the framing rule, written the obvious way.
func referenceOutcomes(t *testing.T, data []byte, max int) []string {
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) > max:
			out = append(out, fmt.Sprintf("too-large %d", max))
		case len(bytes.Trim(line, " \t\r")) == 0:
		default:
			m, err := jsonrpc.DecodeMessage(line)
			out = append(out, outcome(t, m, err))
		}
	}
	return append(out, "EOF")
}

// checkReencodes checks that m encodes to valid JSON, and that decoding
// that gives a message with the same encoding.
func checkReencodes(t *testing.T, m jsonrpc.Message) {
	t.Helper()
	enc, err := jsonrpc.AppendMessage(nil, m)
	if err != nil {
		t.Fatalf("re-encoding %#v: %v", m, err)
	}
	if !json.Valid(enc) {
		t.Fatalf("re-encoding is not valid JSON: %q", enc)
	}
	m2, err := jsonrpc.DecodeMessage(enc)
	if err != nil {
		t.Fatalf("re-decoding %q: %v", enc, err)
	}
	if enc2, _ := jsonrpc.AppendMessage(nil, m2); !bytes.Equal(enc, enc2) {
		t.Fatalf("round trip changed the message:\n%q\n%q", enc, enc2)
	}
}
