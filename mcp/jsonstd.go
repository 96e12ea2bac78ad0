package mcp

//go:generate go run ../internal/jsongen

import (
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The JSON boundary. The SDK encodes and decodes protocol messages with
// an engine of its own (github.com/go-json-experiment/json), through the
// unexported methods of each type: the engine's own hooks, methods named
// MarshalJSONTo and UnmarshalJSONFrom, would put its pre-release types
// into the API of every protocol type. At the top of a value (params, a
// result) marshalWith and unmarshalWith hand the engine the type's
// method-free copy (marshalWire, unmarshalWire); inside a value, the
// options below (wireOptions) register the marshalJSONTo and
// unmarshalJSONFrom methods of the types met there (jsonMarshalers and
// jsonUnmarshalers, in jsonmethods.go), which take precedence over any
// method of a type. So the engine calls none of the encoding/json methods
// on the way to or from the wire.
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

// wireOptions are the options every encoding and decoding of protocol
// values uses, made on first use (a process that never encodes a
// protocol value does not pay for them at its start) and never changed.
// They cannot be a variable's initializer: the methods they register
// reach them again (a prompt message encodes its content block with
// marshalStd).
type wireOptions struct {
	// marshalers encode protocol values.
	marshalers *jsonv2.Marshalers
	// marshal encodes protocol values as the wire carries them.
	marshal jsonv2.Options
	// unmarshalers decode protocol values; capsCache puts its own before
	// them.
	unmarshalers *jsonv2.Unmarshalers
	// unmarshal decodes protocol values as the wire carries them.
	unmarshal jsonv2.Options
	// received is unmarshal for a value received in a message (see
	// receivedOption): the options that decode results and the params of
	// a request of the handshake era.
	received []jsonv2.Options
}

// The wireOptions, made by the first call of wire.
var (
	wireOnce sync.Once
	wireOpts *wireOptions
)

// wire returns the wireOptions, making them the first time.
func wire() *wireOptions {
	wireOnce.Do(func() {
		w := &wireOptions{
			marshalers: jsonv2.JoinMarshalers(jsonMarshalers(),
				jsonv2.MarshalToFunc(marshalID), jsonv2.MarshalToFunc(marshalRPCError)),
			unmarshalers: jsonv2.JoinUnmarshalers(jsonUnmarshalers(),
				jsonv2.UnmarshalFromFunc(unmarshalID), jsonv2.UnmarshalFromFunc(unmarshalRPCError)),
		}
		w.marshal = jsonv2.JoinOptions(jsonv2.Deterministic(true), jsonv2.WithMarshalers(w.marshalers))
		w.unmarshal = jsonv2.WithUnmarshalers(w.unmarshalers)
		w.received = []jsonv2.Options{jsonv2.JoinOptions(w.unmarshal, receivedOption)}
		wireOpts = w
	})
	return wireOpts
}

// wireAppender is a protocol type with a hand-written encoder for its
// common shape (see fastwire.go): appendWire appends the encoding and
// reports true, or reports false for a shape it leaves to the engine.
type wireAppender interface {
	appendWire([]byte) ([]byte, bool)
}

// marshalStd encodes v as the SDK does on the wire: through its
// hand-written encoder when it has one for v's shape (see appendWire),
// else with the engine.
func marshalStd(v any) ([]byte, error) {
	if a, ok := v.(wireAppender); ok {
		if b, ok := a.appendWire(nil); ok {
			return b, nil
		}
	}
	return marshalWith(v, wire().marshal)
}

// unmarshalStd decodes data into v as the SDK does on the wire.
func unmarshalStd(data []byte, v any) error {
	return unmarshalWith(data, v, wire().unmarshal)
}

// marshalWith encodes v with opts. A protocol type is handed to the
// engine as its method-free copy (marshalWire): the registered
// marshalers cover only the types met inside other values.
func marshalWith(v any, opts jsonv2.Options) ([]byte, error) {
	if w, ok := v.(interface {
		marshalWire(jsonv2.Options) ([]byte, error)
	}); ok {
		return w.marshalWire(opts)
	}
	return jsonv2.Marshal(v, opts)
}

// unmarshalWith decodes data into v with opts, a protocol type through
// its method-free copy (see marshalWith).
func unmarshalWith(data []byte, v any, opts ...jsonv2.Options) error {
	if w, ok := v.(interface {
		unmarshalWire([]byte, ...jsonv2.Options) error
	}); ok {
		return w.unmarshalWire(data, opts...)
	}
	return jsonv2.Unmarshal(data, v, opts...)
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
	if r, ok := v.(wireReader); ok && r.readWire(data, nil) {
		return nil
	}
	return unmarshalWith(data, v, wire().received...)
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

// wireRPCError is jsonrpc.Error without methods, for the default struct
// encoding.
type wireRPCError jsonrpc.Error

// marshalRPCError encodes a JSON-RPC error held in a protocol value (a
// task's outcome).
func marshalRPCError(enc *jsontext.Encoder, e *jsonrpc.Error) error {
	return jsonv2.MarshalEncode(enc, (*wireRPCError)(e))
}

// unmarshalRPCError decodes a JSON-RPC error held in a protocol value.
func unmarshalRPCError(dec *jsontext.Decoder, e *jsonrpc.Error) error {
	return jsonv2.UnmarshalDecode(dec, (*wireRPCError)(e))
}
