package fastschema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// errTrailing reports data after the top-level value.
var errTrailing = errors.New("jsontext: invalid data after top-level value")

// ValidateJSON validates data, the text of one JSON value, in a single
// pass over its tokens, without decoding it into Go values. It accepts
// and rejects the same values as decoding data with
// github.com/go-json-experiment/json (strict syntax, valid UTF-8, no
// duplicate member names) and then calling Validate. A value that does
// not match the schema gives an [*Error]; text that is not such JSON
// gives the decoder's error.
//
// When a value breaks more than one rule, a missing required property
// of an object is reported before any error in its members, as by
// Validate; among the members, the first in the text is reported.
func (v *Validator) ValidateJSON(data []byte) error {
	d := jsonscan.Get(data)
	defer d.Release()
	verr, err := v.root.checkJSON(&d.Decoder)
	if err != nil {
		return err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errTrailing
		}
		return err
	}
	if verr != nil {
		return verr
	}
	return nil
}

// allows reports whether a value of JSON type t passes the type keyword.
func (n *node) allows(t string) bool {
	if len(n.types) == 0 {
		return true
	}
	for _, s := range n.types {
		if s == t || s == "number" && t == "integer" {
			return true
		}
	}
	return false
}

func (n *node) typeError(t string) *Error {
	return &Error{Message: fmt.Sprintf("want %s, got %s", strings.Join(n.types, " or "), t)}
}

// checkJSON reads one value from d and checks it. A syntax error stops
// the walk (err); a validation failure (verr) does not, so that the rest
// of the input is still read and a later syntax error still wins, as it
// does when the whole text is decoded first. Paths in verr are relative
// to this value.
func (n *node) checkJSON(d *jsontext.Decoder) (verr *Error, err error) {
	switch d.PeekKind() {
	case '{':
		if n.hasConst || n.enum != nil {
			return n.checkDecoded(d)
		}
		if !n.allows("object") {
			return n.typeError("object"), d.SkipValue()
		}
		return n.checkObjectJSON(d)
	case '[':
		if n.hasConst || n.enum != nil {
			return n.checkDecoded(d)
		}
		if !n.allows("array") {
			return n.typeError("array"), d.SkipValue()
		}
		return n.checkArrayJSON(d)
	}
	raw, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	return n.checkScalar(raw)
}

// checkDecoded decodes the next value and checks it with check. It is
// the path for objects and arrays compared with enum or const.
func (n *node) checkDecoded(d *jsontext.Decoder) (*Error, error) {
	raw, err := d.ReadValue()
	if err != nil {
		return nil, err
	}
	var x any
	if err := jsonv2.Unmarshal(raw, &x); err != nil {
		return nil, err
	}
	if err := n.check(x, ""); err != nil {
		return err.(*Error), nil
	}
	return nil, nil
}

// checkScalar checks raw, the text of a null, boolean, number or string.
func (n *node) checkScalar(raw jsontext.Value) (*Error, error) {
	var (
		t   string
		f   float64
		str []byte
	)
	switch raw[0] {
	case 'n':
		t = "null"
	case 't', 'f':
		t = "boolean"
	case '"':
		t = "string"
		if bytes.IndexByte(raw, '\\') < 0 {
			str = raw[1 : len(raw)-1]
		} else {
			var err error
			if str, err = jsontext.AppendUnquote(nil, raw); err != nil {
				return nil, err
			}
		}
	default:
		var err error
		if f, err = strconv.ParseFloat(string(raw), 64); err != nil {
			// Out of the range of float64, as for decoding into any.
			return nil, fmt.Errorf("cannot decode JSON number %s: %w", raw, err)
		}
		t = typeOf(f)
	}
	if !n.allows(t) {
		return n.typeError(t), nil
	}
	if n.hasConst || n.enum != nil {
		// Compare the decoded value, as check does; rarely on a hot path.
		x := scalarValue(raw, t, f, str)
		if n.hasConst && !equal(x, n.constVal) {
			return &Error{Message: fmt.Sprintf("must be %v", n.constVal)}, nil
		}
		if n.enum != nil && !containsEqual(n.enum, x) {
			return &Error{Message: fmt.Sprintf("must be one of %v, got %v", n.enum, x)}, nil
		}
	}
	switch t {
	case "string":
		return n.checkBytes(str), nil
	case "integer", "number":
		if err := n.checkNumber(f, ""); err != nil {
			return err.(*Error), nil
		}
	}
	return nil, nil
}

