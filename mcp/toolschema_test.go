package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/schema"
)

type bindArgs struct {
	Name  string   `json:"name"`
	Count int      `json:"count,omitempty" schema:"minimum=1"`
	Tags  []string `json:"tags,omitempty"`
	Mode  string   `json:"mode,omitempty" schema:"enum=fast|slow"`
}

// TestBindWithoutDefaults covers the path that validates the arguments as
// text and decodes them once.
func TestBindWithoutDefaults(t *testing.T) {
	var r schema.Reflector
	b, err := newArgBinder[bindArgs](&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.hasDefaults {
		t.Fatal("schema has defaults")
	}
	tests := []struct {
		args    string
		want    bindArgs
		wantErr string // substring; "" for none
	}{
		{``, bindArgs{}, `missing required property "name"`},
		{`null`, bindArgs{}, `missing required property "name"`},
		{`{"name":"a"}`, bindArgs{Name: "a"}, ""},
		{" \n{\"name\":\"a\\u00e9\",\"count\":2,\"tags\":[\"x\"],\"mode\":\"slow\"}\n", bindArgs{Name: "aé", Count: 2, Tags: []string{"x"}, Mode: "slow"}, ""},
		{`{"\u006eame":"a"}`, bindArgs{Name: "a"}, ""},
		{`{"name":"a","count":0}`, bindArgs{}, "/count: must be >= 1"},
		{`{"name":"a","count":1.5}`, bindArgs{}, "/count: want integer, got number"},
		{`{"name":"a","mode":"x"}`, bindArgs{}, "/mode: must be one of"},
		{`{"name":"a","tags":[1]}`, bindArgs{}, "/tags/0: want string, got integer"},
		{`{"name":"a","extra":1}`, bindArgs{Name: "a"}, ""},
		{`{"name":"a","name":"b"}`, bindArgs{}, "duplicate"},
		{`{"name":"a"} 1`, bindArgs{}, "after top-level value"},
		{`{"name":`, bindArgs{}, "EOF"},
		{`[1]`, bindArgs{}, "must be a JSON object"},
		{`"x"`, bindArgs{}, "must be a JSON object"},
		{`x`, bindArgs{}, "invalid character"},
	}
	for _, tt := range tests {
		got, err := b.bind(json.RawMessage(tt.args))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("bind(%s): %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "invalid arguments: ")):
			t.Errorf("bind(%s) = %v, want an error containing %q", tt.args, err, tt.wantErr)
		case tt.wantErr == "" && !equalArgs(got, tt.want):
			t.Errorf("bind(%s) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func equalArgs(a, b bindArgs) bool {
	return a.Name == b.Name && a.Count == b.Count && a.Mode == b.Mode && strings.Join(a.Tags, ",") == strings.Join(b.Tags, ",")
}

// TestBindDecodesOnce bounds the allocations of binding arguments to a
// struct: they are decoded into the struct only, not first into a map for
// validation.
func TestBindDecodesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var r schema.Reflector
	b, err := newArgBinder[struct {
		Message string `json:"message"`
	}](&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"message":"hello"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := b.bind(raw); err != nil {
			t.Fatal(err)
		}
	})
	// The struct and the message string.
	if allocs > 2 {
		t.Errorf("bind allocates %v times, want at most 2", allocs)
	}
}

// lazyIn and lazyOut are the types of TestAddToolDefersSchemaWork.
type lazyIn struct {
	Query string   `json:"query" jsonschema:"what to search for"`
	Limit int      `json:"limit,omitempty" schema:"minimum=1,maximum=100"`
	Tags  []string `json:"tags,omitempty"`
	Next  *lazyIn  `json:"next,omitempty"`
}

type lazyOut struct {
	Hits []string `json:"hits"`
}

// TestAddToolDefersSchemaWork checks that the typed AddTool infers the
// schemas of its tool but leaves encoding and compiling them to the
// tool's first listing or call (issue 20, cold start): registering a tool
// is then a small part of what a server does before its first answer. Its
// allocations show the difference (the Reflector caches the inferred
// schema, so what is left per AddTool is the copy of it, the tool and the
// registration); then the tool is listed with the schemas an eager
// compile gives, and called, in both orders.
func TestAddToolDefersSchemaWork(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	handler := func(_ context.Context, _ *CallToolRequest, in lazyIn) (lazyOut, error) {
		return lazyOut{Hits: []string{in.Query}}, nil
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "search"}, handler)) // the Reflector's cache
	allocs := testing.AllocsPerRun(20, func() {
		if err := AddTool(s, &Tool{Name: "search"}, handler); err != nil {
			t.Fatal(err)
		}
	})
	// 909 when AddTool encoded and compiled both schemas (and armed a
	// list_changed timer, with no session to notify); 85 without.
	if allocs > 120 {
		t.Errorf("AddTool allocates %v times, want at most 120", allocs)
	}

	var r schema.Reflector
	wantIn, err := newValidator(&r, reflect.TypeFor[lazyIn](), nil)
	must(t, err)
	wantOut, err := newValidator(&r, reflect.TypeFor[lazyOut](), nil)
	must(t, err)
	for _, listFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("listFirst=%v", listFirst), func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			must(t, AddTool(s, &Tool{Name: "search"}, handler))
			cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
			ctx := context.Background()
			list := func() {
				res, err := cs.ListTools(ctx, nil)
				must(t, err)
				if len(res.Tools) != 1 {
					t.Fatalf("listed %d tools", len(res.Tools))
				}
				tool := res.Tools[0]
				if string(tool.InputSchema) != string(wantIn.schemaJSON) || string(tool.OutputSchema) != string(wantOut.schemaJSON) {
					t.Errorf("listed schemas %s and %s, want %s and %s", tool.InputSchema, tool.OutputSchema, wantIn.schemaJSON, wantOut.schemaJSON)
				}
			}
			call := func() {
				res, err := cs.CallTool(ctx, &CallToolParams{Name: "search", Arguments: json.RawMessage(`{"query":"q","limit":0}`)})
				must(t, err)
				if !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "/limit") {
					t.Errorf("a call with limit 0 got %+v, want the schema's error", res)
				}
				res, err = cs.CallTool(ctx, &CallToolParams{Name: "search", Arguments: json.RawMessage(`{"query":"q"}`)})
				must(t, err)
				if res.IsError || string(res.StructuredContent) != `{"hits":["q"]}` {
					t.Errorf("a valid call got %+v", res)
				}
			}
			if listFirst {
				list()
				call()
			} else {
				call()
				list()
			}
		})
	}
}

