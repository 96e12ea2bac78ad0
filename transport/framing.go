package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// DefaultMaxMessageSize is the largest incoming message, in bytes, that the
// byte-stream transports accept when their MaxMessageSize is zero. It is
// 16 MiB. The line terminator ("\n" or "\r\n") does not count.
const DefaultMaxMessageSize = 16 << 20

const (
	// readBufferSize is the size of the one bufio.Reader each connection
	// reads through. Lines that fit are decoded in place.
	readBufferSize = 64 << 10
	// maxRetainedBuffer bounds the scratch and write buffers a connection
	// keeps between messages, so one huge message does not pin its memory.
	maxRetainedBuffer = 1 << 20
)

// maxMessageSize resolves a MaxMessageSize option.
func maxMessageSize(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxMessageSize, nil
	case n < 0:
		return 0, fmt.Errorf("transport: MaxMessageSize %d is negative", n)
	}
	return n, nil
}

// frameReader splits a byte stream into newline-delimited frames. It is
// used by one goroutine at a time.
type frameReader struct {
	br      *bufio.Reader
	limit   int    // largest frame accepted, terminator excluded
	scratch []byte // accumulates a line longer than br's buffer
	err     error  // sticky: io.EOF or a read error
}

// newFrameReader returns a reader of frames of at most limit bytes from r,
// through a buffer of bufSize bytes, or less when limit is small.
func newFrameReader(r io.Reader, limit, bufSize int) *frameReader {
	if limit < bufSize-2 {
		bufSize = limit + 2 // room for the longest acceptable line and "\r\n"
	}
	return &frameReader{br: bufio.NewReaderSize(r, bufSize), limit: limit}
}

// next returns the next non-blank line, without its terminator. The slice
// is only valid until the following call. A line over the limit yields a
// *jsonrpc.DecodeError and the reader stays usable; at end of input next
// returns io.EOF, and any other read error is returned as is and repeated
// by later calls. A last line that lacks its "\n" is returned before io.EOF.
func (r *frameReader) next() ([]byte, error) {
	if cap(r.scratch) > maxRetainedBuffer {
		r.scratch = nil
	}
	for {
		if r.err != nil {
			return nil, r.err
		}
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if line == nil {
			continue // blank line
		}
		return line, nil
	}
}

// line reads one line. It returns nil, nil for a blank line.
func (r *frameReader) line() ([]byte, error) {
	var (
		long     bool // the line outgrew br's buffer and is in scratch
		tooLarge bool // the line is over the limit and is being discarded
	)
	r.scratch = r.scratch[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			chunk = chunk[:len(chunk)-1] // drop the "\n"
		case errors.Is(err, bufio.ErrBufferFull):
			long = true
			if !tooLarge {
				// Allow one byte over the limit: it may be a "\r".
				if len(r.scratch)+len(chunk) > r.limit+1 {
					tooLarge = true
					r.scratch = r.scratch[:0]
				} else {
					r.scratch = append(r.scratch, chunk...)
				}
			}
			continue
		default:
			// End of input or a read failure. At end of input, the
			// bytes read since the last "\n" are a final line.
			r.err = err
			if err != io.EOF {
				return nil, err
			}
			if len(chunk) == 0 && !long {
				return nil, io.EOF
			}
		}
		if long && !tooLarge {
			if len(r.scratch)+len(chunk) > r.limit+1 {
				tooLarge = true
			} else {
				r.scratch = append(r.scratch, chunk...)
				chunk = r.scratch
			}
		}
		if !tooLarge {
			if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
				chunk = chunk[:n-1]
			}
			tooLarge = len(chunk) > r.limit
		}
		if tooLarge {
			return nil, tooLargeError(r.limit)
		}
		if isBlank(chunk) {
			return nil, nil
		}
		return chunk, nil
	}
}

// isBlank reports whether line holds only JSON whitespace.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// tooLargeError reports a skipped line longer than limit bytes. The limit
// also travels in the error's data, so the peer learns it and
// IsMessageTooLarge can recognise the error.
func tooLargeError(limit int) *jsonrpc.DecodeError {
	n := strconv.Itoa(limit)
	return &jsonrpc.DecodeError{Err: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: "invalid request: message exceeds the maximum size of " + n + " bytes",
		Data:    json.RawMessage(`{"maxMessageSize":` + n + `}`),
	}}
}

// IsMessageTooLarge reports whether err is the [*jsonrpc.DecodeError] that
// Read returns for an incoming message over the size limit, and if so what
// the limit was, in bytes.
//
// Read returns a plain *jsonrpc.DecodeError, not a type of this package, so
// that every consumer of a [jsonrpc.Stream] treats the message as one bad
// message rather than a broken stream. The error has code
// [jsonrpc.CodeInvalidRequest], no id, and data {"maxMessageSize": limit}.
func IsMessageTooLarge(err error) (limit int, ok bool) {
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || de.Err == nil ||
		de.Err.Code != jsonrpc.CodeInvalidRequest || len(de.Err.Data) == 0 {
		return 0, false
	}
	var data struct {
		MaxMessageSize *int `json:"maxMessageSize"`
	}
	if jsonv2.Unmarshal(de.Err.Data, &data) != nil || data.MaxMessageSize == nil {
		return 0, false
	}
	return *data.MaxMessageSize, true
}

// appendFrame appends the encoding of m and a "\n" to dst. The encoding is
// compacted when raw params, results or error data brought line breaks, so
// the frame is always exactly one line.
func appendFrame(dst []byte, m jsonrpc.Message) ([]byte, error) {
	start := len(dst)
	dst, err := jsonrpc.AppendMessage(dst, m)
	if err != nil {
		return dst[:start], err
	}
	if enc := dst[start:]; bytes.IndexByte(enc, '\n') >= 0 || bytes.IndexByte(enc, '\r') >= 0 {
		// Outside strings, JSON whitespace is all Compact removes; inside
		// strings a raw line break is invalid JSON and Compact rejects it.
		v := jsontext.Value(enc)
		if err := v.Compact(); err != nil {
			return dst[:start], fmt.Errorf("transport: message is not valid JSON: %w", err)
		}
		dst = append(dst[:start], v...)
	}
	return append(dst, '\n'), nil
}
