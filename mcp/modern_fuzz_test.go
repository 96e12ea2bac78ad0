package mcp

import (
	"bytes"
	"testing"
	"time"
)

// FuzzMetaDecode decodes arbitrary _meta objects: never a panic, and what
// decodes encodes to a text that decodes to the same encoding.
func FuzzMetaDecode(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"progressToken":1}`, `{"progressToken":"a"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{"tools":{}}},"io.modelcontextprotocol/logLevel":"info"}`,
		`{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"x/y":[1,{"a":null}]}`,
		`{"io.modelcontextprotocol/subscriptionId":7,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"}}`,
		`{"a":1,"a":2}`, `[]`, `{"progressToken":1.5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Meta
		if err := unmarshalStd(data, &m); err != nil {
			return
		}
		enc, err := marshalStd(m)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", data, err)
		}
		var again Meta
		if err := unmarshalStd(enc, &again); err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		enc2, err := marshalStd(again)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encodings differ:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}

// FuzzRequestStateVerify feeds arbitrary request states to the verifier:
// never a panic, and nothing but what the server signed verifies.
func FuzzRequestStateVerify(f *testing.F) {
	s := testSigner(f, "fuzz", []byte("fuzz key, 32 bytes or more, 0123456789"))
	good, err := s.sign(&requestState{Expires: time.Now().Add(time.Hour).Unix(), Method: "tools/call"})
	if err != nil {
		f.Fatal(err)
	}
	for _, st := range []string{good, "", "v1.", "v1..", "v1.e30.AAAA", good + "x", "v1." + good[3:], "v2..", "v2.AAAAAA..", good[:len(good)-1]} {
		f.Add(st)
	}
	f.Fuzz(func(t *testing.T, state string) {
		st, err := s.verify(state, time.Now())
		if err == nil && state != good {
			// Only the signed payload with its MAC verifies; a different
			// text could only be the same bytes under another encoding.
			if st.Method != "tools/call" {
				t.Fatalf("%q verified as %+v", state, st)
			}
		}
	})
}
