package jsonrpc

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonscan"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // re-encoded message, when decoding succeeds
		code    int64  // error code, when it fails
		errID   string // raw id reported with the error
		isBatch bool
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, want: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "string id kept verbatim", in: `{"jsonrpc":"2.0","id":"a\u0062","method":"m","params":{}}`, want: `{"jsonrpc":"2.0","id":"a\u0062","method":"m","params":{}}`},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"n","params":{"x":[1,2]}}`, want: `{"jsonrpc":"2.0","method":"n","params":{"x":[1,2]}}`},
		{name: "result", in: `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`, want: `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`},
		{name: "error with data", in: `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":{"a":1}}}`, want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":{"a":1}}}`},
		{name: "error null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`},
		{name: "unknown members tolerated", in: `{"jsonrpc":"2.0","id":1,"method":"m","extra":true}`, want: `{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{name: "leading space", in: "  \n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}", want: `{"jsonrpc":"2.0","method":"n"}`},
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, want: `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, isBatch: true},
		{name: "batch with bad element", in: `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":2,"method":"b"}]`, want: `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}]`, isBatch: true},

		{name: "not json", in: `{"jsonrpc":`, code: CodeParseError},
		{name: "garbage", in: `hello`, code: CodeParseError},
		{name: "empty", in: ``, code: CodeParseError},
		{name: "invalid utf8", in: "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", code: CodeParseError},
		{name: "duplicate key", in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: CodeParseError},
		{name: "wrong case key", in: `{"jsonrpc":"2.0","id":1,"Method":"a"}`, code: CodeInvalidRequest, errID: "1"},
		{name: "wrong version", in: `{"jsonrpc":"1.0","id":1,"method":"a"}`, code: CodeInvalidRequest, errID: "1"},
		{name: "missing version", in: `{"id":"x","method":"a"}`, code: CodeInvalidRequest, errID: `"x"`},
		{name: "missing method and id", in: `{"jsonrpc":"2.0"}`, code: CodeInvalidRequest},
		{name: "null request id", in: `{"jsonrpc":"2.0","id":null,"method":"a"}`, code: CodeInvalidRequest},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":true,"method":"a"}`, code: CodeInvalidRequest},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"a"}`, code: CodeInvalidRequest},
		{name: "method not string", in: `{"jsonrpc":"2.0","id":1,"method":3}`, code: CodeInvalidRequest},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":1,"method":""}`, code: CodeInvalidRequest, errID: "1"},
		{name: "scalar params", in: `{"jsonrpc":"2.0","id":1,"method":"a","params":3}`, code: CodeInvalidRequest, errID: "1"},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`, code: CodeInvalidRequest, errID: "1"},
		{name: "response without result", in: `{"jsonrpc":"2.0","id":1}`, code: CodeInvalidRequest, errID: "1"},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, errID: "1"},
		{name: "not an object", in: `"hi"`, code: CodeInvalidRequest},
		{name: "empty batch", in: `[]`, code: CodeInvalidRequest},
		{name: "too deep", in: deep(DefaultMaxDepth + 10), code: CodeParseError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(tt.in))
			if tt.code != 0 {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("DecodeMessage(%q) = %v, %v; want DecodeError %d", tt.in, m, err, tt.code)
				}
				if de.Err.Code != tt.code || de.ID.Raw() != tt.errID {
					t.Fatalf("DecodeMessage(%q) error = code %d id %q (%v); want code %d id %q", tt.in, de.Err.Code, de.ID.Raw(), de, tt.code, tt.errID)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeMessage(%q): %v", tt.in, err)
			}
			if _, ok := m.(Batch); ok != tt.isBatch {
				t.Fatalf("batch = %v, want %v", ok, tt.isBatch)
			}
			got, err := EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("re-encoded\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func deep(n int) string {
	b := make([]byte, 0, 2*n+60)
	b = append(b, `{"jsonrpc":"2.0","method":"a","params":{"x":`...)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(append(b, "}}"...))
}

func TestID(t *testing.T) {
	if (ID{}).IsValid() {
		t.Error("zero ID is valid")
	}
	if got := StringID("a\"b").String(); got != `a"b` {
		t.Errorf("String() = %q", got)
	}
	if got := StringID("7"); got == Int64ID(7) {
		t.Error(`"7" == 7`)
	}
	if n, ok := Int64ID(-3).Int64(); !ok || n != -3 {
		t.Errorf("Int64() = %d, %v", n, ok)
	}
	var id ID
	if err := id.UnmarshalJSON([]byte(`true`)); err == nil {
		t.Error("bool id accepted")
	}
	if err := id.UnmarshalJSON([]byte(` 12 `)); err != nil || id != Int64ID(12) {
		t.Errorf("UnmarshalJSON(12) = %v, %v", id, err)
	}
}

