package mcp

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func TestContentRoundTrip(t *testing.T) {
	in := `[{"type":"text","text":"t","annotations":{"audience":["user"],"priority":1}},` +
		`{"type":"image","data":"AQI=","mimeType":"image/png"},` +
		`{"type":"audio","data":"AwQ=","mimeType":"audio/wav"},` +
		`{"type":"resource_link","uri":"file:///a","name":"a","title":"A"},` +
		`{"type":"resource","resource":{"uri":"x://t","mimeType":"text/plain","text":"hello"}},` +
		`{"type":"resource","resource":{"uri":"x://b","blob":"AAE="}},` +
		`{"type":"tool_use","id":"1","name":"n","input":{"a":1}},` +
		`{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"r"}],"isError":true}]`
	var cs Contents
	if err := json.Unmarshal([]byte(in), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) != 8 {
		t.Fatalf("decoded %d blocks", len(cs))
	}
	if img := cs[1].(*ImageContent); string(img.Data) != "\x01\x02" {
		t.Errorf("image data %v", img.Data)
	}
	if r := cs[5].(*EmbeddedResource).Resource; string(r.Blob) != "\x00\x01" {
		t.Errorf("blob %v", r.Blob)
	}
	out, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip\n got %s\nwant %s", out, in)
	}
}

func TestContentErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`[{"type":"video","data":"x"}]`, `unknown content type "video"`},
		{`[{"text":"no type"}]`, `without "type"`},
		{`[{"type":"text","text":"a","text":"b"}]`, `duplicate`},
		{`[{"type":"resource","resource":{"uri":"x://a"}}]`, `need text or blob`},
		{`[{"type":"image","data":"!!!","mimeType":"image/png"}]`, `base64`},
	}
	for _, tt := range tests {
		var cs Contents
		err := json.Unmarshal([]byte(tt.in), &cs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v, want error containing %q", tt.in, err, tt.want)
		}
	}
	// Unknown members are tolerated; member names are case-sensitive.
	var cs Contents
	if err := json.Unmarshal([]byte(`[{"type":"text","text":"a","future":true,"Text":"b"}]`), &cs); err != nil {
		t.Fatal(err)
	}
	if got := cs[0].(*TextContent).Text; got != "a" {
		t.Errorf("text = %q", got)
	}
	// The type member may come anywhere, and be escaped.
	for _, in := range []string{`[{"text":"a","type":"text"}]`, `[{"type":"t\u0065xt","text":"a"}]`, `[{"_meta":{"type":"x"},"text":"a","type":"text"}]`} {
		var cs Contents
		if err := json.Unmarshal([]byte(in), &cs); err != nil {
			t.Errorf("Unmarshal(%s): %v", in, err)
		} else if tc, ok := cs[0].(*TextContent); !ok || tc.Text != "a" {
			t.Errorf("Unmarshal(%s) = %#v", in, cs[0])
		}
	}
	for _, in := range []string{`[5]`, `[{"type":5}]`, `[{"type":"T\u0045XT"}]`} {
		var cs Contents
		if err := json.Unmarshal([]byte(in), &cs); err == nil {
			t.Errorf("Unmarshal(%s) = %#v, want an error", in, cs)
		}
	}
	// A nil block, typed or not, is an error rather than broken JSON.
	for _, cs := range []Contents{{nil}, {(*TextContent)(nil)}, {&TextContent{Text: "a"}, (*ImageContent)(nil)}} {
		if out, err := json.Marshal(cs); err == nil || !strings.Contains(err.Error(), "nil content block") {
			t.Errorf("Marshal(%#v) = %s, %v; want a nil content block error", cs, out, err)
		}
	}
	// Nil contents encode as [], never null.
	out, _ := json.Marshal(&CallToolResult{})
	if string(out) != `{"content":[]}` {
		t.Errorf("empty result = %s", out)
	}
}

func TestSamplingContentShapes(t *testing.T) {
	var m SamplingMessage
	tests := []struct{ in, out string }{
		{`{"role":"user","content":[{"type":"text","text":"a"}]}`, `{"role":"user","content":{"type":"text","text":"a"}}`},
		{`{"role":"user","content":{"type":"text","text":"a"}}`, `{"role":"user","content":{"type":"text","text":"a"}}`},
		// Several blocks (2025-11-25) are all kept.
		{`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"1","name":"n","input":{}}]}`, `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"1","name":"n","input":{}}]}`},
	}
	for _, tt := range tests {
		m = SamplingMessage{}
		if err := json.Unmarshal([]byte(tt.in), &m); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(&m)
		if string(out) != tt.out {
			t.Errorf("%s\n got %s\nwant %s", tt.in, out, tt.out)
		}
	}
}

// FuzzContents decodes arbitrary JSON as content blocks: it must never
// panic, and whatever decodes must encode to JSON that decodes to the same
// encoding again.
func FuzzContents(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"t","annotations":{"audience":["user"],"priority":1}}]`,
		`[{"text":"a","type":"text"},{"type":"image","data":"AQI=","mimeType":"image/png"}]`,
		`[{"type":"t\u0065xt","text":"a"}]`,
		`[{"type":"resource","resource":{"uri":"x://t","text":"hello"}}]`,
		`[{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"r"}]}]`,
		`[{"type":5}]`, `[5]`, `null`, `[]`, `{"type":"text","text":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cs Contents
		if err := json.Unmarshal(data, &cs); err != nil {
			return
		}
		out, err := json.Marshal(cs)
		if err != nil {
			return // a block that cannot be encoded, such as a resource with neither text nor blob
		}
		var again Contents
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s encoded as %s, which does not decode: %v", data, out, err)
		}
		out2, err := json.Marshal(again)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("not stable:\n%s\n%s (%v)", out, out2, err)
		}
	})
}
