package mcp

//go:generate go run ../internal/jsongen

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The JSON boundary. The SDK encodes and decodes protocol messages with
// an engine of its own (github.com/go-json-experiment/json), through the
// unexported marshalJSONTo and unmarshalJSONFrom methods of each type,
// which the options below register with the engine (jsonMarshalers and
// jsonUnmarshalers, in jsonmethods.go): the engine's own hooks, methods
// named MarshalJSONTo and UnmarshalJSONFrom, would put its pre-release
// types into the API of every protocol type. Every encoding and decoding
// of protocol values in this package goes through these options, which
// take precedence over any method of a type, so the engine calls none of
// the encoding/json methods on the way to or from the wire.
//
// Programs that log, store or forward protocol values use encoding/json,
// through the MarshalJSON and UnmarshalJSON methods in jsonmethods.go,
// which call the same engine with the same options: every protocol type
// encodes to the same bytes either way (encoding/json's json.Marshal adds
// only its HTML escaping of <, > and &, which Encoder.SetEscapeHTML(false)
// turns off), and decodes with the same rules (member names match
// exactly, invalid UTF-8 is an error). A program that calls the engine
// itself on a protocol value reaches the same methods through
// encoding/json's.

// The options every encoding and decoding of protocol values uses. They
// are made once, by init: the methods they register reach them again
// (a prompt message encodes its content block with marshalStd), which an
// initializer of a variable cannot express. Nothing changes them after.
var (
	// marshalers encode protocol values.
	marshalers *jsonv2.Marshalers
	// marshalOptions encode protocol values as the wire carries them.
	marshalOptions jsonv2.Options
	// unmarshalers decode protocol values; capsCache puts its own before
	// them.
	unmarshalers *jsonv2.Unmarshalers
	// unmarshalOptions decode protocol values as the wire carries them.
	unmarshalOptions jsonv2.Options
	// receivedOptions are unmarshalOptions for a value received in a
	// message (see receivedOption): the options that decode results and
	// the params of a request of the handshake era.
	receivedOptions []jsonv2.Options
)

func init() {
	marshalers = jsonv2.JoinMarshalers(jsonMarshalers, jsonv2.MarshalToFunc(marshalID))
	marshalOptions = jsonv2.JoinOptions(jsonv2.Deterministic(true), jsonv2.WithMarshalers(marshalers))
	unmarshalers = jsonv2.JoinUnmarshalers(jsonUnmarshalers, jsonv2.UnmarshalFromFunc(unmarshalID))
	unmarshalOptions = jsonv2.WithUnmarshalers(unmarshalers)
	receivedOptions = []jsonv2.Options{jsonv2.JoinOptions(unmarshalOptions, receivedOption)}
}

// marshalStd encodes v as the SDK does on the wire.
func marshalStd(v any) ([]byte, error) {
	return jsonv2.Marshal(v, marshalOptions)
}

// unmarshalStd decodes data into v as the SDK does on the wire.
func unmarshalStd(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, unmarshalOptions)
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
	return jsonv2.Unmarshal(data, v, receivedOptions...)
}

// marshalID encodes a JSON-RPC id (a progress token, a request id) as
// the peer wrote it; an absent id is null.
func marshalID(enc *jsontext.Encoder, id *jsonrpc.ID) error {
	if !id.IsValid() {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteValue(jsontext.Value(id.Raw()))
}

// unmarshalID decodes a JSON-RPC id, keeping its text; null is the
// absent id.
func unmarshalID(dec *jsontext.Decoder, id *jsonrpc.ID) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return id.UnmarshalJSON(v)
}