func TestErrorIs(t *testing.T) {
	err := error(&Error{Code: CodeMethodNotFound, Message: "x"})
	if !errors.Is(err, ErrMethodNotFound) {
		t.Error("errors.Is by code failed")
	}
	if errors.Is(err, ErrInvalidParams) {
		t.Error("errors.Is matched a different code")
	}
	if ToWire(errors.New("boom")).Code != CodeInternalError {
		t.Error("unknown errors must map to -32603")
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
		`{"jsonrpc":"2.0","method":"n"}`,
		`[]`, `{`, `null`, `[[1]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a DecodeError", err)
			}
			return
		}
		out, err := EncodeMessage(m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, err := DecodeMessage(out)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		out2, _ := EncodeMessage(m2)
		if string(out) != string(out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}

// FuzzDecodeFast holds the hand-written decoder to the reflection-based
// one: for every input they must produce the same message, or the same
// error.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"h\"i"}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[{"a":"]}"}]}}`,
		` {"result" : [1, 2] , "id" : -1.5e3 , "jsonrpc" : "2.0" } `,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m","data":[null]}}`,
		`{"jsonrpc":"2.0","method":"n","params":null}`,
		`{"jsonrpc":"2.0","method":null,"id":3,"result":true}`,
		`{"jsonrpc":"2.0","id":1,"Method":"a"}`,
		`{"jsonrpc":"2.0","id":1,"m\u0065thod":"a"}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"a"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a\nb"}`,
		`{"jsonrpc":"2.0","method":"a","method":"b"}`,
		`{}`, `{"jsonrpc":"2.0"}`, `"x"`, `1`, `{"jsonrpc":"2.0","id":[],"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	for _, meta := range []string{`{"a":1}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, `{}`, `[]`, `{"a":{"a":1},"b":"\u00e9"}`} {
		f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1,"_meta":` + meta + `}}`))
		f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":` + meta + `,"y":[1]}}`))
	}
	// One memo through the whole run, as on a connection: a params._meta
	// that one input leaves in it meets the next.
	memo := new(jsonscan.Memo)
	f.Fuzz(func(t *testing.T, data []byte) {
		owned := data[:len(data):len(data)]
		data = bytes.Clone(data)
		for _, fast := range []func() (Message, error){
			func() (Message, error) { return decodeOne(data, false, nil) },
			func() (Message, error) { return decodeOne(owned, true, nil) },
			func() (Message, error) { return decodeOne(data, false, memo) }, // fills the memo
			func() (Message, error) { return decodeOne(data, false, memo) }, // may use it
		} {
			fast, fastErr := fast()
			checkSameDecoding(t, data, fast, fastErr)
		}
	})
}

// checkSameDecoding fails t unless the reflection-based decoder decodes
// data to fast and fastErr.
func checkSameDecoding(t *testing.T, data []byte, fast Message, fastErr error) {
	t.Helper()
	slow, slowErr := decodeOneReflect(data)
	if (fastErr == nil) != (slowErr == nil) {
		t.Fatalf("%q: fast %v, %v; reflect %v, %v", data, fast, fastErr, slow, slowErr)
	}
	if fastErr != nil {
		if fastErr.Error() != slowErr.Error() || fastErr.(*DecodeError).ID != slowErr.(*DecodeError).ID {
			t.Fatalf("%q: fast error %v (id %q), reflect %v (id %q)", data, fastErr, fastErr.(*DecodeError).ID.Raw(), slowErr, slowErr.(*DecodeError).ID.Raw())
		}
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast    %#v\nreflect %#v", data, fast, slow)
	}
}

// BenchmarkDecodeMessage decodes a tools/call request and its response,
// and a response of 1 MiB of text, with the token decoder (fast) and with
// the reflection-based one.
func BenchmarkDecodeMessage(b *testing.B) {
	small := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`),
		[]byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}]}}`),
	}
	large := [][]byte{[]byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"` +
		strings.Repeat("abcdefgh", 1<<17) + `"}]}}`)}
	for _, msgs := range []struct {
		name string
		data [][]byte
	}{{"small", small}, {"1MiB", large}} {
		for _, d := range []struct {
			name   string
			decode func([]byte) (Message, error)
		}{{"fast", DecodeMessage}, {"owned", func(b []byte) (Message, error) { return (*DecodeLimits)(nil).decode(b, true, nil) }}, {"reflect", decodeOneReflect}} {
			b.Run(msgs.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, m := range msgs.data {
						if _, err := d.decode(m); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