// TestAddToolErrors checks what the typed AddTool still reports itself,
// although it compiles inferred schemas on first use: every schema that
// cannot be inferred, or that the user wrote and does not compile.
func TestAddToolErrors(t *testing.T) {
	type badTag struct {
		N int `json:"n" schema:"minimum=x"`
	}
	type badField struct {
		C chan int `json:"c"`
	}
	type goodIn struct {
		A string `json:"a"`
	}
	badPattern := &schema.Reflector{Overrides: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[goodIn](): {Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", Pattern: "("}}},
	}}
	ok := func(context.Context, *CallToolRequest, goodIn) (string, error) { return "", nil }
	tests := []struct {
		name    string
		add     func(s *Server) error
		wantErr string
	}{
		{"name", func(s *Server) error { return AddTool(s, &Tool{Name: "a b"}, ok) }, "invalid tool name"},
		{"input kind", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, int) (string, error) { return "", nil })
		}, "must be a struct or a map"},
		{"output kind", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, goodIn) (int, error) { return 0, nil })
		}, "output type int"},
		{"tag", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, badTag) (string, error) { return "", nil })
		}, "minimum"},
		{"field type", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, badField) (string, error) { return "", nil })
		}, "chan"},
		{"output field type", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, goodIn) (badField, error) { return badField{}, nil })
		}, "chan"},
		{"input schema not JSON", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t", InputSchema: json.RawMessage(`{`)}, ok)
		}, "not JSON"},
		{"input schema does not compile", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"pattern":"("}}}`)}, ok)
		}, "pattern"},
		{"output schema does not compile", func(s *Server) error {
			return AddTool(s, &Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"pattern":"("}}}`)},
				func(context.Context, *CallToolRequest, goodIn) (goodIn, error) { return goodIn{}, nil })
		}, "pattern"},
		{"reflector override does not compile", func(s *Server) error {
			s.reflector = badPattern
			return AddTool(s, &Tool{Name: "t"}, ok)
		}, "pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			err := tt.add(s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("AddTool = %v, want an error containing %q", err, tt.wantErr)
			}
			s.mu.RLock()
			n := s.tools.len()
			s.mu.RUnlock()
			if n != 0 {
				t.Errorf("the tool was registered all the same")
			}
		})
	}
}
