package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestAppendWireTools holds the tools/list encoder to the engine: the
// same bytes for every value it takes, and a refusal for the shapes it
// leaves to it.
func TestAppendWireTools(t *testing.T) {
	yes, no := true, false
	ttl := int64(300000)
	info := serverMeta(Implementation{Name: "s", Version: "1"})
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"a \"query\" <é>\n"}},"required":["q"]}`)
	tool := func(mod func(*Tool)) *Tool {
		t := &Tool{Name: "search", Description: "Searches.", InputSchema: schema}
		if mod != nil {
			mod(t)
		}
		return t
	}
	list := func(tools ...*Tool) *ListToolsResult { return &ListToolsResult{Tools: tools} }
	cases := []struct {
		name string
		r    *ListToolsResult
		fast bool
	}{
		{"nil tools", &ListToolsResult{}, true},
		{"empty tools", list(), true},
		{"one", list(tool(nil)), true},
		{"two and a cursor", &ListToolsResult{Tools: []*Tool{tool(nil), tool(func(t *Tool) { t.Name = "b" })}, NextCursor: "c\"1"}, true},
		{"2026-07-28", &ListToolsResult{ResultType: ResultTypeComplete, TTLMs: &ttl, CacheScope: CacheScopePublic, Tools: []*Tool{tool(nil)}}, true},
		{"zero ttl", &ListToolsResult{TTLMs: new(int64), Tools: []*Tool{tool(nil)}}, true},
		{"title and escapes", list(tool(func(t *Tool) { t.Title = "Sé<arch>\u2028"; t.Description = "a\tb\x01\"" })), true},
		{"no description", list(tool(func(t *Tool) { t.Description = "" })), true},
		{"output schema", list(tool(func(t *Tool) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) })), true},
		{"empty annotations", list(tool(func(t *Tool) { t.Annotations = &ToolAnnotations{} })), true},
		{"annotations", list(tool(func(t *Tool) {
			t.Annotations = &ToolAnnotations{Title: "T", ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes}
		})), true},
		{"annotations false pointers", list(tool(func(t *Tool) { t.Annotations = &ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no} })), true},
		{"annotations idempotent only", list(tool(func(t *Tool) { t.Annotations = &ToolAnnotations{IdempotentHint: true} })), true},
		{"execution", list(tool(func(t *Tool) { t.Execution = &ToolExecution{TaskSupport: TaskOptional} })), true},
		{"empty execution", list(tool(func(t *Tool) { t.Execution = &ToolExecution{} })), true},
		{"async is not sent", list(tool(func(t *Tool) { t.async = true })), true},
		{"result meta", &ListToolsResult{Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}, Tools: []*Tool{tool(nil)}}, false},
		{"server info", &ListToolsResult{Meta: Meta{ServerInfo: info.server, pre: info}, ResultType: ResultTypeComplete, TTLMs: &ttl, Tools: []*Tool{tool(nil)}}, true},
		{"tool meta", list(tool(func(t *Tool) { t.Meta = Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}} })), false},
		{"icons", list(tool(func(t *Tool) { t.Icons = []Icon{{Src: "https://example.com/i.png"}} })), false},
		{"spaced schema", list(tool(func(t *Tool) { t.InputSchema = json.RawMessage(`{ "type": "object" }`) })), false},
		{"escaped schema", list(tool(func(t *Tool) { t.InputSchema = json.RawMessage(`{"type":"\u006fbject"}`) })), false},
		{"duplicate member", list(tool(func(t *Tool) { t.InputSchema = json.RawMessage(`{"type":"object","type":"object"}`) })), false},
		{"no schema", list(tool(func(t *Tool) { t.InputSchema = nil })), false},
		{"spaced output schema", list(tool(func(t *Tool) { t.OutputSchema = json.RawMessage(` {}`) })), false},
		{"empty output schema", list(tool(func(t *Tool) { t.OutputSchema = json.RawMessage{} })), false},
		{"nil tool", list(tool(nil), nil), false},
		{"invalid UTF-8 name", list(tool(func(t *Tool) { t.Name = "a\xffb" })), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := checkAppendWire(t, c.r, c.fast)
			// The same tools as a server registers them, with their
			// encodings made beforehand: every tool without _meta or
			// icons that encodes at all has one, and the list is
			// written as the engine writes it, or refused as by it.
			reg := *c.r
			reg.Tools = nil
			for _, tl := range c.r.Tools {
				if tl == nil {
					reg.Tools = append(reg.Tools, nil)
					continue
				}
				r := *tl
				r.wire = newToolWire(&r)
				_, terr := marshalWith(&r, wire().marshal)
				if want := r.Meta.IsZero() && len(r.Icons) == 0 && terr == nil; (r.wire != nil) != want {
					t.Fatalf("tool %q: encoding made: %v, want %v", r.Name, r.wire != nil, want)
				}
				reg.Tools = append(reg.Tools, &r)
			}
			if got, rerr := marshalStd(&reg); (rerr == nil) != (err == nil) || err == nil && !bytes.Equal(got, want) {
				t.Fatalf("registered: %s (%v)\nengine:     %s (%v)", got, rerr, want, err)
			}
		})
	}
}

// checkAppendWire fails t unless v's hand-written encoder takes v when
// fast, writing the engine's bytes, and refuses it otherwise, and unless
// marshalStd writes the engine's bytes or fails as the engine does. It
// returns what the engine wrote and its error.
func checkAppendWire(t *testing.T, v interface {
	appendWire([]byte) ([]byte, bool)
}, fast bool) ([]byte, error) {
	t.Helper()
	got, ok := v.appendWire(nil)
	if ok != fast {
		t.Fatalf("appendWire took it: %v, want %v (%s)", ok, fast, got)
	}
	want, err := marshalWith(v, wire().marshal)
	if ok && (err != nil || !bytes.Equal(got, want)) {
		t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, err)
	}
	if std, serr := marshalStd(v); (serr == nil) != (err == nil) || err == nil && !bytes.Equal(std, want) {
		t.Fatalf("marshalStd: %s, %v; want %s, %v", std, serr, want, err)
	}
	return want, err
}

// TestAppendWireToolChanged checks that a registered tool changed after
// its encoding was made, in any member, is written as it is now.
func TestAppendWireToolChanged(t *testing.T) {
	yes, no := true, false
	changes := []struct {
		name   string
		change func(*Tool)
	}{
		{"name", func(t *Tool) { t.Name = "other" }},
		{"title", func(t *Tool) { t.Title = "T" }},
		{"description", func(t *Tool) { t.Description = "changed" }},
		{"input schema in place", func(t *Tool) { t.InputSchema[len(t.InputSchema)-3] = 'X' }},
		{"input schema replaced", func(t *Tool) { t.InputSchema = json.RawMessage(`{"type":"object","x":1}`) }},
		{"output schema added", func(t *Tool) { t.OutputSchema = json.RawMessage(`{"type":"object"}`) }},
		{"annotation in place", func(t *Tool) { t.Annotations.ReadOnlyHint = false }},
		{"annotation pointer in place", func(t *Tool) { *t.Annotations.DestructiveHint = true }},
		{"annotation pointer cleared", func(t *Tool) { t.Annotations.OpenWorldHint = nil }},
		{"annotations removed", func(t *Tool) { t.Annotations = nil }},
		{"execution in place", func(t *Tool) { t.Execution.TaskSupport = TaskRequired }},
		{"execution removed", func(t *Tool) { t.Execution = nil }},
		{"meta", func(t *Tool) { t.Meta = Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}} }},
		{"icons", func(t *Tool) { t.Icons = []Icon{{Src: "https://example.com/i.png"}} }},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			d, o := no, yes
			tl := &Tool{Name: "search", Description: "Searches.", InputSchema: json.RawMessage(`{"type":"object","a":"b"}`),
				Annotations: &ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &d, OpenWorldHint: &o},
				Execution:   &ToolExecution{TaskSupport: TaskOptional}}
			tl.wire = newToolWire(tl)
			before, _ := marshalStd(&ListToolsResult{Tools: []*Tool{tl}})
			c.change(tl)
			r := &ListToolsResult{Tools: []*Tool{tl}}
			want, err := marshalWith(r, wire().marshal)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(want, before) {
				t.Fatalf("the change changed nothing: %s", want)
			}
			if got, err := marshalStd(r); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("marshalStd: %s (%v)\nengine:     %s", got, err, want)
			}
		})
	}
}

// TestListedToolsEncoding checks tools/list through a server: the tools
// it lists, raw and typed, encode as the engine writes them.
func TestListedToolsEncoding(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	if err := s.AddTool(&Tool{Name: "raw", Description: "Raw.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *CallToolRequest) (*CallToolResult, error) { return &CallToolResult{}, nil }); err != nil {
		t.Fatal(err)
	}
	type in struct {
		Q string `json:"q" jsonschema:"the query"`
	}
	AddTool(s, &Tool{Name: "typed", Annotations: &ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *CallToolRequest, in) (in, error) { return in{}, nil })
	ss := &ServerSession{server: s}
	res, err := ss.listTools(context.Background(), &ServerRequest[*ListToolsParams]{Params: &ListToolsParams{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 {
		t.Fatalf("listed %d tools, want 2", len(res.Tools))
	}
	for _, tl := range res.Tools {
		if tl.wire == nil {
			t.Errorf("tool %q listed without its encoding", tl.Name)
		}
	}
	want, err := marshalWith(res, wire().marshal)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := marshalStd(res); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("marshalStd: %s (%v)\nengine:     %s", got, err, want)
	}
}

// FuzzAppendWireTools holds the tools/list encoder to the engine for any
// name, description and schemas.
func FuzzAppendWireTools(f *testing.F) {
	f.Add("echo", "Echoes.", []byte(`{"type":"object"}`), []byte(nil), uint8(0))
	f.Add("n\xff", "a\u2028b<>&\x00\"\\", []byte(`{"a":"\u00e9"}`), []byte(`{ }`), uint8(7))
	f.Add("x", "", []byte(`{"a":1,"a":2}`), []byte(`{"type":"object","properties":{}}`), uint8(255))
	f.Fuzz(func(t *testing.T, name, desc string, in, out []byte, hints uint8) {
		b := func(i uint8) *bool { v := hints&(1<<i) != 0; return &v }
		tl := &Tool{Name: name, Title: desc, Description: desc, InputSchema: in, OutputSchema: out}
		if hints&1 != 0 {
			tl.Annotations = &ToolAnnotations{Title: name, ReadOnlyHint: hints&2 != 0, IdempotentHint: hints&4 != 0}
			if hints&8 != 0 {
				tl.Annotations.DestructiveHint, tl.Annotations.OpenWorldHint = b(4), b(5)
			}
		}
		if hints&64 != 0 {
			tl.Execution = &ToolExecution{TaskSupport: desc}
		}
		r := &ListToolsResult{Tools: []*Tool{tl, tl}, NextCursor: name}
		want, err := marshalWith(r, wire().marshal)
		if got, ok := r.appendWire(nil); ok && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, err)
		}
		// Registered, with its encoding made beforehand.
		reg := *tl
		reg.wire = newToolWire(&reg)
		r.Tools = []*Tool{&reg, tl}
		if got, rerr := marshalStd(r); (rerr == nil) != (err == nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("registered: %s (%v)\nengine:     %s (%v)", got, rerr, want, err)
		}
	})
}

// BenchmarkListToolsEncode measures the encoding of a tools/list result
// of 2 and of 50 tools of a typical size (a sentence of description and
// a schema of three properties), by the hand-written encoder and by the
// engine.
func BenchmarkListToolsEncode(b *testing.B) {
	for _, n := range []int{2, 50} {
		r := &ListToolsResult{}
		for i := range n {
			r.Tools = append(r.Tools, &Tool{
				Name:        fmt.Sprintf("search_%d", i),
				Description: "Searches the issue tracker for issues matching a query and returns their titles, states and URLs.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to search for"},"limit":{"type":"integer","minimum":1,"maximum":100},"state":{"type":"string","enum":["open","closed","all"]}},"required":["query"],"additionalProperties":false}`),
				Annotations: &ToolAnnotations{ReadOnlyHint: true},
			})
		}
		reg := &ListToolsResult{}
		for _, t := range r.Tools {
			c := *t
			c.wire = newToolWire(&c)
			reg.Tools = append(reg.Tools, &c)
		}
		for _, enc := range []struct {
			name string
			f    func() ([]byte, error)
		}{
			{"registered", func() ([]byte, error) { return marshalStd(reg) }},
			{"fast", func() ([]byte, error) { return marshalStd(r) }},
			{"engine", func() ([]byte, error) { return marshalWith(r, wire().marshal) }},
		} {
			b.Run(fmt.Sprintf("%d/%s", n, enc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := enc.f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// readWireToolsCases are tools/list results, with whether the
// hand-written decoder takes them.
var readWireToolsCases = []struct {
	name string
	data string
	fast bool
}{
	{"empty", `{"tools":[]}`, true},
	{"one", `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`, true},
	{"spaced", ` { "tools" : [ { "name" : "a" , "inputSchema" : { "type" : "object" } } , {"inputSchema":{},"name":"b"} ] , "nextCursor" : "c" } `, true},
	{"full", `{"resultType":"complete","ttlMs":60000,"cacheScope":"private","tools":[{"name":"s","title":"S\u00e9","description":"a\"b\n","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"outputSchema":{"type":"object"},"annotations":{"title":"T","readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true},"execution":{"taskSupport":"optional"}}],"nextCursor":"n"}`, true},
	{"empty annotations and execution", `{"tools":[{"name":"a","inputSchema":{},"annotations":{},"execution":{}}]}`, true},
	{"negative zero ttl", `{"tools":[],"ttlMs":-0}`, true},
	{"no tools", `{"nextCursor":"c"}`, false},
	{"null tools", `{"tools":null}`, false},
	{"no name", `{"tools":[{"inputSchema":{}}]}`, false},
	{"no schema", `{"tools":[{"name":"a"}]}`, false},
	{"null schema", `{"tools":[{"name":"a","inputSchema":null}]}`, false},
	{"null output schema", `{"tools":[{"name":"a","inputSchema":{},"outputSchema":null}]}`, false},
	{"icons", `{"tools":[{"name":"a","inputSchema":{},"icons":[{"src":"https://example.com/i.png"}]}]}`, false},
	{"tool meta", `{"tools":[{"name":"a","inputSchema":{},"_meta":{"k":1}}]}`, false},
	{"result meta", `{"_meta":{"k":1},"tools":[]}`, true},
	{"result server info", `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"tools":[]}`, true},
	{"result bad meta", `{"_meta":[],"tools":[]}`, false},
	{"unknown member", `{"tools":[{"name":"a","inputSchema":{},"x":1}]}`, false},
	{"float ttl", `{"tools":[],"ttlMs":1.5}`, false},
	{"exponent ttl", `{"tools":[],"ttlMs":1e3}`, false},
	{"huge ttl", `{"tools":[],"ttlMs":99999999999999999999}`, false},
	{"string hint", `{"tools":[{"name":"a","inputSchema":{},"annotations":{"readOnlyHint":"yes"}}]}`, false},
	{"null hint", `{"tools":[{"name":"a","inputSchema":{},"annotations":{"openWorldHint":null}}]}`, false},
	{"bool title", `{"tools":[{"name":"a","inputSchema":{},"annotations":{"title":true}}]}`, false},
	{"unknown annotation", `{"tools":[{"name":"a","inputSchema":{},"annotations":{"x":true}}]}`, false},
	{"tool not an object", `{"tools":[1]}`, false},
}

// checkReadWireList decodes data with the list result's readWire and
// with the engine, fails t if readWire takes data and they differ, and
// reports whether it took it.
func checkReadWireList[T any, P interface {
	*T
	wireReader
}](t *testing.T, data []byte) bool {
	t.Helper()
	var fast, slow T
	err := unmarshalWith(data, P(&slow), wire().received...)
	if !P(&fast).readWire(data, nil) {
		return false
	}
	if err != nil {
		t.Fatalf("readWire took %s, which the engine refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("readWire: %#v\nengine:   %#v", fast, slow)
	}
	// With a cache, twice: the second decoding takes the result's _meta
	// from it when the first kept it.
	var metas capsCache
	for range 2 {
		var cached T
		if !P(&cached).readWire(data, &metas) || !reflect.DeepEqual(cached, slow) {
			t.Fatalf("readWire with a cache: %#v\nengine:   %#v", cached, slow)
		}
	}
	return true
}

// checkReadWireTools is checkReadWireList for tools/list.
func checkReadWireTools(t *testing.T, data []byte) bool {
	t.Helper()
	return checkReadWireList[ListToolsResult](t, data)
}

// TestReadWireTools holds the tools/list decoder to the engine.
func TestReadWireTools(t *testing.T) {
	for _, c := range readWireToolsCases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkReadWireTools(t, []byte(c.data)); got != c.fast {
				t.Errorf("readWire took it: %v, want %v", got, c.fast)
			}
		})
	}
}

// FuzzReadWireTools holds the tools/list decoder to the engine for any
// valid JSON, and checks that it fails gracefully on any other text.
func FuzzReadWireTools(f *testing.F) {
	for _, c := range readWireToolsCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !jsontext.Value(data).IsValid() {
			new(ListToolsResult).readWire(data, nil)
			return
		}
		checkReadWireTools(t, data)
	})
}

