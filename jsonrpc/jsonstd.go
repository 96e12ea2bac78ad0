package jsonrpc

import (
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
)

// Messages and errors encode the same through encoding/json as on the wire:
// the methods below let a program log, store or forward them with
// encoding/json.

// MarshalJSON implements encoding/json.Marshaler: r as it goes on the wire.
func (r Request) MarshalJSON() ([]byte, error) { return EncodeMessage(&r) }

// UnmarshalJSON implements encoding/json.Unmarshaler: data must be one
// JSON-RPC request or notification.
func (r *Request) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(data)
	if err != nil {
		return err
	}
	req, ok := m.(*Request)
	if !ok {
		return fmt.Errorf("jsonrpc: not a request: %T", m)
	}
	*r = *req
	return nil
}

// MarshalJSON implements encoding/json.Marshaler: r as it goes on the wire.
func (r Response) MarshalJSON() ([]byte, error) { return EncodeMessage(&r) }

// UnmarshalJSON implements encoding/json.Unmarshaler: data must be one
// JSON-RPC response.
func (r *Response) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(data)
	if err != nil {
		return err
	}
	resp, ok := m.(*Response)
	if !ok {
		return fmt.Errorf("jsonrpc: not a response: %T", m)
	}
	*r = *resp
	return nil
}

// wireError is Error without methods, for the default struct encoding:
// the package encodes and decodes errors through it, so that the engine
// never calls the encoding/json methods below.
type wireError Error

// MarshalJSON implements encoding/json.Marshaler with the wire encoding.
func (e Error) MarshalJSON() ([]byte, error) { return jsonv2.Marshal((*wireError)(&e)) }

// UnmarshalJSON implements encoding/json.Unmarshaler with the wire decoding.
func (e *Error) UnmarshalJSON(data []byte) error { return jsonv2.Unmarshal(data, (*wireError)(e)) }
