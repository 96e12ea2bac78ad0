package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpkit/mcpkit/schema"
)

type contact struct {
	Name  string `json:"name" jsonschema:"your name"`
	Email string `json:"email,omitempty"`
	Age   int    `json:"age,omitempty" schema:"default=30"`
}

// TestElicitAs checks typed elicitation: the schema is inferred from the
// Go type, and the accepted answer (with the client's defaults applied)
// decodes into it; declines carry no value.
func TestElicitAs(t *testing.T) {
	checkGoroutines(t)
	var sentSchema json.RawMessage
	action := ElicitActionAccept
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (contactOut, error) {
		c, act, err := ElicitAs[contact](ctx, req, "Who are you?")
		return contactOut{Contact: c, Action: act}, err
	}))
	must(t, AddTool(s, &Tool{Name: "nested"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		_, _, err := ElicitAs[struct{ A struct{ B int } }](ctx, req, "?")
		return "", err
	}))
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			sentSchema = req.Params.RequestedSchema
			if action != ElicitActionAccept {
				return &ElicitResult{Action: action}, nil
			}
			return &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ada", "email": "ada@example.com"}}, nil
		},
	})
	cs, _ := connect(t, s, c)
	ctx := context.Background()

	got, res, err := CallToolAs[contactOut](ctx, cs, "ask", nil, nil)
	must(t, err)
	want := contactOut{Contact: contact{Name: "Ada", Email: "ada@example.com", Age: 30}, Action: ElicitActionAccept}
	if got != want {
		t.Errorf("accepted: %+v (result %+v); want %+v", got, res, want)
	}
	if !strings.Contains(string(sentSchema), `"name":{"type":"string","description":"your name"}`) {
		t.Errorf("schema sent: %s", sentSchema)
	}

	action = ElicitActionDecline
	got, _, err = CallToolAs[contactOut](ctx, cs, "ask", nil, nil)
	must(t, err)
	if got != (contactOut{Action: ElicitActionDecline}) {
		t.Errorf("declined: %+v", got)
	}

	// A type MCP cannot elicit fails before anything is sent.
	sentSchema = nil
	_, _, err = CallToolAs[string](ctx, cs, "nested", nil, nil)
	var te *ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "cannot be elicited") || sentSchema != nil {
		t.Errorf("nested type: %v (schema sent %s)", err, sentSchema)
	}
}

type contactOut struct {
	Contact contact      `json:"contact"`
	Action  ElicitAction `json:"action"`
}

// TestCallToolAs checks the client's typed call: arguments encoded from a
// Go value, structured content decoded into the output type, tool errors
// as *ToolError.
func TestCallToolAs(t *testing.T) {
	checkGoroutines(t)
	cs, _ := connect(t, testServer(t, nil), NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	out, res, err := CallToolAs[addOut](ctx, cs, "add", addIn{A: 2, B: 3}, nil)
	must(t, err)
	if out.Sum != 5 || res == nil || res.IsError {
		t.Errorf("add: %+v %+v", out, res)
	}
	out, _, err = CallToolAs[addOut](ctx, cs, "add", json.RawMessage(`{"a":1}`), nil)
	must(t, err)
	if out.Sum != 11 { // b defaults to 10
		t.Errorf("add with raw args: %+v", out)
	}
	_, res, err = CallToolAs[addOut](ctx, cs, "fail", nil, nil)
	var te *ToolError
	if !errors.As(err, &te) || te.Name != "fail" || !strings.Contains(err.Error(), "it broke") || !res.IsError {
		t.Errorf("failing tool: %v, %+v", err, res)
	}
	_, _, err = CallToolAs[addOut](ctx, cs, "raw", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no structured content") {
		t.Errorf("raw tool: %v", err)
	}
}

// TestCallToolAsString checks that CallToolAs[string] reads back the
// output of a tool whose output type is string, which AddTool sends as
// text content without structured content, and still refuses a result
// with neither.
func TestCallToolAsString(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "greet"}, func(_ context.Context, _ *CallToolRequest, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "hello, " + in.Name, nil
	}))
	s.AddTool(&Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&TextContent{Text: "a"}, &ImageContent{Data: []byte{1}, MIMEType: "image/png"}, &TextContent{Text: "b"}}}, nil
	})
	s.AddTool(&Tool{Name: "image", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, nil
	})
	cs, _ := connect(t, s, NewClient(&Implementation{Name: "c", Version: "1"}, nil))
	ctx := context.Background()
	tests := []struct {
		tool, want, err string
	}{
		{"greet", "hello, Ada", ""},
		{"two", "a\nb", ""},
		{"image", "", "no structured content"},
	}
	for _, tt := range tests {
		out, res, err := CallToolAs[string](ctx, cs, tt.tool, map[string]string{"name": "Ada"}, nil)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || res == nil):
			t.Errorf("%s: got %q, %v; want an error with %q and the result", tt.tool, out, err, tt.err)
		case tt.err == "" && (err != nil || out != tt.want):
			t.Errorf("%s: got %q, %v; want %q", tt.tool, out, err, tt.want)
		}
	}
}

// TestElicitURLModeInferred checks that elicitation params with a URL and
// no mode are sent in URL mode, not refused as a form without a schema.
func TestElicitURLModeInferred(t *testing.T) {
	checkGoroutines(t)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	must(t, AddTool(s, &Tool{Name: "login"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		res, err := req.Elicit(ctx, &ElicitParams{Message: "log in", URL: "https://example.com/login", ElicitationID: "e1"})
		if err != nil {
			return "", err
		}
		return string(res.Action), nil
	}))
	var mode ElicitMode
	c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{
		URLElicitation: true,
		ElicitationHandler: func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error) {
			mode = req.Params.Mode
			return &ElicitResult{Action: ElicitActionAccept}, nil
		},
	})
	cs, _ := connect(t, s, c)
	res, err := cs.CallTool(context.Background(), &CallToolParams{Name: "login"})
	must(t, err)
	if text := res.Content[0].(*TextContent).Text; res.IsError || text != "accept" || mode != ElicitModeURL {
		t.Errorf("got %q (isError %v), mode %q", text, res.IsError, mode)
	}
}

// TestSchemaReflectorOption checks that ServerOptions.SchemaReflector is
// the one AddTool infers schemas with.
func TestSchemaReflectorOption(t *testing.T) {
	type when struct {
		Unix int64 `json:"unix"`
	}
	type in struct {
		At   when    `json:"at"`
		Note *string `json:"note"`
	}
	r := &schema.Reflector{
		Nullable:  true,
		Overrides: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[when](): {Type: "string", Format: "date-time"}},
	}
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{SchemaReflector: r})
	must(t, AddTool(s, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, in) (string, error) { return "", nil }))
	s.mu.RLock()
	st, _ := s.tools.get("t")
	s.mu.RUnlock()
	def, err := st.definition()
	must(t, err)
	got := string(def.InputSchema)
	for _, want := range []string{`"at":{"type":"string","format":"date-time"}`, `"note":{"type":["null","string"]}`} {
		if !strings.Contains(got, want) {
			t.Errorf("input schema %s lacks %s", got, want)
		}
	}
}