// TestListWireFields fails when a member is added to the types the
// tools/list and resources/list encoders and the tools/list decoder
// write by hand, which they would leave
// out (and toolWire would not compare): they must learn it first.
func TestListWireFields(t *testing.T) {
	for _, c := range []struct {
		v     any
		known []string
	}{
		{ListToolsResult{}, []string{"Meta", "ResultType", "TTLMs", "CacheScope", "Tools", "NextCursor"}},
		{Tool{}, []string{"Meta", "Name", "Title", "Description", "InputSchema", "OutputSchema", "Annotations", "Icons", "Execution"}},
		{ToolAnnotations{}, []string{"Title", "ReadOnlyHint", "DestructiveHint", "IdempotentHint", "OpenWorldHint"}},
		{ToolExecution{}, []string{"TaskSupport"}},
		{ListResourcesResult{}, []string{"Meta", "ResultType", "TTLMs", "CacheScope", "Resources", "NextCursor"}},
		{Resource{}, []string{"Meta", "URI", "Name", "Title", "Description", "MIMEType", "Annotations", "Size", "Icons"}},
	} {
		typ := reflect.TypeOf(c.v)
		var fields []string
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() {
				fields = append(fields, f.Name)
			}
		}
		if !reflect.DeepEqual(fields, c.known) {
			t.Errorf("%s has the members %v; the hand-written tools/list encoder and decoder know %v", typ.Name(), fields, c.known)
		}
	}
}

