package mcp

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// TestMetaDecode checks that _meta decodes in one pass: the keys MCP
// defines into their fields, the others kept as raw JSON, and that a
// member of the wrong type is an error naming it.
func TestMetaDecode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Meta
		err      string // a substring of the error, "" for none
	}{
		{"null", `null`, Meta{}, ""},
		{"empty", `{}`, Meta{}, ""},
		{"progress token, integer", `{"progressToken":7}`, Meta{ProgressToken: jsonrpc.Int64ID(7)}, ""},
		{"progress token, string", `{"progressToken":"t"}`, Meta{ProgressToken: jsonrpc.StringID("t")}, ""},
		{"modern request", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","x.example/k":[1, 2]}`,
			Meta{ProtocolVersion: "2026-07-28", ClientCapabilities: &ClientCapabilities{Roots: &RootsCapabilities{}},
				ClientInfo: &Implementation{Name: "c", Version: "1"}, LogLevel: LoggingLevelInfo,
				Other: map[string]json.RawMessage{"x.example/k": json.RawMessage(`[1, 2]`)}}, ""},
		{"result", `{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"},"io.modelcontextprotocol/subscriptionId":"sub"}`,
			Meta{ServerInfo: &Implementation{Name: "s", Version: "2"}, SubscriptionID: jsonrpc.StringID("sub")}, ""},
		{"version not a string", `{"io.modelcontextprotocol/protocolVersion":20260728}`, Meta{}, "protocolVersion"},
		{"capabilities not an object", `{"io.modelcontextprotocol/clientCapabilities":"all"}`, Meta{}, "clientCapabilities"},
		{"not an object", `[1]`, Meta{}, "must be a JSON object"},
		{"duplicate key", `{"progressToken":1,"progressToken":2}`, Meta{}, "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Meta
			err := unmarshalStd([]byte(tt.in), &got)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestMetaEncode checks the order of the members (MCP's, then the others
// sorted), that an empty Meta is omitted, and that Other cannot write a
// key that has a field.
func TestMetaEncode(t *testing.T) {
	p := &CallToolParams{Name: "t", Meta: Meta{
		Other:           map[string]json.RawMessage{"z.example/b": json.RawMessage(`true`), "a.example/a": json.RawMessage(`{"x": 1}`), metaKeyProtocolVersion: json.RawMessage(`"1999-01-01"`)},
		ProtocolVersion: "2026-07-28",
		ProgressToken:   jsonrpc.Int64ID(3),
	}}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28","a.example/a":{"x":1},"z.example/b":true},"name":"t"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	got, err = json.Marshal(&CallToolParams{Name: "t", Meta: Meta{Other: map[string]json.RawMessage{}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"t"}`; string(got) != want {
		t.Fatalf("empty Meta: got %s, want %s", got, want)
	}
}

// TestCapsCacheBounds checks the bounds of the server's cache of decoded
// _meta envelopes and client capabilities: at most maxCachedCaps entries
// of each kind, none for a text longer than maxCachedText, and nothing
// particular to one request (a progress token) kept.
func TestCapsCacheBounds(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	decode := func(meta string) *CallToolParams {
		t.Helper()
		var p CallToolParams
		if err := unmarshalWith([]byte(`{"name":"t","_meta":`+meta+`}`), &p, s.caps.option); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	sizes := func() (int, int) {
		s.caps.mu.Lock()
		defer s.caps.mu.Unlock()
		return len(s.caps.metas), len(s.caps.m)
	}
	envelope := func(caps string) string {
		return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	}
	p1, p2 := decode(envelope(`{"roots":{}}`)), decode(envelope(`{"roots":{}}`))
	if p1.Meta.ClientCapabilities != p2.Meta.ClientCapabilities || p1.Meta.ClientCapabilities.Roots == nil {
		t.Error("the same envelope was not shared")
	}
	if m, c := sizes(); m != 1 || c != 1 {
		t.Errorf("after one envelope: %d envelopes, %d capabilities cached", m, c)
	}
	big := envelope(`{"experimental":{"x":"` + strings.Repeat("a", maxCachedText) + `"}}`)
	if p := decode(big); p.Meta.ClientCapabilities.Experimental == nil {
		t.Error("a long envelope was not decoded")
	}
	if m, c := sizes(); m != 1 || c != 1 {
		t.Errorf("a long envelope was cached: %d envelopes, %d capabilities", m, c)
	}
	if p := decode(`{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`); !p.Meta.ProgressToken.IsValid() {
		t.Error("progress token lost")
	}
	if m, _ := sizes(); m != 1 {
		t.Errorf("an envelope with a progress token was cached: %d envelopes", m)
	}
	for i := range 3 * maxCachedCaps {
		decode(envelope(`{"experimental":{"n":` + strconv.Itoa(i) + `}}`))
		if m, c := sizes(); m > maxCachedCaps || c > maxCachedCaps {
			t.Fatalf("after %d envelopes: %d envelopes, %d capabilities cached", i+1, m, c)
		}
	}
}
