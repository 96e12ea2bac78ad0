package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
	"github.com/mcpkit/mcpkit/internal/rpclink"
)

// jsonMaxDepth is the JSON decoder's own bound on nesting, past which it
// reports a syntax error.
const jsonMaxDepth = 10000

// Default bounds of [DecodeLimits].
const (
	DefaultMaxDepth   = jsonMaxDepth
	DefaultMaxMembers = 10000
	DefaultMaxValues  = 1 << 20
	DefaultMaxBatch   = 256
)

// DecodeLimits bounds the work and memory that decoding one message may
// cost, so that a peer cannot make the decoder hold much more than the
// message's own bytes. The zero value means the defaults; a negative field
// means no bound of that kind (the JSON decoder's own depth limit of 10000
// still applies).
//
// Checking costs nothing for messages too short to exceed a bound (below
// 40000 bytes with the defaults), a count of one byte (colons) for
// larger ones up to MaxValues bytes, and a scan, which skips strings as
// fast as counting, for longer ones and those whose counts come near a
// bound.
//
// A message over a limit is refused before it is decoded, whether or not
// it is otherwise well-formed, with a [*DecodeError] whose Cause is a
// [*LimitError]: of code [CodeParseError] for nesting too deep (as the
// JSON decoder's own depth limit is a syntax error), else of code
// [CodeInvalidRequest] carrying the message's id when it can be read.
// Both the hand-written decoder and the reflection-based one it falls
// back to decode only messages that passed the check.
type DecodeLimits struct {
	// MaxDepth bounds the nesting of arrays and objects. Zero means
	// DefaultMaxDepth (10000, the JSON decoder's own bound, which costs
	// nothing to check); a lower bound costs a scan of the messages with
	// more containers than it.
	MaxDepth int
	// MaxMembers bounds the object members the decoder must remember at
	// once to detect duplicate names: those of the object being read
	// together with those of every object enclosing it, read so far. It is
	// what bounds the memory of the duplicate-name check (tens of bytes
	// per name). Zero means DefaultMaxMembers (10000).
	MaxMembers int
	// MaxValues bounds the JSON values in the message: every object,
	// array, string, number and literal, member names not counted. Zero
	// means DefaultMaxValues (1048576).
	MaxValues int
	// MaxBatch bounds the elements of a batch. Zero means DefaultMaxBatch
	// (256).
	MaxBatch int
}

// LimitError reports a message that exceeds one of the bounds of
// [DecodeLimits]. It is the Cause of the [*DecodeError] the decoder
// returns, so errors.As finds it.
type LimitError struct {
	// Limit names the DecodeLimits field exceeded: "MaxDepth",
	// "MaxMembers", "MaxValues" or "MaxBatch".
	Limit string
	// Max is that field's value in effect.
	Max int
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("message exceeds the decoder's %s (%d)", e.Limit, e.Max)
}

// DecodeMessage is the package-level [DecodeMessage] with l's bounds. A
// nil l means the defaults.
func (l *DecodeLimits) DecodeMessage(data []byte) (Message, error) {
	return l.decode(data, false, nil)
}

func init() {
	rpclink.DecodeMemo = (*DecodeLimits).decode // for the transports: owned buffers, memos
	rpclink.GrowStack = growStack
	rpclink.CallFramed = (*Conn).callFramed
	rpclink.Relate = relate
	rpclink.CanAnswer = canAnswerEarly
	rpclink.Answer = answerEarly
}

// limits are the bounds in effect, each positive or noLimit.
type limits struct {
	depth, members, values, batch int
}

const noLimit = int(^uint(0) >> 1)

func (l *DecodeLimits) resolve() limits {
	var v DecodeLimits
	if l != nil {
		v = *l
	}
	pick := func(n, def int) int {
		switch {
		case n == 0:
			return def
		case n < 0:
			return noLimit
		}
		return n
	}
	return limits{
		depth:   pick(v.MaxDepth, DefaultMaxDepth),
		members: pick(v.MaxMembers, DefaultMaxMembers),
		values:  pick(v.MaxValues, DefaultMaxValues),
		batch:   pick(v.MaxBatch, DefaultMaxBatch),
	}
}

// check returns the first limit data exceeds, or nil, scanning data in
// full only when cheaper tests cannot clear it. A bound that data is too
// short to exceed needs no test: nesting past depth takes depth+1 opening
// brackets; members past the bound, more than 4 bytes each; every value
// past the first, a comma or an opening bracket before it; every batch
// element past the first, a comma. Otherwise the count of the one byte a
// bound needs (those in strings included, so it is an upper bound)
// clears it unless data comes near it. Depths from the JSON decoder's own
// bound up are left to the decoder. Counting costs about a tenth of
// decoding; scanning token-dense data, about a third.
func (lim *limits) check(data []byte) *LimitError {
	n := len(data)
	switch {
	case n == 0:
		return nil
	case n > lim.values:
		return lim.scan(data) // as fast as counting, for text
	case lim.depth < jsonMaxDepth && n > lim.depth &&
		bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) > lim.depth:
		return lim.scan(data)
	case n/4 > lim.members && bytes.Count(data, []byte{':'}) > lim.members:
		return lim.scan(data)
	case data[0] == '[' && n/2 > lim.batch && bytes.Count(data, []byte{','}) >= lim.batch:
		return lim.scan(data)
	}
	return nil
}