// TestAppendWireResources holds the resources/list encoder to the
// engine: the same bytes for every value it takes, and a refusal for the
// shapes it leaves to it.
func TestAppendWireResources(t *testing.T) {
	ttl := int64(60000)
	info := serverMeta(Implementation{Name: "s", Version: "1"})
	res := func(mod func(*Resource)) *Resource {
		r := &Resource{URI: "file:///src/main.go", Name: "main.go"}
		if mod != nil {
			mod(r)
		}
		return r
	}
	list := func(rs ...*Resource) *ListResourcesResult { return &ListResourcesResult{Resources: rs} }
	cases := []struct {
		name string
		r    *ListResourcesResult
		fast bool
	}{
		{"nil resources", &ListResourcesResult{}, true},
		{"empty", list(), true},
		{"one", list(res(nil)), true},
		{"every member", list(res(func(r *Resource) {
			r.Title, r.Description, r.MIMEType, r.Size = "Main", "The entry point.", "text/x-go", 1234
		})), true},
		{"escapes", list(res(func(r *Resource) {
			r.URI, r.Name, r.Description = "file:///a%20b/<é>", "a\"b\\c\n\u2028", "\x01\t"
		})), true},
		{"negative size", list(res(func(r *Resource) { r.Size = -1 })), true},
		{"2026-07-28 and a cursor", &ListResourcesResult{ResultType: ResultTypeComplete, TTLMs: &ttl, CacheScope: CacheScopePrivate,
			Resources: []*Resource{res(nil), res(func(r *Resource) { r.Name = "b" })}, NextCursor: "n\"1"}, true},
		{"result meta", &ListResourcesResult{Meta: Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}}, false},
		{"server info", &ListResourcesResult{Meta: Meta{ServerInfo: info.server, pre: info}, Resources: []*Resource{res(nil)}}, true},
		{"resource meta", list(res(func(r *Resource) { r.Meta = Meta{Other: map[string]json.RawMessage{"k": json.RawMessage(`1`)}} })), false},
		{"annotations", list(res(func(r *Resource) { r.Annotations = &Annotations{Priority: 0.5} })), false},
		{"icons", list(res(func(r *Resource) { r.Icons = []Icon{{Src: "https://example.com/i.png"}} })), false},
		{"nil resource", list(res(nil), nil), false},
		{"invalid UTF-8", list(res(func(r *Resource) { r.Description = "a\xffb" })), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkAppendWire(t, c.r, c.fast)
		})
	}
}

