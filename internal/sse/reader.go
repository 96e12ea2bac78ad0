package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// DefaultMaxEventSize is the event size limit of a [Reader] made with a
// maxEventSize of zero: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// Sizes of a Reader's read buffer. Lines that fit in it are parsed in
// place; longer ones are accumulated separately. The buffer starts as
// inlineBufferSize bytes within the Reader, since many streams end or
// idle before their first event (an idle stream holds its buffer for as
// long as it stays open); a read that fills it moves to a buffer of
// initialBufferSize, which then doubles, up to readBufferSize, each time
// a read fills it.
const (
	inlineBufferSize  = 128
	initialBufferSize = 2 << 10
	readBufferSize    = 32 << 10
)

// maxRetainedData bounds the data buffer a Reader keeps between events, so
// one huge event does not pin its memory.
const maxRetainedData = 1 << 20

// maxRetry caps a retry field, which is otherwise an arbitrarily long
// string of digits.
const maxRetry = 24 * time.Hour

// ErrEventTooLarge is matched, with errors.Is, by the [*TooLargeError] that
// [Reader.Next] returns for an event over the size limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// TooLargeError reports an event that exceeded the reader's size limit.
// The reader dropped the event and stays usable: the next call to Next
// returns the event after it.
type TooLargeError struct {
	// Limit is the limit that was exceeded, in bytes.
	Limit int
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return "sse: event exceeds the maximum size of " + strconv.Itoa(e.Limit) + " bytes"
}

// Is reports whether target is ErrEventTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrEventTooLarge }

// Reader parses an event stream (the text/event-stream format) following
// the WHATWG HTML standard's rules for interpreting an event stream:
//
//   - A leading byte order mark is skipped. Lines end with "\r\n", "\n" or
//     "\r".
//   - A line starting with ":" is a comment and is ignored.
//   - A line with a colon is a field: the name is what precedes the first
//     colon and the value what follows it, less one leading space. A line
//     without a colon is a field with that name and an empty value.
//   - "data" appends its value and a line feed to the event's data; the
//     last line feed is removed when the event is dispatched.
//   - "event" sets the event's name.
//   - "id" sets the last event ID, unless its value contains a NUL; the ID
//     persists across events until another "id" field changes it, and an
//     empty value resets it.
//   - "retry" sets the reconnection delay, in milliseconds, when its value
//     consists only of ASCII digits.
//   - Other fields are ignored.
//   - A blank line dispatches the event.
//
// Unlike a browser, which drops an event without data, Next returns every
// event that had at least one field, because MCP servers send an event with
// an ID and empty data to give the client a point to resume from. Blank
// lines that end an event without fields are skipped. Bytes are passed
// through as they are: invalid UTF-8 is not replaced.
//
// A Reader is not safe for concurrent use, and must not be copied: its
// buffer starts within itself. Make one with [NewReader].
type Reader struct {
	src   io.Reader
	limit int

	buf        []byte // read buffer; buf[start:end] is unread
	start, end int
	err        error // sticky error from src
	bomChecked bool
	skipLF     bool // the last line ended with "\r": drop a "\n" that follows

	scratch []byte // a line longer than what buf holds at once

	// The event being parsed.
	data     []byte
	name     string
	idBuf    string // the last event ID buffer
	retry    time.Duration
	hasRetry bool // retry was set in this event
	fields   bool // the event has at least one field
	size     int  // bytes of the event's field lines so far
	dropping bool // the event outgrew the limit and is being skipped

	lastID       string        // the last event ID string
	lastRetry    time.Duration // the reconnection delay last set
	retryWasSent bool

	inline [inlineBufferSize]byte // buf to start with
}

// NewReader returns a Reader parsing events from r. maxEventSize bounds the
// size of one event, counted as the bytes of its field lines without their
// line terminators; zero means [DefaultMaxEventSize]. The reader never
// holds more than that much of an event in memory. A comment longer than
// the limit is skipped without error.
func NewReader(r io.Reader, maxEventSize int) *Reader {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	rd := &Reader{src: r, limit: maxEventSize}
	rd.buf = rd.inline[:min(inlineBufferSize, max(maxEventSize+2, 16))]
	return rd
}

// LastEventID returns the last event ID string: the ID in force when the
// most recent event was dispatched, which is what a client sends in a
// Last-Event-ID header to resume the stream.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry returns the reconnection delay the stream last set with a retry
// field, and whether it set one at all.
func (r *Reader) Retry() (time.Duration, bool) { return r.lastRetry, r.retryWasSent }

// Next returns the next event. Its ID is the last event ID in force after
// the event, which may have been set by an earlier event. Its Retry is set
// only when the event itself carried a valid retry field.
//
// At the end of the stream Next returns io.EOF; an event cut short by the
// end of the stream is discarded. A read error from the underlying reader
// is returned as it is, and again by later calls. An event over the size
// limit yields a [*TooLargeError]; the reader skips the rest of that event
// (still honouring its id and retry fields) and the next call continues
// with the event after it.
func (r *Reader) Next() (Event, error) {
	for {
		max := r.limit - r.size
		if r.dropping {
			max = r.limit
		}
		line, tooLong, err := r.readLine(max)
		if err != nil {
			// A partial event at the end of the stream is discarded.
			r.resetEvent()
			r.dropping = false
			return Event{}, err
		}
		if tooLong {
			if r.dropping {
				continue
			}
			r.dropping = true
			r.data = r.data[:0]
			return Event{}, &TooLargeError{Limit: r.limit}
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		r.size += len(line)
		r.field(line)
	}
}

// field processes one field line.
func (r *Reader) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		r.fields = true
		if !r.dropping {
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
		}
	case "event":
		r.fields = true
		r.name = string(value)
	case "id":
		r.fields = true
		if bytes.IndexByte(value, 0) < 0 {
			r.idBuf = string(value)
		}
	case "retry":
		r.fields = true
		if d, ok := parseRetry(value); ok {
			r.retry, r.hasRetry = d, true
			r.lastRetry, r.retryWasSent = d, true
		}
	}
}

