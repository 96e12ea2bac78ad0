// Package jsonscan gives the hand-written decoders and encoders of mcpkit
// (the JSON-RPC envelope, the common protocol types) what they share:
// pooled jsontext.Decoders that read a byte slice in place, without
// copying it; a validator that decides the common shapes of text in one
// pass; scans of members and values; a test for strings that need no
// unescaping; and strings read and written a word at a time (PlainRun,
// AppendQuote).
package jsonscan

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoder is a jsontext.Decoder reading a byte slice in place: the raw
// values it returns are slices of that input.
type Decoder struct {
	jsontext.Decoder
	buf bytes.Buffer
}

var pool = sync.Pool{New: func() any { return new(Decoder) }}

// Get returns a pooled decoder reading data. Call Release when done.
func Get(data []byte) *Decoder { return get(data) }

// GetValidated is Get for data that was validated already, as a part of
// a message the JSON-RPC layer decoded: the decoder does not check that
// no object has a member name twice, which that decode did (the check is
// most of the cost of reading an object).
func GetValidated(data []byte) *Decoder { return get(data, allowDuplicates) }

var allowDuplicates = jsontext.AllowDuplicateNames(true) // an option value, never changed

func get(data []byte, opts ...jsontext.Options) *Decoder {
	d := pool.Get().(*Decoder)
	d.buf = *bytes.NewBuffer(data) // a bytes.Buffer is read in place
	d.Reset(&d.buf, opts...)       // options not given are reset to their defaults
	return d
}

// Release returns d to the pool, letting go of its input. Neither d nor
// its input may be used through d afterwards; values read from it stay
// valid, as they are slices of the input.
func (d *Decoder) Release() {
	d.buf = bytes.Buffer{}
	d.Reset(&d.buf)
	pool.Put(d)
}

// PlainString returns the contents of v, the raw JSON of a string without
// escapes; it reports false for any other value.
func PlainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}