func containsEqual(vals []any, x any) bool {
	for _, e := range vals {
		if equal(x, e) {
			return true
		}
	}
	return false
}

// scalarValue is the Go value that decoding a scalar into any gives.
func scalarValue(raw []byte, t string, f float64, str []byte) any {
	switch t {
	case "null":
		return nil
	case "boolean":
		return raw[0] == 't'
	case "string":
		return string(str)
	}
	return f
}

// checkBytes is checkString for the contents of a string.
func (n *node) checkBytes(s []byte) *Error {
	if n.minLen != nil || n.maxLen != nil {
		l := utf8.RuneCount(s)
		if n.minLen != nil && l < *n.minLen {
			return &Error{Message: fmt.Sprintf("must be at least %d characters, got %d", *n.minLen, l)}
		}
		if n.maxLen != nil && l > *n.maxLen {
			return &Error{Message: fmt.Sprintf("must be at most %d characters, got %d", *n.maxLen, l)}
		}
	}
	if n.pattern != nil && !n.pattern.Match(s) {
		return &Error{Message: fmt.Sprintf("must match pattern %q", n.pattern.String())}
	}
	return nil
}

// checkObjectJSON reads an object and checks its members.
func (n *node) checkObjectJSON(d *jsontext.Decoder) (*Error, error) {
	if _, err := d.ReadToken(); err != nil { // '{'
		return nil, err
	}
	// Which required properties are present: a bit each, or a slice for
	// more than 64.
	var seenBits uint64
	var seen []bool
	if len(n.required) > 64 {
		seen = make([]bool, len(n.required))
	}
	var first *Error
	for d.PeekKind() != '}' {
		rawName, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		name := rawName[1 : len(rawName)-1]
		if bytes.IndexByte(rawName, '\\') >= 0 {
			if name, err = jsontext.AppendUnquote(nil, rawName); err != nil {
				return nil, err
			}
		}
		f, declared := n.fields[string(name)]
		if declared && f.req >= 0 {
			if seen != nil {
				seen[f.req] = true
			} else {
				seenBits |= 1 << f.req
			}
		}
		p := f.node
		switch {
		case first != nil:
			p = nil // one failure is enough: only read the rest
		case p != nil:
		case n.addlFalse:
			first = &Error{Message: fmt.Sprintf("unexpected property %q", name)}
		case n.addl != nil:
			p = n.addl
		}
		if p == nil {
			if err := d.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		verr, err := p.checkJSON(d)
		if err != nil {
			return nil, err
		}
		if verr != nil {
			verr.Path = "/" + escape(string(name)) + verr.Path
			first = verr
		}
	}
	if _, err := d.ReadToken(); err != nil { // '}'
		return nil, err
	}
	for i, r := range n.required {
		if seen != nil && !seen[i] || seen == nil && seenBits&(1<<i) == 0 {
			return &Error{Message: fmt.Sprintf("missing required property %q", r)}, nil
		}
	}
	return first, nil
}

// checkArrayJSON reads an array and checks its items.
func (n *node) checkArrayJSON(d *jsontext.Decoder) (*Error, error) {
	if _, err := d.ReadToken(); err != nil { // '['
		return nil, err
	}
	var first *Error
	i := 0
	for ; d.PeekKind() != ']'; i++ {
		if first != nil || n.items == nil {
			if err := d.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		verr, err := n.items.checkJSON(d)
		if err != nil {
			return nil, err
		}
		if verr != nil {
			verr.Path = "/" + strconv.Itoa(i) + verr.Path
			first = verr
		}
	}
	if _, err := d.ReadToken(); err != nil { // ']'
		return nil, err
	}
	if n.minItems != nil && i < *n.minItems {
		return &Error{Message: fmt.Sprintf("must have at least %d items, got %d", *n.minItems, i)}, nil
	}
	if n.maxItems != nil && i > *n.maxItems {
		return &Error{Message: fmt.Sprintf("must have at most %d items, got %d", *n.maxItems, i)}, nil
	}
	return first, nil
}
