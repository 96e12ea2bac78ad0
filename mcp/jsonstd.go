package mcp

//go:generate go run ../internal/jsongen

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The JSON boundary. The SDK encodes and decodes protocol messages with
// an engine of its own (github.com/go-json-experiment/json), through the
// MarshalJSONTo and UnmarshalJSONFrom methods of each type. Programs that
// log, store or forward protocol values use encoding/json, through the
// MarshalJSON and UnmarshalJSON methods in jsonmethods.go, which call the
// same engine: every protocol type encodes to the same bytes either way
// (encoding/json's json.Marshal adds only its HTML escaping of <, > and &,
// which Encoder.SetEscapeHTML(false) turns off), and decodes with the same
// rules (member names match exactly, invalid UTF-8 is an error).

// marshalStd encodes v as the SDK does on the wire.
func marshalStd(v any) ([]byte, error) {
	return jsonv2.Marshal(v, jsonv2.Deterministic(true))
}

// unmarshalStd decodes data into v as the SDK does on the wire.
func unmarshalStd(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v)
}

// receivedOption is the decoding option for a value that came in a
// message the JSON-RPC layer decoded: that decode validated the whole
// message, with its rule that no object has a member name twice, so a
// second decode of a part of it (params, a result) need not check names
// again. That check is most of the cost of reading a nested object such
// as _meta, and the deepest frame of a decode, where the stack grows.
// Values from transports that pass messages without encoding them come
// from the peer's own encoder.
var receivedOption = jsontext.AllowDuplicateNames(true)

// unmarshalReceived decodes data, params or a result from a message the
// JSON-RPC layer decoded, into v (see receivedOption).
func unmarshalReceived(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, receivedOption)
}

// MarshalJSON implements encoding/json.Marshaler with the SDK's encoding.
func (cs Contents) MarshalJSON() ([]byte, error) { return marshalStd(cs) }

// UnmarshalJSON implements encoding/json.Unmarshaler with the SDK's decoding.
func (cs *Contents) UnmarshalJSON(data []byte) error { return unmarshalStd(data, cs) }