// parseRetry parses a retry value: milliseconds as ASCII digits only.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms <= int64(maxRetry/time.Millisecond) {
			ms = ms*10 + int64(c-'0')
		}
	}
	return min(time.Duration(ms)*time.Millisecond, maxRetry), true
}

// dispatch ends the event at a blank line. It reports false when there is
// nothing to return: no fields, or an event already reported too large.
func (r *Reader) dispatch() (Event, bool) {
	r.lastID = r.idBuf
	if r.dropping || !r.fields {
		r.dropping = false
		r.resetEvent()
		return Event{}, false
	}
	ev := Event{ID: r.lastID, Name: r.name}
	if n := len(r.data); n > 1 {
		ev.Data = bytes.Clone(r.data[:n-1]) // without the last "\n"
	}
	if r.hasRetry {
		ev.Retry = r.retry
	}
	r.resetEvent()
	return ev, true
}

// resetEvent clears the per-event buffers. The last event ID buffer is
// not part of the event and persists.
func (r *Reader) resetEvent() {
	if cap(r.data) > maxRetainedData {
		r.data = nil
	}
	r.data = r.data[:0]
	r.name = ""
	r.retry, r.hasRetry = 0, false
	r.fields = false
	r.size = 0
}

// readLine returns the next line without its terminator. A comment line is
// returned as its first byte only, however long it is. A line longer than
// max bytes is skipped without being held in memory and reported with
// tooLong. The returned slice is valid until the next call.
func (r *Reader) readLine(max int) (line []byte, tooLong bool, err error) {
	if !r.bomChecked {
		if err := r.skipBOM(); err != nil {
			return nil, false, err
		}
	}
	r.scratch = r.scratch[:0]
	var (
		started  bool // some bytes of the line were seen
		long     bool // the line spans reads and is in scratch
		comment  bool
		dropping bool // the line is over max and is being skipped
	)
	for {
		if r.start == r.end {
			if r.err != nil {
				return nil, false, r.err
			}
			r.fill()
			continue
		}
		b := r.buf[r.start:r.end]
		if r.skipLF {
			r.skipLF = false
			if b[0] == '\n' {
				r.start++
				continue
			}
		}
		if !started {
			started = true
			comment = b[0] == ':'
		}
		i := indexEOL(b)
		if i < 0 {
			// The line continues past what is buffered.
			r.start = r.end
			long = true
			if !comment && !dropping {
				if len(r.scratch)+len(b) > max {
					dropping = true
					r.scratch = r.scratch[:0]
				} else {
					r.scratch = append(r.scratch, b...)
				}
			}
			continue
		}
		seg := b[:i]
		r.start += i + 1
		if b[i] == '\r' {
			if i+1 < len(b) {
				if b[i+1] == '\n' {
					r.start++
				}
			} else {
				r.skipLF = true
			}
		}
		switch {
		case comment:
			return []byte{':'}, false, nil
		case dropping:
			return nil, true, nil
		case long:
			if len(r.scratch)+len(seg) > max {
				return nil, true, nil
			}
			r.scratch = append(r.scratch, seg...)
			return r.scratch, false, nil
		case len(seg) > max:
			return nil, true, nil
		}
		return seg, false, nil
	}
}

// indexEOL returns the index of the first "\r" or "\n" in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	search := b
	if i >= 0 {
		search = b[:i]
	}
	if j := bytes.IndexByte(search, '\r'); j >= 0 {
		return j
	}
	return i
}

// bom is the UTF-8 byte order mark.
const bom = "\xEF\xBB\xBF"

// skipBOM drops a byte order mark at the start of the stream. It reads
// more only while what is buffered is a proper prefix of one.
func (r *Reader) skipBOM() error {
	for {
		b := r.buf[r.start:r.end]
		switch {
		case bytes.HasPrefix(b, []byte(bom)):
			r.start += len(bom)
		case len(b) < len(bom) && bytes.HasPrefix([]byte(bom), b):
			if r.err == nil {
				r.fill()
				continue
			}
		}
		r.bomChecked = true
		if r.start == r.end && r.err != nil {
			return r.err
		}
		return nil
	}
}

// fill reads once more from the source into the buffer, moving unread
// bytes to its front first. It records the source's error.
func (r *Reader) fill() {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.err = errors.New("sse: invalid count from Read")
			return
		}
		r.end += n
		if r.end == len(r.buf) && len(r.buf) < readBufferSize && len(r.buf) < r.limit+2 {
			// The source has more at hand than the buffer holds: read
			// in larger pieces from now on.
			grown := make([]byte, min(max(2*len(r.buf), initialBufferSize), readBufferSize, r.limit+2))
			copy(grown, r.buf)
			r.buf = grown
		}
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}
