package jsonrpc

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

// ID identifies a request. It is a JSON string or a JSON number, kept
// exactly as the peer wrote it, so a response echoes the bytes it was given.
//
// The zero ID is "absent": a message without an ID is a notification. IDs
// are comparable and may be used as map keys.
type ID struct {
	raw string // JSON text of the id; "" when absent
}

// StringID returns an ID holding the JSON string s.
func StringID(s string) ID {
	b, _ := jsonscan.AppendQuote(nil, s) // never fails: invalid UTF-8 is replaced
	return ID{raw: string(b)}
}

// Int64ID returns an ID holding the JSON number n.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.raw != "" }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return id.raw != "" && id.raw[0] == '"' }

// Raw returns the JSON text of the ID, or "" when it is absent.
func (id ID) Raw() string { return id.raw }

// String returns the ID for humans: a string ID unquoted, a number as written.
func (id ID) String() string {
	if id.IsString() {
		b, err := jsontext.AppendUnquote(nil, id.raw)
		if err == nil {
			return string(b)
		}
	}
	return id.raw
}

// Int64 returns the ID as an integer, when it is a JSON number that fits.
func (id ID) Int64() (int64, bool) {
	if id.raw == "" || id.IsString() {
		return 0, false
	}
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// errBadID is returned when an id is neither a string nor a number.
var errBadID = errors.New("jsonrpc: id must be a string or a number")

// parseID validates raw JSON text as an ID. A JSON null yields the absent ID
// and null=true.
func parseID(v jsontext.Value) (id ID, null bool, err error) {
	switch v.Kind() {
	case '"', '0':
		return ID{raw: string(v)}, false, nil
	case 'n':
		return ID{}, true, nil
	}
	return ID{}, false, errBadID
}

// MarshalJSON implements encoding/json.Marshaler; an absent ID is written
// as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON implements encoding/json.Unmarshaler. A JSON null yields
// the absent ID.
func (id *ID) UnmarshalJSON(b []byte) error {
	v := jsontext.Value(b)
	if err := v.Compact(); err != nil {
		return fmt.Errorf("jsonrpc: bad id: %w", err)
	}
	parsed, _, err := parseID(v)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}