// scan scans data, a JSON text, and returns the first limit it exceeds,
// or nil. It does not validate data: what it cannot count (a string
// without its end, say) it leaves to the decoder to refuse. It allocates
// only for nesting deeper than 64.
func (lim *limits) scan(data []byte) *LimitError {
	// For each open container, the members remembered on entry (objects)
	// or -1 (arrays).
	var stackBuf [64]int
	stack := stackBuf[:0]
	remembered := 0 // members of the open objects
	values := 0     // values past the first
	batch := 0      // batch elements past the first
	topArray := len(data) > 0 && data[0] == '['
	n := len(data)
	for i := 0; i < n; i++ {
		for i < n && !scanClass[data[i]] {
			i++
		}
		if i == n {
			break
		}
		switch data[i] {
		case '"':
			// Short strings byte by byte, long ones from quote to quote.
			j := i + 1
			for short := min(j+32, n); j < short && !stringClass[data[j]]; j++ {
			}
			if j < n && data[j] == '"' {
				i = j
				continue
			}
			end := jsonscan.StringEnd(data, i)
			if end < 0 {
				return nil // unterminated: the decoder refuses it
			}
			i = end - 1 // the closing quote
		case '{', '[':
			if len(stack) >= lim.depth {
				return &LimitError{"MaxDepth", lim.depth}
			}
			if data[i] == '{' {
				stack = append(stack, remembered)
			} else {
				stack = append(stack, -1)
			}
			// The container's first entry, if any, is a value.
			j := i + 1
			for j < n && (data[j] == ' ' || data[j] == '\n' || data[j] == '\r' || data[j] == '\t') {
				j++
			}
			if j < n && data[j] != ']' && data[j] != '}' {
				if values++; values >= lim.values {
					return &LimitError{"MaxValues", lim.values}
				}
			}
		case '}', ']':
			if len(stack) > 0 {
				if top := stack[len(stack)-1]; top >= 0 {
					remembered = top
				}
				stack = stack[:len(stack)-1]
			}
		case ':':
			if len(stack) > 0 && stack[len(stack)-1] >= 0 {
				if remembered++; remembered > lim.members {
					return &LimitError{"MaxMembers", lim.members}
				}
			}
		case ',':
			if values++; values >= lim.values {
				return &LimitError{"MaxValues", lim.values}
			}
			if topArray && len(stack) == 1 {
				if batch++; batch >= lim.batch {
					return &LimitError{"MaxBatch", lim.batch}
				}
			}
		}
	}
	return nil
}

// scanClass marks the bytes limits.check acts on outside strings;
// stringClass those that end or escape within one.
var scanClass, stringClass = func() (sc, st [256]bool) {
	for _, c := range `"{}[]:,` {
		sc[c] = true
	}
	st['"'], st['\\'] = true, true
	return sc, st
}()

// decode checks data against l, then decodes it.
func (l *DecodeLimits) decode(data []byte, owned bool, memo *jsonscan.Memo) (Message, error) {
	data = bytes.TrimLeft(data, " \t\r\n")
	lim := l.resolve()
	if le := lim.check(data); le != nil {
		if le.Limit == "MaxDepth" {
			return nil, &DecodeError{
				Err:   &Error{Code: CodeParseError, Message: "parse error: " + le.Error()},
				Cause: le,
			}
		}
		id, response := envelopeOf(data)
		return nil, &DecodeError{
			ID:       id,
			Err:      &Error{Code: CodeInvalidRequest, Message: "invalid request: " + le.Error(), Data: limitData(le)},
			Cause:    le,
			Response: response,
		}
	}
	if len(data) > 0 && data[0] == '[' {
		return decodeBatch(data)
	}
	return decodeOne(data, owned, memo)
}

// limitData is the error data telling the peer which limit its message
// exceeded. Parse errors carry no data, so nesting too deep gets none.
func limitData(le *LimitError) json.RawMessage {
	return json.RawMessage(`{"limit":"` + le.Limit + `","max":` + strconv.Itoa(le.Max) + `}`)
}

// envelopeOf returns the id of data, a message refused unread, when it
// is a JSON object with a valid id, so that the refusal can name the
// request it answers, and reports whether data is then a response: an
// object with an id and no "method" member. It reads the top-level
// members only, skipping the others without the duplicate-name check,
// so its memory does not grow with data.
func envelopeOf(data []byte) (id ID, response bool) {
	if len(data) == 0 || data[0] != '{' {
		return ID{}, false
	}
	// A bytes.Buffer is read in place, without a copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		return ID{}, false
	}
	hasID, hasMethod, complete := false, false, false
	for {
		if dec.PeekKind() != '"' {
			complete = dec.PeekKind() == '}'
			break
		}
		name, err := dec.ReadToken()
		if err != nil {
			break
		}
		switch name.String() {
		case "id":
			v, err := dec.ReadValue()
			if err != nil {
				return id, false
			}
			if pid, _, err := parseID(v); err == nil && !hasID {
				id, hasID = pid, true
			}
			continue
		case "method":
			hasMethod = true
		}
		if dec.SkipValue() != nil {
			break
		}
	}
	return id, hasID && !hasMethod && complete
}