// FuzzAppendWireResources holds the resources/list encoder to the engine
// for any strings and size.
func FuzzAppendWireResources(f *testing.F) {
	f.Add("file:///a", "a", "", "desc", "text/plain", int64(10))
	f.Add("x\xff", "\u2028<>&", "t\"", "\x00\x1f", "", int64(-5))
	f.Fuzz(func(t *testing.T, uri, name, title, desc, mime string, size int64) {
		r := &Resource{URI: uri, Name: name, Title: title, Description: desc, MIMEType: mime, Size: size}
		l := &ListResourcesResult{Resources: []*Resource{r, r}, NextCursor: title}
		want, err := marshalWith(l, wire().marshal)
		if got, ok := l.appendWire(nil); ok && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("appendWire: %s\nengine:     %s (%v)", got, want, err)
		}
	})
}

// BenchmarkListResourcesEncode measures the encoding of a resources/list
// page of 1,000 resources (a URI, a name, a description and a media
// type each), by the hand-written encoder and by the engine.
func BenchmarkListResourcesEncode(b *testing.B) {
	r := &ListResourcesResult{}
	for i := range 1000 {
		r.Resources = append(r.Resources, &Resource{URI: fmt.Sprintf("file:///project/src/pkg/file_%d.go", i),
			Name: fmt.Sprintf("file_%d.go", i), MIMEType: "text/x-go", Description: "A Go source file of the project."})
	}
	for _, enc := range []struct {
		name string
		f    func() ([]byte, error)
	}{
		{"fast", func() ([]byte, error) { return marshalStd(r) }},
		{"engine", func() ([]byte, error) { return marshalWith(r, wire().marshal) }},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readWireResourcesCases are resources/list results, with whether the
// hand-written decoder takes them.
var readWireResourcesCases = []struct {
	name string
	data string
	fast bool
}{
	{"empty", `{"resources":[]}`, true},
	{"one", `{"resources":[{"uri":"file:///a","name":"a"}]}`, true},
	{"full", `{"resultType":"complete","ttlMs":0,"cacheScope":"public","resources":[{"uri":"file:///a%20b","name":"a","title":"A \u00e9","description":"x\"y\n","mimeType":"text/plain","size":-12}],"nextCursor":"c"}`, true},
	{"spaced", ` { "resources" : [ { "name" : "a" , "uri" : "u" } , {"uri":"v","name":"b","size":0} ] } `, true},
	{"no resources", `{"nextCursor":"c"}`, false},
	{"no uri", `{"resources":[{"name":"a"}]}`, true},
	{"no name", `{"resources":[{"uri":"u"}]}`, true},
	{"empty resource", `{"resources":[{}]}`, true},
	{"null name", `{"resources":[{"uri":"u","name":null}]}`, false},
	{"float size", `{"resources":[{"uri":"u","name":"a","size":1.5}]}`, false},
	{"huge size", `{"resources":[{"uri":"u","name":"a","size":123456789012345678901}]}`, false},
	{"annotations", `{"resources":[{"uri":"u","name":"a","annotations":{"priority":1}}]}`, false},
	{"meta", `{"resources":[{"uri":"u","name":"a","_meta":{}}]}`, false},
	{"icons", `{"resources":[{"uri":"u","name":"a","icons":[]}]}`, false},
	{"unknown", `{"resources":[{"uri":"u","name":"a","x":1}]}`, false},
	{"not an object", `{"resources":["u"]}`, false},
	{"bad utf-8", "{\"resources\":[{\"uri\":\"u\",\"name\":\"\xff\"}]}", false},
}

// TestReadWireResources holds the resources/list decoder to the engine.
func TestReadWireResources(t *testing.T) {
	for _, c := range readWireResourcesCases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkReadWireList[ListResourcesResult](t, []byte(c.data)); got != c.fast {
				t.Errorf("readWire took it: %v, want %v", got, c.fast)
			}
		})
	}
}

// FuzzReadWireResources holds the resources/list decoder to the engine
// for any valid JSON, and checks that it fails gracefully on any other
// text.
func FuzzReadWireResources(f *testing.F) {
	for _, c := range readWireResourcesCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !jsontext.Value(data).IsValid() {
			new(ListResourcesResult).readWire(data, nil)
			return
		}
		checkReadWireList[ListResourcesResult](t, data)
	})
}

// BenchmarkListResourcesDecode measures the client's decoding of the
// page BenchmarkListResourcesEncode encodes, by the hand-written decoder
// and by the engine.
func BenchmarkListResourcesDecode(b *testing.B) {
	r := &ListResourcesResult{}
	for i := range 1000 {
		r.Resources = append(r.Resources, &Resource{URI: fmt.Sprintf("file:///project/src/pkg/file_%d.go", i),
			Name: fmt.Sprintf("file_%d.go", i), MIMEType: "text/x-go", Description: "A Go source file of the project."})
	}
	data, err := marshalStd(r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !new(ListResourcesResult).readWire(data, nil) {
				b.Fatal("readWire refused it")
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := unmarshalWith(data, new(ListResourcesResult), wire().received...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
